//! The thread of a call's supervisor that starts its commands. It installs
//! the call's seccomp filter on itself once, when the supervisor's
//! confinement is built, and every command it forks inherits the filter:
//! a filter is attached to a thread and copied to each child, so the
//! kernel converts and compiles it once per call (for a supervisor made
//! ahead of its call, before the call comes) rather than once per command
//! between fork and exec, where it was about a tenth of a call's start.
//!
//! The filter confines this thread only (no `SECCOMP_FILTER_FLAG_TSYNC`):
//! the supervisor's own thread keeps the mounts and namespace calls it
//! makes after the call comes. The thread starts nothing but the commands
//! it is handed ([`spawn`]), and those get the rest of their confinement
//! (limits, capabilities, Landlock) before they exec, under the filter.

use std::sync::mpsc;

use super::seccomp;
use super::spawn::{self, Exec};

/// The thread, armed with a filter; dropped, it ends.
pub struct Launcher {
    commands: mpsc::Sender<Exec>,
    started: mpsc::Receiver<std::io::Result<libc::pid_t>>,
}

impl Launcher {
    /// Starts the thread and installs `filter` on it. Err if either fails:
    /// no command may then start (there is no unfiltered fallback).
    pub fn start(filter: std::sync::Arc<seccomp::Filter>) -> std::io::Result<Launcher> {
        let (commands, to_start) = mpsc::channel::<Exec>();
        let (report_start, started) = mpsc::channel();
        let (report_armed, armed) = mpsc::channel();
        std::thread::Builder::new()
            .name("launcher".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                // SAFETY: installs the filter on this thread, which from
                // now on only forks the commands it is handed.
                let filtered = unsafe { seccomp::apply(&filter) };
                let ok = filtered.is_ok();
                if report_armed.send(filtered).is_err() || !ok {
                    return;
                }
                for command in to_start {
                    let pid = spawn::spawn(&command);
                    // The command's descriptors close here, in the parent.
                    drop(command);
                    if report_start.send(pid).is_err() {
                        return;
                    }
                }
            })?;
        armed
            .recv()
            .map_err(|_| std::io::Error::other("the launcher thread ended"))??;
        Ok(Launcher { commands, started })
    }

    /// Starts `command` from the thread (so it starts under the filter) and
    /// returns its pid.
    pub fn spawn(&self, command: Exec) -> std::io::Result<libc::pid_t> {
        let gone = || std::io::Error::other("the launcher thread ended");
        self.commands.send(command).map_err(|_| gone())?;
        self.started.recv().map_err(|_| gone())?
    }
}
