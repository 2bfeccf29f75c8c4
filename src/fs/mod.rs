//! The guard layer: the only code that touches the file system. The path
//! guard decides and opens; atomic writes, reading and writing build on it.

pub mod atomic;
pub mod guard;
pub mod reading;
pub mod writing;
