//! The fork server: one long-lived supervisor process per server, so that a
//! call does not pay for starting a program, probing the kernel, or
//! compiling its Landlock ruleset and seccomp filters.
//!
//! The server starts it once (this binary again, `fork-server` mode) on a
//! thread of its own that lives as long as the server, and hands it the
//! server's confinement. It probes the kernel's layers, builds the ruleset
//! and filters, answers with the layers, and then, for each call, receives
//! four descriptors over a `SOCK_SEQPACKET` socket (the plan to read, the
//! output and error pipes, the report pipe), forks a per-call supervisor
//! that takes them as its descriptors 0 to 3, and sends back a pidfd of it,
//! with which the server can stop it without any pid-reuse race. Where the
//! call's view can be built once, a template process of its own
//! ([`Template`]) holds it and forks the supervisors instead, after the
//! fork server has checked that the view is still current.
//!
//! It is single-threaded, so forking is safe, and it dies with the server
//! (`PR_SET_PDEATHSIG`); every per-call supervisor dies with it.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};

use super::error::{Error, Result};
use super::supervisor::{self, Prebuilt};
use super::template::{self, Template};
use super::{Confinement, Layers, SUPERVISOR_ARG, namespaces, probe};

/// The largest message: the server's confinement (roots and directories).
const MAX_MESSAGE: usize = 1 << 20;

/// How long the server waits for the fork server to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The server's end.
#[derive(Debug)]
pub struct ForkServer {
    /// Non-blocking once started; one exchange at a time.
    socket: tokio::sync::Mutex<OwnedFd>,
    /// What this kernel provides, as the fork server found it.
    pub layers: Layers,
}

pub(super) fn send(socket: &OwnedFd, bytes: &[u8], fds: &[BorrowedFd<'_>]) -> std::io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(std::io::Error::other(
            "too many descriptors for one message",
        ));
    }
    rustix::net::sendmsg(
        socket,
        &[IoSlice::new(bytes)],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}

/// One message and the descriptors that came with it. Empty at end of input.
pub(super) fn receive(socket: &OwnedFd, max: usize) -> std::io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut buf = vec![0u8; max];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let msg = rustix::net::recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut buf)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received);
        }
    }
    buf.truncate(msg.bytes);
    Ok((buf, fds))
}

impl ForkServer {
    /// Starts the fork server from `exe` with the server's confinement and
    /// waits for its answer. Blocks: call it on a thread that lives as long
    /// as the server (the fork server dies when that thread does).
    pub fn start(exe: &Path, base: &Confinement) -> Result<ForkServer> {
        let cannot = |e: std::io::Error| Error::io("starting the sandbox's fork server", e);
        let (ours, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| cannot(e.into()))?;
        Command::new(exe)
            .args([SUPERVISOR_ARG, "fork-server"])
            .env_clear()
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(cannot)?;
        let timeout = rustix::net::sockopt::set_socket_timeout(
            &ours,
            rustix::net::sockopt::Timeout::Recv,
            Some(ANSWER_TIMEOUT),
        );
        timeout.map_err(|e| cannot(e.into()))?;
        let config =
            serde_json::to_vec(base).map_err(|e| Error::io("encoding the confinement", e))?;
        send(&ours, &config, &[]).map_err(cannot)?;
        let (hello, _) = receive(&ours, MAX_MESSAGE).map_err(cannot)?;
        let layers = serde_json::from_slice(&hello).map_err(|e| {
            Error::Reported(format!("the sandbox's fork server answered badly: {e}"))
        })?;
        rustix::io::ioctl_fionbio(&ours, true).map_err(|e| cannot(e.into()))?;
        Ok(ForkServer {
            socket: tokio::sync::Mutex::new(ours),
            layers,
        })
    }

    /// Starts a call's supervisor with `fds` as its descriptors 0 to 3 (the
    /// plan, output, errors, report). Returns a pidfd of it.
    ///
    /// The exchange runs as a task of its own, so a caller dropped halfway
    /// (a cancelled call) cannot leave an answer on the socket for the next
    /// call to take; a supervisor started for a caller that is gone is
    /// killed.
    pub async fn launch(self: &Arc<Self>, fds: [OwnedFd; 4]) -> Result<OwnedFd> {
        let server = self.clone();
        let (answer_to, answer) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let launched = server.exchange(&fds).await.map(Unwatched::new);
            drop(fds);
            // Unwanted (the caller is gone), it is killed as it drops.
            let _ = answer_to.send(launched);
        });
        let lost = || Error::gone("the sandbox's fork server exchange was lost");
        answer
            .await
            .map_err(|_| lost())??
            .watched()
            .ok_or_else(lost)
    }

    /// One request and its answer, the socket held for both.
    async fn exchange(&self, fds: &[OwnedFd; 4]) -> Result<OwnedFd> {
        let gone = |e: std::io::Error| Error::io("asking the sandbox's fork server", e);
        let fds = fds.each_ref().map(AsFd::as_fd);
        let socket = self.socket.lock().await;
        // SAFETY: the socket stays open, and the same descriptor, for as
        // long as `watched` (dropped before the lock) lives.
        let watched = unsafe {
            AsyncFd::register_with_interest(socket.as_fd(), Interest::READABLE | Interest::WRITABLE)
        }
        .map_err(|e| gone(e.into_parts().1))?;
        loop {
            let mut ready = watched.writable().await.map_err(gone)?;
            match ready.try_io(|_| send(&socket, b"call", &fds)) {
                Ok(sent) => break sent.map_err(gone)?,
                Err(_would_block) => continue,
            }
        }
        let (answer, mut pidfds) = loop {
            let mut ready = watched.readable().await.map_err(gone)?;
            match ready.try_io(|_| receive(&socket, 4096)) {
                Ok(received) => break received.map_err(gone)?,
                Err(_would_block) => continue,
            }
        };
        drop(watched);
        match (answer.as_slice(), pidfds.pop()) {
            (b"ok", Some(pidfd)) => Ok(pidfd),
            _ => Err(Error::Reported(format!(
                "the sandbox's fork server could not start a call: {}",
                String::from_utf8_lossy(&answer)
            ))),
        }
    }
}

/// A call's supervisor on its way to its caller: killed if it is dropped
/// before the caller takes it. The caller can go away (a cancelled call)
/// after the answer was sent to it but before it read it; the supervisor
/// has its plan in its pipe already, and nothing else would ever stop it.
struct Unwatched(Option<OwnedFd>);

impl Unwatched {
    fn new(pidfd: OwnedFd) -> Unwatched {
        Unwatched(Some(pidfd))
    }

    /// The caller takes it: from now on the caller stops it.
    fn watched(mut self) -> Option<OwnedFd> {
        self.0.take()
    }
}

impl Drop for Unwatched {
    fn drop(&mut self) {
        if let Some(pidfd) = self.0.take() {
            let _ = rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL);
        }
    }
}

/// The fork server's `main`: its socket is descriptor 0.
pub fn main() -> i32 {
    // SAFETY: prctl with integer arguments; getppid cannot fail.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() == 1 {
            return 1;
        }
    }
    // Move the socket off descriptor 0, which calls use for their plan.
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) and dup2 on descriptors we own.
    let socket = unsafe {
        let fd = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 10);
        if fd < 0 {
            return 1;
        }
        <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd)
    };
    if let Ok(null) = std::fs::File::open("/dev/null") {
        // SAFETY: dup2 onto descriptor 0.
        unsafe { libc::dup2(null.as_raw_fd(), 0) };
    }
    let Ok((config, _)) = receive(&socket, MAX_MESSAGE) else {
        return 1;
    };
    let Ok(mut base) = serde_json::from_slice::<Confinement>(&config) else {
        return 1;
    };
    base.layers = probe::probe_here();
    let mut prebuilt = Prebuilt::new(&base);
    let hello = serde_json::to_vec(&base.layers).unwrap_or_default();
    if send(&socket, &hello, &[]).is_err() {
        return 1;
    }
    // Where it can, each call's mount namespace is a copy of a view built
    // once (a new one when it went stale); else each call builds its own.
    let mut template = Template::start(&prebuilt, &[socket.as_fd()]).ok();
    let templated = template.is_some();
    // The server learns how a call ended from its report pipe and stops it
    // through its pidfd; here ended supervisors are only reaped, after the
    // pidfd is taken, so that no pid is reused before it is.
    loop {
        // SAFETY: reaping our own children without blocking.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        // The template's watches are placed once no call has come for a
        // moment, or at the latest after a few calls that came one right
        // after another: the first call does not wait for them (nor share
        // a core with them), and calls in a row soon skip looking at the
        // sources.
        if let Some(current) = template.as_mut().filter(|t| !t.watches_placed())
            && (current.calls() >= WATCHES_AFTER_CALLS
                || !readable_within(&socket, WATCHES_AFTER_IDLE))
        {
            current.place_watches();
        }
        let Ok((message, fds)) = receive(&socket, 4096) else {
            return 1;
        };
        if message.is_empty() && fds.is_empty() {
            return 0;
        }
        if templated && template.as_mut().is_none_or(Template::is_stale) {
            // The old template is let go first, so that the new one does
            // not hold its socket open: it finishes its calls and exits.
            drop(template.take());
            // The system's paths the Landlock ruleset grants are opened
            // again, by name, like the view's; a root or --bash-read
            // directory is granted only while it is the one the server
            // started with, opened without following a link.
            prebuilt = prebuilt.again();
            let mut held = vec![socket.as_fd()];
            held.extend(fds.iter().map(AsFd::as_fd));
            template = Template::start(&prebuilt, &held).ok();
        }
        let launched = match &mut template {
            Some(current) => current.launch(&fds).inspect_err(|_| template = None),
            None => fork_call(&socket, &prebuilt, fds, None),
        };
        let answer = match launched {
            Ok(pidfd) => send(&socket, b"ok", &[pidfd.as_fd()]),
            Err(why) => send(&socket, why.to_string().as_bytes(), &[]),
        };
        if answer.is_err() {
            return 1;
        }
    }
}

/// How long the fork server waits, without a call, before it places the
/// template's watches.
const WATCHES_AFTER_IDLE: std::time::Duration = std::time::Duration::from_millis(50);

/// After this many calls of a template, its watches are placed even
/// without a pause.
const WATCHES_AFTER_CALLS: u32 = 3;

/// Whether `socket` has something to read within `wait`.
fn readable_within(socket: &OwnedFd, wait: std::time::Duration) -> bool {
    let mut watched = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: poll on one descriptor we own.
    unsafe { libc::poll(&mut watched, 1, millis) != 0 }
}

/// Forks a call's supervisor with `fds` as its descriptors 0 to 3; `view`:
/// the template's view this process holds, if it is a template (see
/// [`Template`]). `socket` is closed in the supervisor.
pub(super) fn fork_call(
    socket: &OwnedFd,
    prebuilt: &Prebuilt,
    fds: Vec<OwnedFd>,
    view: Option<&template::View>,
) -> Result<OwnedFd> {
    if fds.len() != 4 {
        return Err(Error::request(format!(
            "a call needs 4 descriptors, not {}",
            fds.len()
        )));
    }
    let namespaced = supervisor::namespaced(&prebuilt.base);
    let ids = namespaces::Ids::current();
    let user = prebuilt.base.layers.user_ns;
    match namespaces::clone_call(namespaced.then_some(user))? {
        namespaces::Cloned::Parent(pidfd) => {
            drop(fds);
            Ok(pidfd)
        }
        namespaces::Cloned::Child => {
            // SAFETY: in the new child: its own descriptors.
            unsafe {
                libc::close(socket.as_raw_fd());
            }
            take_as_first_four(fds);
            super::close_on_exec_from(4);
            let code = supervisor::run(prebuilt, namespaced.then_some(ids), view);
            // SAFETY: leave without running the fork server's destructors.
            unsafe { libc::_exit(code) };
        }
    }
}

/// Makes `fds` (a call's plan, output, errors and report) this process's
/// descriptors 0 to 3, kept across exec.
pub(super) fn take_as_first_four(fds: Vec<OwnedFd>) {
    for (target, fd) in fds.into_iter().enumerate() {
        let target = target as i32;
        if fd.as_raw_fd() == target {
            // Already in place: keep it open, and across exec.
            // SAFETY: fcntl on a descriptor we own.
            unsafe { libc::fcntl(target, libc::F_SETFD, 0) };
            std::mem::forget(fd);
        } else {
            // SAFETY: dup2 onto a descriptor number of our own; the
            // original closes when `fd` drops.
            unsafe { libc::dup2(fd.as_raw_fd(), target) };
        }
    }
}
