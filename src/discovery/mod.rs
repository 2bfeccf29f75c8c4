//! Finding files: ignore rules, the one walker, and search over it.

pub mod ignore_rules;
pub mod search;
pub mod walk;
