//! Namespaces for one call, set up by the supervisor (a single-threaded
//! process, so forking here is safe).
//!
//! - **User namespace** (where the kernel lets an unprivileged user have
//!   one): the supervisor gets capabilities over its own new namespaces only;
//!   its uid and gid map to themselves.
//! - **Mount namespace**: every mount is made read-only, then the writable
//!   directories are bound onto themselves and made writable again. So no
//!   write and no metadata change (mode, owner, times, xattrs, links,
//!   renames) can happen outside them, whatever the syscall, and in
//!   read-only mode none at all.
//! - **PID namespace**: the supervisor's first child is the namespace's
//!   init. When it dies, the kernel kills every process of the call, so
//!   nothing (`sleep &`, `setsid`, a double fork) outlives it. The
//!   namespace's own `pid_max` (Linux 6.14+) bounds how many processes the
//!   call can have.
//!
//! Without a PID namespace the supervisor is a child subreaper instead:
//! orphans are re-parented to it, and it kills and reaps them at the end.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;

/// The namespaces a call gets. The IPC namespace keeps SysV IPC objects
/// and POSIX message queues apart from the host's.
const NAMESPACE_FLAGS: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Enters new namespaces: a user namespace if `user`, and mount, PID and
/// IPC namespaces. The calling process stays in its PID namespace; its next
/// child is the new one's init.
pub fn unshare(user: bool) -> Result<(), String> {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let flags = if user {
        NAMESPACE_FLAGS
    } else {
        NAMESPACE_FLAGS & !libc::CLONE_NEWUSER
    };
    // SAFETY: unshare with valid flags in a single-threaded process.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(os_error("unshare"));
    }
    if user {
        write_id_maps(uid, gid)?;
    }
    Ok(())
}

/// Maps the caller's own uid and gid to themselves, the one mapping a
/// process may write for itself. Other owners read as `nobody` inside;
/// access is still decided on the real ids.
fn write_id_maps(uid: libc::uid_t, gid: libc::gid_t) -> Result<(), String> {
    let write = |file: &str, text: &str| -> Result<(), String> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("{file}: {e}"))
    };
    write("/proc/self/setgroups", "deny")?;
    write("/proc/self/uid_map", &format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", &format!("{gid} {gid} 1\n"))?;
    Ok(())
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn mount_setattr(
    path: &std::ffi::CStr,
    recursive: bool,
    set: u64,
    clear: u64,
) -> Result<(), String> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr with a valid path and a correctly sized struct.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc != 0 {
        return Err(os_error(&format!(
            "mount_setattr {}",
            path.to_string_lossy()
        )));
    }
    Ok(())
}

fn c_path(path: &std::path::Path) -> Result<std::ffi::CString, String> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} contains a NUL byte", path.display()))
}

/// Makes every mount read-only except `writable` (each bound onto itself,
/// made writable again, with no set-ID programs and no devices), and covers
/// each of `hidden` with an empty read-only file system, so that not even
/// the names in them can be looked up. Needs a mount namespace of our own.
pub fn remount_read_only(writable: &[PathBuf], hidden: &[PathBuf]) -> Result<(), String> {
    let root = c"/";
    // SAFETY: mount(2) with valid C strings; changes only our namespace.
    unsafe {
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err(os_error("making mounts private"));
        }
        for dir in hidden {
            let dir = c_path(dir)?;
            if libc::mount(
                c"tmpfs".as_ptr(),
                dir.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"size=4k,mode=755".as_ptr().cast(),
            ) != 0
            {
                return Err(os_error(&format!("hiding {}", dir.to_string_lossy())));
            }
        }
        for dir in writable {
            let dir = c_path(dir)?;
            if libc::mount(
                dir.as_ptr(),
                dir.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ) != 0
            {
                return Err(os_error(&format!("binding {}", dir.to_string_lossy())));
            }
        }
    }
    mount_setattr(root, true, libc::MOUNT_ATTR_RDONLY, 0)?;
    for dir in writable {
        mount_setattr(
            &c_path(dir)?,
            false,
            libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV,
            libc::MOUNT_ATTR_RDONLY,
        )?;
    }
    Ok(())
}

/// The PID namespace's init, a child of the supervisor.
pub struct Init {
    pub pid: libc::pid_t,
    /// Whether it set the namespace's `pid_max` as asked.
    pub pid_max_set: bool,
}

/// Forks the PID namespace's init. It sets the namespace's `pid_max` (when
/// asked), tells the supervisor it is ready, then reaps orphans until it is
/// killed. Returns once it is ready.
pub fn spawn_init(pid_max: Option<u64>) -> Result<Init, String> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(os_error("pipe"));
    }
    // SAFETY: the descriptors were just created and are ours.
    let (mut ready_read, ready_write) = unsafe {
        (
            std::fs::File::from(OwnedFd::from_raw_fd(fds[0])),
            std::fs::File::from(OwnedFd::from_raw_fd(fds[1])),
        )
    };
    // SAFETY: the supervisor is single-threaded, so the child may run
    // ordinary code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os_error("fork of the namespace's init"));
    }
    if pid == 0 {
        drop(ready_read);
        init_main(pid_max, ready_write);
    }
    drop(ready_write);
    let mut answer = [0u8; 1];
    match ready_read.read(&mut answer) {
        Ok(1) => Ok(Init {
            pid,
            pid_max_set: pid_max.is_some() && answer[0] == b'+',
        }),
        _ => {
            kill_and_reap(pid);
            Err("the namespace's init did not start".into())
        }
    }
}

fn init_main(pid_max: Option<u64>, mut ready: std::fs::File) -> ! {
    // SAFETY: plain system calls in the new init.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
    let set = pid_max.is_none_or(|max| {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/proc/sys/kernel/pid_max")
            .and_then(|mut f| f.write_all(max.to_string().as_bytes()))
            .is_ok()
    });
    // A /proc of this namespace over the host's: the call's processes can
    // look up only each other (Landlock still keeps /proc unreadable).
    // SAFETY: mount(2) with valid C strings, in our own mount namespace.
    unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        );
    }
    let _ = ready.write_all(if set { b"+" } else { b"-" });
    drop(ready);
    loop {
        // SAFETY: waiting for SIGCHLD (blocked above), then reaping every
        // exited orphan without blocking.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::sigwaitinfo(&set, &mut info);
            while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
        }
    }
}

/// SIGKILL to `pid`, then wait for it.
pub fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: signalling and reaping our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

/// Makes the caller a child subreaper: orphaned descendants become its
/// children instead of init's, so it can kill and reap them.
pub fn become_subreaper() -> Result<(), String> {
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
        return Err(os_error("PR_SET_CHILD_SUBREAPER"));
    }
    Ok(())
}

/// Kills and reaps every descendant of a subreaper: its children are read
/// from `/proc`, killed and reaped, until none is left (a descendant that
/// forks meanwhile is re-parented to us and caught on the next round).
pub fn kill_all_children() {
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    let list = format!("/proc/{me}/task/{me}/children");
    for _ in 0..10_000 {
        let pids: Vec<libc::pid_t> = std::fs::read_to_string(&list)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        // SAFETY: signalling and reaping our own children.
        unsafe {
            for pid in &pids {
                libc::kill(*pid, libc::SIGKILL);
            }
            let reaped = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG);
            if pids.is_empty() && reaped <= 0 {
                if reaped < 0 {
                    return;
                }
                // A child that has not finished dying yet.
                libc::waitpid(-1, std::ptr::null_mut(), 0);
            }
        }
    }
}
