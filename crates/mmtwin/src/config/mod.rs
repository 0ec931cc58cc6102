//! Scenario files: parsing, validation with clear messages, defaults, and the resolved per-kernel
//! run configuration that a run is a pure function of.

pub mod machine;
pub mod profile;
pub mod scenario;
pub mod size;
pub mod sysctl;

use std::fmt;

/// A problem with a scenario: the key it is about and what is wrong (with the valid choices
/// where there is a list of them).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    /// Dotted key path, e.g. "kernel[1].policy.fallback"; empty for a syntax error.
    pub key: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { key: key.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}
