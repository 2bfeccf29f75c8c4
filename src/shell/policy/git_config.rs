//! Which keys of git's effective configuration make running git unsafe:
//! read by the checks of git's configuration before a line runs
//! (`git.rs`) and of what `git config` would write (`git_write.rs`), so
//! neither imports the other for it.

/// Why a key of git's effective configuration makes running git unsafe, if
/// it does. Keys are matched by their section and final name; git compares
/// both without regard to case.
pub fn config_key_hazard(key: &str, value: &str) -> Option<&'static str> {
    let key = key.to_ascii_lowercase();
    let section = key.split('.').next().unwrap_or("");
    let name = key.rsplit('.').next().unwrap_or("");
    match section {
        "include" | "includeif" => return Some("includes other configuration files"),
        "pager" => return Some("names a pager program"),
        "trace2" => return Some("writes trace files"),
        "sendemail" => return Some("names mail programs"),
        "imap" | "instaweb" | "lfs" => {
            return Some("names programs (`imap.tunnel`, `instaweb.httpd`, git-lfs's)");
        }
        "alias" => {
            return Some(
                "defines an alias, which can run a shell command or add options no table checked",
            );
        }
        "protocol" if !value.eq_ignore_ascii_case("never") => {
            return Some("allows a transport, which can run a program (`ext::`)");
        }
        "url" => return Some("rewrites remote addresses"),
        _ => {}
    }
    if key == "core.bare" && value.eq_ignore_ascii_case("true") {
        return Some("makes the repository bare, a layout rootbound does not run git in");
    }
    if key == "core.fsmonitor" {
        return (!value.eq_ignore_ascii_case("false")).then_some("runs a file-system monitor");
    }
    // Files git reads by name: nothing confines them to the roots but the
    // sandbox (`blame.ignoreRevsFile=/etc/passwd` shows a line of it).
    const READS_FILES: &[&str] = &[
        "blame.ignorerevsfile",
        "mailmap.file",
        "core.excludesfile",
        "core.attributesfile",
        "diff.orderfile",
        "commit.template",
        "gpg.ssh.allowedsignersfile",
        "gpg.ssh.revocationfile",
        // `git init` and `git clone` copy the template's hooks into `.git`.
        "init.templatedir",
        // Read, and with `http.saveCookies` written.
        "http.cookiefile",
    ];
    if READS_FILES.contains(&key.as_str()) {
        return Some("names a file git reads, which may lie outside the workspace");
    }
    if key == "extensions.partialclone" || (section == "remote" && name == "promisor") {
        return Some("makes git fetch missing objects from a remote, through its transport");
    }
    if section == "remote" {
        match name {
            "url" | "pushurl" if value.contains("::") || value.starts_with("ext:") => {
                return Some("names a remote helper program");
            }
            "vcs" => return Some("names a remote helper program"),
            _ => {}
        }
    }
    if section == "submodule" && name == "update" && value.starts_with('!') {
        return Some("names a program (`!command`)");
    }
    if name == "path" && matches!(section, "man" | "browser" | "difftool" | "mergetool") {
        return Some("names a program");
    }
    if matches!(name, "clean" | "smudge" | "process") && section == "filter" {
        return Some("names a filter program");
    }
    // A key's last word says what it holds; these words hold programs
    // (`gpg.ssh.defaultKeyCommand`, `sequence.editor`, `core.hooksPath`).
    const NAMES_PROGRAMS: &[(&str, &str)] = &[
        ("command", "names a program"),
        ("cmd", "names a program"),
        ("program", "names a program"),
        ("driver", "names a program"),
        ("viewer", "names a program"),
        ("editor", "names a program"),
        ("pager", "names a program"),
        ("askpass", "names a program"),
        ("proxy", "names a proxy program"),
        ("browser", "names a program"),
        ("smtpserver", "names a program"),
        ("uploadpack", "names a program"),
        ("receivepack", "names a program"),
        ("hook", "names a hook program"),
        ("helper", "names a helper program"),
        ("textconv", "names a text-conversion program"),
        ("external", "names an external diff program"),
        ("difffilter", "names a filter program"),
    ];
    NAMES_PROGRAMS
        .iter()
        .find(|(word, _)| name.contains(word))
        .map(|(_, why)| *why)
}
