//! `iozone`: parallel sequential file I/O in iozone's throughput mode, as IBM's Linux on System
//! z team ran it (the pcp-cold-pfn-order seed): `iozone -i 0 -i 1 -r 64k -s SIZE -t N -F <one
//! file per disk>`. N processes each work on their own file on their own disk, front to back in
//! `record`-byte calls, through the page cache or with O_DIRECT, and all of them start each
//! test together (iozone's barrier). The tests (-i) are run in iozone's order:
//! - 0: write (create the file and write it), then rewrite (write it again over its blocks);
//! - 1: read, then re-read.
//!
//! With test 0 each round's children write their own files and iozone deletes them when the
//! round ends; nothing else is dropped, so what the writes left cached (the ext2/ext3 indirect
//! blocks in the block device's page cache, "Buffers") carries over to the next round. Without
//! it the files are laid out on disk beforehand and the caches are dropped between rounds, so
//! each round starts with them on disk and out of the cache. A test's result for a round is
//! iozone's "Children see throughput": the sum over children of the bytes each moved divided by
//! its own elapsed time, in KB/s.
//!
//! Stonewalling (iozone's default; `-x` turns it off): the first child to finish a pass raises
//! a flag shared by all children. A reader or rewriter that sees it before its next record
//! stops there, and the record whose call returned after the flag went up is not counted
//! (thread_read_test, thread_rwrite_test, thread_rread_test in iozone.c). A writer of the
//! initial write test records its throughput at that point and goes on writing to the end of
//! its file without counting, so the later tests find whole files (thread_write_test). So a
//! pass's throughput is, near enough, what all children moved together while none had
//! finished.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::fileio::{file_op_blocked, page_loop, step_after, syscalls_per_page_ns, validate_cpus, write_op, Stop};
use super::{MetricSample, Preferred, WorkloadRun};
use crate::config::machine::MachineLayout;
use crate::config::size::Bytes;
use crate::config::ConfigError;
use crate::fs::Ino;
use crate::mm::gfp::Gfp;
use crate::mm::page_writeback::DirtyThrottle;
use crate::mm::{Pfn, PAGE_SIZE};
use crate::sim::{After, Sim, Step, Task, TaskCx, WaitQueueId};

/// The `iozone` workload definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IozoneSpec {
    /// Child counts (-t), run one after another (each child on a disk of its own).
    #[serde(default = "default_readers")]
    pub readers: Vec<u32>,
    /// Size of each child's file (-s).
    pub file_size: Bytes,
    /// Bytes per read() or write() call (-r).
    #[serde(default = "default_record")]
    pub record: Bytes,
    /// The tests (-i), by iozone's numbers: 0 = write and rewrite, 1 = read and re-read.
    #[serde(default = "default_tests")]
    pub tests: Vec<u32>,
    /// O_DIRECT (-I): read into and write from the user buffer, no page cache.
    #[serde(default)]
    pub direct: bool,
    /// CPUs the children run on, round robin (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// Stonewalling: the first child to finish a pass stops the others (iozone's default;
    /// false is iozone's `-x`).
    #[serde(default = "default_stonewall")]
    pub stonewall: bool,
}

fn default_stonewall() -> bool {
    true
}

fn default_readers() -> Vec<u32> {
    vec![1, 2, 4, 8, 16, 32, 64]
}
fn default_record() -> Bytes {
    Bytes(64 << 10)
}
fn default_tests() -> Vec<u32> {
    vec![1]
}

/// One timed pass over every child's file; a test of iozone is two of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Write,
    Rewrite,
    Read,
    Reread,
}

impl Phase {
    /// Whether the pass writes (write and rewrite) rather than reads.
    fn writes(self) -> bool {
        matches!(self, Phase::Write | Phase::Rewrite)
    }

    /// The report table of the phase (iozone's "Children see throughput for N ...").
    fn table(self) -> &'static str {
        match self {
            Phase::Write => "iozone Write Throughput",
            Phase::Rewrite => "iozone Rewrite Throughput",
            Phase::Read => "iozone Read Throughput",
            Phase::Reread => "iozone Re-read Throughput",
        }
    }
}

impl IozoneSpec {
    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        let disks = layout.disks;
        let err = |k: &str, m: String| Err(ConfigError::new(format!("workload.{k}"), m));
        if self.readers.is_empty() || self.readers.contains(&0) {
            return err("readers", "lists the child counts to run, each at least 1 (e.g. [1, 2, 4, 8])".into());
        }
        if let Some(&n) = self.readers.iter().find(|&&n| n > disks) {
            return err("readers", format!("{n} children need {n} disks (one each); the machine has machine.disks = {disks}"));
        }
        if self.tests.is_empty() || self.tests.iter().any(|&t| t > 1) || self.tests.windows(2).any(|w| w[0] >= w[1]) {
            return err("tests", format!("{:?} is not a list of iozone tests: valid are [0] (write, rewrite), [1] (read, re-read) and [0, 1]", self.tests));
        }
        if self.record.0 < PAGE_SIZE || self.record.0 % PAGE_SIZE != 0 {
            return err("record", format!("the record size must be a positive multiple of 4096, not {}", self.record.0));
        }
        if self.file_size.0 < self.record.0 || self.file_size.0 / PAGE_SIZE > u64::from(u32::MAX) {
            return err("file_size", format!("the file must hold at least one record and fewer than 2^32 pages, not {} bytes", self.file_size.0));
        }
        validate_cpus(&self.cpus, layout)
    }

    pub fn resolved(&self, layout: &MachineLayout) -> IozoneSpec {
        let mut s = self.clone();
        s.cpus = Some(s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect()));
        s
    }

    /// The passes of a round, in iozone's order.
    fn phases(&self) -> Vec<Phase> {
        let mut v = Vec::new();
        if self.tests.contains(&0) {
            v.extend([Phase::Write, Phase::Rewrite]);
        }
        if self.tests.contains(&1) {
            v.extend([Phase::Read, Phase::Reread]);
        }
        v
    }
}

#[derive(Default)]
struct Shared {
    /// (phase, children, KB/s of one child).
    results: Vec<(Phase, u32, f64)>,
    round: usize,
    /// The pass of the round that is running.
    phase: usize,
    running: usize,
    /// The stonewall flag of the running pass: a child has finished it.
    stop: bool,
    /// The file on each disk (Ino::MAX: none yet this round).
    files: Vec<Ino>,
}

/// One iozone child of one round: it runs every pass of the round on its own file.
struct Child {
    name: String,
    round: usize,
    children: u32,
    disk: usize,
    phases: Rc<Vec<Phase>>,
    /// The pass this child runs or waits for.
    phase: usize,
    pages: u32,
    next: u32,
    /// When the current pass started for this child (0: not yet).
    start: u64,
    record_pages: u32,
    direct: bool,
    stonewall: bool,
    /// The child has seen the stonewall flag this pass and recorded its throughput (a writer of
    /// the initial write test writes on to the end of its file, uncounted).
    stopped: bool,
    throttle: DirtyThrottle,
    /// O_DIRECT: the user buffer, its dio context and wait queue.
    buf: Vec<Pfn>,
    dio: u32,
    wq: WaitQueueId,
    shared: Rc<RefCell<Shared>>,
    start_wq: WaitQueueId,
    done_wq: WaitQueueId,
}

/// Pages per step of a buffered child.
const STEP_PAGES: u32 = 64;

impl Child {
    /// Records the child's throughput for the current pass: `pages` counted over the time
    /// since the pass started for it.
    fn record(&self, cx: &TaskCx, pages: u32) {
        let secs = (cx.now - self.start) as f64 / 1e9;
        let kb = f64::from(pages) * (PAGE_SIZE / 1024) as f64;
        let phase = self.phases[self.phase];
        self.shared.borrow_mut().results.push((phase, self.children, kb / secs.max(1e-9)));
    }

    /// The stonewall check before the next record: whether another child has finished the pass
    /// and this one sees it now for the first time. The `in_flight` pages of a record whose
    /// call returned after the flag went up are not counted. Records what is counted; the
    /// caller stops, except a writer of the initial write test, which goes on uncounted.
    fn stonewalled(&mut self, cx: &TaskCx, in_flight: u32) -> bool {
        if !self.stonewall || self.stopped || !self.shared.borrow().stop {
            return false;
        }
        self.record(cx, self.next - in_flight);
        self.stopped = true;
        true
    }

    /// Ends the current pass: records the child's throughput (unless the stonewall already
    /// did), raises the stonewall flag, and tells the driver.
    fn finish(&mut self, cx: &mut TaskCx, ino: Ino) -> Step {
        cx.mm.close_file(ino);
        for &p in &self.buf {
            cx.mm.free_pages(p, 0, cx.cpu);
        }
        self.buf.clear();
        self.dio = 0;
        if !std::mem::take(&mut self.stopped) {
            self.record(cx, self.next);
        }
        let mut sh = self.shared.borrow_mut();
        if self.stonewall {
            sh.stop = true;
        }
        sh.running -= 1;
        if sh.running == 0 {
            cx.wake_up(self.done_wq);
        }
        self.phase += 1;
        self.next = 0;
        self.start = 0;
        let after = if self.phase == self.phases.len() { After::Exit } else { After::Continue };
        if matches!(after, After::Exit) {
            cx.mm.dirty_throttle_exit(&mut self.throttle, cx.cpu);
        }
        Step { user_ns: 0, system_ns: 0, after }
    }

    fn step_direct(&mut self, cx: &mut TaskCx, ino: Ino, write: bool) -> Step {
        if self.dio == 0 {
            // The buffer is faulted in before the first call (hot order-0 pages).
            let gfp = Gfp::GFP_HIGHUSER_MOVABLE;
            while self.buf.len() < self.record_pages as usize {
                match cx.mm.alloc_pages(gfp, 0, cx.cpu) {
                    Some(p) => self.buf.push(p),
                    None => return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) },
                }
            }
            self.dio = cx.mm.new_dio(self.wq);
        }
        if cx.mm.dio_remaining(self.dio) > 0 {
            return Step { user_ns: 0, system_ns: 0, after: After::Wait(self.wq) };
        }
        // The record just completed returns to a child that now sees the flag: not counted.
        let in_flight = if self.next == 0 { 0 } else { (self.next - 1) % self.record_pages + 1 };
        if (self.stonewalled(cx, in_flight) && self.phases[self.phase] != Phase::Write) || self.next >= self.pages {
            return self.finish(cx, ino);
        }
        let n = self.record_pages.min(self.pages - self.next) as usize;
        cx.mm.cost_ns += cx.mm.costs.syscall_ns;
        let buf = self.buf[..n].to_vec();
        if write {
            cx.mm.direct_io_write(self.dio, ino, self.next, &buf);
        } else {
            cx.mm.direct_io_read(self.dio, ino, self.next, &buf);
        }
        self.next += n as u32;
        let after = if cx.mm.dio_remaining(self.dio) > 0 { After::Wait(self.wq) } else { After::Continue };
        Step { user_ns: 0, system_ns: 0, after }
    }
}

impl Task for Child {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let (round, phase) = {
            let sh = self.shared.borrow();
            (sh.round, sh.phase)
        };
        if round != self.round || phase != self.phase {
            return Step { user_ns: 0, system_ns: 0, after: After::Wait(self.start_wq) };
        }
        let kind = self.phases[self.phase];
        if self.start == 0 {
            if kind == Phase::Write {
                // open(O_CREAT): the file of this round.
                let Some(ino) = cx.mm.create_file(self.disk, cx.cpu) else {
                    return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) };
                };
                self.shared.borrow_mut().files[self.disk] = ino;
            } else {
                // The file's inode may have been pruned since the last pass closed it.
                let ino = self.shared.borrow().files[self.disk];
                if let Err(blocked) = cx.mm.iget(ino, cx.cpu) {
                    return file_op_blocked(cx, blocked);
                }
                cx.mm.open_file(ino);
            }
            self.start = cx.now.max(1);
        }
        let ino = self.shared.borrow().files[self.disk];
        if self.direct {
            return self.step_direct(cx, ino, kind.writes());
        }
        let record = u64::from(self.record_pages) * PAGE_SIZE;
        // A step that begins mid-record is inside that record's read() or write().
        if self.stonewalled(cx, self.next % self.record_pages) && kind != Phase::Write {
            return self.finish(cx, ino);
        }
        let done = self.next;
        let stop = if kind.writes() {
            page_loop(cx, &mut self.next, self.pages, STEP_PAGES, write_op(ino, record, &mut self.throttle))
        } else {
            page_loop(cx, &mut self.next, self.pages, STEP_PAGES, |cx, index| {
                let cpu = cx.cpu;
                let r = cx.mm.file_read_page(ino, index, PAGE_SIZE, cpu);
                if r == crate::mm::filemap::PageIo::Done {
                    cx.mm.cost_ns += syscalls_per_page_ns(cx, record);
                }
                r
            })
        };
        // A write copies from the user buffer (the user side of write(), as dd's).
        let user = if kind.writes() { u64::from(self.next - done) * cx.mm.costs.copy_page_ns / 2 } else { 0 };
        if matches!(stop, Stop::Done) {
            let mut s = self.finish(cx, ino);
            s.user_ns = user;
            return s;
        }
        step_after(user, &stop)
    }
}

/// Runs the rounds: starts each pass of a round when every child has finished the one before,
/// and ends a round by deleting the files the round wrote (iozone's cleanup) or, when the files
/// were laid out beforehand, by dropping the caches.
struct Driver {
    counts: Vec<u32>,
    phases: Rc<Vec<Phase>>,
    writes: bool,
    file_pages: u64,
    setup: bool,
    /// Next file to delete at the end of a round.
    rm: usize,
    shared: Rc<RefCell<Shared>>,
    start_wq: WaitQueueId,
    done_wq: WaitQueueId,
}

impl Driver {
    /// Starts pass `phase` of the current round.
    fn start_pass(&mut self, cx: &mut TaskCx, phase: usize) -> Step {
        let mut sh = self.shared.borrow_mut();
        sh.phase = phase;
        sh.running = self.counts[sh.round] as usize;
        sh.stop = false;
        cx.wake_up(self.start_wq);
        Step { user_ns: 0, system_ns: 0, after: After::Wait(self.done_wq) }
    }
}

impl Task for Driver {
    fn name(&self) -> &str {
        "iozone"
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let idle = Step { user_ns: 0, system_ns: 0, after: After::Continue };
        let disks = *self.counts.iter().max().expect("validated") as usize;
        if !self.setup {
            if !self.writes {
                let have = self.shared.borrow().files.len();
                for d in have..disks {
                    let Some(ino) = cx.mm.create_file(d, cx.cpu) else {
                        return Step { after: After::Sleep(10_000_000), ..idle };
                    };
                    cx.mm.lay_out_file(ino, self.file_pages);
                    cx.mm.close_file(ino);
                    self.shared.borrow_mut().files.push(ino);
                }
            } else {
                self.shared.borrow_mut().files = vec![Ino::MAX; disks];
            }
            self.setup = true;
            self.shared.borrow_mut().round = 0;
            return self.start_pass(cx, 0);
        }
        if self.shared.borrow().running > 0 {
            return Step { after: After::Wait(self.done_wq), ..idle };
        }
        let phase = self.shared.borrow().phase;
        if phase + 1 < self.phases.len() {
            return self.start_pass(cx, phase + 1);
        }
        if self.writes {
            // iozone deletes its files at the end (no -w). ext2/ext3 forget the freed indirect
            // blocks' buffers (bforget), but their pages stay in the block device's cache.
            let n = self.counts[self.shared.borrow().round] as usize;
            while self.rm < n {
                let ino = self.shared.borrow().files[self.rm];
                if let Err(blocked) = cx.mm.unlink_file(ino, cx.cpu) {
                    return file_op_blocked(cx, blocked);
                }
                self.shared.borrow_mut().files[self.rm] = Ino::MAX;
                self.rm += 1;
            }
            self.rm = 0;
        } else {
            // echo 3 > /proc/sys/vm/drop_caches between rounds: drop_pagecache_sb walks every
            // superblock, the block devices' own among them, so the cached indirect blocks
            // (Buffers) go too.
            let files = self.shared.borrow().files.clone();
            for ino in files {
                // A file whose inode the shrinkers evicted has no page cache left.
                let Some(Some(inode)) = cx.mm.inodes.get(ino as usize) else { continue };
                let mapping = inode.mapping;
                cx.mm.invalidate_mapping_pages(mapping, cx.cpu);
            }
            for sb in 0..cx.mm.sbs.len() {
                if let Some(bdev) = cx.mm.sbs[sb].bdev_ino {
                    let mapping = cx.mm.inode(bdev).mapping;
                    cx.mm.invalidate_mapping_pages(mapping, cx.cpu);
                }
            }
            // The 2 of echo 3: unused dentries and inodes, the closed files' among them.
            cx.mm.drop_slab(cx.cpu);
        }
        let round = {
            let mut sh = self.shared.borrow_mut();
            sh.round += 1;
            sh.round
        };
        if round >= self.counts.len() {
            return Step { after: After::Exit, ..idle };
        }
        self.start_pass(cx, 0)
    }
}

/// The iozone run: each child's throughput, by pass and child count.
pub struct IozoneRun {
    shared: Rc<RefCell<Shared>>,
}

/// Spawns the driver and every round's children (each waits for its round's passes).
pub fn start(spec: &IozoneSpec, sim: &mut Sim) -> IozoneRun {
    let cpus = spec.cpus.clone().unwrap_or_else(|| (0..sim.nr_cpus()).collect());
    // Round usize::MAX: the driver is still setting up.
    let shared = Rc::new(RefCell::new(Shared { round: usize::MAX, running: usize::MAX, ..Default::default() }));
    let start_wq = sim.new_wait_queue();
    let done_wq = sim.new_wait_queue();
    let pages = (spec.file_size.0 / PAGE_SIZE) as u32;
    let phases = Rc::new(spec.phases());
    for (round, &n) in spec.readers.iter().enumerate() {
        for j in 0..n as usize {
            let wq = sim.new_wait_queue();
            let c = Child {
                name: format!("iozone-{n}-{j}"),
                round,
                children: n,
                disk: j,
                phases: phases.clone(),
                phase: 0,
                pages,
                next: 0,
                start: 0,
                record_pages: (spec.record.0 / PAGE_SIZE) as u32,
                direct: spec.direct,
                stonewall: spec.stonewall,
                stopped: false,
                throttle: DirtyThrottle { tid: j, ..Default::default() },
                buf: Vec::new(),
                dio: 0,
                wq,
                shared: shared.clone(),
                start_wq,
                done_wq,
            };
            sim.spawn(Box::new(c), cpus[j % cpus.len()]);
        }
    }
    let driver = Driver {
        counts: spec.readers.clone(),
        phases,
        writes: spec.tests.contains(&0),
        file_pages: u64::from(pages),
        setup: false,
        rm: 0,
        shared: shared.clone(),
        start_wq,
        done_wq,
    };
    sim.spawn(Box::new(driver), cpus[0]);
    IozoneRun { shared }
}

impl WorkloadRun for IozoneRun {
    fn metrics(&self, _sim: &Sim) -> Vec<MetricSample> {
        let sh = self.shared.borrow();
        let mut out: Vec<MetricSample> = Vec::new();
        for &(phase, n, kbs) in &sh.results {
            let op = n.to_string();
            let table = phase.table();
            match out.iter_mut().find(|m| m.table == table && m.op == op) {
                Some(m) => m.value += kbs,
                None => out.push(MetricSample { table: table.into(), preferred: Preferred::Higher, unit: "KB/s".into(), op, value: kbs }),
            }
        }
        out
    }
}
