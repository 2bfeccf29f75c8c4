//! macOS: a `sandbox-exec` profile (Seatbelt's SBPL) made from the roots
//! and the mode. Every command of a call runs as
//! `sandbox-exec -p PROFILE argv...`, and what it starts inherits the
//! sandbox. Deny by default; read and run the roots, the `--bash-read`
//! directories and what programs need from the system; write the roots and
//! the call's temporary directory only in the writable modes; no network.
//!
//! Plain text generation, so it is built and tested on every platform
//! (only macOS uses it outside its tests).
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

use std::path::{Path, PathBuf};

/// Where macOS keeps what programs need to run and read.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library/Apple",
    "/Library/Preferences/Logging",
    "/private/var/db/dyld",
    "/private/var/db/timezone",
    "/opt/homebrew/bin",
    "/opt/homebrew/Cellar",
    "/opt/homebrew/opt",
    "/usr/local/bin",
    "/usr/local/Cellar",
    "/usr/local/opt",
];

/// Single files under /private/etc that the system's libraries read.
const ETC_READ: &[&str] = &[
    "/private/etc/passwd",
    "/private/etc/group",
    "/private/etc/hosts",
    "/private/etc/localtime",
    "/private/etc/protocols",
    "/private/etc/services",
    "/private/etc/shells",
    "/private/etc/ssl/openssl.cnf",
];

/// Devices programs read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/fd",
    "/dev/dtracehelper",
];

/// What one call may touch.
#[derive(Debug, Clone)]
pub struct Profile<'a> {
    pub readable: &'a [PathBuf],
    pub writable: &'a [PathBuf],
}

/// A string literal of SBPL: backslashes and quotes escaped.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `(subpath "...")` for each directory, in one filter list.
fn subpaths<'a>(paths: impl IntoIterator<Item = &'a Path>) -> String {
    paths
        .into_iter()
        .map(|p| format!("(subpath {})", quoted(p)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn literals<'a>(paths: impl IntoIterator<Item = &'a Path>) -> String {
    paths
        .into_iter()
        .map(|p| format!("(literal {})", quoted(p)))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Profile<'_> {
    /// The profile's text.
    pub fn text(&self) -> String {
        let system = SYSTEM_READ.iter().map(Path::new);
        let etc = ETC_READ.iter().map(Path::new);
        let devices = DEVICES.iter().map(Path::new);
        let mut out = String::from(
            "(version 1)\n\
             (deny default)\n\
             ; Commands may start programs, signal and inspect their own.\n\
             (allow process-fork)\n\
             (allow process-exec)\n\
             (allow signal (target same-sandbox))\n\
             (allow process-info* (target same-sandbox))\n\
             (allow sysctl-read)\n\
             ; The name service and the system's own logging.\n\
             (allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\") \
             (global-name \"com.apple.system.logger\") \
             (global-name \"com.apple.system.notification_center\"))\n\
             (allow ipc-posix-shm-read-data (ipc-posix-name \"apple.shm.notification_center\"))\n\
             ; Looking a path up is allowed; reading what is there is not.\n\
             (allow file-read-metadata)\n",
        );
        out.push_str(&format!(
            "(allow file-read* {} {})\n",
            subpaths(system),
            literals(etc)
        ));
        out.push_str(&format!(
            "(allow file-read* file-write-data {})\n",
            literals(devices)
        ));
        if !self.readable.is_empty() {
            out.push_str(&format!(
                "(allow file-read* {})\n",
                subpaths(self.readable.iter().map(PathBuf::as_path))
            ));
        }
        if !self.writable.is_empty() {
            let writable = subpaths(self.writable.iter().map(PathBuf::as_path));
            out.push_str(&format!("(allow file-read* file-write* {writable})\n"));
            // Devices, FIFOs and set-ID files are never made, even there.
            out.push_str(&format!(
                "(deny file-write-mode {writable} (require-any (file-mode #o4000) (file-mode #o2000)))\n"
            ));
        }
        out.push_str("; No network of any kind.\n(deny network*)\n");
        out
    }

    /// The words that run a command under this profile.
    pub fn wrapper(&self) -> Vec<String> {
        vec![
            "/usr/bin/sandbox-exec".to_string(),
            "-p".to_string(),
            self.text(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_profiles_grant_no_write_anywhere() {
        let roots = vec![PathBuf::from("/Users/me/project")];
        let text = Profile {
            readable: &roots,
            writable: &[],
        }
        .text();
        assert!(text.starts_with("(version 1)\n(deny default)\n"), "{text}");
        assert!(text.contains("(allow file-read* (subpath \"/Users/me/project\"))"));
        assert!(!text.contains("file-write*"), "{text}");
        assert!(text.contains("(deny network*)"));
        assert!(
            !text.contains("/Users/me\")"),
            "no parent of a root is granted"
        );
    }

    #[test]
    fn writable_modes_grant_the_roots_and_the_temporary_directory_only() {
        let roots = vec![PathBuf::from("/Users/me/project")];
        let writable = vec![
            PathBuf::from("/Users/me/project"),
            PathBuf::from("/private/var/folders/x/rootbound-1-0"),
        ];
        let text = Profile {
            readable: &roots,
            writable: &writable,
        }
        .text();
        assert!(text.contains(
            "(allow file-read* file-write* (subpath \"/Users/me/project\") \
             (subpath \"/private/var/folders/x/rootbound-1-0\"))"
        ));
        assert!(text.contains("(file-mode #o4000)"));
    }

    #[test]
    fn paths_are_quoted_so_they_cannot_end_the_string() {
        let roots = vec![PathBuf::from("/tmp/a\"b\\c) (allow default")];
        let text = Profile {
            readable: &roots,
            writable: &[],
        }
        .text();
        assert!(text.contains("(subpath \"/tmp/a\\\"b\\\\c) (allow default\")"));
        // The only `(allow default` is inside the escaped string.
        assert_eq!(text.matches("(allow default").count(), 1);
    }
}
