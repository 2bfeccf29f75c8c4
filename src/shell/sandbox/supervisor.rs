//! The per-call supervisor: the server's own binary started again with
//! [`SUPERVISOR_ARG`](super::SUPERVISOR_ARG), one per command line.
//!
//! It reads the checked plan from standard input, enters the namespaces,
//! builds the Landlock ruleset, runs the pipelines (each command spawned
//! directly by its launcher thread, which has the seccomp filter installed,
//! and confined further before it executes the program, see the `spawn` module), and when the last one ends,
//! or the server asks it to stop with SIGTERM, kills and reaps every
//! process of the call. Then it writes how the commands ended to
//! descriptor 3 and exits. Standard output and error are the server's
//! pipes; the commands write to them directly.
//!
//! Its one other thread, the launcher, forks only while this one waits for
//! it, so either may fork freely. It dies with the server
//! (`PR_SET_PDEATHSIG`), and the namespace's init dies with it.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::{Error, Result};
use super::launcher::Launcher;
use super::limits::Limits;
use super::spawn::{self, Exec, Stream};
use super::{Confinement, landlock, limits, namespaces, seccomp, template};
use crate::shell::parse::Redirect;
use crate::shell::steps::{HiddenFailure, Sequence, Stage, StageStatus, Step, failed_start_status};

/// The most of a request the supervisor reads.
const MAX_REQUEST_BYTES: u64 = 16 << 20;

/// What the server hands the supervisor.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    pub steps: Vec<Step>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub confinement: Confinement,
    /// Bound over themselves in the call's mount namespace.
    #[serde(default)]
    pub protect: super::Protect,
}

/// How the commands ended, as the supervisor reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Report {
    /// The last pipeline that ran exited with this code.
    Exited(i32),
    /// The last pipeline's last command was killed by this signal.
    Signaled(i32),
    /// The server stopped the call (time-out, cancellation, output cap).
    Stopped,
    /// The sandbox could not be set up; nothing ran.
    Failed(String),
}

/// What the supervisor writes on descriptor 3 once every process of the
/// call is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finished {
    pub report: Report,
    /// Commands before the last of a pipeline that failed.
    #[serde(default)]
    pub hidden_failures: Vec<HiddenFailure>,
}

impl From<Report> for Finished {
    fn from(report: Report) -> Finished {
        Finished {
            report,
            hidden_failures: Vec::new(),
        }
    }
}

/// The supervisor's `main`. `args`: what follows [`super::SUPERVISOR_ARG`]:
/// `fork-server` (the server's long-lived one) or `run` (one call, plan on
/// standard input, report on descriptor 3). `probe` is the command-line
/// front end's (`print_probe` in `cli.rs`), since it prints.
pub fn main(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        Some("fork-server") => {
            super::close_on_exec_from(3);
            super::fork_server::main()
        }
        Some("run") => {
            super::close_on_exec_from(4);
            run_once()
        }
        _ => 2,
    }
}

/// What a fork server prepares once, for its server's confinement and that
/// confinement made read-only (git's configuration check): the paths the
/// Landlock ruleset grants, opened, and the compiled seccomp filter. A call
/// then only builds its ruleset from open descriptors and applies both.
pub struct Prebuilt {
    /// The server's confinement, with the layers the fork server found.
    pub base: Confinement,
    prepared: Vec<(Confinement, Result<Prepared>)>,
    /// What the roots and `--bash-read` directories were when the fork
    /// server started: Landlock grants them only while they still are.
    started: landlock::Started,
}

impl Prebuilt {
    /// Prepares `base` when the fork server starts.
    pub fn new(base: &Confinement) -> Prebuilt {
        Prebuilt::with(base, landlock::Started::look(base))
    }

    /// Prepares the same confinement again (for a new view's template):
    /// the system's paths are opened anew, the roots and `--bash-read`
    /// directories only where each is still the one the server started
    /// with (see [`landlock::Opened::open`]).
    pub fn again(&self) -> Prebuilt {
        Prebuilt::with(&self.base, self.started.clone())
    }

    fn with(base: &Confinement, started: landlock::Started) -> Prebuilt {
        let read_only = Confinement {
            writable: Vec::new(),
            read_only: true,
            temp: None,
            ..base.clone()
        };
        Prebuilt {
            base: base.clone(),
            prepared: [base.clone(), read_only]
                .into_iter()
                .map(|c| {
                    let prepared = Prepared::new(&c, Some(&started));
                    (c, prepared)
                })
                .collect(),
            started,
        }
    }

    fn find(&self, confinement: &Confinement) -> Option<&Result<Prepared>> {
        self.prepared
            .iter()
            .find(|(c, _)| c == confinement)
            .map(|(_, prepared)| prepared)
    }
}

/// The parts of a confinement that do not change from call to call.
pub struct Prepared {
    /// The paths Landlock grants, opened; None without Landlock.
    opened: Option<landlock::Opened>,
    filter: Option<std::sync::Arc<seccomp::Filter>>,
    limits: Limits,
}

impl Prepared {
    /// `started`: what the roots and `--bash-read` directories were when
    /// the fork server started, if this is one (see [`Prebuilt`]).
    fn new(confinement: &Confinement, started: Option<&landlock::Started>) -> Result<Prepared> {
        let layers = &confinement.layers;
        // A fresh temporary file system is opened per call, after it is
        // mounted; without a mount namespace the directory itself is used.
        let mut granted = confinement.clone();
        if layers.mount_ns {
            granted
                .writable
                .retain(|w| Some(w) != confinement.temp.as_ref());
        }
        Ok(Prepared {
            opened: (layers.landlock_abi > 0).then(|| landlock::Opened::open(&granted, started)),
            filter: layers
                .seccomp
                .then(|| {
                    let namespaced = layers.pid_ns || layers.mount_ns;
                    // An IPC namespace that could not be bounded is as good
                    // as the host's: System V IPC is refused there too.
                    seccomp::build(
                        confinement.read_only || !layers.mount_ns,
                        !namespaced || !layers.ipc_limits,
                    )
                })
                .transpose()?
                .map(std::sync::Arc::new),
            limits: Limits {
                // Without a user namespace an unprivileged user's limit
                // would count all of their processes on the machine.
                max_tasks: if layers.user_ns || layers.root {
                    confinement.max_tasks
                } else {
                    libc::RLIM_INFINITY
                },
                ..Limits::of(confinement)
            },
        })
    }

    /// The call's confinement, once its mounts are in place.
    fn confine(&self, confinement: &Confinement) -> Result<Confined> {
        let fresh: Vec<PathBuf> = if confinement.layers.mount_ns {
            confinement.temp.iter().cloned().collect()
        } else {
            Vec::new()
        };
        // The view's own account files are new files (not the host's the
        // ruleset grants), opened here, inside the view.
        let own_files: Vec<&Path> = if confinement.layers.mount_ns {
            namespaces::OWN_ACCOUNT_FILES
                .iter()
                .map(|p| Path::new(*p))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Confined {
            rules: self
                .opened
                .as_ref()
                .map(|opened| landlock::build(opened, &fresh, &own_files))
                .transpose()?,
            launcher: self
                .filter
                .clone()
                .map(Launcher::start)
                .transpose()
                .map_err(|e| Error::io("starting the seccomp launcher", e))?,
            limits: self.limits,
        })
    }
}

/// Whether calls get namespaces of their own: a PID namespace and a mount
/// namespace, always together (a user namespace where one can be made).
pub fn namespaced(confinement: &Confinement) -> bool {
    confinement.layers.pid_ns && confinement.layers.mount_ns
}

/// `run` mode: one call from a process started for it (tests; no fork
/// server). Reads the plan, makes the call's supervisor, waits for it.
fn run_once() -> i32 {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let request = match read_request() {
        Ok(request) => request,
        Err(why) => {
            write_report(&Report::Failed(why.to_string()).into());
            return 0;
        }
    };
    let namespaced = namespaced(&request.confinement);
    let ids = namespaces::Ids::current();
    match namespaces::clone_call(namespaced.then_some(request.confinement.layers.user_ns)) {
        Ok(namespaces::Cloned::Child) => {
            let report = serve(request, None, namespaced.then_some(ids), None, None)
                .unwrap_or_else(|why| Report::Failed(why.to_string()).into());
            write_report(&report);
            // SAFETY: leave without running destructors shared with the parent.
            unsafe { libc::_exit(0) }
        }
        Ok(namespaces::Cloned::Parent(pidfd)) => {
            // SAFETY: waiting for our own child through its pidfd.
            unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(
                    libc::P_PIDFD,
                    std::os::fd::AsRawFd::as_raw_fd(&pidfd) as libc::id_t,
                    &mut info,
                    libc::WEXITED,
                );
            }
            0
        }
        Err(why) => {
            write_report(&Report::Failed(why.to_string()).into());
            0
        }
    }
}

/// A call's supervisor made by the fork server: reads the plan from
/// descriptor 0, runs it, writes the report to descriptor 3. `ids`: the
/// ids it had before its namespaces, when it is in them. `view`: the
/// template's view its mount namespace is a copy of, if it was made by one.
pub fn run(
    prebuilt: &Prebuilt,
    ids: Option<namespaces::Ids>,
    view: Option<&template::View>,
) -> i32 {
    // SAFETY: prctl and getppid with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // Without a PID namespace of its own, a supervisor whose fork
        // server is already gone has been re-parented: it stops.
        if ids.is_none() && libc::getppid() == 1 {
            return 1;
        }
    }
    let report = read_request()
        .and_then(|request| serve(request, Some(prebuilt), ids, view, None))
        .unwrap_or_else(|why| Report::Failed(why.to_string()).into());
    write_report(&report);
    0
}

/// A call's supervisor made by a template before its call came (see
/// [`template`]): it does the part of a call's start that no plan changes
/// (its namespaces' ids, `/proc` and IPC limits, the fresh temporary file
/// system), then waits on `handoff` for the call's four descriptors, and
/// runs the call as [`run`] does. `ids`: those it had before its
/// namespaces.
pub fn run_handed(
    prebuilt: &Prebuilt,
    ids: namespaces::Ids,
    view: &template::View,
    handoff: OwnedFd,
) -> i32 {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    hold_first_four();
    let base = &prebuilt.base;
    let started = start(base, Some(ids)).and_then(|()| {
        let fresh: Vec<PathBuf> = base.temp.iter().cloned().collect();
        namespaces::mount_fresh(&fresh)
    });
    // The server's own confinement, built now that its fresh file system is
    // mounted; a call with another (read-only) builds its own.
    let confined = started.is_ok().then(|| {
        prebuilt
            .find(base)
            .and_then(|prepared| prepared.as_ref().ok())
            .and_then(|prepared| prepared.confine(base).ok())
    });
    let ahead = Ahead {
        confined: confined.flatten(),
    };
    let fds = match super::fork_server::receive(&handoff, 16) {
        Ok((_, fds)) if fds.len() == 4 => fds,
        _ => return 1,
    };
    drop(handoff);
    super::fork_server::take_as_first_four(fds);
    super::close_on_exec_from(4);
    let report = started
        .and_then(|()| read_request())
        .and_then(|request| serve(request, Some(prebuilt), Some(ids), Some(view), Some(ahead)))
        .unwrap_or_else(|why| Report::Failed(why.to_string()).into());
    write_report(&report);
    0
}

/// The report, on descriptor 3.
fn write_report(report: &Finished) {
    // SAFETY: the report pipe is descriptor 3; it is ours to write and close.
    let mut status = unsafe { std::fs::File::from(OwnedFd::from_raw_fd(3)) };
    let line = serde_json::to_string(report).unwrap_or_default();
    let _ = writeln!(status, "{line}");
}

/// The plan, from descriptor 0; then descriptor 0 is /dev/null.
fn read_request() -> Result<Request> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_REQUEST_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("reading the plan", e))?;
    to_dev_null(&[0]).map_err(|e| Error::io("redirecting standard input to /dev/null", e))?;
    // The report pipe must not reach the commands.
    // SAFETY: fcntl on descriptor 3.
    unsafe { libc::fcntl(3, libc::F_SETFD, libc::FD_CLOEXEC) };
    serde_json::from_slice(&bytes).map_err(|e| Error::io("reading the plan", e))
}

/// Descriptors 0 to 3 will be the call's: until they come, /dev/null
/// holds each free one, so that nothing opened ahead takes one of their
/// numbers (and is closed when the call's take their place).
fn hold_first_four() {
    loop {
        // SAFETY: open(2) with a valid C string; a descriptor below 4 is
        // kept open on purpose, any other is closed at once.
        unsafe {
            let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
            if fd < 0 {
                return;
            }
            if fd >= 4 {
                libc::close(fd);
                return;
            }
        }
    }
}

/// The start of every call, whatever its plan: signals, the OOM score,
/// with namespaces (`ids`: the ids from before them) what their init sets
/// up, and no capability for anything the call will `exec`.
fn start(confinement: &Confinement, ids: Option<namespaces::Ids>) -> Result<()> {
    block_signals();
    // Should memory run out, the kernel ends the call's processes first,
    // never the host's: the score is inherited by every process of the
    // call, and raising it needs no privilege.
    let _ = std::fs::write("/proc/self/oom_score_adj", "1000");
    if let Some(ids) = ids {
        let layers = &confinement.layers;
        let pid_max = layers
            .pid_max
            .then_some((confinement.max_tasks + 1).max(301));
        namespaces::set_up_as_init(ids, layers.user_ns, pid_max, layers.ipc_limits)?;
    }
    limits::drop_for_descendants();
    Ok(())
}

/// What a supervisor made ahead of its call did before the call came
/// (see [`run_handed`]): [`start`], for the server's confinement, and its
/// fresh file system mounted.
struct Ahead {
    /// The server's confinement, built; None where that failed (a call
    /// with it then meets the error building its own).
    confined: Option<Confined>,
}

/// Runs a call; `ahead`: what was done before it came.
fn serve(
    request: Request,
    prebuilt: Option<&Prebuilt>,
    ids: Option<namespaces::Ids>,
    view: Option<&template::View>,
    ahead: Option<Ahead>,
) -> Result<Finished> {
    let confinement = &request.confinement;
    let started = ahead.is_some();
    if !started {
        start(confinement, ids)?;
    }
    match ids {
        Some(_) => {
            let fresh: Vec<PathBuf> = confinement.temp.iter().cloned().collect();
            if let Some(view) = view {
                // The template was built for the server's confinement; a
                // call may only take rights away from it (read-only). One
                // started ahead was started as the server's: the limits,
                // layers and ids it set are the same for both.
                let Some(prebuilt) = prebuilt.filter(|p| p.find(confinement).is_some()) else {
                    return Err(Error::request("the call's confinement is not the server's"));
                };
                let read_only: &[PathBuf] = if confinement.read_only {
                    &view.writable
                } else {
                    &[]
                };
                if started {
                    namespaces::make_read_only(read_only)?;
                    if fresh.is_empty() {
                        let mounted: Vec<PathBuf> = prebuilt.base.temp.iter().cloned().collect();
                        namespaces::unmount_fresh(&mounted)?;
                    }
                } else {
                    namespaces::enter_template_copy(read_only, &fresh)?;
                }
            } else if view_possible(confinement) {
                namespaces::enter_view(&view_sources(confinement), &fresh)?;
            } else {
                namespaces::remount_read_only(
                    &confinement.writable,
                    &hidden_dirs(confinement),
                    &fresh,
                )?;
            }
            if !confinement.read_only {
                namespaces::protect(&request.protect)?;
            }
        }
        None => namespaces::become_subreaper()?,
    }
    let prepared_now;
    let prepared = match prebuilt.and_then(|p| p.find(confinement)) {
        Some(found) => found.as_ref().map_err(Clone::clone)?,
        None => {
            prepared_now = Prepared::new(confinement, prebuilt.map(|p| &p.started))?;
            &prepared_now
        }
    };
    let built_ahead = ahead
        .and_then(|ahead| ahead.confined)
        .filter(|_| prebuilt.is_some_and(|p| *confinement == p.base));
    let confined = match built_ahead {
        Some(confined) => confined,
        None => prepared.confine(confinement)?,
    };
    let report = confined.run_steps(&request.steps, &request.cwd, &request.env);
    // The server reads the output to its end before it reads the report:
    // the supervisor lets go of its own ends now, so that the end comes as
    // soon as the commands are done, not once this process has exited. The
    // report still comes only after every process of the call is gone.
    let _ = to_dev_null(&[1, 2]);
    end(ids.is_some());
    Ok(report)
}

/// A root that is `/` (or holds the directory the new root is built in)
/// leaves nothing to hide: the whole tree is then remounted read-only
/// instead.
pub fn view_possible(confinement: &Confinement) -> bool {
    let build = Path::new("/tmp");
    !confinement
        .readable
        .iter()
        .chain(&confinement.writable)
        .any(|p| build.starts_with(p))
}

/// What a call's file system view holds: the system directories, the named
/// `/etc` files and devices, the readable directories, and the writable
/// ones (all but the temporary directory, which gets a fresh file system).
pub fn view_sources(confinement: &Confinement) -> Vec<(PathBuf, namespaces::Access)> {
    use namespaces::Access;
    let mut sources = Vec::new();
    for (list, access) in [
        (super::SYSTEM_DIRS, Access::ReadOnly),
        (super::ETC_FILES, Access::ReadOnly),
        (super::DEVICES, Access::Device),
    ] {
        sources.extend(list.iter().map(|p| (PathBuf::from(p), access)));
    }
    let writable: Vec<PathBuf> = confinement
        .writable
        .iter()
        .filter(|w| Some(*w) != confinement.temp.as_ref())
        .cloned()
        .collect();
    for readable in &confinement.readable {
        if !writable.contains(readable) {
            sources.push((readable.clone(), Access::ReadOnly));
        }
    }
    sources.extend(writable.into_iter().map(|w| (w, Access::Writable)));
    sources
}

/// Home directories are covered with an empty file system in the call's
/// mount namespace, unless something the call may use lies beneath them:
/// Landlock keeps their contents unreadable, and this keeps even their
/// names from being looked up.
fn hidden_dirs(confinement: &Confinement) -> Vec<PathBuf> {
    ["/root", "/home"]
        .iter()
        .map(PathBuf::from)
        .filter(|dir| dir.is_dir())
        .filter(|dir| {
            !confinement
                .readable
                .iter()
                .chain(&confinement.writable)
                .any(|p| p.starts_with(dir) || dir.starts_with(p))
        })
        .collect()
}

/// Points each of `fds` (standard descriptors) at /dev/null.
fn to_dev_null(fds: &[i32]) -> std::io::Result<()> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    for fd in fds {
        // SAFETY: dup2 onto one of our own standard descriptors.
        if unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), *fd) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn signal_set(signals: &[i32]) -> libc::sigset_t {
    // SAFETY: initialising a sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in signals {
            libc::sigaddset(&mut set, *s);
        }
        set
    }
}

/// SIGTERM (the server's stop) and SIGCHLD are taken with `sigtimedwait`,
/// so neither can slip between a check and a wait. Commands get an empty
/// mask back (the standard library resets it in every child).
fn block_signals() {
    let set = signal_set(&[libc::SIGTERM, libc::SIGCHLD]);
    // SAFETY: changing our own signal mask.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

/// Kills every process of the call and reaps them, so that none is left
/// when the report goes out: as the PID namespace's init, all of it; as a
/// subreaper, every descendant.
fn end(init: bool) {
    if init {
        namespaces::kill_everything_as_init();
    } else {
        namespaces::kill_all_children();
    }
}

/// Everything a command is confined by, built before any command runs.
struct Confined {
    rules: Option<landlock::Rules>,
    /// Where commands start when there is a seccomp filter: a thread that
    /// has it installed already.
    launcher: Option<Launcher>,
    limits: Limits,
}

/// The server stopped the call.
struct Stop;

impl Confined {
    fn run_steps(&self, steps: &[Step], cwd: &Path, env: &[(String, String)]) -> Finished {
        let mut report = Report::Exited(0);
        let mut hidden_failures = Vec::new();
        let mut sequence = Sequence::default();
        for step in steps {
            if !sequence.runs(step) {
                continue;
            }
            let status = match self.run_pipeline(&step.stages, cwd, env, &mut hidden_failures) {
                Ok(status) => status,
                Err(Stop) => return Report::Stopped.into(),
            };
            sequence.ran(status);
            report = match status {
                StageStatus::Exited(code) => Report::Exited(code),
                StageStatus::Signaled(sig) => Report::Signaled(sig),
            };
        }
        Finished {
            report,
            hidden_failures,
        }
    }

    fn run_pipeline(
        &self,
        stages: &[Stage],
        cwd: &Path,
        env: &[(String, String)],
        hidden_failures: &mut Vec<HiddenFailure>,
    ) -> Result<StageStatus, Stop> {
        // Each command's pid, or the status it got when it could not start.
        let mut started: Vec<Result<libc::pid_t, i32>> = Vec::new();
        let mut stdin: Option<std::io::PipeReader> = None;
        for (k, stage) in stages.iter().enumerate() {
            let last = k + 1 == stages.len();
            let (next_stdin, stdout) = if last {
                (None, Stream::of(std::io::stdout().as_fd()))
            } else {
                match std::io::pipe() {
                    Ok((r, w)) => (Some(r), Ok(Stream::Fd(w.into()))),
                    Err(e) => (None, Err(e)),
                }
            };
            let group = started.iter().find_map(|s| s.ok()).unwrap_or(0);
            let spawned =
                stdout.and_then(|out| self.spawn(stage, stdin.take(), out, cwd, env, group));
            stdin = next_stdin;
            started.push(spawned.map_err(|e| {
                let name = stage.argv.first().map_or("", String::as_str);
                let _ = writeln!(std::io::stderr(), "rootbound: {name}: {}", spawn_error(&e));
                failed_start_status(&e)
            }));
        }
        drop(stdin);
        let pids: Vec<libc::pid_t> = started.iter().filter_map(|s| s.ok()).collect();
        let statuses = wait_for(&pids)?;
        let ended: Vec<Option<StageStatus>> = started
            .iter()
            .map(|start| match start {
                Err(code) => Some(StageStatus::Exited(*code)),
                Ok(pid) => statuses
                    .get(pid)
                    .map(|&status| StageStatus::of_wait(status)),
            })
            .collect();
        hidden_failures.extend(HiddenFailure::in_pipeline(stages, &ended));
        // The pipeline's status is its last command's (the status it got
        // if it could not start).
        Ok(ended
            .last()
            .copied()
            .flatten()
            .unwrap_or(StageStatus::Exited(1)))
    }

    /// Starts one command of a pipeline; `group` is the pipeline's process
    /// group (0: this command leads a new one).
    fn spawn(
        &self,
        stage: &Stage,
        stdin: Option<std::io::PipeReader>,
        stdout: Stream,
        cwd: &Path,
        env: &[(String, String)],
        group: libc::pid_t,
    ) -> std::io::Result<libc::pid_t> {
        let mut stdout = stdout;
        let mut stderr = Stream::of(std::io::stderr().as_fd())?;
        for redirect in &stage.redirects {
            match redirect {
                Redirect::StdoutToNull => stdout = Stream::Null,
                Redirect::StderrToNull => stderr = Stream::Null,
                Redirect::StderrToStdout => stderr = stdout.try_clone()?,
                Redirect::StdoutToStderr => stdout = stderr.try_clone()?,
            }
        }
        let command = Exec::new(
            &stage.argv,
            env.iter().chain(&stage.env).map(|(k, v)| (k, v)),
            cwd,
            [
                match stdin {
                    Some(pipe) => Stream::Fd(pipe.into()),
                    None => Stream::of(std::io::stdin().as_fd())?,
                },
                stdout,
                stderr,
            ],
            // Each pipeline is a process group of its own (led by its first
            // command), as a shell makes it: `kill -TERM 0` never reaches the
            // supervisor, which takes SIGTERM as the server's order to stop.
            // (Each command restricts itself with Landlock, so each is a
            // Landlock domain of its own: where Landlock scopes signals
            // (ABI 6), one command cannot signal another of its pipeline.
            // A full shell's commands, all forked by bash, can.)
            group,
            self.limits,
            self.rules.as_ref().map(landlock::Rules::raw_fd),
        )?;
        // The seccomp filter, where there is one, the command has from the
        // launcher thread it starts from.
        match &self.launcher {
            Some(launcher) => launcher.spawn(command),
            None => spawn::spawn(&command),
        }
    }
}

fn spawn_error(e: &std::io::Error) -> String {
    match e.kind() {
        // The program is there; what it needs is not (spawn's own words).
        std::io::ErrorKind::NotFound if e.get_ref().is_some() => e.to_string(),
        std::io::ErrorKind::NotFound => {
            "command not found on the sandbox's PATH (the system's directories, the \
            toolchains found at start: see `rootbound sandbox`, and --bash-path); if it is \
            installed elsewhere, start the server with --bash-path DIR"
                .into()
        }
        std::io::ErrorKind::PermissionDenied => {
            "permission denied: the sandbox runs programs only \
            from the system directories and the roots; add a toolchain's directory with \
            --bash-path or --bash-read"
                .into()
        }
        _ => e.to_string(),
    }
}

/// Waits until every process in `pids` has ended, reaping any other child
/// (orphans re-parented to a subreaper) on the way. Stop if SIGTERM comes.
fn wait_for(pids: &[libc::pid_t]) -> Result<std::collections::HashMap<libc::pid_t, i32>, Stop> {
    let mut waiting: HashSet<libc::pid_t> = pids.iter().copied().collect();
    let mut statuses = std::collections::HashMap::new();
    let signals = signal_set(&[libc::SIGTERM, libc::SIGCHLD]);
    let tick = libc::timespec {
        tv_sec: 0,
        tv_nsec: Duration::from_millis(100).subsec_nanos() as libc::c_long,
    };
    loop {
        loop {
            let mut status = 0;
            // SAFETY: reaping our own children without blocking.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
            if waiting.remove(&pid) {
                statuses.insert(pid, status);
            }
        }
        if waiting.is_empty() {
            return Ok(statuses);
        }
        // SAFETY: waiting for a blocked signal, with a timeout.
        let signal = unsafe { libc::sigtimedwait(&signals, std::ptr::null_mut(), &tick) };
        if signal == libc::SIGTERM {
            return Err(Stop);
        }
    }
}
