//! How the `bash` tool is configured: its mode, lists and limits, as the
//! command line gives them. It lives with the shell, below the tools, so
//! that the shell never reaches up to the server's whole configuration
//! (`crate::config` re-exports it).

use std::path::PathBuf;
use std::time::Duration;

/// How the `bash` tool decides what may run (docs/security.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BashMode {
    /// Only read-only commands from the built-in allowlist.
    ReadOnly,
    /// The read-only list plus `--bash-allow` prefixes, minus `--bash-deny`.
    Allowlist,
    /// Any command, run by a full shell inside the sandbox: writes only
    /// inside the roots, no network (not on Windows, which has no sandbox).
    WorkspaceWrite,
    /// Windows: any command, with the server's own rights (no sandbox).
    /// Elsewhere, the old name of workspace-write.
    Unrestricted,
    /// The tool is not offered.
    Off,
}

impl BashMode {
    /// The mode a platform runs, and the start-up note when it differs from
    /// the one asked for. Windows has no sandbox to stand behind bash, so
    /// there bash is off unless the user asked for `unrestricted` by name,
    /// knowing that nothing but the time limit stands in its way (the
    /// executor says so when the server starts); the read-only and
    /// allowlist modes, whose checks the sandbox backs, are not offered.
    pub fn on_platform(self, explicit: bool, windows: bool) -> (BashMode, Option<String>) {
        if !windows && self == BashMode::Unrestricted {
            return (
                BashMode::WorkspaceWrite,
                Some(
                    "--bash-mode unrestricted is now called workspace-write (any command, in a \
                     full shell the sandbox confines: writes only inside the roots, no network); \
                     the old name will go in a later release"
                        .into(),
                ),
            );
        }
        if !windows || self == BashMode::Off || (self == BashMode::Unrestricted && explicit) {
            return (self, None);
        }
        let asked = if explicit {
            format!("--bash-mode {} is not available on Windows", self.as_str())
        } else {
            "bash is off on Windows".to_string()
        };
        let note = format!(
            "{asked}: no sandbox can confine commands here. Start the server with \
             --bash-mode unrestricted to offer bash anyway, with the server's own rights."
        );
        (BashMode::Off, Some(note))
    }

    /// Whether a full shell runs the line (no parser, no policy).
    pub fn full_shell(self) -> bool {
        matches!(self, BashMode::WorkspaceWrite | BashMode::Unrestricted)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BashMode::ReadOnly => "read-only",
            BashMode::Allowlist => "allowlist",
            BashMode::WorkspaceWrite => "workspace-write",
            BashMode::Unrestricted => "unrestricted",
            BashMode::Off => "off",
        }
    }
}

#[derive(Debug, Clone)]
pub struct BashConfig {
    pub mode: BashMode,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub timeout: Duration,
    /// The longest time limit a call may ask for (`--bash-timeout-max`).
    pub timeout_max: Duration,
    /// Directories commands may also read (`--bash-read`), e.g. a toolchain.
    pub extra_read: Vec<PathBuf>,
    /// Directories put before the system directories on the commands' PATH
    /// (`--bash-path`); readable too.
    pub extra_path: Vec<PathBuf>,
    /// Variables a line may set before a command besides the documented
    /// ones (`--bash-env`).
    pub env_names: Vec<String>,
    /// Variables commands get from the toolchains found.
    pub extra_env: Vec<(String, String)>,
    /// The toolchains found for the programs bash may run (docs/security.md).
    pub toolchains: crate::shell::sandbox::toolchains::Found,
    /// Whether a command the allow list refuses becomes a question to the
    /// user, where the client can be asked (`--bash-ask`).
    pub ask: bool,
}

impl Default for BashConfig {
    fn default() -> Self {
        BashConfig {
            mode: BashMode::ReadOnly,
            allow: Vec::new(),
            deny: Vec::new(),
            timeout: Duration::from_secs(60),
            timeout_max: Duration::from_secs(600),
            extra_read: Vec::new(),
            extra_path: Vec::new(),
            env_names: Vec::new(),
            extra_env: Vec::new(),
            toolchains: Default::default(),
            ask: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BashMode;

    #[test]
    fn on_windows_bash_is_off_unless_unrestricted_is_asked_for() {
        let (mode, note) = BashMode::ReadOnly.on_platform(false, true);
        assert_eq!(mode, BashMode::Off);
        assert!(note.unwrap().contains("bash is off on Windows"));
        for asked in [
            BashMode::ReadOnly,
            BashMode::Allowlist,
            BashMode::WorkspaceWrite,
        ] {
            let (mode, note) = asked.on_platform(true, true);
            assert_eq!(mode, BashMode::Off);
            assert!(note.unwrap().contains("not available on Windows"));
        }
        assert_eq!(
            BashMode::Unrestricted.on_platform(true, true),
            (BashMode::Unrestricted, None)
        );
        assert_eq!(BashMode::Off.on_platform(true, true), (BashMode::Off, None));
    }

    #[test]
    fn elsewhere_the_mode_is_the_one_asked_for() {
        for mode in [
            BashMode::ReadOnly,
            BashMode::Allowlist,
            BashMode::WorkspaceWrite,
            BashMode::Off,
        ] {
            assert_eq!(mode.on_platform(true, false), (mode, None));
            assert_eq!(mode.on_platform(false, false), (mode, None));
        }
        // The old name of the sandboxed full shell still works, and says
        // what it is now called.
        let (mode, note) = BashMode::Unrestricted.on_platform(true, false);
        assert_eq!(mode, BashMode::WorkspaceWrite);
        assert!(note.unwrap().contains("now called workspace-write"));
    }
}
