//! Pure text work, no I/O: file kinds, line windows, exact decoding for
//! edits, diffs and the replace engine.

pub mod budget;
pub mod diff;
pub mod edit;
pub mod exact;
pub mod filekind;
pub mod first;
pub mod globs;
pub mod lines;
pub mod names;
pub mod time;
pub mod visible;
