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
//! - **PID namespace**: the call's supervisor is created in it, as its init
//!   (`clone` with the namespace flags, so the fork server's own namespaces
//!   never change). Orphans of the call are re-parented to it, it kills
//!   every process of the namespace at the end, and if it dies the kernel
//!   does so: nothing (`sleep &`, `setsid`, a double fork) outlives the
//!   call. The namespace's own `pid_max` (Linux 6.14+) bounds how many
//!   processes the call can have.
//! - **IPC namespace**: SysV IPC objects and POSIX message queues of its own.
//!
//! Without namespaces the supervisor is a child subreaper instead: orphans
//! are re-parented to it, and it kills and reaps them at the end.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use super::error::{Error, Result};

/// The namespaces a call gets (the user namespace only where allowed).
const NAMESPACE_FLAGS: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;

/// The ids a process had before entering a user namespace: they are what
/// it maps to itself.
#[derive(Debug, Clone, Copy)]
pub struct Ids {
    uid: libc::uid_t,
    gid: libc::gid_t,
}

impl Ids {
    pub fn current() -> Ids {
        // SAFETY: getuid/getgid cannot fail.
        unsafe {
            Ids {
                uid: libc::getuid(),
                gid: libc::getgid(),
            }
        }
    }
}

/// Which side of [`clone_call`] this is.
pub enum Cloned {
    /// The caller, with the new process's pidfd.
    Parent(OwnedFd),
    /// The new process: init of a new PID namespace, in new user (if
    /// asked), mount and IPC namespaces.
    Child,
}

/// Creates a call's supervisor (`clone`, with `CLONE_PIDFD` for a pidfd no
/// pid reuse can fool): in new namespaces when `namespaces` is
/// `Some(user)` (with a user namespace if `user`), else in the caller's.
/// Like `fork`, the child goes on from here; only a single-threaded caller
/// may use it.
///
/// A raw `clone` runs none of the C library's fork handlers; the child runs
/// only this crate's code and `exec`s its commands, and its thread id is
/// asked of the kernel, never of the C library.
pub fn clone_call(namespaces: Option<bool>) -> Result<Cloned> {
    let mut flags = libc::CLONE_PIDFD | libc::SIGCHLD;
    if let Some(user) = namespaces {
        flags |= NAMESPACE_FLAGS;
        if !user {
            flags &= !libc::CLONE_NEWUSER;
        }
    }
    let mut pidfd: libc::c_int = -1;
    // SAFETY: clone with no new stack behaves like fork; CLONE_PIDFD writes
    // the pidfd into `pidfd` (the parent-tid argument).
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags as libc::c_ulong,
            0usize,
            &mut pidfd as *mut libc::c_int,
            0usize,
            0usize,
        )
    };
    match pid {
        0 => Ok(Cloned::Child),
        p if p > 0 => {
            // SAFETY: the kernel gave us this descriptor.
            Ok(Cloned::Parent(unsafe {
                <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(pidfd)
            }))
        }
        _ => Err(Error::last_os("clone into new namespaces")),
    }
}

/// Creates a fork server's template process (`clone`, no pidfd): in a
/// new mount namespace, and a new user namespace if `user`. The caller's
/// PID and IPC namespaces are kept: each call gets its own of those when
/// the template clones it. Like `fork`, the child goes on from here; only a
/// single-threaded caller may use it. Returns the child's pid to the
/// parent, 0 to the child.
pub fn clone_template(user: bool) -> Result<libc::pid_t> {
    let mut flags = libc::CLONE_NEWNS | libc::SIGCHLD;
    if user {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: clone with no new stack behaves like fork.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(Error::last_os("clone into a template's namespaces"));
    }
    Ok(pid as libc::pid_t)
}

/// In a process made by [`clone_call`] with namespaces: maps its ids (in a user
/// namespace), sets the PID namespace's `pid_max`, and mounts a `/proc` of
/// the namespace over the host's, so the call's processes can look up only
/// each other (Landlock still keeps `/proc` unreadable). Before the mounts
/// go read-only.
pub fn set_up_as_init(ids: Ids, user: bool, pid_max: Option<u64>, ipc_limits: bool) -> Result<()> {
    if user {
        map_ids(ids)?;
    }
    if let Some(max) = pid_max {
        set_pid_max(max)?;
    }
    mount_own_proc()?;
    if ipc_limits {
        limit_ipc()?;
    }
    Ok(())
}

/// Bounds what the call's IPC namespace may hold, from inside it: System V
/// shared memory to [`super::SHM_BYTES`] in all, few segments, message
/// queues and semaphore sets, and few POSIX message queues. The kernel lets
/// the namespace's own root set these (Linux 5.19+ for a user namespace's);
/// where it refuses, the call does not run.
pub fn limit_ipc() -> Result<()> {
    let page = 4096u64;
    let settings: [(&str, String); 8] = [
        ("/proc/sys/kernel/shmmax", super::SHM_BYTES.to_string()),
        (
            "/proc/sys/kernel/shmall",
            (super::SHM_BYTES / page).to_string(),
        ),
        ("/proc/sys/kernel/shmmni", "64".into()),
        ("/proc/sys/kernel/msgmni", "16".into()),
        ("/proc/sys/kernel/msgmnb", "65536".into()),
        // SEMMSL SEMMNS SEMOPM SEMMNI
        ("/proc/sys/kernel/sem", "250 8000 32 32".into()),
        ("/proc/sys/fs/mqueue/queues_max", "16".into()),
        ("/proc/sys/fs/mqueue/msgsize_max", "8192".into()),
    ];
    for (file, value) in settings {
        std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .and_then(|mut f| f.write_all(value.as_bytes()))
            .map_err(|e| Error::io(format!("bounding the call's IPC namespace ({file})"), e))?;
    }
    Ok(())
}

/// Sets the PID namespace's `pid_max` (Linux 6.14+), from inside it.
pub fn set_pid_max(max: u64) -> Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/sys/kernel/pid_max")
        .and_then(|mut f| f.write_all(max.to_string().as_bytes()))
        .map_err(|e| Error::io("setting the PID namespace's pid_max", e))
}

/// Mounts a `/proc` of the caller's PID namespace over the host's.
pub fn mount_own_proc() -> Result<()> {
    // SAFETY: mount(2) with valid C strings, in our own mount namespace.
    let mounted = unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if mounted != 0 {
        return Err(Error::last_os("mounting the namespace's /proc"));
    }
    Ok(())
}

/// Maps the ids a process had before its user namespace to themselves.
pub fn map_ids(ids: Ids) -> Result<()> {
    write_id_maps(ids.uid, ids.gid)
}

/// Maps the caller's own uid and gid to themselves, the one mapping a
/// process may write for itself. Other owners read as `nobody` inside;
/// access is still decided on the real ids.
fn write_id_maps(uid: libc::uid_t, gid: libc::gid_t) -> Result<()> {
    let write = |file: &str, text: &str| -> Result<()> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| Error::io(format!("writing {file}"), e))
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

fn mount_setattr(path: &std::ffi::CStr, recursive: bool, set: u64, clear: u64) -> Result<()> {
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
        return Err(Error::last_os(format!(
            "mount_setattr {}",
            path.to_string_lossy()
        )));
    }
    Ok(())
}

fn c_path(path: &std::path::Path) -> Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::Unsafe {
        path: path.to_path_buf(),
        why: "contains a NUL byte",
    })
}

/// Makes every mount read-only except `writable` (each bound onto itself,
/// made writable again, with no set-ID programs and no devices), covers
/// each of `hidden` with an empty read-only file system, so that not even
/// the names in them can be looked up, and mounts a fresh writable file
/// system in memory on each of `fresh` (the call's temporary directory,
/// gone with the namespace). Needs a mount namespace of our own.
pub fn remount_read_only(
    writable: &[PathBuf],
    hidden: &[PathBuf],
    fresh: &[PathBuf],
) -> Result<()> {
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
            return Err(Error::last_os("making mounts private"));
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
                return Err(Error::last_os(format!("hiding {}", dir.to_string_lossy())));
            }
        }
    }
    mount_fresh(fresh)?;
    // SAFETY: mount(2) with valid C strings; changes only our namespace.
    unsafe {
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
                return Err(Error::last_os(format!("binding {}", dir.to_string_lossy())));
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

/// Binds each pinned path onto itself and each read-only path read-only
/// over itself, in the call's mount namespace, so that no command can
/// rename, remove, replace or change them. Each is opened without following
/// a link anywhere on its way (a directory swapped for a link since the
/// survey leads nowhere); one that is gone, or is a link now, is passed
/// over: the check after the call sees whatever took its place.
pub fn protect(protect: &super::Protect) -> Result<()> {
    for path in &protect.pinned {
        bind_over_itself(path, false)?;
    }
    for path in &protect.read_only {
        bind_over_itself(path, true)?;
    }
    Ok(())
}

/// Opens `path` (`O_PATH`) without following a link anywhere on its way,
/// the last component included: a link there is opened as the link.
pub(super) fn open_without_links(path: &std::path::Path) -> rustix::io::Result<OwnedFd> {
    let how = rustix::fs::ResolveFlags::NO_SYMLINKS | rustix::fs::ResolveFlags::NO_MAGICLINKS;
    let flags =
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
    rustix::fs::openat2(rustix::fs::CWD, path, flags, rustix::fs::Mode::empty(), how).or_else(|e| {
        match e {
            // Kernels before openat2: the last component is still not followed.
            rustix::io::Errno::NOSYS => {
                rustix::fs::openat(rustix::fs::CWD, path, flags, rustix::fs::Mode::empty())
            }
            e => Err(e),
        }
    })
}

/// Whether what `opened` opened (without following it) is of type `kind`.
fn is_of_type(opened: &OwnedFd, kind: rustix::fs::FileType) -> bool {
    rustix::fs::fstat(opened).is_ok_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode) == kind)
}

/// Whether what `opened` opened (without following it) is a link.
pub(super) fn is_link(opened: &OwnedFd) -> bool {
    is_of_type(opened, rustix::fs::FileType::Symlink)
}

/// Whether what `opened` opened is a directory.
fn is_dir(opened: &OwnedFd) -> bool {
    is_of_type(opened, rustix::fs::FileType::Directory)
}

fn bind_over_itself(path: &std::path::Path, read_only: bool) -> Result<()> {
    let target = match open_without_links(path) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
            return Ok(());
        }
        Err(e) => return Err(Error::io(format!("protecting {}", path.display()), e)),
    };
    if is_link(&target) {
        return Ok(());
    }
    // Not recursive: the copy holds no other mount, so making it read-only
    // touches this entry alone.
    let protecting = format!("protecting {}", path.display());
    let tree = open_tree_at(&target, false, &protecting)?;
    if read_only {
        set_tree_attributes(&tree, libc::MOUNT_ATTR_RDONLY, 0)
            .map_err(|e| e.within(&protecting))?;
    }
    move_tree_onto(&tree, &target, &protecting)
}

/// How a path appears in a call's file system view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read-only, no set-ID programs.
    ReadOnly,
    /// Writable, no set-ID programs, no devices.
    Writable,
    /// A device file, readable and writable, on a read-only mount (its
    /// metadata cannot change).
    Device,
}

fn open_tree(path: &std::path::Path) -> Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    let c = c_path(path)?;
    // SAFETY: open_tree with a valid C string.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            c.as_ptr(),
            (libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC) as libc::c_uint
                | libc::AT_RECURSIVE as libc::c_uint
                | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(Error::last_os(format!(
            "copying the mount of {}",
            path.display()
        )));
    }
    // SAFETY: the kernel gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// A detached copy of the mount at `opened` (see [`open_without_links`]),
/// with the mounts beneath it if `recursive`; `what` names it in errors.
fn open_tree_at(opened: &OwnedFd, recursive: bool, what: &str) -> Result<OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let mut flags = (libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC) as libc::c_uint
        | libc::AT_EMPTY_PATH as libc::c_uint;
    if recursive {
        flags |= libc::AT_RECURSIVE as libc::c_uint;
    }
    // SAFETY: open_tree with a valid descriptor and an empty C string.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, opened.as_raw_fd(), c"".as_ptr(), flags) };
    if fd < 0 {
        return Err(Error::last_os(what.to_owned()));
    }
    // SAFETY: the kernel gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Mounts a detached tree on what `target` opened (see
/// [`open_without_links`]); `what` names it in errors.
fn move_tree_onto(tree: &OwnedFd, target: &OwnedFd, what: &str) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: move_mount between two valid descriptors, empty paths.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            target.as_raw_fd(),
            c"".as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    if rc != 0 {
        return Err(Error::last_os(what.to_owned()));
    }
    Ok(())
}

fn set_tree_attributes(tree: &OwnedFd, set: u64, clear: u64) -> Result<()> {
    use std::os::fd::AsRawFd;
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr on a detached mount's descriptor, with a
    // correctly sized struct.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc != 0 {
        return Err(Error::last_os("setting a mount's attributes"));
    }
    Ok(())
}

fn move_tree(tree: &OwnedFd, to: &std::path::Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let c = c_path(to)?;
    // SAFETY: move_mount from a detached mount's descriptor to a path.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if rc != 0 {
        return Err(Error::last_os(format!("mounting {}", to.display())));
    }
    Ok(())
}

/// Opens `name` in `dir` (`O_PATH`) without following a link, the name
/// itself included: a link is opened as the link.
fn open_beneath(dir: &OwnedFd, name: &std::ffi::OsStr) -> rustix::io::Result<OwnedFd> {
    let how = rustix::fs::ResolveFlags::NO_SYMLINKS
        | rustix::fs::ResolveFlags::NO_MAGICLINKS
        | rustix::fs::ResolveFlags::BENEATH;
    let flags =
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
    rustix::fs::openat2(dir, name, flags, rustix::fs::Mode::empty(), how).or_else(|e| match e {
        // Kernels before openat2: one name, not followed if it is a link.
        rustix::io::Errno::NOSYS => rustix::fs::openat(dir, name, flags, rustix::fs::Mode::empty()),
        e => Err(e),
    })
}

/// The directory `relative` below `base`, each missing directory on the
/// way made, one component at a time and never through a link: None when
/// a component is a link or not a directory.
fn make_way(base: &OwnedFd, relative: &std::path::Path) -> std::io::Result<Option<OwnedFd>> {
    let mut dir = open_beneath(base, std::ffi::OsStr::new("."))?;
    for component in relative.components() {
        let std::path::Component::Normal(name) = component else {
            return Ok(None);
        };
        let next = match open_beneath(&dir, name) {
            Err(rustix::io::Errno::NOENT) => {
                match rustix::fs::mkdirat(&dir, name, rustix::fs::Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                open_beneath(&dir, name)?
            }
            opened => opened?,
        };
        if !is_dir(&next) {
            return Ok(None);
        }
        dir = next;
    }
    Ok(Some(dir))
}

/// Whether `path` is one of the system's own paths a view holds (not a
/// root or a directory the user named), spelled as the lists spell it.
///
/// The spelling is compared byte for byte, not component by component:
/// the fork server asks this of every source before every call, and a
/// path spelled otherwise is only ever taken the stricter way, as a root
/// (opened without following a link).
pub(super) fn is_system_path(path: &std::path::Path) -> bool {
    let path = path.as_os_str();
    [super::SYSTEM_DIRS, super::ETC_FILES, super::DEVICES]
        .iter()
        .any(|list| list.iter().any(|p| std::ffi::OsStr::new(p) == path))
}

/// Where the new root is built before the switch: any directory the host
/// has. What lies beneath it was copied first, so nothing is lost.
const BUILD_AT: &str = "/tmp";

/// Gives the call a file system that holds only what it may use: a new
/// root in memory (read-only) holding each of `sources` at its own path,
/// bound as its [`Access`] says, links among them as they are (`/bin ->
/// usr/bin`), `/dev/fd` and the standard streams as links into its own
/// `/proc`, its own `/proc`, and a fresh writable file system in memory on
/// each of `fresh`. Paths outside do not exist at all, so not even their
/// metadata can be asked (what bubblewrap does). Needs a mount namespace
/// of our own; sources that do not exist are passed over.
pub fn enter_view(sources: &[(PathBuf, Access)], fresh: &[PathBuf]) -> Result<()> {
    build_view(sources, fresh)?;
    mount_fresh(fresh)
}

/// A root or `--bash-read` directory as the view holds it: the device and
/// inode of the directory its mount was copied from, looked at on the
/// handle the copy was made from (not by its path, which may lead
/// elsewhere by the time the view is built: beneath a directory the view
/// shows live, a mount moves with its directory when the host renames it).
#[derive(Debug)]
pub struct Held {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
}

/// What [`build_template_view`] built.
#[derive(Debug)]
pub struct TemplateView {
    /// The writable sources it mounted: a read-only call makes those
    /// read-only in its copy.
    pub writable: Vec<PathBuf>,
    /// Each root and `--bash-read` directory it mounted.
    pub held: Vec<Held>,
}

/// Builds the view of [`enter_view`] once, for a fork server's template
/// (see `sandbox/template.rs`): the same root, with the `/proc` this
/// process sees and empty directories where each call mounts its fresh
/// file systems, every mount private so that nothing a call mounts in its
/// copy reaches the template or another call.
pub fn build_template_view(
    sources: &[(PathBuf, Access)],
    fresh: &[PathBuf],
) -> Result<TemplateView> {
    let mounted: Vec<PathBuf> = sources
        .iter()
        .filter(|(path, access)| {
            // Opened as build_view opens a root: a root whose way holds a
            // link is not in the view.
            *access == Access::Writable && open_without_links(path).is_ok_and(|o| !is_link(&o))
        })
        .map(|(path, _)| path.clone())
        .collect();
    let held = build_view(sources, fresh)?;
    make_private()?;
    Ok(TemplateView {
        writable: mounted,
        held,
    })
}

/// A call's part of a view copied from a template (its mount namespace is
/// a copy of the template's, made by `clone`): each of `read_only` (the
/// template's writable sources, for a read-only call) made read-only with
/// every mount beneath it, and a fresh writable file system in memory on
/// each of `fresh`. A copy made in a new user namespace has its mounts'
/// read-only flag locked on, never off, which is why the template holds the
/// roots writable and a read-only call takes the right away.
pub fn enter_template_copy(read_only: &[PathBuf], fresh: &[PathBuf]) -> Result<()> {
    make_read_only(read_only)?;
    mount_fresh(fresh)
}

/// Makes each of `paths` (mount points in a template's copy) read-only,
/// with everything mounted beneath it.
pub fn make_read_only(paths: &[PathBuf]) -> Result<()> {
    for path in paths {
        mount_setattr(&c_path(path)?, true, libc::MOUNT_ATTR_RDONLY, 0)?;
    }
    Ok(())
}

/// Takes away the fresh file systems [`mount_fresh`] put on `fresh`: a
/// supervisor made ahead of its call mounted them before it knew the call
/// was read-only, which has none.
pub fn unmount_fresh(fresh: &[PathBuf]) -> Result<()> {
    for dir in fresh {
        let dir = c_path(dir)?;
        // SAFETY: umount2(2) with a valid C string, in our own namespace.
        if unsafe { libc::umount2(dir.as_ptr(), libc::MNT_DETACH) } != 0 {
            return Err(Error::last_os(format!(
                "taking away the temporary file system on {}",
                dir.to_string_lossy()
            )));
        }
    }
    Ok(())
}

/// The root of [`enter_view`], without the fresh file systems (their mount
/// points are made).
fn build_view(sources: &[(PathBuf, Access)], fresh: &[PathBuf]) -> Result<Vec<Held>> {
    make_private()?;
    let mut held = Vec::new();
    enum Copy {
        Link(PathBuf),
        Tree(OwnedFd, bool),
    }
    let mut sources: Vec<&(PathBuf, Access)> = sources.iter().collect();
    sources.sort_by_key(|(p, _)| p.components().count());
    // First a detached copy of every source, before anything is mounted.
    let mut copies = Vec::new();
    // The user and group databases are the sandbox's own: the host's lines
    // for root, the server's user and nobody, not every account's.
    let mut own_files = Vec::new();
    for (path, access) in sources {
        if let Some(kept) = own_account_lines(path) {
            own_files.push((path, kept));
            continue;
        }
        // The system's own paths are taken as the host has them (`/bin ->
        // usr/bin` stays a link). The roots and --bash-read directories,
        // canonical when the server started, are opened without following
        // any link, and their type is taken from what was opened: a
        // directory on their way that a command swapped for a link cannot
        // bring a path from outside into the view (the source is then left
        // out), and one that is a link now is left out too.
        let (tree, is_dir) = if is_system_path(path) {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                if let Ok(target) = std::fs::read_link(path) {
                    copies.push((path, Copy::Link(target)));
                }
                continue;
            }
            (open_tree(path)?, meta.is_dir())
        } else {
            match open_without_links(path) {
                Ok(opened) if !is_link(&opened) => {
                    let copying = format!("copying the mount of {}", path.display());
                    let tree = open_tree_at(&opened, true, &copying)?;
                    let stat =
                        rustix::fs::fstat(&opened).map_err(|e| Error::io(copying.clone(), e))?;
                    held.push(Held {
                        path: path.clone(),
                        dev: stat.st_dev,
                        ino: stat.st_ino,
                    });
                    (tree, is_dir(&opened))
                }
                Ok(_) => {
                    tracing::warn!("left {} out of the call's view: a link", path.display());
                    continue;
                }
                Err(rustix::io::Errno::NOENT) => continue,
                Err(e) => {
                    tracing::warn!("left {} out of the call's view: {e}", path.display());
                    continue;
                }
            }
        };
        let (set, clear) = match access {
            Access::ReadOnly => (libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID, 0),
            Access::Writable => (
                libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV,
                libc::MOUNT_ATTR_RDONLY,
            ),
            // Read-only too: a device node on a read-only mount can still
            // be opened for writing (only regular files, directories and
            // links are refused), but its mode, owner, times and xattrs,
            // the host's own, cannot change (found by an attacker: a call
            // of a server run as root could `chmod 000 /dev/null`).
            Access::Device => (
                libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NOEXEC,
                0,
            ),
        };
        set_tree_attributes(&tree, set, clear)?;
        copies.push((path, Copy::Tree(tree, is_dir)));
    }
    // The namespace's own /proc, mounted before: a user namespace may not
    // mount a new one where none is visible.
    let proc = open_tree(std::path::Path::new("/proc"))?;
    let build = std::path::Path::new(BUILD_AT);
    // SAFETY: mount(2) with valid C strings, in our own mount namespace.
    let mounted = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            c"/tmp".as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"size=1m,nr_inodes=4096,mode=755".as_ptr().cast(),
        )
    };
    if mounted != 0 {
        return Err(Error::last_os("mounting the call's new root"));
    }
    let inside = |path: &std::path::Path| build.join(path.strip_prefix("/").unwrap_or(path));
    let made = |what: &str, path: &std::path::Path, e: std::io::Error| {
        Error::io(
            format!("{what} {} in the call's new root", path.display()),
            e,
        )
    };
    let build_dir =
        open_without_links(build).map_err(|e| Error::io("opening the call's new root", e))?;
    for (path, copy) in &copies {
        let at = inside(path);
        // The way to each mount point is made and opened one directory at
        // a time, never through a link: a source inside another (a root
        // inside a root) has its way in the outer copy, which is the host's
        // own tree, where a command may have swapped a directory for a link
        // to anywhere. Nothing is then made or mounted outside the view.
        let relative = path.strip_prefix("/").unwrap_or(path);
        let (Some(parent), Some(name)) = (relative.parent(), relative.file_name()) else {
            continue;
        };
        let Some(parent_dir) = make_way(&build_dir, parent).map_err(|e| made("making", &at, e))?
        else {
            tracing::warn!(
                "left {} out of the call's view: a link on its way",
                path.display()
            );
            continue;
        };
        match copy {
            Copy::Link(target) => match rustix::fs::symlinkat(target, &parent_dir, name) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(made("linking", &at, e.into())),
            },
            Copy::Tree(tree, is_dir) => {
                if let Err(rustix::io::Errno::NOENT) = open_beneath(&parent_dir, name) {
                    let created = if *is_dir {
                        rustix::fs::mkdirat(
                            &parent_dir,
                            name,
                            rustix::fs::Mode::from_raw_mode(0o755),
                        )
                    } else {
                        create_file_beneath(&parent_dir, name).map(drop)
                    };
                    match created {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(made("making", &at, e.into())),
                    }
                }
                match open_beneath(&parent_dir, name) {
                    Ok(target) if !is_link(&target) => {
                        move_tree_onto(tree, &target, &format!("mounting {}", at.display()))?
                    }
                    Ok(_) => {
                        tracing::warn!("left {} out of the call's view: a link", path.display())
                    }
                    Err(e) => {
                        tracing::warn!("left {} out of the call's view: {e}", path.display());
                    }
                }
            }
        }
    }
    for (path, text) in &own_files {
        let relative = path.strip_prefix("/").unwrap_or(path);
        let (Some(parent), Some(name)) = (relative.parent(), relative.file_name()) else {
            continue;
        };
        let at = inside(path);
        let Some(parent_dir) = make_way(&build_dir, parent).map_err(|e| made("making", &at, e))?
        else {
            continue;
        };
        let file =
            create_file_beneath(&parent_dir, name).map_err(|e| made("making", &at, e.into()))?;
        std::fs::File::from(file)
            .write_all(text.as_bytes())
            .map_err(|e| made("writing", &at, e))?;
    }
    for (name, target) in [
        ("dev/fd", "/proc/self/fd"),
        ("dev/stdin", "/proc/self/fd/0"),
        ("dev/stdout", "/proc/self/fd/1"),
        ("dev/stderr", "/proc/self/fd/2"),
    ] {
        let at = build.join(name);
        if at.parent().is_some_and(std::path::Path::is_dir) {
            let _ = std::os::unix::fs::symlink(target, at);
        }
    }
    std::fs::create_dir_all(build.join("proc")).map_err(|e| made("making", build, e))?;
    move_tree(&proc, &build.join("proc"))?;
    for dir in fresh {
        let at = inside(dir);
        let relative = dir.strip_prefix("/").unwrap_or(dir);
        if make_way(&build_dir, relative)
            .map_err(|e| made("making", &at, e))?
            .is_none()
        {
            return Err(Error::Unsafe {
                path: at.to_path_buf(),
                why: "a link on its way",
            });
        }
    }
    // SAFETY: chdir, pivot_root and umount2 with valid C strings: the new
    // root goes on top of the old, which is then detached.
    unsafe {
        if libc::chdir(c"/tmp".as_ptr()) != 0
            || libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0
            || libc::umount2(c".".as_ptr(), libc::MNT_DETACH) != 0
            || libc::chdir(c"/".as_ptr()) != 0
        {
            return Err(Error::last_os("switching to the call's new root"));
        }
    }
    // A file system can be mounted on a directory of a read-only one.
    mount_setattr(c"/", false, libc::MOUNT_ATTR_RDONLY, 0)?;
    Ok(held)
}

/// A new file `name` in `dir`, mode 0644, never through a link, for
/// writing.
fn create_file_beneath(dir: &OwnedFd, name: &std::ffi::OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        rustix::fs::OFlags::CREATE
            | rustix::fs::OFlags::EXCL
            | rustix::fs::OFlags::WRONLY
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
}

/// The files a view holds its own copies of (see [`own_account_lines`]).
pub const OWN_ACCOUNT_FILES: [&str; 2] = ["/etc/passwd", "/etc/group"];

/// For `/etc/passwd` and `/etc/group`: the host's lines for root, this
/// process's own user or group, and nobody (a program asks for its own
/// name, `id` and `ls -l` show owners); None for any other path. Empty
/// when the host's file cannot be read.
fn own_account_lines(path: &std::path::Path) -> Option<String> {
    // SAFETY: getuid and getgid cannot fail.
    let own = unsafe {
        if path == std::path::Path::new(OWN_ACCOUNT_FILES[0]) {
            libc::getuid()
        } else if path == std::path::Path::new(OWN_ACCOUNT_FILES[1]) {
            libc::getgid()
        } else {
            return None;
        }
    };
    let text = std::fs::read_to_string(path).unwrap_or_default();
    Some(kept_account_lines(&text, &[0, own, 65534]))
}

/// The lines of a passwd or group file whose id (the third field) is one
/// of `ids`.
fn kept_account_lines(text: &str, ids: &[u32]) -> String {
    text.lines()
        .filter(|line| {
            line.split(':')
                .nth(2)
                .and_then(|id| id.parse::<u32>().ok())
                .is_some_and(|id| ids.contains(&id))
        })
        .flat_map(|line| [line, "\n"])
        .collect()
}

fn make_private() -> Result<()> {
    // SAFETY: mount(2) with valid C strings; changes only our namespace.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(Error::last_os("making mounts private"));
    }
    Ok(())
}

/// Mounts a fresh writable file system in memory on each of `fresh`.
pub fn mount_fresh(fresh: &[PathBuf]) -> Result<()> {
    let options = std::ffi::CString::new(format!(
        "size={},nr_inodes={},mode=700",
        super::TEMP_SIZE,
        super::TEMP_INODES
    ))
    .map_err(|_| Error::request("bad tmpfs options"))?;
    for dir in fresh {
        let dir = c_path(dir)?;
        // SAFETY: mount(2) with valid C strings, in our own namespace.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                dir.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                options.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(Error::last_os(format!(
                "mounting a temporary file system on {}",
                dir.to_string_lossy()
            )));
        }
    }
    Ok(())
}

/// As the PID namespace's init: kills every other process in it and reaps
/// them (and any orphan), so none is left when this returns.
pub fn kill_everything_as_init() {
    // SAFETY: kill(-1) from a namespace's init reaches every process of
    // the namespace but itself; then reap until none is left.
    unsafe {
        libc::kill(-1, libc::SIGKILL);
        while libc::waitpid(-1, std::ptr::null_mut(), 0) > 0 {}
    }
}

/// Makes the caller a child subreaper: orphaned descendants become its
/// children instead of init's, so it can kill and reap them.
pub fn become_subreaper() -> Result<()> {
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
        return Err(Error::last_os("PR_SET_CHILD_SUBREAPER"));
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_account_files_keep_root_the_user_and_nobody() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n\
                      alice:x:1000:1000::/home/alice:/bin/bash\n\
                      bob:x:1001:1001::/home/bob:/bin/bash\n\
                      # a comment\n\
                      nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n";
        assert_eq!(
            super::kept_account_lines(passwd, &[0, 1000, 65534]),
            "root:x:0:0:root:/root:/bin/bash\n\
             alice:x:1000:1000::/home/alice:/bin/bash\n\
             nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n"
        );
    }

    use super::*;

    /// The way to a mount point in a view under construction runs through
    /// copies of the roots, where a command may have swapped a directory for
    /// a link to anywhere: the way is made and opened without following it,
    /// so nothing is made outside.
    #[test]
    fn the_way_to_a_mount_point_is_never_made_through_a_link() {
        let base = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("r")).unwrap();
        std::os::unix::fs::symlink(outside.path(), base.path().join("r/sub")).unwrap();
        std::fs::write(base.path().join("r/file"), "").unwrap();
        let base_dir = open_without_links(base.path()).unwrap();

        let through_link = make_way(&base_dir, std::path::Path::new("r/sub/shared")).unwrap();
        assert!(through_link.is_none());
        let through_file = make_way(&base_dir, std::path::Path::new("r/file/x")).unwrap();
        assert!(through_file.is_none());
        let made: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert!(made.is_empty(), "made outside: {made:?}");

        // A way of directories is made where it is missing, and opened.
        let way = make_way(&base_dir, std::path::Path::new("r/a/b")).unwrap();
        assert!(way.is_some());
        assert!(base.path().join("r/a/b").is_dir());
        // The last name is opened as itself: a link is seen as a link.
        let name = std::ffi::OsStr::new("sub");
        let r = make_way(&base_dir, std::path::Path::new("r"))
            .unwrap()
            .unwrap();
        assert!(is_link(&open_beneath(&r, name).unwrap()));
    }
}
