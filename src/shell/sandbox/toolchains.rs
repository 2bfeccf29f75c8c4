//! The toolchains a call's commands need, found rather than configured.
//!
//! A sandboxed call sees the system's directories and the roots, and runs
//! programs from a fixed PATH. A toolchain the user installed in their home
//! (rustup's `~/.cargo/bin` and `~/.rustup`, pyenv, nvm) or under `/opt`
//! is outside both, so `cargo test` would answer "command not found", then
//! "Permission denied". When the server starts, each program its bash may
//! run (the first word of each `--bash-allow` entry; in workspace-write
//! mode, every program listed here) is looked up as the user's own shell
//! would find it: along the server's PATH, then in the usual install
//! places. Where it is found outside the system's directories, the
//! directories its toolchain reads are made readable (never writable), its
//! directory goes on the commands' PATH, and the variables that tell the
//! toolchain where it lives are passed on. Build output goes inside the
//! roots (cargo's `target/`), which are writable as before; a cache a
//! toolchain must write (Go's build cache) goes to the call's temporary
//! directory.
//!
//! Only names from the server's own environment and options are looked at,
//! never a path from a request. Secrets kept beside a toolchain stay out:
//! of `~/.cargo` only `bin`, `registry` and `git` are readable
//! (`credentials.toml` is not).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Programs whose toolchains are recognised, and looked for in
/// workspace-write mode.
pub const KNOWN_PROGRAMS: &[&str] = &[
    "cargo", "rustc", "rustup", "rustfmt", "node", "npm", "npx", "python3", "python", "pytest",
    "pip", "pip3", "go", "gofmt",
];

/// A toolchain found for a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// What it is, for people: "Rust (rustup)", "Python (pyenv)", ...
    pub kind: &'static str,
    /// The programs it was found for.
    pub programs: Vec<String>,
    /// Directories put on the commands' PATH, before the system's.
    pub path: Vec<PathBuf>,
    /// Directories made readable.
    pub read: Vec<PathBuf>,
    /// Variables passed to commands.
    pub env: Vec<(String, String)>,
}

/// What the survey found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub toolchains: Vec<Toolchain>,
    /// Programs found in the system's directories (nothing to add).
    pub in_system: Vec<String>,
    /// Programs found nowhere.
    pub missing: Vec<String>,
}

impl Found {
    /// Directories to make readable, each once.
    pub fn read(&self) -> Vec<PathBuf> {
        unique(self.toolchains.iter().flat_map(|t| t.read.iter().cloned()))
    }

    /// Directories for the commands' PATH, each once.
    pub fn path(&self) -> Vec<PathBuf> {
        unique(self.toolchains.iter().flat_map(|t| t.path.iter().cloned()))
    }

    /// Variables for the commands, the first of each name.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = Vec::new();
        for pair in self.toolchains.iter().flat_map(|t| t.env.iter()) {
            if !env.iter().any(|(name, _)| *name == pair.0) {
                env.push(pair.clone());
            }
        }
        env
    }

    /// Lines for `rootbound sandbox` and `--help`.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for t in &self.toolchains {
            let dirs = |list: &[PathBuf]| {
                list.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push_str(&format!(
                "  {} for {}: PATH {}; readable {}",
                t.kind,
                t.programs.join(", "),
                dirs(&t.path),
                dirs(&t.read)
            ));
            if !t.env.is_empty() {
                let names: Vec<&str> = t.env.iter().map(|(n, _)| n.as_str()).collect();
                out.push_str(&format!("; passes {}", names.join(", ")));
            }
            out.push('\n');
        }
        if !self.in_system.is_empty() {
            out.push_str(&format!(
                "  in the system's directories: {}\n",
                self.in_system.join(", ")
            ));
        }
        if !self.missing.is_empty() {
            out.push_str(&format!(
                "  not found: {} (if installed elsewhere: --bash-path DIR)\n",
                self.missing.join(", ")
            ));
        }
        if out.is_empty() {
            out.push_str("  none looked for (read-only mode runs no toolchain)\n");
        }
        out
    }
}

fn unique(items: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// What the survey reads of the host: its environment, and whether a path
/// is an executable file or a directory (and where a link leads).
pub trait Host {
    fn var(&self, name: &str) -> Option<String>;
    fn is_executable(&self, path: &Path) -> bool;
    fn is_dir(&self, path: &Path) -> bool;
    fn exists(&self, path: &Path) -> bool;
    /// The user's home from the password database, when HOME is not set.
    fn home(&self) -> Option<PathBuf>;
    /// The path with every link resolved, if it exists.
    fn resolve(&self, path: &Path) -> Option<PathBuf>;
}

/// The real host.
pub struct RealHost;

impl Host for RealHost {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }

    fn is_executable(&self, path: &Path) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(path)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            path.is_file()
        }
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn exists(&self, path: &Path) -> bool {
        path.symlink_metadata().is_ok()
    }

    fn home(&self) -> Option<PathBuf> {
        #[cfg(unix)]
        {
            // SAFETY: getpwuid returns a pointer into static storage or
            // null; the directory is copied out at once (options are read
            // before the server starts any thread that calls it).
            unsafe {
                let entry = libc::getpwuid(libc::getuid());
                if entry.is_null() || (*entry).pw_dir.is_null() {
                    return None;
                }
                let dir = std::ffi::CStr::from_ptr((*entry).pw_dir);
                Some(PathBuf::from(
                    <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(dir.to_bytes()),
                ))
            }
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    fn resolve(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok()
    }
}

/// A host whose answers about paths are remembered for one survey: the
/// survey asks of the same paths many times (each candidate directory is
/// compared with every secret of the home, resolved: about 2,000 `readlink`
/// calls at every server's start without it).
struct Remembered<'h> {
    host: &'h dyn Host,
    resolved: RefCell<HashMap<PathBuf, Option<PathBuf>>>,
    answers: RefCell<HashMap<(Question, PathBuf), bool>>,
}

/// What was asked of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Question {
    IsExecutable,
    IsDir,
    Exists,
}

impl<'h> Remembered<'h> {
    fn new(host: &'h dyn Host) -> Remembered<'h> {
        Remembered {
            host,
            resolved: RefCell::default(),
            answers: RefCell::default(),
        }
    }

    fn answer(&self, question: Question, path: &Path, ask: impl FnOnce() -> bool) -> bool {
        let key = (question, path.to_path_buf());
        if let Some(known) = self.answers.borrow().get(&key) {
            return *known;
        }
        let answer = ask();
        self.answers.borrow_mut().insert(key, answer);
        answer
    }
}

impl Host for Remembered<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.host.var(name)
    }

    fn is_executable(&self, path: &Path) -> bool {
        self.answer(Question::IsExecutable, path, || {
            self.host.is_executable(path)
        })
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.answer(Question::IsDir, path, || self.host.is_dir(path))
    }

    fn exists(&self, path: &Path) -> bool {
        self.answer(Question::Exists, path, || self.host.exists(path))
    }

    fn home(&self) -> Option<PathBuf> {
        self.host.home()
    }

    fn resolve(&self, path: &Path) -> Option<PathBuf> {
        if let Some(known) = self.resolved.borrow().get(path) {
            return known.clone();
        }
        let resolved = self.host.resolve(path);
        self.resolved
            .borrow_mut()
            .insert(path.to_path_buf(), resolved.clone());
        resolved
    }
}

/// Looks each of `programs` up; `system`: the directories calls see and
/// search anyway; `user_path`: `--bash-path` directories; `roots`: where
/// nothing is looked for (a program in a root never runs through PATH,
/// whatever the server's PATH says).
pub fn find(
    host: &dyn Host,
    programs: &[String],
    system: &[&str],
    user_path: &[PathBuf],
    roots: &[PathBuf],
) -> Found {
    let host = &Remembered::new(host);
    let home = host.var("HOME").map(PathBuf::from).or_else(|| host.home());
    let mut places = Places::of(host, home.as_deref());
    let in_a_root = |dir: &Path| {
        let resolved = host.resolve(dir).unwrap_or_else(|| dir.to_path_buf());
        roots
            .iter()
            .any(|root| dir.starts_with(root) || resolved.starts_with(root))
    };
    places.host_path.retain(|dir| !in_a_root(dir));
    places.usual.retain(|dir| !in_a_root(dir));
    let mut found = Found::default();
    for program in programs {
        if !is_plain_name(program) || found.knows(program) {
            continue;
        }
        if user_path
            .iter()
            .any(|d| host.is_executable(&d.join(program)))
        {
            // The user named its directory: they chose what it reads.
            continue;
        }
        // A program whose file is in a root (a link into one) is passed
        // over, as if that directory did not hold it.
        let Some((dir, resolved)) = locate(host, program, &places, system, &in_a_root) else {
            found.missing.push(program.clone());
            continue;
        };
        let on_system_path = system.iter().any(|s| dir == Path::new(s));
        if on_system_path && is_system_tree(&resolved) {
            found.in_system.push(program.clone());
            continue;
        }
        let mut toolchain = recognise(host, program, &dir, &resolved, &places);
        // The sandbox shows the system's trees whole, and searches the
        // system's directories anyway. Nothing that holds the home (or is
        // a system's secret tree) is ever made readable, whatever an
        // install prefix or a variable says; nothing in a root goes on PATH.
        toolchain
            .read
            .retain(|p| !is_system_tree(p) && !too_broad(host, p, home.as_deref()));
        toolchain
            .path
            .retain(|p| !system.iter().any(|s| p == Path::new(s)) && !in_a_root(p));
        match found
            .toolchains
            .iter_mut()
            .find(|t| t.kind == toolchain.kind && t.read == toolchain.read)
        {
            Some(same) => same.programs.push(program.clone()),
            None => found.toolchains.push(toolchain),
        }
    }
    // A directory put on PATH must not lead an allowed name into a root
    // (a link there to a file in a root, executable or not yet, or one
    // that does not resolve now and could once its target is made): such
    // a directory is left off.
    for toolchain in &mut found.toolchains {
        toolchain.path.retain(|dir| {
            !programs.iter().filter(|p| is_plain_name(p)).any(|program| {
                let file = dir.join(program);
                host.exists(&file) && host.resolve(&file).is_none_or(|f| in_a_root(&f))
            })
        });
    }
    found
}

/// Whether `dir` may not be made readable: `/`, the home or a directory
/// above it, a tree that holds the system's secrets, the home's secret
/// directories or one above them (`~/.local` holds `~/.local/share`), a
/// cargo home (its `config.toml` and `credentials.toml` hold tokens), or a
/// directory with credentials in it.
///
/// Paths are compared as written and as resolved (a home reached through a
/// link, `$HOME/bin/..`, `RUSTUP_HOME=$HOME/x/../.ssh`): the mount opens
/// the resolved directory. One that does not resolve is refused.
fn too_broad(host: &dyn Host, dir: &Path, home: Option<&Path>) -> bool {
    let Some(resolved) = host.resolve(dir) else {
        return true;
    };
    let homes: Vec<PathBuf> = home
        .map(|home| {
            let mut forms = vec![home.to_path_buf()];
            forms.extend(host.resolve(home));
            forms
        })
        .unwrap_or_default();
    dir.components()
        .any(|c| c == std::path::Component::ParentDir)
        || [dir, resolved.as_path()]
            .iter()
            .any(|dir| too_broad_as_is(host, dir, &homes))
}

fn too_broad_as_is(host: &dyn Host, dir: &Path, homes: &[PathBuf]) -> bool {
    const HOME_SECRETS: &[&str] = &[
        ".ssh",
        ".gnupg",
        ".aws",
        ".azure",
        ".config",
        ".local/share",
        ".docker",
        ".kube",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
    ];
    // Without a home to compare with, nothing under the places homes live
    // is known to be safe.
    let homeless = homes.is_empty()
        && ["/home", "/root", "/Users", "/var/home"]
            .iter()
            .any(|tree| dir.starts_with(tree));
    homeless
        || dir.parent().is_none()
        || homes.iter().any(|home| home.starts_with(dir))
        || [
            "/etc", "/root", "/home", "/proc", "/sys", "/dev", "/run", "/var", "/tmp",
        ]
        .iter()
        .any(|tree| Path::new(tree).starts_with(dir))
        || ["/etc", "/proc", "/sys", "/dev", "/run"]
            .iter()
            .any(|tree| dir.starts_with(tree))
        || homes.iter().any(|home| {
            HOME_SECRETS.iter().any(|secret| {
                let secret = home.join(secret);
                let real = host.resolve(&secret);
                [Some(secret), real]
                    .into_iter()
                    .flatten()
                    .any(|secret| dir.starts_with(&secret) || secret.starts_with(dir))
            })
        })
        || dir.file_name().is_some_and(|name| name == ".cargo")
        || ["credentials.toml", "credentials", ".credentials.toml"]
            .iter()
            .any(|name| host.exists(&dir.join(name)))
}

impl Found {
    fn knows(&self, program: &str) -> bool {
        let named = |list: &[String]| list.iter().any(|p| p == program);
        named(&self.in_system)
            || named(&self.missing)
            || self.toolchains.iter().any(|t| named(&t.programs))
    }
}

fn is_plain_name(program: &str) -> bool {
    !program.is_empty() && !program.contains(['/', '\\']) && program != "." && program != ".."
}

/// Trees the sandbox shows whole (its system directories).
fn is_system_tree(path: &Path) -> bool {
    super::SYSTEM_DIRS.iter().any(|tree| path.starts_with(tree))
}

/// Where toolchains live on this host.
struct Places {
    host_path: Vec<PathBuf>,
    cargo_home: Option<PathBuf>,
    rustup_home: Option<PathBuf>,
    pyenv_root: Option<PathBuf>,
    nvm_dir: Option<PathBuf>,
    usual: Vec<PathBuf>,
}

impl Places {
    fn of(host: &dyn Host, home: Option<&Path>) -> Places {
        let from = |var: &str, default: &str| {
            host.var(var)
                .map(PathBuf::from)
                .or_else(|| home.map(|h| h.join(default)))
        };
        let cargo_home = from("CARGO_HOME", ".cargo");
        let pyenv_root = from("PYENV_ROOT", ".pyenv");
        let nvm_dir = from("NVM_DIR", ".nvm");
        let mut usual = Vec::new();
        usual.extend(cargo_home.iter().map(|c| c.join("bin")));
        usual.extend(pyenv_root.iter().map(|p| p.join("shims")));
        if let Some(nvm) = &nvm_dir {
            usual.extend(nvm_default_bin(host, nvm));
        }
        usual.push(PathBuf::from("/usr/local/go/bin"));
        usual.extend(home.map(|h| h.join(".local/bin")));
        usual.extend(home.map(|h| h.join("go/bin")));
        Places {
            host_path: host
                .var("PATH")
                .map(|p| {
                    p.split(':')
                        .filter(|d| d.starts_with('/'))
                        .map(PathBuf::from)
                        .collect()
                })
                .unwrap_or_default(),
            cargo_home,
            rustup_home: from("RUSTUP_HOME", ".rustup"),
            pyenv_root,
            nvm_dir,
            usual,
        }
    }
}

/// nvm's default version's `bin`: the newest installed version (nvm's
/// `default` alias is a name to resolve, often `node` or `lts/*`).
fn nvm_default_bin(host: &dyn Host, nvm: &Path) -> Option<PathBuf> {
    let versions = nvm.join("versions/node");
    if !host.is_dir(&versions) {
        return None;
    }
    let mut names: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(&versions)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let numbers: Option<Vec<u64>> = name
                .strip_prefix('v')?
                .split('.')
                .map(|n| n.parse().ok())
                .collect();
            Some((numbers?, e.path().join("bin")))
        })
        .collect();
    names.sort();
    names.pop().map(|(_, bin)| bin)
}

/// The directory `program` runs from: the server's PATH first (as the
/// user's shell finds it), then the usual install places, then the
/// system's directories.
/// Returns the directory and the file it resolves to.
fn locate(
    host: &dyn Host,
    program: &str,
    places: &Places,
    system: &[&str],
    in_a_root: &dyn Fn(&Path) -> bool,
) -> Option<(PathBuf, PathBuf)> {
    places
        .host_path
        .iter()
        .chain(&places.usual)
        .cloned()
        .chain(system.iter().map(PathBuf::from))
        .filter(|dir| host.is_executable(&dir.join(program)))
        .map(|dir| {
            let file = dir.join(program);
            let resolved = host.resolve(&file).unwrap_or(file);
            (dir, resolved)
        })
        .find(|(_, resolved)| !in_a_root(resolved))
}

/// What `program`, found in `dir` (its file resolving to `resolved`),
/// needs.
fn recognise(
    host: &dyn Host,
    program: &str,
    dir: &Path,
    resolved: &Path,
    places: &Places,
) -> Toolchain {
    let existing = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
        paths.into_iter().filter(|p| host.is_dir(p)).collect()
    };
    let pass = |names: &[&str]| -> Vec<(String, String)> {
        names
            .iter()
            .filter_map(|n| host.var(n).map(|v| (n.to_string(), v)))
            .collect()
    };
    let programs = vec![program.to_string()];
    // rustup's proxies: CARGO_HOME/bin, found by name or by rustup beside
    // the program, whatever HOME says.
    let cargo_home = places
        .cargo_home
        .as_ref()
        .filter(|cargo| dir == cargo.join("bin"))
        .cloned()
        .or_else(|| {
            let rustup_beside = host.is_executable(&dir.join("rustup"));
            (rustup_beside || dir.ends_with(".cargo/bin"))
                .then(|| dir.parent().map(Path::to_path_buf))
                .flatten()
        });
    if let Some(cargo) = &cargo_home {
        let rustup_home = host.var("RUSTUP_HOME").map(PathBuf::from).or_else(|| {
            if places.cargo_home.as_ref() == Some(cargo) {
                places.rustup_home.clone()
            } else {
                cargo.parent().map(|above| above.join(".rustup"))
            }
        });
        let mut read = vec![cargo.join("bin"), cargo.join("registry"), cargo.join("git")];
        read.extend(rustup_home);
        return Toolchain {
            kind: "Rust (rustup)",
            programs,
            path: vec![dir.to_path_buf()],
            read: existing(read),
            env: pass(&["CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"]),
        };
    }
    if let Some(pyenv) = &places.pyenv_root
        && dir.starts_with(pyenv)
    {
        let mut env = vec![("PYENV_ROOT".to_string(), pyenv.display().to_string())];
        env.extend(pass(&["PYENV_VERSION"]));
        return Toolchain {
            kind: "Python (pyenv)",
            programs,
            path: existing(vec![dir.to_path_buf(), pyenv.join("bin")]),
            read: existing(vec![pyenv.clone()]),
            env,
        };
    }
    if let Some(nvm) = &places.nvm_dir
        && dir.starts_with(nvm.join("versions"))
        && let Some(prefix) = dir.parent()
    {
        return Toolchain {
            kind: "Node (nvm)",
            programs,
            path: vec![dir.to_path_buf()],
            read: vec![prefix.to_path_buf()],
            env: Vec::new(),
        };
    }
    // A Go installation: GOROOT/bin/go; its module cache is read, its build
    // cache goes to the call's temporary directory.
    let prefix = install_prefix(resolved);
    if let Some(root) = &prefix
        && (program == "go" || program == "gofmt")
        && host.is_dir(&root.join("src/runtime"))
    {
        let gopath = host
            .var("GOPATH")
            .map(PathBuf::from)
            .or_else(|| host.var("HOME").map(|h| PathBuf::from(h).join("go")));
        let modcache = host
            .var("GOMODCACHE")
            .map(PathBuf::from)
            .or_else(|| gopath.map(|g| g.join("pkg/mod")));
        let mut read = vec![root.clone()];
        read.extend(modcache.filter(|m| host.is_dir(m)));
        let mut env = vec![("GOROOT".to_string(), root.display().to_string())];
        env.extend(pass(&["GOPATH", "GOMODCACHE"]));
        return Toolchain {
            kind: "Go",
            programs,
            path: vec![dir.to_path_buf()],
            read: existing(read),
            env,
        };
    }
    // Anything else: its directory, the `lib` beside it (pip's --user
    // site-packages beside ~/.local/bin), and where its file really lives.
    let mut read = vec![dir.to_path_buf()];
    if let Some(parent) = dir.parent().filter(|_| dir.ends_with("bin")) {
        read.push(parent.join("lib"));
    }
    read.extend(prefix);
    Toolchain {
        kind: "other",
        programs,
        path: vec![dir.to_path_buf()],
        read: existing(unique(read.into_iter())),
        env: Vec::new(),
    }
}

/// The directory a program is installed under: the parent of its `bin`.
fn install_prefix(resolved: &Path) -> Option<PathBuf> {
    let dir = resolved.parent()?;
    dir.ends_with("bin")
        .then(|| dir.parent().map(Path::to_path_buf))
        .flatten()
}

// Unix paths throughout; discovery runs only where a sandbox confines bash.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[derive(Default)]
    struct FakeHost {
        vars: HashMap<String, String>,
        executables: HashSet<PathBuf>,
        dirs: HashSet<PathBuf>,
        links: HashMap<PathBuf, PathBuf>,
    }

    impl FakeHost {
        fn var(mut self, name: &str, value: &str) -> Self {
            self.vars.insert(name.into(), value.into());
            self
        }
        fn exe(mut self, path: &str) -> Self {
            self.executables.insert(path.into());
            self
        }
        fn dir(mut self, path: &str) -> Self {
            self.dirs.insert(path.into());
            self
        }
        fn link(mut self, from: &str, to: &str) -> Self {
            self.links.insert(from.into(), to.into());
            self
        }
    }

    impl Host for FakeHost {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).cloned()
        }
        fn is_executable(&self, path: &Path) -> bool {
            self.executables.contains(path)
        }
        fn is_dir(&self, path: &Path) -> bool {
            self.dirs.contains(path)
        }
        fn exists(&self, path: &Path) -> bool {
            self.dirs.contains(path)
                || self.executables.contains(path)
                || self.links.contains_key(path)
        }
        fn home(&self) -> Option<PathBuf> {
            None
        }
        fn resolve(&self, path: &Path) -> Option<PathBuf> {
            Some(self.links.get(path).cloned().unwrap_or_else(|| path.into()))
        }
    }

    const SYSTEM: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn rustup_is_found_in_the_home_without_the_path_and_its_secrets_stay_out() {
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PATH", "/usr/bin:/bin")
            .exe("/home/u/.cargo/bin/cargo")
            .dir("/home/u/.cargo/bin")
            .dir("/home/u/.cargo/registry")
            .dir("/home/u/.rustup");
        let found = find(&host, &names(&["cargo"]), SYSTEM, &[], &[]);
        assert_eq!(found.toolchains.len(), 1, "{found:?}");
        let rust = &found.toolchains[0];
        assert_eq!(rust.kind, "Rust (rustup)");
        assert_eq!(rust.path, paths(&["/home/u/.cargo/bin"]));
        assert_eq!(
            rust.read,
            paths(&[
                "/home/u/.cargo/bin",
                "/home/u/.cargo/registry",
                "/home/u/.rustup"
            ])
        );
        assert!(!found.read().contains(&PathBuf::from("/home/u/.cargo")));
    }

    #[test]
    fn the_servers_path_decides_which_python_as_the_users_shell_would() {
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PATH", "/home/u/.pyenv/shims:/usr/bin")
            .exe("/home/u/.pyenv/shims/python3")
            .exe("/usr/bin/python3")
            .dir("/home/u/.pyenv")
            .dir("/home/u/.pyenv/shims")
            .dir("/home/u/.pyenv/bin");
        let found = find(&host, &names(&["python3", "pytest"]), SYSTEM, &[], &[]);
        let python = &found.toolchains[0];
        assert_eq!(python.kind, "Python (pyenv)");
        assert_eq!(python.read, paths(&["/home/u/.pyenv"]));
        assert_eq!(
            python.env,
            vec![("PYENV_ROOT".to_string(), "/home/u/.pyenv".to_string())]
        );
        assert_eq!(found.missing, names(&["pytest"]));
        let system_only = FakeHost::default()
            .var("PATH", "/usr/bin")
            .exe("/usr/bin/python3");
        let found = find(&system_only, &names(&["python3"]), SYSTEM, &[], &[]);
        assert_eq!(found.in_system, names(&["python3"]));
        assert!(found.toolchains.is_empty());
    }

    #[test]
    fn nvm_go_and_a_link_out_of_the_system_are_recognised() {
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .dir("/home/u/.nvm/versions/node")
            .exe("/home/u/.nvm/versions/node/v20.1.0/bin/node")
            .exe("/usr/local/go/bin/go")
            .dir("/usr/local/go")
            .dir("/usr/local/go/src/runtime")
            .dir("/home/u/go/pkg/mod")
            .exe("/usr/local/bin/deno")
            .link("/usr/local/bin/deno", "/opt/deno/bin/deno")
            .dir("/opt/deno");
        // nvm's versions are listed from the real file system; a fake
        // home has none, so node is looked for on the PATH only.
        let found = find(&host, &names(&["go", "deno"]), SYSTEM, &[], &[]);
        let go = found.toolchains.iter().find(|t| t.kind == "Go").unwrap();
        // /usr/local/go is in the view already; its bin is not on the PATH.
        assert_eq!(go.read, paths(&["/home/u/go/pkg/mod"]));
        assert_eq!(go.path, paths(&["/usr/local/go/bin"]));
        let deno = found.toolchains.iter().find(|t| t.kind == "other").unwrap();
        assert_eq!(deno.read, paths(&["/opt/deno"]));
        assert!(deno.path.is_empty(), "/usr/local/bin is searched anyway");
    }

    #[test]
    fn a_directory_the_user_named_is_left_to_them_and_paths_are_not_programs() {
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .exe("/home/u/.cargo/bin/cargo");
        let found = find(
            &host,
            &names(&["cargo", "./x", "../y"]),
            SYSTEM,
            &paths(&["/home/u/.cargo/bin"]),
            &[],
        );
        assert_eq!(found, Found::default());
    }

    #[test]
    fn rustup_outside_the_home_is_still_rustup_and_its_home_stays_out() {
        // HOME is elsewhere; the server's PATH names root's rustup proxies.
        let host = FakeHost::default()
            .var("HOME", "/work/fakehome")
            .var("PATH", "/root/.cargo/bin:/usr/bin")
            .exe("/root/.cargo/bin/cargo")
            .exe("/root/.cargo/bin/rustup")
            .dir("/root/.cargo/bin")
            .dir("/root/.cargo/registry")
            .dir("/root/.rustup");
        let found = find(&host, &names(&["cargo"]), SYSTEM, &[], &[]);
        let rust = &found.toolchains[0];
        assert_eq!(rust.kind, "Rust (rustup)");
        assert_eq!(
            rust.read,
            paths(&["/root/.cargo/bin", "/root/.cargo/registry", "/root/.rustup"])
        );
    }

    #[test]
    fn no_prefix_holding_the_home_or_its_secrets_is_readable() {
        // A program in ~/bin: its install prefix is the home.
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PATH", "/home/u/bin:/home/u/.local/bin:/usr/bin")
            .exe("/home/u/bin/mytool")
            .exe("/home/u/.local/bin/pytest")
            .dir("/home/u")
            .dir("/home/u/bin")
            .dir("/home/u/.local")
            .dir("/home/u/.local/bin")
            .dir("/home/u/.local/lib");
        let found = find(&host, &names(&["mytool", "pytest"]), SYSTEM, &[], &[]);
        let read = found.read();
        assert!(!read.contains(&PathBuf::from("/home/u")), "{read:?}");
        assert!(!read.contains(&PathBuf::from("/home/u/.local")), "{read:?}");
        assert!(
            read.contains(&PathBuf::from("/home/u/.local/lib")),
            "{read:?}"
        );
        // PYENV_ROOT=/ makes nothing readable.
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PYENV_ROOT", "/")
            .var("PATH", "/shims:/usr/bin")
            .exe("/shims/python3")
            .dir("/")
            .dir("/bin");
        let found = find(&host, &names(&["python3"]), SYSTEM, &[], &[]);
        assert!(found.read().is_empty(), "{found:?}");
        // A cargo home without rustup is not made readable whole.
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PATH", "/opt/tools/.cargo/bin:/usr/bin")
            .exe("/opt/tools/.cargo/bin/cargo-foo")
            .dir("/opt/tools/.cargo")
            .dir("/opt/tools/.cargo/bin");
        let found = find(&host, &names(&["cargo-foo"]), SYSTEM, &[], &[]);
        assert!(!found.read().contains(&PathBuf::from("/opt/tools/.cargo")));
    }

    #[test]
    fn a_link_into_a_root_is_passed_over_and_keeps_its_directory_off_the_path() {
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PATH", "/opt/links/bin:/usr/bin")
            .exe("/opt/links/bin/mytool")
            .link("/opt/links/bin/mytool", "/work/root/evil")
            .exe("/opt/links/bin/other")
            .dir("/opt/links/bin")
            .exe("/usr/bin/mytool");
        let roots = paths(&["/work/root"]);
        let found = find(&host, &names(&["mytool", "other"]), SYSTEM, &[], &roots);
        assert_eq!(found.in_system, names(&["mytool"]), "{found:?}");
        assert!(found.path().is_empty(), "{found:?}");
        // pyenv's bin in a root never goes on PATH.
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PYENV_ROOT", "/work/py")
            .var("PATH", "/work/py/shims:/usr/bin")
            .exe("/work/py/shims/python3")
            .dir("/work/py/shims")
            .dir("/work/py/bin");
        let roots = paths(&["/work/py/bin"]);
        let found = find(&host, &names(&["python3"]), SYSTEM, &[], &roots);
        assert!(
            !found.path().contains(&PathBuf::from("/work/py/bin")),
            "{found:?}"
        );
    }

    #[test]
    fn links_and_dots_do_not_reach_the_home_or_its_secrets() {
        // The home through a link: /home/link -> /data/u; ~/bin/mytool.
        let host = FakeHost::default()
            .var("HOME", "/home/link")
            .var("PATH", "/home/link/bin:/usr/bin")
            .link("/home/link", "/data/u")
            .link("/home/link/bin", "/data/u/bin")
            .exe("/home/link/bin/mytool")
            .link("/home/link/bin/mytool", "/data/u/bin/mytool")
            .dir("/data/u")
            .dir("/data/u/bin");
        let found = find(&host, &names(&["mytool"]), SYSTEM, &[], &[]);
        assert!(
            !found.read().contains(&PathBuf::from("/data/u")),
            "{found:?}"
        );
        // A PATH entry with `..`, and RUSTUP_HOME through `..` into ~/.ssh.
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("RUSTUP_HOME", "/home/u/x/../.ssh")
            .var("PATH", "/home/u/bin/..:/home/u/.cargo/bin:/usr/bin")
            .exe("/home/u/bin/../mytool")
            .link("/home/u/bin/..", "/home/u")
            .link("/home/u/x/../.ssh", "/home/u/.ssh")
            .exe("/home/u/.cargo/bin/cargo")
            .dir("/home/u/.cargo/bin")
            .dir("/home/u/.ssh")
            .dir("/home/u/x/../.ssh")
            .dir("/home/u/bin/..");
        let found = find(&host, &names(&["mytool", "cargo"]), SYSTEM, &[], &[]);
        let read = found.read();
        for secret in [
            "/home/u",
            "/home/u/bin/..",
            "/home/u/.ssh",
            "/home/u/x/../.ssh",
        ] {
            assert!(!read.contains(&PathBuf::from(secret)), "{read:?}");
        }
    }

    #[test]
    fn a_dangling_link_into_a_root_keeps_its_directory_off_the_path() {
        let host = FakeHost::default()
            .var("HOME", "/home/u")
            .var("PATH", "/opt/d:/usr/bin")
            .exe("/opt/d/othertool")
            .dir("/opt/d")
            .link("/opt/d/mytool", "/work/root/evil");
        let roots = paths(&["/work/root"]);
        let found = find(&host, &names(&["othertool", "mytool"]), SYSTEM, &[], &roots);
        assert!(found.path().is_empty(), "{found:?}");
    }

    #[test]
    fn nothing_in_a_root_is_found_whatever_the_path_says() {
        let host = FakeHost::default()
            .var("HOME", "/work")
            .var("PATH", "/work/proj/bin:/usr/bin")
            .exe("/work/proj/bin/cargo")
            .exe("/work/.cargo/bin/cargo")
            .exe("/usr/bin/cargo");
        let roots = paths(&["/work"]);
        let found = find(&host, &names(&["cargo"]), SYSTEM, &[], &roots);
        assert_eq!(found.in_system, names(&["cargo"]), "{found:?}");
    }
}
