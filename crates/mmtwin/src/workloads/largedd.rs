//! `largedd`: MMTests' largedd (shellpack-bench-largedd, 2011). Three timed phases:
//!
//! 1. "download tar": the source file `0` is written as it arrives from a local web server at
//!    `download_rate` (wget's 16 KiB writes).
//! 2. "dd source files": NR_COPIES = target / source size; copies 1..NR_COPIES−1 are made one
//!    after another with `dd if=0 of=N` (512-byte blocks by default).
//! 3. "delete source": `rm` of the source and every copy (waiting for their writeback).
//!
//! MMTests does not state the tar's size; `source` defaults to a quarter of the memory.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::fileio::{file_op_blocked, mem_total, page_loop, step_after, syscalls_per_page_ns, validate_cpus, write_op, Stop};
use super::{MetricSample, Preferred, WorkloadRun};
use crate::config::machine::MachineLayout;
use crate::config::size::Bytes;
use crate::config::ConfigError;
use crate::fs::Ino;
use crate::mm::filemap::PageIo;
use crate::mm::page_writeback::DirtyThrottle;
use crate::mm::PAGE_SIZE;
use crate::sim::{After, Sim, Step, Task, TaskCx};

/// The `largedd` workload definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LargeddSpec {
    /// Size of the downloaded source file (default: MemTotal / 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Bytes>,
    /// LARGECOPY_TARGETSIZE_MB as a multiple of MemTotal (MMTests: 8).
    #[serde(default = "default_target")]
    pub target_ratio: f64,
    /// Network rate of the download, bytes per second (gigabit LAN: about 100 MB/s).
    #[serde(default = "default_rate")]
    pub download_rate: Bytes,
    /// dd's block size (ibs = obs; dd's default is 512).
    #[serde(default = "default_bs")]
    pub bs: Bytes,
    /// The CPU the commands run on (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
}

fn default_target() -> f64 {
    8.0
}
fn default_rate() -> Bytes {
    Bytes(100_000_000)
}
fn default_bs() -> Bytes {
    Bytes(512)
}

impl LargeddSpec {
    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        let err = |k: &str, m: String| Err(ConfigError::new(format!("workload.{k}"), m));
        if let Some(s) = self.source {
            if s.0 < PAGE_SIZE {
                return err("source", format!("{} bytes is less than a page", s.0));
            }
        }
        if !(self.target_ratio > 0.0 && self.target_ratio <= 64.0) {
            return err("target_ratio", format!("{} is outside (0, 64]: the copies' total as a multiple of MemTotal", self.target_ratio));
        }
        if self.download_rate.0 == 0 || self.bs.0 == 0 {
            return err(if self.bs.0 == 0 { "bs" } else { "download_rate" }, "must be larger than 0".into());
        }
        validate_cpus(&self.cpus, layout)
    }

    pub fn resolved(&self, layout: &MachineLayout) -> LargeddSpec {
        let mut s = self.clone();
        let mem = mem_total(layout);
        s.source = Some(s.source.unwrap_or(Bytes(mem / 4 / PAGE_SIZE * PAGE_SIZE)));
        s.cpus = Some(s.cpus.clone().unwrap_or_else(|| vec![0]));
        s
    }

    /// NR_COPIES: the target over the source, in whole MB as the script computes it.
    pub fn nr_copies(&self, layout: &MachineLayout) -> u64 {
        let target_mb = (mem_total(layout) as f64 * self.target_ratio) as u64 >> 20;
        let src_mb = (self.source.expect("resolved").0 >> 20).max(1);
        (target_mb / src_mb).max(2)
    }
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    Download { next: u32 },
    /// Copying into file `dst` (copy number `n`), at page `next`.
    Copy { n: u64, dst: Ino, next: u32 },
    Delete { n: u64 },
}

#[derive(Debug, Default)]
struct Times {
    phases: Vec<(&'static str, f64)>,
}

struct LargeddTask {
    spec: Rc<LargeddSpec>,
    times: Rc<RefCell<Times>>,
    phase: Phase,
    src: Ino,
    files: Vec<Ino>,
    src_pages: u32,
    nr_copies: u64,
    phase_start: u64,
    throttle: DirtyThrottle,
}

impl LargeddTask {
    fn end_phase(&mut self, name: &'static str, now: u64) {
        self.times.borrow_mut().phases.push((name, (now - self.phase_start) as f64 / 1e9));
        self.phase_start = now;
    }
}

/// Pages per dd step.
const STEP_PAGES: u32 = 16;

impl Task for LargeddTask {
    fn name(&self) -> &str {
        "largedd"
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        match self.phase {
            Phase::Download { mut next } => {
                if next == 0 && self.src == Ino::MAX {
                    self.phase_start = cx.now;
                    match cx.mm.create_file(0, cx.cpu) {
                        Some(i) => {
                            self.src = i;
                            self.files.push(i);
                        }
                        None => return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) },
                    }
                }
                let t0 = cx.now;
                let stop = page_loop(cx, &mut next, self.src_pages, STEP_PAGES, write_op(self.src, 16384, &mut self.throttle));
                let done_pages = next - match self.phase {
                    Phase::Download { next } => next,
                    _ => unreachable!(),
                };
                self.phase = Phase::Download { next };
                if matches!(stop, Stop::Done) {
                    cx.mm.close_file(self.src);
                    self.end_phase("download tar", t0);
                    self.phase = Phase::Copy { n: 1, dst: Ino::MAX, next: 0 };
                    return step_after(0, &stop);
                }
                // The network delivers download_rate bytes per second.
                let arrive = u64::from(done_pages) * PAGE_SIZE * 1_000_000_000 / self.spec.download_rate.0;
                let mut s = step_after(0, &stop);
                if matches!(s.after, After::Continue) && arrive > 0 {
                    s.after = After::SleepExact(arrive);
                }
                s
            }
            Phase::Copy { n, mut dst, mut next } => {
                if n >= self.nr_copies {
                    self.end_phase("dd source files", cx.now);
                    self.phase = Phase::Delete { n: 0 };
                    return Step { user_ns: 0, system_ns: 0, after: After::Continue };
                }
                if dst == Ino::MAX {
                    // The source's inode may have been pruned since the last copy closed it.
                    if let Err(blocked) = cx.mm.iget(self.src, cx.cpu) {
                        return file_op_blocked(cx, blocked);
                    }
                    if !cx.mm.open_file(self.src) {
                        unreachable!("the source exists until the delete phase");
                    }
                    match cx.mm.create_file(0, cx.cpu) {
                        Some(i) => {
                            dst = i;
                            self.files.push(i);
                        }
                        None => return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) },
                    }
                }
                let bs = self.spec.bs.0;
                let src = self.src;
                let throttle = &mut self.throttle;
                // dd: read a block of the source, write it to the copy.
                let stop = page_loop(cx, &mut next, self.src_pages, STEP_PAGES, |cx, index| {
                    let cpu = cx.cpu;
                    // dd's previous write() returns only when its throttling loop ends.
                    if cx.mm.balance_dirty_pages_resume(throttle, dst, true) {
                        return PageIo::Retry;
                    }
                    match cx.mm.file_read_page(src, index, PAGE_SIZE, cpu) {
                        PageIo::Done => {}
                        other => return other,
                    }
                    cx.mm.cost_ns += syscalls_per_page_ns(cx, bs);
                    let r = cx.mm.file_write_page(dst, index, PAGE_SIZE, cpu, throttle);
                    if r == PageIo::Done {
                        cx.mm.cost_ns += syscalls_per_page_ns(cx, bs);
                    }
                    r
                });
                // A read that had to wait is retried whole (the source page read again is a
                // cache hit; the write of a page already written just redirties it).
                if matches!(stop, Stop::Done) {
                    cx.mm.close_file(dst);
                    cx.mm.close_file(src);
                    self.phase = Phase::Copy { n: n + 1, dst: Ino::MAX, next: 0 };
                } else {
                    self.phase = Phase::Copy { n, dst, next };
                }
                // dd's user time: moving each block between its buffers.
                let user = u64::from(STEP_PAGES) * (PAGE_SIZE / bs.max(1)) * 30;
                step_after(user, &stop)
            }
            Phase::Delete { n } => {
                if n as usize >= self.files.len() {
                    self.end_phase("delete source", cx.now);
                    cx.mm.dirty_throttle_exit(&mut self.throttle, cx.cpu);
                    return Step { user_ns: 0, system_ns: 0, after: After::Exit };
                }
                let ino = self.files[n as usize];
                match cx.mm.unlink_file(ino, cx.cpu) {
                    Err(blocked) => file_op_blocked(cx, blocked),
                    Ok(()) => {
                        self.phase = Phase::Delete { n: n + 1 };
                        Step { user_ns: 0, system_ns: 0, after: After::Continue }
                    }
                }
            }
        }
    }
}

/// The largedd run: its phase times.
pub struct LargeddRun {
    times: Rc<RefCell<Times>>,
}

/// Spawns the largedd shell on `sim`.
pub fn start(spec: &LargeddSpec, sim: &mut Sim, layout: &MachineLayout) -> LargeddRun {
    let spec = Rc::new(spec.clone());
    let times = Rc::new(RefCell::new(Times::default()));
    let cpu = spec.cpus.as_ref().map_or(0, |c| c[0]);
    let src_pages = spec.source.expect("resolved").0.div_ceil(PAGE_SIZE) as u32;
    let task = LargeddTask {
        nr_copies: spec.nr_copies(layout),
        spec,
        times: times.clone(),
        phase: Phase::Download { next: 0 },
        src: Ino::MAX,
        files: Vec::new(),
        src_pages,
        phase_start: 0,
        throttle: DirtyThrottle::default(),
    };
    sim.spawn(Box::new(task), cpu);
    LargeddRun { times }
}

impl WorkloadRun for LargeddRun {
    fn metrics(&self, _sim: &Sim) -> Vec<MetricSample> {
        self.times
            .borrow()
            .phases
            .iter()
            .map(|&(op, s)| MetricSample { table: "largedd".into(), preferred: Preferred::Lower, unit: "s".into(), op: op.into(), value: s })
            .collect()
    }
}
