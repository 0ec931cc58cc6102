//! `mapped-writer`: MMTests' streaming mapped writer (micro/vmscan-file-mmap-ops.sh with
//! `usemem -f sparse-N -j 4096`). One process per CPU maps its own sparse file (the total is
//! `total_ratio` × MemTotal, split evenly) MAP_SHARED and stores one word at the start of every
//! page, in order. A process exits without msync or munmap (exit unmaps); when all are done the
//! files are removed.
//!
//! Each fault on a page not in the page cache reads around it (the file is sparse: holes are
//! zero-filled without I/O), maps the page and dirties it, throttling the writer like any
//! dirtier.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::fileio::{file_op_blocked, mem_total, page_loop, step_after, validate_cpus, Stop};
use super::{MetricSample, Preferred, WorkloadRun};
use crate::config::machine::MachineLayout;
use crate::config::ConfigError;
use crate::fs::Ino;
use crate::mm::page_writeback::DirtyThrottle;
use crate::mm::PAGE_SIZE;
use crate::sim::{After, Sim, Step, Task, TaskCx, WaitQueueId};

/// The `mapped-writer` workload definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MappedWriterSpec {
    /// MICRO_VMSCAN_FILE_MMAP_OPS_SIZE as a multiple of MemTotal (MMTests: 10).
    #[serde(default = "default_total")]
    pub total_ratio: f64,
    /// CPUs with one writer process each (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
}

fn default_total() -> f64 {
    10.0
}

impl MappedWriterSpec {
    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        if !(self.total_ratio > 0.0 && self.total_ratio <= 64.0) {
            return Err(ConfigError::new("workload.total_ratio", format!("{} is outside (0, 64]: the total written as a multiple of MemTotal", self.total_ratio)));
        }
        validate_cpus(&self.cpus, layout)
    }

    pub fn resolved(&self, layout: &MachineLayout) -> MappedWriterSpec {
        let mut s = self.clone();
        s.cpus = Some(s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect()));
        s
    }
}

#[derive(Debug, Default)]
struct Shared {
    /// Writers still running; the last one out removes the files.
    running: usize,
    files: Vec<Ino>,
    elapsed: Vec<f64>,
    done_wq: WaitQueueId,
}

enum Phase {
    Write { next: u32 },
    /// Wait for every writer, then (writer 0) remove the files.
    Remove { n: usize },
}

struct Writer {
    name: String,
    w: usize,
    ino: Ino,
    pages: u32,
    phase: Phase,
    shared: Rc<RefCell<Shared>>,
    throttle: DirtyThrottle,
}

/// Pages per step (one read-around window).
const STEP_PAGES: u32 = 32;
/// usemem's user time per page: the store and the loop.
const USER_NS_PER_PAGE: u64 = 20;

impl Task for Writer {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        match self.phase {
            Phase::Write { mut next } => {
                let ino = self.ino;
                let throttle = &mut self.throttle;
                let start = next;
                let stop = page_loop(cx, &mut next, self.pages, STEP_PAGES, |cx, index| {
                    let cpu = cx.cpu;
                    cx.mm.filemap_fault(ino, index, true, false, cpu, throttle)
                });
                let user = u64::from(next - start) * USER_NS_PER_PAGE;
                self.phase = Phase::Write { next };
                if matches!(stop, Stop::Done) {
                    // exit: the mapping goes away (zap), the file is closed.
                    cx.mm.unmap_file(ino, cx.cpu);
                    cx.mm.close_file(ino);
                    let mut sh = self.shared.borrow_mut();
                    sh.running -= 1;
                    sh.elapsed.push(cx.now as f64 / 1e9);
                    let last = sh.running == 0;
                    let wq = sh.done_wq;
                    drop(sh);
                    if self.w != 0 {
                        if last {
                            cx.wake_up(wq);
                        }
                        cx.mm.dirty_throttle_exit(&mut self.throttle, cx.cpu);
                        return Step { user_ns: user, system_ns: 0, after: After::Exit };
                    }
                    self.phase = Phase::Remove { n: 0 };
                }
                step_after(user, &stop)
            }
            Phase::Remove { n } => {
                let sh = self.shared.borrow();
                if sh.running > 0 {
                    return Step { user_ns: 0, system_ns: 0, after: After::Wait(sh.done_wq) };
                }
                if n >= sh.files.len() {
                    drop(sh);
                    cx.mm.dirty_throttle_exit(&mut self.throttle, cx.cpu);
                    return Step { user_ns: 0, system_ns: 0, after: After::Exit };
                }
                let ino = sh.files[n];
                drop(sh);
                match cx.mm.unlink_file(ino, cx.cpu) {
                    Err(blocked) => file_op_blocked(cx, blocked),
                    Ok(()) => {
                        self.phase = Phase::Remove { n: n + 1 };
                        Step { user_ns: 0, system_ns: 0, after: After::Continue }
                    }
                }
            }
        }
    }
}

/// The mapped writer run.
pub struct MappedWriterRun {
    shared: Rc<RefCell<Shared>>,
}

/// Creates the sparse files and spawns one writer per CPU.
pub fn start(spec: &MappedWriterSpec, sim: &mut Sim, layout: &MachineLayout) -> MappedWriterRun {
    let cpus = spec.cpus.clone().unwrap_or_else(|| (0..sim.nr_cpus()).collect());
    let total = (mem_total(layout) as f64 * spec.total_ratio) as u64;
    let pages = (total / cpus.len() as u64 / PAGE_SIZE) as u32;
    let done_wq = sim.new_wait_queue();
    let shared = Rc::new(RefCell::new(Shared { running: cpus.len(), done_wq, ..Default::default() }));
    for (w, &cpu) in cpus.iter().enumerate() {
        // dd bs=4096 count=0 seek=N: an empty file extended to its size (all holes).
        let ino = sim.mm.create_file(0, cpu).expect("boot memory holds the inodes");
        sim.mm.inode_mut(ino).size_pages = u64::from(pages) + 1;
        sim.mm.take_cost();
        shared.borrow_mut().files.push(ino);
        let task = Writer { name: format!("usemem-{w}"), w, ino, pages, phase: Phase::Write { next: 0 }, shared: shared.clone(), throttle: DirtyThrottle { tid: w, ..Default::default() } };
        sim.spawn(Box::new(task), cpu);
    }
    MappedWriterRun { shared }
}

impl WorkloadRun for MappedWriterRun {
    fn metrics(&self, _sim: &Sim) -> Vec<MetricSample> {
        let sh = self.shared.borrow();
        let finish = sh.elapsed.iter().copied().fold(0.0, f64::max);
        vec![MetricSample { table: "mappedwriter Time".into(), preferred: Preferred::Lower, unit: "s".into(), op: "write".into(), value: finish }]
    }
}
