//! What this session has seen of each file: the version the model last read
//! or wrote, so that write_file does not overwrite a change the model has
//! not seen (an editor's save, a formatter, another agent), and replace can
//! say that the file changed (docs/tools.md, "Undo and unseen changes").
//! Memory only: it ends with the session.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::fs::journal::Version;
use crate::fs::writing::FileVersion;

/// Files remembered at most; past it the memory starts again (a file not
/// remembered is one the session never saw: never refused).
const MOST_FILES: usize = 65_536;

/// One file as the session last saw it.
#[derive(Debug, Clone)]
pub struct Sighting {
    pub version: FileVersion,
    /// Its content in the journal, when the session last wrote it (what a
    /// refusal's diff starts from).
    pub journaled: Option<Version>,
}

#[derive(Debug, Default)]
pub struct Seen {
    /// By the file's real path (links resolved).
    files: Mutex<HashMap<PathBuf, Sighting>>,
    /// The real path each path the model named led to: a path that leads
    /// elsewhere now (a link put in its place) is a change too.
    leads: Mutex<HashMap<PathBuf, PathBuf>>,
}

impl Seen {
    /// The model read (part of) the file at `real`, named `named`, at
    /// `version`.
    pub fn read(&self, named: &Path, real: &Path, version: FileVersion) {
        self.lead(named, real);
        self.remember(
            real,
            Sighting {
                version,
                journaled: None,
            },
        );
    }

    /// The session wrote the file at `real`, named `named`: it is now
    /// `version`, whose content the journal holds as `journaled`.
    pub fn wrote(
        &self,
        named: &Path,
        real: &Path,
        version: FileVersion,
        journaled: Option<Version>,
    ) {
        self.lead(named, real);
        self.remember(real, Sighting { version, journaled });
    }

    fn lead(&self, named: &Path, real: &Path) {
        let Ok(mut leads) = self.leads.lock() else {
            return;
        };
        if leads.len() >= MOST_FILES && !leads.contains_key(named) {
            leads.clear();
        }
        leads.insert(named.to_path_buf(), real.to_path_buf());
    }

    /// Where `named` led when the session last used it, if that is not
    /// `real`.
    pub fn led_elsewhere(&self, named: &Path, real: &Path) -> Option<PathBuf> {
        let leads = self.leads.lock().ok()?;
        leads.get(named).filter(|was| *was != real).cloned()
    }

    /// The file at `real` is gone by this session's hand (an undone creation).
    pub fn forget(&self, real: &Path) {
        if let Ok(mut files) = self.files.lock() {
            files.remove(real);
        }
    }

    fn remember(&self, real: &Path, sighting: Sighting) {
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        if files.len() >= MOST_FILES && !files.contains_key(real) {
            files.clear();
        }
        files.insert(real.to_path_buf(), sighting);
    }

    /// How the session last saw the file at `real`, if that was not
    /// `now` (None: the same version, or never seen). Compared in place:
    /// the common answer, unchanged, copies nothing.
    pub fn changed(&self, real: &Path, now: &FileVersion) -> Option<Sighting> {
        let files = self.files.lock().ok()?;
        files.get(real).filter(|s| s.version != *now).cloned()
    }

    /// The journal's version of the file at `real` when the session last
    /// wrote it and it is still `now` (so its hash need not be computed).
    pub fn journaled(&self, real: &Path, now: &FileVersion) -> Option<Version> {
        let files = self.files.lock().ok()?;
        files
            .get(real)
            .filter(|s| s.version == *now)
            .and_then(|s| s.journaled.clone())
    }
}
