//! The call's view, built once: a template process, child of the fork
//! server, builds the new root a call gets (`namespaces::build_template_view`:
//! the system directories, named `/etc` files and devices, the roots, a
//! `/proc`) in a mount namespace of its own, and clones each call's
//! supervisor from there. `clone` with a new mount namespace copies the
//! template's mounts, which costs a fraction of building them (about 30
//! `open_tree` and `move_mount` calls and a `pivot_root`, 1.5 ms or more a
//! call); the call then does only what differs between calls: its fresh
//! temporary file system, the roots made read-only for a read-only call,
//! its own `/proc`, and the protected set bound over itself.
//!
//! Nothing a call mounts reaches the template or another call: the
//! template's mounts are private, each call's are in its own copy, and the
//! copy dies with the call.
//!
//! Why a process of its own rather than the fork server itself: the fork
//! server stays in the host's namespaces, where it sees when the view has
//! gone stale. A root (or a system directory, or an `/etc` file) replaced by
//! another with the same name, or any mount made or removed on the host,
//! would leave the template showing what was there when it was built;
//! before each call the fork server polls its mount table and, when a
//! directory on the way to a source has changed since the last call
//! (inotify, [`Watch`]; until its watches are placed, after the first
//! calls, always), compares each source's identity (device and
//! inode, or a link's target) with the one the view was built from; it
//! builds a new template when either changed. The old one finishes the
//! calls it started, then exits. A root's identity is looked up without
//! following a link on its way, as the view opens it; and a new view's
//! Landlock rules grant a root or `--bash-read` directory only while it is
//! the one the fork server started with (`Prebuilt::again`): a replaced
//! root is in the new view, but its contents are refused, as they were
//! before the view was built once.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::net::{AddressFamily, SocketFlags, SocketType};

use super::error::{Error, Result};
use super::fork_server::{fork_call, receive, send};
use super::namespaces;
use super::supervisor::{self, Prebuilt};

/// How long the fork server waits for a template to build its view or to
/// start a call.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// How a template's answer that its view is built begins; the identities
/// of the view's sources follow.
const READY: &[u8] = b"ready";

/// The longest such answer (a few dozen sources, a link's target each at
/// most).
const MAX_READY: usize = 1 << 20;

/// What a call copied from a template needs to know of the view.
#[derive(Debug)]
pub struct View {
    /// The writable sources the view holds: a read-only call makes them
    /// read-only in its copy.
    pub writable: Vec<PathBuf>,
}

/// What a view's source was when the view was built.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Absent,
    Link(PathBuf),
    Entry { dev: u64, ino: u64 },
}

impl Identity {
    /// Appends it to a message: a tag byte, then the device and inode, or
    /// the link's target's length and bytes.
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Identity::Absent => out.push(0),
            Identity::Link(target) => {
                out.push(1);
                let bytes = target.as_os_str().as_encoded_bytes();
                out.extend((bytes.len() as u64).to_le_bytes());
                out.extend(bytes);
            }
            Identity::Entry { dev, ino } => {
                out.push(2);
                out.extend(dev.to_le_bytes());
                out.extend(ino.to_le_bytes());
            }
        }
    }

    /// Reads one back from the front of `input`, which it advances.
    fn decode(input: &mut &[u8]) -> Option<Identity> {
        fn take<'a>(input: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            let (taken, rest) = input.split_at_checked(n)?;
            *input = rest;
            Some(taken)
        }
        fn number(input: &mut &[u8]) -> Option<u64> {
            Some(u64::from_le_bytes(take(input, 8)?.try_into().ok()?))
        }
        match take(input, 1)?[0] {
            0 => Some(Identity::Absent),
            1 => {
                let len = usize::try_from(number(input)?).ok()?;
                let target = take(input, len)?.to_vec();
                Some(Identity::Link(PathBuf::from(std::ffi::OsString::from_vec(
                    target,
                ))))
            }
            2 => Some(Identity::Entry {
                dev: number(input)?,
                ino: number(input)?,
            }),
            _ => None,
        }
    }
}

/// What `path` is now. The system's own paths are looked at by name, as
/// the view takes them; a root or `--bash-read` directory without following
/// a link anywhere on its way, as the view opens it (a directory on its
/// way swapped for a link makes it `Absent`, never what the link leads to).
fn identity(path: &Path) -> Identity {
    if namespaces::is_system_path(path) {
        return match std::fs::symlink_metadata(path) {
            Err(_) => Identity::Absent,
            Ok(meta) if meta.file_type().is_symlink() => {
                std::fs::read_link(path).map_or(Identity::Absent, Identity::Link)
            }
            Ok(meta) => Identity::Entry {
                dev: meta.dev(),
                ino: meta.ino(),
            },
        };
    }
    let Ok(opened) = namespaces::open_without_links(path) else {
        return Identity::Absent;
    };
    if namespaces::is_link(&opened) {
        // The link itself (opened with O_PATH | O_NOFOLLOW): its target.
        return rustix::fs::readlinkat(&opened, "", Vec::new()).map_or(Identity::Absent, |t| {
            Identity::Link(PathBuf::from(std::ffi::OsString::from_vec(t.into_bytes())))
        });
    }
    rustix::fs::fstat(&opened).map_or(Identity::Absent, |st| Identity::Entry {
        dev: st.st_dev,
        ino: st.st_ino,
    })
}

/// The fork server's end of a running template.
#[derive(Debug)]
pub struct Template {
    /// Calls go out and pidfds come back here; closing it tells the
    /// template to finish its calls and exit.
    socket: OwnedFd,
    /// Each source of the view as the view holds it. A root or
    /// `--bash-read` directory the view mounted as the directory its mount
    /// was copied from ([`namespaces::Held`]), whatever the host did
    /// meanwhile: a root swapped away and back during the build leaves the
    /// view holding the other directory, and the next call sees the
    /// difference. A system path (which the view may hold a substitute of,
    /// as `/etc/passwd`), and a source not mounted, as it was looked at on
    /// the host before the build.
    built_from: Vec<(PathBuf, Identity)>,
    /// The fork server's mount table, opened before the view was built: it
    /// polls as changed once any mount in the host's namespace changes.
    mounts: std::fs::File,
    /// Whether a source may have changed since it was last looked at.
    watch: Watch,
    /// Calls launched so far.
    calls: u32,
}

/// The directories whose entries name the view's sources, watched: while
/// none of them changed, no source can have been replaced, and a call's
/// start skips looking at each source again (about 45 lookups by path, a
/// tenth of a call's start). Any change in one of them (even a file made
/// in `/tmp` beside a root) only means the sources are looked at again.
#[derive(Debug)]
struct Watch {
    /// None where inotify cannot be had (its limits reached) or cannot be
    /// trusted (a directory on a file system not known local): every
    /// call's start looks at each source.
    inotify: Option<OwnedFd>,
    /// Each directory on the way to a source, by the path it is watched
    /// under: the path as written and as resolved (a system path may go
    /// through a link, `/lib64` to `/usr/lib64`; the directories it passes
    /// are on one or the other).
    directories: Vec<PathBuf>,
    /// Whether the watches are placed ([`Watch::place`]). The fork server
    /// places them between calls (after a pause, or after the template's
    /// third call), not before the view is built: adding a watch visits
    /// every name of the directory the kernel holds in memory, a few
    /// milliseconds for a busy `/tmp`, which the first call would wait
    /// for. Until then each call looks at the sources.
    placing: Placing,
}

/// How far a [`Watch`] is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placing {
    /// Not yet: every call looks at the sources.
    NotYet,
    /// Placed since the sources were last looked at: the next call looks
    /// at them once more, for a change made before the watches were there.
    JustPlaced,
    /// Placed and seen: a call looks only after an event.
    Placed,
}

/// File systems whose every change this kernel makes itself, so inotify
/// hears it (`statfs`'s magic numbers): a directory on any other (NFS,
/// SMB, FUSE, 9p, virtiofs, ...) turns the watch off.
const LOCAL_FILE_SYSTEMS: &[i64] = &[
    0xEF53,      // ext2, ext3, ext4
    0x5846_5342, // xfs
    0x9123_683E, // btrfs
    0x0102_1994, // tmpfs
    0x8584_58F6, // ramfs
    0x794C_7630, // overlayfs
    0xF2F5_2010, // f2fs
    0x2FC1_2FC1, // zfs
    0xCA45_1A4E, // bcachefs
    0x7371_7368, // squashfs
    0xE0F5_E1E2, // erofs
    0x4D44,      // vfat
    0x2011_BAB0, // exfat
    0x7366_746E, // ntfs3
    0x3153_464A, // jfs
    0x5265_4973, // reiserfs
    0x3434,      // nilfs2
];

impl Watch {
    fn new(sources: &[(PathBuf, namespaces::Access)]) -> Watch {
        let mut directories = std::collections::BTreeSet::new();
        for (path, _) in sources {
            let resolved = std::fs::canonicalize(path).ok();
            for way in std::iter::once(path.as_path()).chain(resolved.as_deref()) {
                directories.extend(way.ancestors().skip(1).map(Path::to_path_buf));
            }
        }
        let directories: Vec<PathBuf> = directories.into_iter().collect();
        // inotify hears only what this kernel does: a directory on a
        // network or FUSE file system can change behind its back.
        let all_local = directories
            .iter()
            .all(|dir| match rustix::fs::statfs(dir.as_path()) {
                // The field's type differs between architectures.
                #[allow(clippy::unnecessary_cast)]
                Ok(fs) => LOCAL_FILE_SYSTEMS.contains(&(fs.f_type as i64)),
                Err(e) => matches!(e, rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR),
            });
        use rustix::fs::inotify::CreateFlags;
        let inotify = if all_local {
            rustix::fs::inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()
        } else {
            None
        };
        Watch {
            inotify,
            directories,
            placing: Placing::NotYet,
        }
    }

    /// Places the watches, once: from then on a call's start looks at the
    /// sources only after a change on the way to one.
    fn place(&mut self) {
        if self.placing == Placing::NotYet {
            self.renew();
            self.placing = Placing::JustPlaced;
        }
    }

    /// Watches each directory as its path names it now (a directory put in
    /// another's place is watched from now on; the old one's watch is
    /// harmless). One that does not exist needs none: it can only come
    /// into being in a watched directory. Without a watch on each of the
    /// others, there is no watch at all.
    fn renew(&mut self) {
        use rustix::fs::inotify::WatchFlags;
        let Some(inotify) = &self.inotify else {
            return;
        };
        // A name made, removed or renamed in a directory, or the directory
        // itself removed or renamed: what can change which entry a path
        // leads to; and a change of mode, owner or ACL on the way, which
        // can take a source out of the server's reach (a root whose parent
        // became unreadable is left out of a view built now).
        let changes = WatchFlags::ATTRIB
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR;
        let all = self.directories.iter().all(|dir| {
            match rustix::fs::inotify::add_watch(inotify, dir.as_path(), changes) {
                Ok(_) | Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => true,
                Err(_) => false,
            }
        });
        if !all {
            self.inotify = None;
        }
    }

    /// Whether anything watched changed since the last call (or there is
    /// no watch, or it was placed since); then the watches are renewed,
    /// before the sources are looked at, so a change made while they are is
    /// seen by the next call.
    fn changed(&mut self) -> bool {
        let Some(inotify) = &self.inotify else {
            return true;
        };
        let unseen = match self.placing {
            Placing::NotYet => return true,
            Placing::JustPlaced => true,
            Placing::Placed => false,
        };
        self.placing = Placing::Placed;
        let mut events = [0u8; 4096];
        let mut any = false;
        // Read until empty: a full queue, an overflow or an error all count
        // as a change.
        loop {
            match rustix::io::read(inotify, &mut events) {
                Ok(0) => break,
                Ok(_) => any = true,
                Err(rustix::io::Errno::AGAIN) => break,
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => {
                    any = true;
                    break;
                }
            }
        }
        if any {
            self.renew();
        }
        any || unseen
    }
}

impl Template {
    /// Starts a template for the fork server's confinement and waits until
    /// its view is built. Err where no view can be built (no namespaces, or
    /// a root that holds the place the view is built in): each call then
    /// builds its own, as the supervisor does without a template.
    /// `not_inherited` (the fork server's socket to its server, and the
    /// descriptors of the call it is starting) is closed in the template:
    /// a pipe of a call held open there would never reach its end.
    pub fn start(prebuilt: &Prebuilt, not_inherited: &[BorrowedFd<'_>]) -> Result<Template> {
        let base = &prebuilt.base;
        if !supervisor::namespaced(base) || !supervisor::view_possible(base) {
            return Err(Error::request("this confinement has no view to build"));
        }
        let sources = supervisor::view_sources(base);
        let fresh: Vec<PathBuf> = base.temp.iter().cloned().collect();
        let cannot = |e: std::io::Error| Error::io("starting the view's template", e);
        let mounts = std::fs::File::open("/proc/self/mounts").map_err(cannot)?;
        // Its watches are placed after the first call is on its way
        // ([`Template::place_watches`]); until the sources are looked at
        // after that, each call looks at them.
        let watch = Watch::new(&sources);
        let before: Vec<Identity> = sources.iter().map(|(path, _)| identity(path)).collect();
        let (ours, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| cannot(e.into()))?;
        rustix::net::sockopt::set_socket_timeout(
            &ours,
            rustix::net::sockopt::Timeout::Recv,
            Some(ANSWER_TIMEOUT),
        )
        .map_err(|e| cannot(e.into()))?;
        let ids = namespaces::Ids::current();
        // SAFETY: getpid cannot fail.
        let fork_server = unsafe { libc::getpid() };
        if namespaces::clone_template(base.layers.user_ns)? == 0 {
            // The template: it holds only its own end and what the
            // prepared confinement opened.
            drop(ours);
            drop(mounts);
            drop(watch);
            for fd in not_inherited {
                // SAFETY: closing the fork server's descriptors in this
                // process only; none of them is used here.
                unsafe { libc::close(fd.as_raw_fd()) };
            }
            let code = serve(prebuilt, &theirs, ids, fork_server, &sources, &fresh);
            // SAFETY: leave without running the fork server's destructors.
            unsafe { libc::_exit(code) };
        }
        drop(theirs);
        let (answer, _) = receive(&ours, MAX_READY).map_err(cannot)?;
        let Some(mut in_view_identities) = answer.strip_prefix(READY) else {
            return Err(Error::Reported(format!(
                "the view's template could not be built: {}",
                String::from_utf8_lossy(&answer)
            )));
        };
        let mut built_from = Vec::with_capacity(sources.len());
        for ((path, _), before) in sources.iter().zip(before) {
            let Some(in_view) = Identity::decode(&mut in_view_identities) else {
                return Err(Error::Reported(
                    "the view's template answered badly".to_string(),
                ));
            };
            // A system path (the view holds substitutes of some, as
            // `/etc/passwd`) and what the view did not mount keep the host's
            // record from before the build.
            let recorded = match in_view {
                Identity::Entry { .. } if !namespaces::is_system_path(path) => in_view,
                _ => before,
            };
            built_from.push((path.clone(), recorded));
        }
        Ok(Template {
            socket: ours,
            built_from,
            mounts,
            watch,
            calls: 0,
        })
    }

    /// Whether the view may no longer show what its sources are now: a
    /// mount on the host changed, or a source's identity did (looked at
    /// only when the watch saw a change on the way to one).
    pub fn is_stale(&mut self) -> bool {
        let mut watched = libc::pollfd {
            fd: self.mounts.as_raw_fd(),
            events: libc::POLLPRI,
            revents: 0,
        };
        // SAFETY: poll on one descriptor we own, without waiting.
        let polled = unsafe { libc::poll(&mut watched, 1, 0) };
        polled != 0
            || (self.watch.changed()
                && self
                    .built_from
                    .iter()
                    .any(|(path, was)| identity(path) != *was))
    }

    /// Places the watches on the way to the sources, if not yet done: for
    /// the fork server to do between calls, once the first one is on its
    /// way.
    pub fn place_watches(&mut self) {
        self.watch.place();
    }

    /// Whether [`Template::place_watches`] was done.
    pub fn watches_placed(&self) -> bool {
        self.watch.placing != Placing::NotYet
    }

    /// How many calls it was asked to start.
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// Has the template start a call's supervisor with `fds` as its
    /// descriptors 0 to 3; returns a pidfd of it.
    pub fn launch(&mut self, fds: &[OwnedFd]) -> Result<OwnedFd> {
        self.calls = self.calls.saturating_add(1);
        let gone = |e: std::io::Error| Error::io("asking the view's template", e);
        let borrowed: Vec<BorrowedFd<'_>> = fds.iter().map(|fd| fd.as_fd()).collect();
        send(&self.socket, b"call", &borrowed).map_err(gone)?;
        let (answer, mut pidfds) = receive(&self.socket, 4096).map_err(gone)?;
        match (answer.as_slice(), pidfds.pop()) {
            (b"ok", Some(pidfd)) => Ok(pidfd),
            (b"", None) => Err(Error::gone("the view's template has exited")),
            _ => Err(Error::Reported(
                String::from_utf8_lossy(&answer).into_owned(),
            )),
        }
    }
}

/// The template's `main`: builds the view, says so, then starts a call's
/// supervisor for each request until the fork server closes the socket;
/// then waits for the calls it started (they die with it) and exits.
fn serve(
    prebuilt: &Prebuilt,
    socket: &OwnedFd,
    ids: namespaces::Ids,
    fork_server: libc::pid_t,
    sources: &[(PathBuf, namespaces::Access)],
    fresh: &[PathBuf],
) -> i32 {
    // SAFETY: prctl and getppid with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != fork_server {
            return 1;
        }
    }
    let built = if prebuilt.base.layers.user_ns {
        namespaces::map_ids(ids)
    } else {
        Ok(())
    }
    .and_then(|()| namespaces::build_template_view(sources, fresh));
    let built = match built {
        Ok(built) => built,
        Err(why) => {
            let _ = send(socket, why.to_string().as_bytes(), &[]);
            return 1;
        }
    };
    // What the view holds of each root and --bash-read directory, for the
    // fork server to compare with the host before each call; `Absent` for
    // what it did not mount.
    let mut ready = READY.to_vec();
    for (path, _) in sources {
        let held =
            built
                .held
                .iter()
                .find(|held| held.path == *path)
                .map_or(Identity::Absent, |held| Identity::Entry {
                    dev: held.dev,
                    ino: held.ino,
                });
        held.encode(&mut ready);
    }
    let view = View {
        writable: built.writable,
    };
    if ready.len() > MAX_READY || send(socket, &ready, &[]).is_err() {
        return 1;
    }
    // Supervisors for the next calls are made while no call is starting or
    // running (none yet, or the last one started has exited): made at once
    // after an answer, one would take a core from the call just started.
    // Two are kept, so that a call that follows another at once finds one
    // whose set-up has ended, not one still being made.
    let mut waiting = std::collections::VecDeque::with_capacity(WAITING);
    refill(&mut waiting, socket, prebuilt, &view);
    let mut running: Option<OwnedFd> = None;
    loop {
        // SAFETY: reaping our own children without blocking.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        match wait_for_call(socket, running.as_ref()) {
            Woken::Call => {}
            Woken::Ended => {
                running = None;
                refill(&mut waiting, socket, prebuilt, &view);
                continue;
            }
        }
        let Ok((message, fds)) = receive(socket, 4096) else {
            break;
        };
        if message.is_empty() && fds.is_empty() {
            break;
        }
        let launched = hand_to_waiting(&mut waiting, fds)
            // None is left: the call gets a supervisor made now.
            .or_else(|fds| fork_call(socket, prebuilt, fds, Some(&view)));
        let answer = match launched {
            Ok(pidfd) => {
                running = pidfd.try_clone().ok();
                send(socket, b"ok", &[pidfd.as_fd()])
            }
            Err(why) => send(socket, why.to_string().as_bytes(), &[]),
        };
        if answer.is_err() {
            break;
        }
    }
    // A supervisor still waiting for a call sees its socket close and exits.
    waiting.clear();
    // The calls still running would die with this process (their
    // parent-death signal): they end first.
    loop {
        // SAFETY: waiting for our own children.
        let reaped = unsafe { libc::waitpid(-1, std::ptr::null_mut(), 0) };
        if reaped < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return 0;
        }
    }
}

/// How many supervisors are made ahead of their calls.
const WAITING: usize = 2;

/// Makes supervisors ahead until [`WAITING`] wait.
fn refill(
    waiting: &mut std::collections::VecDeque<Waiting>,
    socket: &OwnedFd,
    prebuilt: &Prebuilt,
    view: &View,
) {
    while waiting.len() < WAITING {
        match Waiting::start(socket, prebuilt, view) {
            Ok(made) => waiting.push_back(made),
            Err(_) => return,
        }
    }
}

/// Hands a call's descriptors to the oldest supervisor still waiting;
/// the descriptors back when none is left.
fn hand_to_waiting(
    waiting: &mut std::collections::VecDeque<Waiting>,
    mut fds: Vec<OwnedFd>,
) -> Result<OwnedFd, Vec<OwnedFd>> {
    while let Some(ready) = waiting.pop_front() {
        match ready.hand(fds) {
            Ok(pidfd) => return Ok(pidfd),
            // It is gone: the next one.
            Err(back) => fds = back,
        }
    }
    Err(fds)
}

/// What woke the template.
enum Woken {
    /// The fork server wrote (a call, or the end).
    Call,
    /// The supervisor started last has exited.
    Ended,
}

/// Waits until the fork server writes, or the supervisor behind `running`
/// exits.
fn wait_for_call(socket: &OwnedFd, running: Option<&OwnedFd>) -> Woken {
    let mut watched = vec![libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    if let Some(pidfd) = running {
        watched.push(libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
    }
    let ready = loop {
        // SAFETY: poll on descriptors we hold, for as long as it takes.
        let ready = unsafe { libc::poll(watched.as_mut_ptr(), watched.len() as libc::nfds_t, -1) };
        if ready >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break ready;
        }
    };
    // A call first; an error is the receive's to report.
    if ready < 0 || watched[0].revents != 0 {
        Woken::Call
    } else {
        Woken::Ended
    }
}

/// A call's supervisor made ahead of its call, waiting for the call's
/// descriptors (see [`supervisor::run_handed`]): what a call's start costs
/// before its plan matters (the clone into new namespaces, their ids,
/// `/proc`, IPC limits and fresh temporary file system) is paid between
/// calls rather than within one.
struct Waiting {
    pidfd: OwnedFd,
    /// Where the call's descriptors go.
    handoff: OwnedFd,
}

impl Waiting {
    /// Makes one; `socket` (the template's own, to the fork server) is
    /// closed in it.
    fn start(socket: &OwnedFd, prebuilt: &Prebuilt, view: &View) -> Result<Waiting> {
        let (ours, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| Error::io("making a supervisor ahead", e))?;
        let ids = namespaces::Ids::current();
        match namespaces::clone_call(Some(prebuilt.base.layers.user_ns))? {
            namespaces::Cloned::Parent(pidfd) => Ok(Waiting {
                pidfd,
                handoff: ours,
            }),
            namespaces::Cloned::Child => {
                drop(ours);
                // SAFETY: in the new child: its own copy of the descriptor.
                unsafe { libc::close(socket.as_raw_fd()) };
                let code = supervisor::run_handed(prebuilt, ids, view, theirs);
                // SAFETY: leave without running the template's destructors.
                unsafe { libc::_exit(code) };
            }
        }
    }

    /// Hands it a call's descriptors; returns its pidfd, or the
    /// descriptors back if it is gone.
    fn hand(self, fds: Vec<OwnedFd>) -> Result<OwnedFd, Vec<OwnedFd>> {
        let borrowed: Vec<BorrowedFd<'_>> = fds.iter().map(|fd| fd.as_fd()).collect();
        match send(&self.handoff, b"call", &borrowed) {
            Ok(()) => Ok(self.pidfd),
            Err(_) => Err(fds),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(path: &Path) -> (PathBuf, namespaces::Access) {
        (path.to_path_buf(), namespaces::Access::ReadOnly)
    }

    #[test]
    fn a_watch_sees_each_change_on_the_way_to_a_source_and_nothing_else() {
        let scratch = tempfile::tempdir().unwrap();
        let top = scratch.path().join("top");
        let root = top.join("mid").join("root");
        std::fs::create_dir_all(&root).unwrap();
        let missing = top.join("later").join("file");
        let mut watch = Watch::new(&[source(&root), source(&missing)]);
        assert!(watch.inotify.is_some(), "inotify is there on Linux");
        // Until the watches are placed, and once after, every call looks.
        assert!(watch.changed() && watch.changed(), "not placed yet");
        watch.place();
        assert!(watch.changed(), "placed since the sources were looked at");
        assert!(!watch.changed(), "nothing changed since");

        // Inside the source itself: not on the way to it.
        std::fs::write(root.join("inside"), "x").unwrap();
        assert!(!watch.changed());

        // The mode of a directory on the way.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(top.join("mid"), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(watch.changed());
        assert!(!watch.changed(), "seen once");

        // A name made beside a directory on the way.
        std::fs::write(top.join("beside"), "x").unwrap();
        assert!(watch.changed());
        assert!(!watch.changed(), "seen once");

        // A directory on the way replaced by another: seen, and the new one
        // is watched from then on.
        std::fs::rename(top.join("mid"), top.join("old")).unwrap();
        std::fs::create_dir_all(top.join("mid").join("root")).unwrap();
        assert!(watch.changed());
        std::fs::remove_dir(top.join("mid").join("root")).unwrap();
        assert!(watch.changed(), "the new directory is watched");

        // A directory that did not exist, made, then changed beneath.
        std::fs::create_dir(top.join("later")).unwrap();
        assert!(watch.changed());
        std::fs::write(&missing, "x").unwrap();
        assert!(watch.changed(), "the directory made later is watched");
        assert!(!watch.changed());
    }

    #[test]
    fn identities_travel_from_the_template_as_they_were() {
        use std::os::unix::ffi::OsStringExt;
        let odd = PathBuf::from(std::ffi::OsString::from_vec(b"../t\xff\nx".to_vec()));
        let sent = [
            Identity::Entry {
                dev: 65024,
                ino: u64::MAX,
            },
            Identity::Absent,
            Identity::Link(odd),
            Identity::Link(PathBuf::new()),
        ];
        let mut message = Vec::new();
        for identity in &sent {
            identity.encode(&mut message);
        }
        let mut rest = message.as_slice();
        for identity in &sent {
            assert_eq!(Identity::decode(&mut rest).as_ref(), Some(identity));
        }
        assert!(rest.is_empty());
        // Cut short anywhere, or an unknown tag: nothing is made up.
        for end in 0..message.len() {
            let mut cut = &message[..end];
            let all = (0..sent.len()).all(|_| Identity::decode(&mut cut).is_some());
            assert!(!all, "cut at {end}");
        }
        assert_eq!(Identity::decode(&mut [7u8, 0, 0].as_slice()), None);
    }

    #[test]
    fn a_watch_over_a_file_system_not_known_local_is_off() {
        // /proc is no file system whose changes inotify reports: a source
        // beneath it is looked at before every call.
        let mut watch = Watch::new(&[source(Path::new("/proc/sys/kernel"))]);
        assert!(watch.inotify.is_none());
        assert!(watch.changed() && watch.changed());
    }
}
