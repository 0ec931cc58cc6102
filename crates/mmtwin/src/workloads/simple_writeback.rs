//! `simple-writeback`: MMTests' simple-writeback (shellpack-bench-simple-writeback, 2011).
//! NR_JOBS parallel `dd if=/dev/zero of=file-N bs=1M count=SIZE/NR_JOBS/1M $CONV`, each on a
//! CPU of its own (round robin); each dd's elapsed time is the result; when all have finished
//! the files are removed. NR_JOBS = nr_cpus × factor for each factor listed, a factor of 0
//! meaning exactly one job; the job counts run one after another. CONV is the script's
//! SIMPLE_WRITEBACK_CONV: empty (the default; dd exits with its last pages still dirty, and
//! `rm` discards them), or `conv=fdatasync` / `conv=fsync` (dd syncs the file before it exits,
//! within its time: `crate::fs::sync`).
//!
//! The script writes 4 × MemTotal in total by default (SIMPLE_WRITEBACK_FILESIZE); the
//! per-zone-dirty-limits seed used a fixed size, which `size` sets.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::fileio::{file_op_blocked, mem_total, page_loop, step_after, validate_cpus, write_op, Stop};
use super::{MetricSample, Preferred, WorkloadRun};
use crate::config::machine::MachineLayout;
use crate::config::size::Bytes;
use crate::config::ConfigError;
use crate::fs::sync::{Fsync, FsyncStep};
use crate::fs::Ino;
use crate::mm::page_writeback::DirtyThrottle;
use crate::mm::PAGE_SIZE;
use crate::sim::{After, Sim, Step, Task, TaskCx, WaitQueueId};

/// The `simple-writeback` workload definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimpleWritebackSpec {
    /// Bytes all jobs of one job count write together (default: 4 × MemTotal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// dd's block size (ibs = obs).
    #[serde(default = "default_bs")]
    pub bs: Bytes,
    /// CPU factors: NR_JOBS = nr_cpus × factor, 0 meaning one job.
    #[serde(default = "default_factors")]
    pub factors: Vec<u32>,
    /// CPUs the jobs run on, round robin (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// dd's conv= (SIMPLE_WRITEBACK_CONV): none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conv: Option<DdConv>,
}

/// dd's conv= flags that the model runs: both sync the output file before dd exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DdConv {
    /// conv=fdatasync: fdatasync(2) after the last write.
    Fdatasync,
    /// conv=fsync: fsync(2) after the last write (the same work here: the file's times are
    /// logged in the transactions that log its size).
    Fsync,
}

fn default_bs() -> Bytes {
    Bytes(1 << 20)
}
fn default_factors() -> Vec<u32> {
    vec![0]
}

impl SimpleWritebackSpec {
    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        let err = |k: &str, m: String| Err(ConfigError::new(format!("workload.{k}"), m));
        if self.bs.0 == 0 || self.bs.0 % 512 != 0 {
            return err("bs", format!("dd's block size must be a positive multiple of 512, not {}", self.bs.0));
        }
        if self.factors.is_empty() {
            return err("factors", "lists no CPU factors; give at least one (0 = one job)".into());
        }
        if let Some(s) = self.size {
            if s.0 < self.bs.0 {
                return err("size", format!("{} bytes is less than one {}-byte block", s.0, self.bs.0));
            }
        }
        validate_cpus(&self.cpus, layout)
    }

    pub fn resolved(&self, layout: &MachineLayout) -> SimpleWritebackSpec {
        let mut s = self.clone();
        s.size = Some(s.size.unwrap_or(Bytes(4 * mem_total(layout))));
        s.cpus = Some(s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect()));
        s
    }

    /// The job counts, in order.
    pub fn job_counts(&self, nr_cpus: usize) -> Vec<usize> {
        self.factors.iter().map(|&f| if f == 0 { 1 } else { nr_cpus * f as usize }).collect()
    }
}

#[derive(Default)]
struct Shared {
    /// (job count, elapsed seconds of one dd).
    results: Vec<(usize, f64)>,
    /// The job count being run (index into the counts).
    round: usize,
    /// dd jobs of this round still running.
    running: usize,
    files: Vec<Ino>,
}

/// One dd process of one round.
struct Dd {
    name: String,
    round: usize,
    ino: Ino,
    pages: u32,
    next: u32,
    start: u64,
    jobs: usize,
    bs: u64,
    shared: Rc<RefCell<Shared>>,
    start_wq: WaitQueueId,
    done_wq: WaitQueueId,
    throttle: DirtyThrottle,
    /// conv=fdatasync/fsync: the sync after the last write, once begun.
    conv: Option<DdConv>,
    fsync: Option<Fsync>,
}

/// Pages per step.
const STEP_PAGES: u32 = 64;

impl Task for Dd {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        if self.shared.borrow().round != self.round {
            return Step { user_ns: 0, system_ns: 0, after: After::Wait(self.start_wq) };
        }
        if self.ino == Ino::MAX {
            match cx.mm.create_file(0, cx.cpu) {
                Some(i) => {
                    self.ino = i;
                    self.start = cx.now;
                    self.shared.borrow_mut().files.push(i);
                }
                None => return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) },
            }
        }
        if let Some(f) = self.fsync.as_mut() {
            let after = match cx.mm.vfs_fsync(self.ino, f) {
                FsyncStep::Done => return self.finish(cx, 0),
                FsyncStep::Continue => After::Continue,
                FsyncStep::Wait(wq) => After::Wait(wq),
                FsyncStep::WaitTimeout(wq, ns) => After::WaitTimeout(wq, ns),
            };
            return Step { user_ns: 0, system_ns: 0, after };
        }
        let start = self.next;
        let stop = page_loop(cx, &mut self.next, self.pages, STEP_PAGES, write_op(self.ino, self.bs, &mut self.throttle));
        // dd's user time: reading /dev/zero into its buffer (a copy per page).
        let user = u64::from(self.next - start) * cx.mm.costs.copy_page_ns / 2;
        if matches!(stop, Stop::Done) {
            if self.conv.is_some() {
                // The last write() is done; dd's fdatasync/fsync follows (after any pause the
                // throttle owes), and the task no longer dirties pages.
                cx.mm.dirty_throttle_exit(&mut self.throttle, cx.cpu);
                cx.mm.cost_ns += cx.mm.costs.syscall_ns;
                self.fsync = Some(Fsync::default());
                return Step { user_ns: user, system_ns: 0, after: After::Continue };
            }
            let step = self.finish(cx, user);
            cx.mm.dirty_throttle_exit(&mut self.throttle, cx.cpu);
            return step;
        }
        step_after(user, &stop)
    }
}

impl Dd {
    /// dd closes its file and exits; its elapsed time is recorded.
    fn finish(&mut self, cx: &mut TaskCx, user: u64) -> Step {
        cx.mm.close_file(self.ino);
        let mut sh = self.shared.borrow_mut();
        sh.results.push((self.jobs, (cx.now - self.start) as f64 / 1e9));
        sh.running -= 1;
        if sh.running == 0 {
            cx.wake_up(self.done_wq);
        }
        Step { user_ns: user, system_ns: 0, after: After::Exit }
    }
}

/// The driver: waits for each job count's dd jobs, removes their files, starts the next.
struct Driver {
    counts: Vec<usize>,
    rm: usize,
    shared: Rc<RefCell<Shared>>,
    start_wq: WaitQueueId,
    done_wq: WaitQueueId,
}

impl Task for Driver {
    fn name(&self) -> &str {
        "simple-writeback"
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let idle = Step { user_ns: 0, system_ns: 0, after: After::Continue };
        if self.shared.borrow().running > 0 {
            return Step { after: After::Wait(self.done_wq), ..idle };
        }
        // rm file-*: unlink waits for the writeback of each page.
        let files = self.shared.borrow().files.clone();
        if self.rm < files.len() {
            if let Err(blocked) = cx.mm.unlink_file(files[self.rm], cx.cpu) {
                return file_op_blocked(cx, blocked);
            }
            self.rm += 1;
            return idle;
        }
        let mut sh = self.shared.borrow_mut();
        sh.files.clear();
        self.rm = 0;
        sh.round += 1;
        if sh.round >= self.counts.len() {
            return Step { after: After::Exit, ..idle };
        }
        sh.running = self.counts[sh.round];
        cx.wake_up(self.start_wq);
        Step { after: After::Wait(self.done_wq), ..idle }
    }
}

/// The simple-writeback run: each dd's elapsed time, by job count.
pub struct SimpleWritebackRun {
    shared: Rc<RefCell<Shared>>,
}

/// Spawns every round's dd jobs (each waits for its round) and the driver.
pub fn start(spec: &SimpleWritebackSpec, sim: &mut Sim) -> SimpleWritebackRun {
    let cpus = spec.cpus.clone().unwrap_or_else(|| (0..sim.nr_cpus()).collect());
    let counts = spec.job_counts(sim.nr_cpus());
    let shared = Rc::new(RefCell::new(Shared { running: counts[0], ..Default::default() }));
    let start_wq = sim.new_wait_queue();
    let done_wq = sim.new_wait_queue();
    let mut k = 0;
    for (round, &jobs) in counts.iter().enumerate() {
        let pages = (spec.size.expect("resolved").0 / jobs as u64 / spec.bs.0 * spec.bs.0 / PAGE_SIZE) as u32;
        for j in 0..jobs {
            let dd = Dd {
                name: format!("dd-{jobs}-{j}"),
                round,
                ino: Ino::MAX,
                pages,
                next: 0,
                start: 0,
                jobs,
                bs: spec.bs.0,
                shared: shared.clone(),
                start_wq,
                done_wq,
                throttle: DirtyThrottle { tid: j, ..Default::default() },
                conv: spec.conv,
                fsync: None,
            };
            sim.spawn(Box::new(dd), cpus[k % cpus.len()]);
            k += 1;
        }
    }
    sim.spawn(Box::new(Driver { counts, rm: 0, shared: shared.clone(), start_wq, done_wq }), cpus[0]);
    SimpleWritebackRun { shared }
}

impl WorkloadRun for SimpleWritebackRun {
    fn metrics(&self, _sim: &Sim) -> Vec<MetricSample> {
        self.shared
            .borrow()
            .results
            .iter()
            .map(|&(jobs, s)| MetricSample { table: "simple-writeback".into(), preferred: Preferred::Lower, unit: "s".into(), op: jobs.to_string(), value: s })
            .collect()
    }
}
