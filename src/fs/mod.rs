//! The guard layer: the only code that touches the file system. The path
//! guard decides and opens; atomic writes, reading and writing build on it.

pub mod atomic;
pub mod guard;
pub mod reading;
pub mod writing;

/// The metadata type the guard hands out, named here so that code outside
/// this layer needs no `std::fs` (see `tests/tidy.rs`).
pub use std::fs::Metadata;
