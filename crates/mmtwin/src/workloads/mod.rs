//! Workloads: definitions (the `[workload]` section) and the simulated tasks that execute them.
//!
//! A workload definition is plain data so that the same definition can later drive a real guest
//! program; `start` turns it into tasks on the simulated machine and `metrics` reads the results
//! the way the MMTests benchmark reports them.

pub mod anon_churn;
pub mod daemons;
pub mod fileio;
pub mod fsmark;
pub mod iozone;
pub mod largedd;
pub mod mapped_writer;
pub mod simple_writeback;

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
    /// fs_mark: worker processes creating files of a given size (MMTests fsmark).
    Fsmark(fsmark::FsmarkSpec),
    /// Download a large file, copy it with dd until a multiple of memory is written, delete
    /// everything (MMTests largedd).
    Largedd(largedd::LargeddSpec),
    /// One process per CPU writing one word per page through a shared mapping of its own
    /// sparse file (MMTests vmscan-file-mmap-write).
    MappedWriter(mapped_writer::MappedWriterSpec),
    /// Parallel dd of a total size with 1 MiB blocks, nr_cpus × factor jobs (MMTests
    /// simple-writeback).
    SimpleWriteback(simple_writeback::SimpleWritebackSpec),
    /// Parallel sequential readers, one file per disk, buffered or O_DIRECT (iozone -i 1 -t N).
    Iozone(iozone::IozoneSpec),
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
            WorkloadSpec::Fsmark(_) => "fsmark",
            WorkloadSpec::Largedd(_) => "largedd",
            WorkloadSpec::SimpleWriteback(_) => "simple-writeback",
            WorkloadSpec::MappedWriter(_) => "mappedwriter",
            WorkloadSpec::Iozone(_) => "iozone",
        }
    }

    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        match self {
            WorkloadSpec::AnonChurn(s) => s.validate(layout),
            WorkloadSpec::Fsmark(s) => s.validate(layout),
            WorkloadSpec::Largedd(s) => s.validate(layout),
            WorkloadSpec::SimpleWriteback(s) => s.validate(layout),
            WorkloadSpec::MappedWriter(s) => s.validate(layout),
            WorkloadSpec::Iozone(s) => s.validate(layout),
        }
    }

    /// The definition with every default filled in for this machine.
    pub fn resolved(&self, layout: &MachineLayout) -> WorkloadSpec {
        match self {
            WorkloadSpec::AnonChurn(s) => WorkloadSpec::AnonChurn(s.resolved(layout)),
            WorkloadSpec::Fsmark(s) => WorkloadSpec::Fsmark(s.resolved(layout)),
            WorkloadSpec::Largedd(s) => WorkloadSpec::Largedd(s.resolved(layout)),
            WorkloadSpec::SimpleWriteback(s) => WorkloadSpec::SimpleWriteback(s.resolved(layout)),
            WorkloadSpec::MappedWriter(s) => WorkloadSpec::MappedWriter(s.resolved(layout)),
            WorkloadSpec::Iozone(s) => WorkloadSpec::Iozone(s.resolved(layout)),
        }
    }

    /// Spawns the workload's tasks on `sim`.
    pub fn start(&self, sim: &mut Sim, layout: &MachineLayout) -> Box<dyn WorkloadRun> {
        match self {
            WorkloadSpec::AnonChurn(s) => Box::new(anon_churn::start(s, sim)),
            WorkloadSpec::Fsmark(s) => Box::new(fsmark::start(s, sim)),
            WorkloadSpec::Largedd(s) => Box::new(largedd::start(s, sim, layout)),
            WorkloadSpec::SimpleWriteback(s) => Box::new(simple_writeback::start(s, sim)),
            WorkloadSpec::MappedWriter(s) => Box::new(mapped_writer::start(s, sim, layout)),
            WorkloadSpec::Iozone(s) => Box::new(iozone::start(s, sim)),
        }
    }

    /// A rough simulated duration, for progress bars only: the run time of anon-churn, or the
    /// bytes a file workload writes at the disk's bandwidth.
    pub fn nominal_duration_ns(&self, layout: &MachineLayout, bandwidth: u64) -> u64 {
        let at_disk_speed = |bytes: f64| (bytes / bandwidth.max(1) as f64 * 1e9) as u64;
        let mem = fileio::mem_total(layout) as f64;
        match self {
            WorkloadSpec::AnonChurn(s) => s.duration.0,
            WorkloadSpec::Fsmark(s) => at_disk_speed((s.threads as u64 * s.files * s.loops * s.size.0) as f64),
            WorkloadSpec::Largedd(s) => at_disk_speed(mem * s.target_ratio),
            WorkloadSpec::MappedWriter(s) => at_disk_speed(mem * s.total_ratio),
            WorkloadSpec::SimpleWriteback(s) => at_disk_speed(s.size.map_or(4.0 * mem, |b| b.0 as f64) * s.factors.len() as f64),
            // Readers run in parallel on their own disks: a round takes one file's read time.
            WorkloadSpec::Iozone(s) => at_disk_speed(s.file_size.0 as f64 * s.readers.len() as f64),
        }
    }
}
