//! Starting one command of a call without copying its supervisor: the child
//! is cloned with `CLONE_VM | CLONE_VFORK` (what `posix_spawn` and Python's
//! `subprocess` do), runs the few system calls that confine it on a stack of
//! its own, and executes the program.
//!
//! Why not `std::process::Command`: with a `pre_exec` closure (which the
//! limits, capabilities and Landlock need) it forks, and on this kind of
//! machine a fork of the supervisor took about 0.3 ms and the `exec` that
//! tore the copy down again about as much: together a third of a call's
//! overhead over a plain spawn. And it searches `PATH` in the child with
//! `execvp`, one failed `exec` per directory before the program's (about
//! 25 µs each under Landlock); here the supervisor looks the program up
//! before the child starts, and the child tries only names that exist.
//!
//! While the child runs, it shares the supervisor's memory and the calling
//! thread waits; so the child allocates nothing, takes no lock, and writes
//! only its own stack and the one error word it leaves for the parent.
//! Every signal is blocked in the calling thread across the clone, and the
//! child sets every disposition back to the default before it unblocks
//! them, so no handler of the supervisor's ever runs in the child.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

use super::limits::{self, Limits};

/// The child's own stack. It runs a few system calls and Rust frames of a
/// few hundred bytes; 64 KiB leaves room for any libc's wrappers.
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// Where the program is looked up when the command's environment has no
/// `PATH` (glibc's `execvp` default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Everything one command needs to start, made ready by the supervisor
/// before the child exists (the child only reads it).
#[derive(Debug)]
pub struct Exec {
    /// The files to execute, in the order `execvp` would try them: for a
    /// name with a slash that name (relative to `cwd`), otherwise each
    /// existing `dir/name` along `PATH`. Empty: nothing by that name.
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
    /// Standard input, output and error, each at descriptor 3 or above so
    /// that moving them to 0, 1 and 2 never overwrites one still to move.
    stdio: [OwnedFd; 3],
    /// The process group to join; 0 leads a new one.
    group: libc::pid_t,
    limits: Limits,
    /// The Landlock ruleset to restrict the child with, if there is one.
    ruleset: Option<std::os::fd::RawFd>,
}

/// Where a command's standard stream comes from or goes.
#[derive(Debug)]
pub enum Stream {
    Fd(OwnedFd),
    Null,
}

impl Stream {
    /// A stream of its own onto `fd`.
    pub fn of(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<Stream> {
        Ok(Stream::Fd(fd.try_clone_to_owned()?))
    }

    pub fn try_clone(&self) -> std::io::Result<Stream> {
        Ok(match self {
            Stream::Fd(fd) => Stream::Fd(fd.try_clone()?),
            Stream::Null => Stream::Null,
        })
    }
}

impl Exec {
    /// Prepares `argv` to run in `cwd` with exactly `env` (the last value
    /// of a name wins), its streams, process group, limits and ruleset.
    pub fn new<'a>(
        argv: &[String],
        env: impl IntoIterator<Item = (&'a String, &'a String)>,
        cwd: &Path,
        stdio: [Stream; 3],
        group: libc::pid_t,
        limits: Limits,
        ruleset: Option<std::os::fd::RawFd>,
    ) -> std::io::Result<Exec> {
        let Some(program) = argv.first() else {
            return Err(std::io::Error::other("empty command"));
        };
        let env: std::collections::BTreeMap<&str, &str> = env
            .into_iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let path = env.get("PATH").copied().unwrap_or(DEFAULT_PATH);
        let [stdin, stdout, stderr] = stdio;
        Ok(Exec {
            candidates: candidates(program, path, cwd)?,
            argv: argv
                .iter()
                .map(|a| c_string(a.as_bytes()))
                .collect::<Result<_, _>>()?,
            envp: env
                .iter()
                .map(|(k, v)| c_string(format!("{k}={v}").as_bytes()))
                .collect::<Result<_, _>>()?,
            cwd: c_string(cwd.as_os_str().as_bytes())?,
            stdio: [
                above_stdio(stdin)?,
                above_stdio(stdout)?,
                above_stdio(stderr)?,
            ],
            group,
            limits,
            ruleset,
        })
    }
}

fn c_string(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an argument or variable holds a NUL byte",
        )
    })
}

/// The stream as a descriptor numbered 3 or above (close-on-exec: the child
/// gets it only as 0, 1 or 2).
fn above_stdio(stream: Stream) -> std::io::Result<OwnedFd> {
    let fd = match stream {
        Stream::Fd(fd) => fd,
        Stream::Null => std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")?
            .into(),
    };
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// The files `execvp` would try for `program`, less those that do not
/// exist (each failed `exec` walks the path under Landlock for nothing), so
/// that an `exec` that still finds nothing means what the file names is
/// missing, not the file.
/// A directory of `PATH` that is relative, or empty (the current
/// directory), is taken from `cwd`, where the command starts.
fn candidates(program: &str, path: &str, cwd: &Path) -> std::io::Result<Vec<CString>> {
    if program.contains('/') {
        // Run as named (relative to `cwd`), if there is anything by that
        // name: a missing one is told apart from a missing interpreter.
        if std::fs::metadata(cwd.join(program)).is_err() {
            return Ok(Vec::new());
        }
        return Ok(vec![c_string(program.as_bytes())?]);
    }
    if program.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for dir in path.split(':') {
        let dir = Path::new(if dir.is_empty() { "." } else { dir });
        let file = cwd.join(dir).join(program);
        if std::fs::metadata(&file).is_ok_and(|m| !m.is_dir()) {
            found.push(c_string(OsStr::as_bytes(file.as_os_str()))?);
        }
    }
    Ok(found)
}

/// What the child reads and the one word it writes.
struct Shared<'a> {
    exec: &'a Exec,
    candidates: &'a [*const libc::c_char],
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    /// The errno of the step that failed; 0 while none has.
    error: AtomicI32,
}

/// Starts the command and returns its pid once it has executed the program,
/// or the error that kept it from doing so (the child is then reaped):
/// NotFound with no message when no file by the name exists, with one when
/// the file exists but what it needs to run does not.
/// The descriptors in `exec` stay open in this process until it is dropped.
pub fn spawn(exec: &Exec) -> std::io::Result<libc::pid_t> {
    if exec.candidates.is_empty() {
        return Err(std::io::ErrorKind::NotFound.into());
    }
    let pointers = |strings: &[CString]| -> Vec<*const libc::c_char> {
        strings
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    };
    let argv = pointers(&exec.argv);
    let envp = pointers(&exec.envp);
    let candidates: Vec<*const libc::c_char> = exec.candidates.iter().map(|c| c.as_ptr()).collect();
    let shared = Shared {
        exec,
        candidates: &candidates,
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        error: AtomicI32::new(0),
    };
    let mut stack = vec![0u8; CHILD_STACK_BYTES];
    // The stack grows down from its end, kept 16-byte aligned as both ABIs
    // want at a call.
    let top = {
        let end = stack.as_mut_ptr().wrapping_add(stack.len());
        end.wrapping_sub(end as usize % 16)
    };
    // SAFETY: all signals are blocked on this thread across the clone (and
    // restored after), so none is handled in the child before it resets
    // every disposition. The child runs `child` on `stack`, which outlives
    // it: CLONE_VFORK returns only once the child has executed a program
    // or exited. `shared` and what it points to live until then too.
    let (pid, clone_error) = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        let pid = libc::clone(
            child,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw const shared).cast_mut().cast(),
        );
        let clone_error = std::io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        (pid, clone_error)
    };
    drop(stack);
    if pid < 0 {
        return Err(clone_error);
    }
    match shared.error.load(Ordering::Acquire) {
        0 => Ok(pid),
        errno => {
            // SAFETY: reaps the child that failed before exec (it has exited:
            // CLONE_VFORK returned).
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            // The program was there, yet exec found nothing: what is missing
            // is what it names, not the program.
            if errno == libc::ENOENT {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the program is there, but the interpreter its #! line names (or a \
                     library it needs) is not, in the sandbox",
                ));
            }
            Err(std::io::Error::from_raw_os_error(errno))
        }
    }
}

/// The child: confine, then execute the first candidate that runs.
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Shared` that `spawn` passed, alive until this
    // child executes or exits; it is only read, apart from `error`.
    let shared = unsafe { &*arg.cast::<Shared<'_>>() };
    let fail = |e: std::io::Error| -> ! {
        shared
            .error
            .store(e.raw_os_error().unwrap_or(libc::EINVAL), Ordering::Release);
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::_exit(127) }
    };
    // SAFETY: system calls only, on this child's own stack.
    if let Err(e) = unsafe { confine(shared.exec) } {
        fail(e);
    }
    let mut error = libc::ENOENT;
    for &candidate in shared.candidates {
        // SAFETY: NUL-terminated strings and NULL-terminated arrays that
        // live in the parent's memory, which this child shares.
        unsafe { libc::execve(candidate, shared.argv, shared.envp) };
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ENOENT);
        // `execvp`'s rule: a name that exists but may not be run is
        // reported over one that does not exist; other errors end the
        // search.
        match errno {
            libc::EACCES => error = libc::EACCES,
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            other => {
                error = other;
                break;
            }
        }
    }
    fail(std::io::Error::from_raw_os_error(error))
}

/// Everything between clone and exec: default signal dispositions and an
/// empty mask, the process group, the streams, the directory, the limits
/// and capabilities, the Landlock ruleset.
///
/// # Safety
/// Only in the child `spawn` cloned: system calls only, no allocation.
unsafe fn confine(exec: &Exec) -> std::io::Result<()> {
    // SAFETY: the child's own signal state, streams and directory.
    unsafe {
        limits::reset_signals()?;
        if libc::setpgid(0, exec.group) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for (target, fd) in exec.stdio.iter().enumerate() {
            if libc::dup2(fd.as_raw_fd(), target as i32) < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if libc::chdir(exec.cwd.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        limits::apply(&exec.limits)?;
        if let Some(ruleset) = exec.ruleset {
            super::landlock::restrict_self(ruleset)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn no_limits() -> Limits {
        Limits {
            max_tasks: libc::RLIM_INFINITY,
            cpu_seconds: 3600,
            address_space: libc::RLIM_INFINITY,
        }
    }

    fn run(argv: &[&str], env: &[(&str, &str)], cwd: &Path) -> std::io::Result<(i32, String)> {
        let (read, write) = std::io::pipe()?;
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let exec = Exec::new(
            &argv,
            env.iter().map(|(k, v)| (k, v)),
            cwd,
            [Stream::Null, Stream::Fd(write.into()), Stream::Null],
            0,
            no_limits(),
            None,
        )?;
        let pid = spawn(&exec);
        drop(exec);
        let pid = pid?;
        let mut out = String::new();
        std::io::Read::read_to_string(&mut { read }, &mut out)?;
        let mut status = 0;
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        Ok((libc::WEXITSTATUS(status), out))
    }

    #[test]
    fn a_program_is_found_along_path_and_gets_exactly_its_environment() {
        let dir = tempfile::tempdir().unwrap();
        let (code, out) = run(
            &["sh", "-c", "echo \"$A $B\"; pwd; env | sort"],
            &[
                ("PATH", "/nonexistent:/usr/bin:/bin"),
                ("A", "1"),
                ("B", "2"),
                ("A", "3"),
            ],
            dir.path(),
        )
        .unwrap();
        assert_eq!(code, 0);
        let real = dir.path().canonicalize().unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "3 2");
        assert_eq!(Path::new(lines[1]).canonicalize().unwrap(), real);
        // The shell adds PWD, SHLVL and _ of its own; nothing comes from
        // this process's environment.
        assert!(lines.contains(&"A=3") && lines.contains(&"B=2"), "{out}");
        assert!(!out.contains("HOME="), "{out}");
    }

    #[test]
    fn a_missing_program_is_not_found_and_one_that_may_not_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap().to_string();
        let missing = run(&["no-such-program-here"], &[("PATH", &path)], dir.path()).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "#!/bin/sh\necho ran > ran\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = run(&["plain"], &[("PATH", &path)], dir.path()).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(!dir.path().join("ran").exists());
        // A later directory's runnable file is still found, as execvp finds it.
        let later = tempfile::tempdir().unwrap();
        let runnable = later.path().join("plain");
        std::fs::write(&runnable, "#!/bin/sh\necho later\n").unwrap();
        std::fs::set_permissions(&runnable, std::fs::Permissions::from_mode(0o755)).unwrap();
        let both = format!("{path}:{}", later.path().display());
        let (code, out) = run(&["plain"], &[("PATH", &both)], dir.path()).unwrap();
        assert_eq!((code, out.as_str()), (0, "later\n"));
        // A program that is there but names an interpreter that is not is
        // told apart from a missing program.
        let orphan = dir.path().join("orphan");
        std::fs::write(&orphan, "#!/no/such/interpreter\n").unwrap();
        std::fs::set_permissions(&orphan, std::fs::Permissions::from_mode(0o755)).unwrap();
        let lost = run(&["orphan"], &[("PATH", &path)], dir.path()).unwrap_err();
        assert_eq!(lost.kind(), std::io::ErrorKind::NotFound);
        assert!(lost.to_string().contains("interpreter"), "{lost}");
        assert!(missing.get_ref().is_none(), "{missing}");
        // Named with a slash: a missing file is not found, plainly; one that
        // is there runs.
        let by_path = run(&["./no-such-file"], &[("PATH", &path)], dir.path()).unwrap_err();
        assert_eq!(by_path.kind(), std::io::ErrorKind::NotFound);
        assert!(by_path.get_ref().is_none(), "{by_path}");
        let here = run(&["../plain"], &[], &later.path().join("sub")).ok();
        assert!(
            here.is_none(),
            "a missing directory on the way is not found"
        );
        let (code, out) = run(&[runnable.to_str().unwrap()], &[], dir.path()).unwrap();
        assert_eq!((code, out.as_str()), (0, "later\n"));
    }

    #[test]
    fn a_command_starts_with_no_signal_blocked_or_ignored() {
        // The test harness ignores SIGPIPE, as every Rust program (and the
        // supervisor) does; this thread blocks SIGTERM, as the supervisor's
        // do.
        // SAFETY: changes this test thread's own mask, put back below.
        let before = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut before: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut before);
            before
        };
        let dir = tempfile::tempdir().unwrap();
        let result = run(
            &["sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status"],
            &[("PATH", "/usr/bin:/bin")],
            dir.path(),
        );
        // SAFETY: puts back what this test changed.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut()) };
        let (code, out) = result.unwrap();
        assert_eq!(code, 0);
        assert_eq!(
            out,
            "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
        );
    }
}
