//! Workloads: definitions (the `[workload]` section) and the simulated tasks that execute them.
//!
//! A workload definition is plain data so that the same definition can later drive a real guest
//! program; `start` turns it into tasks on the simulated machine and `metrics` reads the results
//! the way the MMTests benchmark reports them.

pub mod anon_churn;

use serde::{Deserialize, Serialize};

use crate::config::machine::MachineLayout;
use crate::config::ConfigError;
use crate::sim::Sim;

/// Whether a benchmark metric is better when lower (latency, time) or higher (throughput).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preferred {
    Lower,
    Higher,
}

/// One value of one benchmark operation in one iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSample {
    /// Table title, e.g. "anonchurn Fault Latencies".
    pub table: String,
    pub preferred: Preferred,
    pub unit: String,
    /// Operation (row) name, e.g. "fault-anon-small".
    pub op: String,
    pub value: f64,
}

/// The `[workload]` section, selected by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    /// Anonymous memory churn: tasks fault in, touch and free regions of given sizes, orders
    /// and lifetimes, with a movable/unmovable mix.
    AnonChurn(anon_churn::AnonChurnSpec),
}

/// A workload running on a simulation; reads its metrics when the run is over.
pub trait WorkloadRun {
    fn metrics(&self, sim: &Sim) -> Vec<MetricSample>;
}

impl WorkloadSpec {
    /// The MMTests benchmark name used in reports.
    pub fn benchmark(&self) -> &'static str {
        match self {
            WorkloadSpec::AnonChurn(_) => "anonchurn",
        }
    }

    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        match self {
            WorkloadSpec::AnonChurn(s) => s.validate(layout),
        }
    }

    /// The definition with every default filled in for this machine.
    pub fn resolved(&self, layout: &MachineLayout) -> WorkloadSpec {
        match self {
            WorkloadSpec::AnonChurn(s) => WorkloadSpec::AnonChurn(s.resolved(layout)),
        }
    }

    /// Spawns the workload's tasks on `sim`.
    pub fn start(&self, sim: &mut Sim) -> Box<dyn WorkloadRun> {
        match self {
            WorkloadSpec::AnonChurn(s) => Box::new(anon_churn::start(s, sim)),
        }
    }
}
