//! `fsmark`: fs_mark 3.3 as MMTests runs it (`fs_mark -d DIR -D dirs -N per_dir -n files
//! -L loops -t threads -S0 -s size`).
//!
//! Each loop, the fs_mark parent forks `threads` worker processes (fork_threads) and waits for
//! all of them to exit before it prints the loop's line and forks the next loop's workers: a
//! loop ends with its slowest worker, and every loop's workers are new processes with new
//! pids. Each worker creates `files` files, each written with `write_size` write() calls up to
//! `size` bytes and closed; with -S0 nothing is synced, and with -L files are kept. The loop's
//! Files/sec and App Overhead are summed over the workers: a worker's Files/sec is its files
//! over the wall time of its create loop, its overhead that wall time minus the time inside
//! the timed system calls (open, write, close), in microseconds. Time a worker waits for a CPU
//! between calls is overhead; time throttled or reclaiming inside a call is not.
//!
//! Directories as fs_mark 3.3 lays them out with one -d and several threads: every worker
//! works in the same test directory (/tmp/fsmark-PID, below /tmp below the root). A worker
//! starts in the subdirectory numbered by the wall clock's seconds at its start modulo -D
//! (setup(); here the clock starts at a draw of the run's PRNG), named in hex, and moves to
//! the next after -N files. A subdirectory is created by the first worker that needs it (the
//! others' mkdir fails with EEXIST).

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::fileio::{page_loop, step_after, validate_cpus, write_op, Stop};
use super::{MetricSample, Preferred, WorkloadRun};
use crate::config::machine::MachineLayout;
use crate::config::size::Bytes;
use crate::config::ConfigError;
use crate::fs::ialloc::{mix64, DirId, ROOT_DIR};
use crate::fs::Ino;
use crate::mm::page_writeback::DirtyThrottle;
use crate::mm::PAGE_SIZE;
use crate::sim::{After, Sim, Step, Task, TaskCx, WaitQueueId};

/// The `fsmark` workload definition (fs_mark's flags by their meaning).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsmarkSpec {
    /// -t: worker processes.
    #[serde(default = "default_threads")]
    pub threads: usize,
    /// -n: files each worker creates per loop.
    pub files: u64,
    /// -L: loops (fs_mark iterations; one report sample each).
    pub loops: u64,
    /// -s: file size.
    pub size: Bytes,
    /// -D: subdirectories.
    #[serde(default = "default_dirs")]
    pub dirs: u64,
    /// -N: files per subdirectory before moving to the next.
    #[serde(default = "default_per_dir")]
    pub files_per_dir: u64,
    /// -S: sync method; only 0 (no sync) is modelled.
    #[serde(default)]
    pub sync: u32,
    /// -w: write() size.
    #[serde(default = "default_write_size")]
    pub write_size: Bytes,
    /// CPUs the workers are bound to, round robin (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
}

fn default_threads() -> usize {
    1
}
fn default_dirs() -> u64 {
    100
}
fn default_per_dir() -> u64 {
    25000
}
fn default_write_size() -> Bytes {
    Bytes(16384)
}

impl FsmarkSpec {
    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        let err = |k: &str, m: &str| Err(ConfigError::new(format!("workload.{k}"), m));
        if self.threads == 0 {
            return err("threads", "needs at least one worker (-t)");
        }
        if self.files == 0 || self.loops == 0 {
            return err(if self.files == 0 { "files" } else { "loops" }, "must be at least 1");
        }
        if self.sync != 0 {
            return err("sync", "only -S0 (no sync) is modelled; valid: 0");
        }
        if self.write_size.0 == 0 {
            return err("write_size", "must be at least 1 byte");
        }
        if self.dirs == 0 || self.files_per_dir == 0 {
            return err("dirs", "-D and -N must be at least 1");
        }
        validate_cpus(&self.cpus, layout)
    }

    pub fn resolved(&self, layout: &MachineLayout) -> FsmarkSpec {
        let mut s = self.clone();
        s.cpus = Some(s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect()));
        s
    }
}

/// Per-loop, per-worker figures.
#[derive(Clone, Copy, Debug, Default)]
struct LoopStat {
    wall_ns: u64,
    syscall_ns: u64,
    /// When the worker process started and exited, and its pid (what the loop barrier's
    /// mechanism test checks).
    #[cfg_attr(not(test), allow(dead_code))]
    start_ns: u64,
    #[cfg_attr(not(test), allow(dead_code))]
    end_ns: u64,
    #[cfg_attr(not(test), allow(dead_code))]
    pid: usize,
}

#[derive(Debug, Default)]
struct Stats {
    /// [loop][worker]
    loops: Vec<Vec<LoopStat>>,
}

enum Phase {
    /// About to create the next file.
    Create,
    /// Inside open(O_CREAT) of a new name hashing to `name_hash` in `dir`: waiting for the
    /// directory's i_mutex (`locked` false) or, holding it, for a directory block the lookup
    /// reads.
    Open { dir: DirId, name_hash: u64, locked: bool },
    /// File `ino` created in `dir`: the i_mutex, held for the create's CPU time (its
    /// allocations' reclaim included), is released at the start of the next step.
    Created { dir: DirId, ino: Ino },
    /// Writing file `ino` from page `next`.
    Write { ino: Ino, next: u32 },
}

/// What the workers share: the test directory and its subdirectories (created on first
/// use), and the parent's loop (fork_threads: which loop runs, how many of its workers have
/// not exited, the wait queue each loop's workers wait on until they are forked).
struct Shared {
    top: DirId,
    sub: Vec<Option<DirId>>,
    /// The wall clock's seconds at simulated time 0.
    clock0_sec: u64,
    running_loop: u64,
    running: usize,
    fork_wq: Vec<WaitQueueId>,
}

/// One worker process of one loop.
struct FsmarkWorker {
    name: String,
    shared: Rc<RefCell<Shared>>,
    /// fs_mark's current_subdir and files_in_subdir (set up when the process starts).
    subdir: u64,
    in_subdir: u64,
    w: usize,
    spec: Rc<FsmarkSpec>,
    stats: Rc<RefCell<Stats>>,
    phase: Phase,
    /// The loop this process runs.
    loop_no: u64,
    file_no: u64,
    loop_start: u64,
    syscall_ns: u64,
    throttle: DirtyThrottle,
    pages_per_file: u32,
    /// When the worker went to sleep inside a timed call (the time asleep counts as the
    /// call's).
    blocked_since: Option<u64>,
}

impl FsmarkWorker {
    /// Time inside system calls during this step: the kernel's CPU time and any kernel sleep
    /// (a congestion_wait at its timeout, which a freed write request may cut short).
    fn account(&mut self, cx: &TaskCx, before_cost: u64) {
        self.syscall_ns += cx.mm.cost_ns - before_cost + cx.mm.sleep_ns + cx.mm.congestion_sleep.map_or(0, |c| c.0);
    }

    /// open(O_CREAT) of the file named in `Phase::Open`: the directory's i_mutex, the lookup
    /// (which may have to read a directory block), the create, the unlock. A sleep on the
    /// mutex or a read leaves the phase as it is, to go on from where it stopped.
    fn open_step(&mut self, cx: &mut TaskCx, before: u64) -> Step {
        let Phase::Open { dir, name_hash, locked } = self.phase else { unreachable!("open_step outside an open") };
        let blocked = |w: &mut Self, cx: &mut TaskCx, wq| {
            w.account(cx, before);
            w.blocked_since = Some(cx.now + (cx.mm.cost_ns - before));
            Step { user_ns: 0, system_ns: 0, after: After::Wait(wq) }
        };
        if !locked {
            if let Err(wq) = cx.mm.dir_mutex_lock(0, dir, cx.tid) {
                return blocked(self, cx, wq);
            }
            self.phase = Phase::Open { dir, name_hash, locked: true };
        } else {
            // Back from a sleep taken holding the mutex.
            cx.mm.dir_mutex_owner_asleep(0, dir, false);
        }
        if let Some(pfn) = cx.mm.dx_lookup(0, dir, name_hash, cx.cpu) {
            let wq = cx.mm.page_waitqueue(pfn);
            cx.mm.dir_mutex_owner_asleep(0, dir, true);
            return blocked(self, cx, wq);
        }
        // ext3_new_inode's get_write_access may wait for the commit's log write.
        if let Some(wq) = cx.mm.jbd_create_shadow_wait(0) {
            cx.mm.dir_mutex_owner_asleep(0, dir, true);
            return blocked(self, cx, wq);
        }
        let Some(ino) = cx.mm.create_file_named(0, dir, Some(name_hash), cx.cpu) else {
            cx.mm.dir_mutex_unlock(0, dir, cx.tid);
            self.phase = Phase::Create;
            self.account(cx, before);
            return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) };
        };
        self.phase = Phase::Created { dir, ino };
        self.account(cx, before);
        // The call returns after the unlock: time waiting for the CPU meanwhile is the call's.
        self.blocked_since = Some(cx.now + (cx.mm.cost_ns - before));
        Step { user_ns: 0, system_ns: 0, after: After::Continue }
    }
}

/// User time of one file outside the timed calls: name generation, gettimeofday, the mkdir of
/// the subdirectory (EEXIST).
const PER_FILE_USER_NS: u64 = 3_000;

impl Task for FsmarkWorker {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        if self.loop_start == u64::MAX {
            let sh = self.shared.borrow();
            if sh.running_loop != self.loop_no {
                // Not forked yet: the previous loop's workers are still running.
                return Step { user_ns: 0, system_ns: 0, after: After::Wait(sh.fork_wq[self.loop_no as usize]) };
            }
            // setup(): the starting subdirectory from the clock's seconds.
            self.subdir = (sh.clock0_sec + cx.now / 1_000_000_000) % self.spec.dirs;
            drop(sh);
            self.loop_start = cx.now;
        }
        let before = cx.mm.cost_ns;
        if let Some(t) = self.blocked_since.take() {
            self.syscall_ns += cx.now - t;
        }
        match self.phase {
            Phase::Create => {
                if self.in_subdir >= self.spec.files_per_dir {
                    self.subdir = (self.subdir + 1) % self.spec.dirs;
                    self.in_subdir = 0;
                }
                let existing = self.shared.borrow().sub[self.subdir as usize];
                let dir = match existing {
                    Some(d) => d,
                    None => {
                        let top = self.shared.borrow().top;
                        let Some(d) = cx.mm.mkdir(0, top, cx.tid as u32) else {
                            self.account(cx, before);
                            return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) };
                        };
                        self.shared.borrow_mut().sub[self.subdir as usize] = Some(d);
                        d
                    }
                };
                // The name: fs_mark's 16 characters of time and 24 random ones; only its htree
                // hash matters here.
                let name_hash = mix64((self.loop_no << 40) ^ ((self.w as u64) << 24) ^ self.file_no ^ 0x6673_6d61_726b);
                self.phase = Phase::Open { dir, name_hash, locked: false };
                self.open_step(cx, before)
            }
            Phase::Open { .. } => self.open_step(cx, before),
            Phase::Created { dir, ino } => {
                cx.mm.dir_mutex_unlock(0, dir, cx.tid);
                self.in_subdir += 1;
                self.phase = Phase::Write { ino, next: 0 };
                Step { user_ns: PER_FILE_USER_NS, system_ns: 0, after: After::Continue }
            }
            Phase::Write { ino, mut next } => {
                let end = self.pages_per_file;
                let ws = self.spec.write_size.0;
                let stop = if next >= end {
                    // The file's last write() returns once its throttling loop lets it go.
                    if cx.mm.balance_dirty_pages_resume(&mut self.throttle, ino, true) { Stop::Yield } else { Stop::Done }
                } else {
                    page_loop(cx, &mut next, end, end, write_op(ino, ws, &mut self.throttle))
                };
                let stop = match stop {
                    Stop::Done if self.throttle.throttled_since.is_some() => Stop::Yield,
                    other => other,
                };
                self.phase = Phase::Write { ino, next };
                if matches!(stop, Stop::Done) {
                    cx.mm.close_file(ino);
                    self.file_no += 1;
                    self.phase = Phase::Create;
                }
                self.account(cx, before);
                if cx.mm.owes_request_wait() || matches!(stop, Stop::Wait(_)) {
                    // Asleep inside write() (get_request_wait, a locked page, the journal's
                    // log write): the call's time.
                    self.blocked_since = Some(cx.now + (cx.mm.cost_ns - before));
                }
                if matches!(stop, Stop::Done) && self.file_no == self.spec.files {
                    let wall = cx.now + (cx.mm.cost_ns - before) - self.loop_start;
                    let mut st = self.stats.borrow_mut();
                    let l = self.loop_no as usize;
                    if st.loops.len() <= l {
                        st.loops.resize(l + 1, vec![LoopStat::default(); self.spec.threads]);
                    }
                    st.loops[l][self.w] = LoopStat { wall_ns: wall.max(self.syscall_ns), syscall_ns: self.syscall_ns, start_ns: self.loop_start, end_ns: self.loop_start + wall, pid: cx.tid };
                    drop(st);
                    // exit(); the last worker of the loop lets the parent fork the next loop's.
                    let mut sh = self.shared.borrow_mut();
                    sh.running -= 1;
                    if sh.running == 0 && self.loop_no + 1 < self.spec.loops {
                        sh.running_loop += 1;
                        sh.running = self.spec.threads;
                        let wq = sh.fork_wq[sh.running_loop as usize];
                        drop(sh);
                        cx.wake_up(wq);
                    }
                    cx.mm.dirty_throttle_exit(&mut self.throttle, cx.cpu);
                    return Step { user_ns: 0, system_ns: 0, after: After::Exit };
                }
                step_after(0, &stop)
            }
        }
    }
}

/// The fsmark run: per-loop statistics of all workers.
pub struct FsmarkRun {
    stats: Rc<RefCell<Stats>>,
    files: u64,
}

/// Spawns the workers of `spec` on `sim`.
pub fn start(spec: &FsmarkSpec, sim: &mut Sim) -> FsmarkRun {
    let spec = Rc::new(spec.clone());
    let stats = Rc::new(RefCell::new(Stats::default()));
    let cpus = spec.cpus.clone().unwrap_or_else(|| (0..sim.nr_cpus()).collect());
    let pages_per_file = spec.size.0.div_ceil(PAGE_SIZE) as u32;
    let tmp = sim.mm.mkdir(0, ROOT_DIR, 0).expect("a new file system has room for /tmp");
    let top = sim.mm.mkdir(0, tmp, 0).expect("a new file system has room for the test directory");
    let fork_wq = (0..spec.loops).map(|_| sim.new_wait_queue()).collect();
    let clock0_sec = sim.rng.below(spec.dirs);
    let shared = Rc::new(RefCell::new(Shared { top, sub: vec![None; spec.dirs as usize], clock0_sec, running_loop: 0, running: spec.threads, fork_wq }));
    // Every loop's processes exist from the start and wait to be forked, so that each loop's
    // workers have their own pids, as fork gives them.
    for loop_no in 0..spec.loops {
        for w in 0..spec.threads {
            let task = FsmarkWorker {
                name: format!("fs_mark-{loop_no}-{w}"),
                shared: shared.clone(),
                subdir: 0,
                in_subdir: 0,
                w,
                spec: spec.clone(),
                stats: stats.clone(),
                phase: Phase::Create,
                loop_no,
                file_no: 0,
                loop_start: u64::MAX,
                syscall_ns: 0,
                throttle: DirtyThrottle { tid: w, ..Default::default() },
                pages_per_file,
                blocked_since: None,
            };
            sim.spawn(Box::new(task), cpus[w % cpus.len()]);
        }
    }
    FsmarkRun { stats, files: spec.files }
}

impl WorkloadRun for FsmarkRun {
    fn metrics(&self, _sim: &Sim) -> Vec<MetricSample> {
        let st = self.stats.borrow();
        let mut out = Vec::new();
        for l in &st.loops {
            let files_per_sec: f64 = l.iter().filter(|w| w.wall_ns > 0).map(|w| self.files as f64 / (w.wall_ns as f64 / 1e9)).sum();
            let overhead_us: f64 = l.iter().map(|w| (w.wall_ns - w.syscall_ns) as f64 / 1000.0).sum();
            out.push(MetricSample { table: "fsmark Files/s".into(), preferred: Preferred::Higher, unit: "files/s".into(), op: "Files/s".into(), value: files_per_sec });
            out.push(MetricSample { table: "fsmark Overhead".into(), preferred: Preferred::Lower, unit: "us".into(), op: "Overhead".into(), value: overhead_us });
            // mmtwin's own: the loop as the parent sees it (first fork to last exit) and how far
            // apart its workers' create loops took. Files/s sums the workers' own rates, so it
            // exceeds files per loop time by as much as the workers are unequal.
            let start = l.iter().map(|w| w.start_ns).min().unwrap_or(0);
            let end = l.iter().map(|w| w.end_ns).max().unwrap_or(0);
            let walls = l.iter().map(|w| w.wall_ns);
            let spread = walls.clone().max().unwrap_or(0) - walls.min().unwrap_or(0);
            for (op, ns) in [("Loop", end - start), ("Spread", spread)] {
                out.push(MetricSample { table: "fsmark Loop (mmtwin)".into(), preferred: Preferred::Lower, unit: "s".into(), op: op.into(), value: ns as f64 / 1e9 });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::scenario::Scenario;
    use crate::mm::Mm;
    use crate::workloads::WorkloadSpec;

    #[test]
    fn each_loop_is_forked_after_the_last_worker_of_the_previous_one_exits() {
        let text = "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{ id = 0, cpus = 2, memory = \"64M\" }]\n\
                    [[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\n\
                    [workload]\ntype = \"fsmark\"\nthreads = 3\nfiles = 4\nloops = 3\nsize = 262144\n";
        let cfg = Scenario::parse(text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0);
        let WorkloadSpec::Fsmark(spec) = &cfg.workload else { panic!("an fsmark scenario") };
        let mut sim = Sim::new(Mm::boot(&cfg), 1, 1_000_000_000);
        let run = start(spec, &mut sim);
        sim.run(&mut |_| {}).unwrap();
        let st = run.stats.borrow();
        assert_eq!(st.loops.len(), 3);
        for l in 1..3 {
            let prev_end = st.loops[l - 1].iter().map(|w| w.end_ns).max().unwrap();
            let start = st.loops[l].iter().map(|w| w.start_ns).min().unwrap();
            assert!(start >= prev_end, "loop {l} started at {start} ns, before loop {} ended at {prev_end} ns", l - 1);
        }
        // The loop table: the loop from first fork to last exit, and its workers' spread.
        let m = run.metrics(&sim);
        let loops: Vec<f64> = m.iter().filter(|x| x.op == "Loop").map(|x| x.value).collect();
        let spreads: Vec<f64> = m.iter().filter(|x| x.op == "Spread").map(|x| x.value).collect();
        assert_eq!((loops.len(), spreads.len()), (3, 3));
        for (l, w) in st.loops.iter().enumerate() {
            let slowest = w.iter().map(|x| x.wall_ns).max().unwrap() as f64 / 1e9;
            assert!(loops[l] >= slowest && spreads[l] <= slowest, "loop {l}: {} s, spread {} s, slowest worker {slowest} s", loops[l], spreads[l]);
        }
        // Every worker of every loop is a process of its own.
        let mut pids: Vec<usize> = st.loops.iter().flatten().map(|w| w.pid).collect();
        pids.sort();
        pids.dedup();
        assert_eq!(pids.len(), 9);
    }
}
