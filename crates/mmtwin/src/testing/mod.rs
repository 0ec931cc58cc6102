//! Test support that ships with the core: invariant checkers run by the engine after every
//! event in debug (test) builds.

pub mod checkers;
