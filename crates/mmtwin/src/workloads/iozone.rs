//! `iozone`: parallel sequential readers in iozone's throughput mode, as IBM's Linux on System z
//! team ran it (the pcp-cold-pfn-order seed): `iozone -i 1 -r 64k -s SIZE -t N -F <one file
//! per disk>` — N processes, each reading its own file from its own disk front to back in
//! `record`-byte read() calls, with the page cache (readahead) or O_DIRECT. The files were
//! written beforehand (iozone's write phase), so each round starts with them on disk and out
//! of the cache; between rounds the caches are dropped. The result of a round is iozone's
//! "Children see throughput": the sum over readers of the bytes each read divided by its own
//! elapsed time, in KB/s.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::fileio::{page_loop, step_after, syscalls_per_page_ns, validate_cpus, Stop};
use super::{MetricSample, Preferred, WorkloadRun};
use crate::config::machine::MachineLayout;
use crate::config::size::Bytes;
use crate::config::ConfigError;
use crate::fs::Ino;
use crate::mm::gfp::Gfp;
use crate::mm::{Pfn, PAGE_SIZE};
use crate::sim::{After, Sim, Step, Task, TaskCx, WaitQueueId};

/// The `iozone` workload definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IozoneSpec {
    /// Reader counts, run one after another (each reader on a disk of its own).
    #[serde(default = "default_readers")]
    pub readers: Vec<u32>,
    /// Size of each reader's file (-s).
    pub file_size: Bytes,
    /// Bytes per read() call (-r).
    #[serde(default = "default_record")]
    pub record: Bytes,
    /// O_DIRECT (-I): read straight into the user buffer, no page cache.
    #[serde(default)]
    pub direct: bool,
    /// CPUs the readers run on, round robin (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
}

fn default_readers() -> Vec<u32> {
    vec![1, 2, 4, 8, 16, 32, 64]
}
fn default_record() -> Bytes {
    Bytes(64 << 10)
}

impl IozoneSpec {
    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        let disks = layout.disks;
        let err = |k: &str, m: String| Err(ConfigError::new(format!("workload.{k}"), m));
        if self.readers.is_empty() || self.readers.contains(&0) {
            return err("readers", "lists the reader counts to run, each at least 1 (e.g. [1, 2, 4, 8])".into());
        }
        if let Some(&n) = self.readers.iter().find(|&&n| n > disks) {
            return err("readers", format!("{n} readers need {n} disks (one each); the machine has machine.disks = {disks}"));
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
}

#[derive(Default)]
struct Shared {
    /// (readers, KB/s of one reader).
    results: Vec<(u32, f64)>,
    round: usize,
    running: usize,
    /// The file on each disk.
    files: Vec<Ino>,
}

/// One iozone child of one round.
struct Reader {
    name: String,
    round: usize,
    readers: u32,
    disk: usize,
    pages: u32,
    next: u32,
    start: u64,
    record_pages: u32,
    direct: bool,
    /// O_DIRECT: the user buffer, its dio context and wait queue.
    buf: Vec<Pfn>,
    dio: u32,
    wq: WaitQueueId,
    shared: Rc<RefCell<Shared>>,
    start_wq: WaitQueueId,
    done_wq: WaitQueueId,
}

/// Pages per step of a buffered reader.
const STEP_PAGES: u32 = 64;

impl Reader {
    fn finish(&mut self, cx: &mut TaskCx) -> Step {
        let ino = self.shared.borrow().files[self.disk];
        cx.mm.close_file(ino);
        for &p in &self.buf {
            cx.mm.free_pages(p, 0, cx.cpu);
        }
        self.buf.clear();
        let secs = (cx.now - self.start) as f64 / 1e9;
        let kb = f64::from(self.pages) * (PAGE_SIZE / 1024) as f64;
        let mut sh = self.shared.borrow_mut();
        sh.results.push((self.readers, kb / secs.max(1e-9)));
        sh.running -= 1;
        if sh.running == 0 {
            cx.wake_up(self.done_wq);
        }
        Step { user_ns: 0, system_ns: 0, after: After::Exit }
    }

    fn step_direct(&mut self, cx: &mut TaskCx, ino: Ino) -> Step {
        if self.dio == 0 {
            // The buffer is faulted in before the first read (hot order-0 pages).
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
        if self.next >= self.pages {
            return self.finish(cx);
        }
        let n = self.record_pages.min(self.pages - self.next) as usize;
        cx.mm.cost_ns += cx.mm.costs.syscall_ns;
        let buf = self.buf[..n].to_vec();
        cx.mm.direct_io_read(self.dio, ino, self.next, &buf);
        self.next += n as u32;
        let after = if cx.mm.dio_remaining(self.dio) > 0 { After::Wait(self.wq) } else { After::Continue };
        Step { user_ns: 0, system_ns: 0, after }
    }
}

impl Task for Reader {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        if self.shared.borrow().round != self.round {
            return Step { user_ns: 0, system_ns: 0, after: After::Wait(self.start_wq) };
        }
        let ino = self.shared.borrow().files[self.disk];
        if self.start == 0 {
            self.start = cx.now.max(1);
            cx.mm.open_file(ino);
        }
        if self.direct {
            return self.step_direct(cx, ino);
        }
        let record = u64::from(self.record_pages) * PAGE_SIZE;
        let stop = page_loop(cx, &mut self.next, self.pages, STEP_PAGES, |cx, index| {
            let cpu = cx.cpu;
            let r = cx.mm.file_read_page(ino, index, PAGE_SIZE, cpu);
            if r == crate::mm::filemap::PageIo::Done {
                cx.mm.cost_ns += syscalls_per_page_ns(cx, record);
            }
            r
        });
        if matches!(stop, Stop::Done) {
            return self.finish(cx);
        }
        step_after(0, &stop)
    }
}

/// Lays out the files, then runs the rounds: waits for each round's readers and drops the
/// caches before the next.
struct Driver {
    counts: Vec<u32>,
    file_pages: u64,
    setup: bool,
    shared: Rc<RefCell<Shared>>,
    start_wq: WaitQueueId,
    done_wq: WaitQueueId,
}

impl Task for Driver {
    fn name(&self) -> &str {
        "iozone"
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let idle = Step { user_ns: 0, system_ns: 0, after: After::Continue };
        if !self.setup {
            let disks = *self.counts.iter().max().expect("validated") as usize;
            for d in 0..disks {
                let Some(ino) = cx.mm.create_file(d, cx.cpu) else {
                    return Step { after: After::Sleep(10_000_000), ..idle };
                };
                cx.mm.lay_out_file(ino, self.file_pages);
                cx.mm.close_file(ino);
                self.shared.borrow_mut().files.push(ino);
            }
            self.setup = true;
            let mut sh = self.shared.borrow_mut();
            sh.round = 0;
            sh.running = self.counts[0] as usize;
            cx.wake_up(self.start_wq);
            return Step { after: After::Wait(self.done_wq), ..idle };
        }
        if self.shared.borrow().running > 0 {
            return Step { after: After::Wait(self.done_wq), ..idle };
        }
        // echo 3 > /proc/sys/vm/drop_caches between rounds: drop_pagecache_sb walks every
        // superblock, the block devices' own among them, so the cached indirect blocks
        // (Buffers) go too.
        let files = self.shared.borrow().files.clone();
        for ino in files {
            let mapping = cx.mm.inode(ino).mapping;
            cx.mm.invalidate_mapping_pages(mapping, cx.cpu);
        }
        for sb in 0..cx.mm.sbs.len() {
            if let Some(bdev) = cx.mm.sbs[sb].bdev_ino {
                let mapping = cx.mm.inode(bdev).mapping;
                cx.mm.invalidate_mapping_pages(mapping, cx.cpu);
            }
        }
        let mut sh = self.shared.borrow_mut();
        sh.round += 1;
        if sh.round >= self.counts.len() {
            return Step { after: After::Exit, ..idle };
        }
        sh.running = self.counts[sh.round] as usize;
        cx.wake_up(self.start_wq);
        Step { after: After::Wait(self.done_wq), ..idle }
    }
}

/// The iozone run: each reader's throughput, by reader count.
pub struct IozoneRun {
    shared: Rc<RefCell<Shared>>,
}

/// Spawns the driver and every round's readers (each waits for its round).
pub fn start(spec: &IozoneSpec, sim: &mut Sim) -> IozoneRun {
    let cpus = spec.cpus.clone().unwrap_or_else(|| (0..sim.nr_cpus()).collect());
    // Round usize::MAX: the driver is still laying out the files.
    let shared = Rc::new(RefCell::new(Shared { round: usize::MAX, running: usize::MAX, ..Default::default() }));
    let start_wq = sim.new_wait_queue();
    let done_wq = sim.new_wait_queue();
    let pages = (spec.file_size.0 / PAGE_SIZE) as u32;
    for (round, &n) in spec.readers.iter().enumerate() {
        for j in 0..n as usize {
            let wq = sim.new_wait_queue();
            let r = Reader {
                name: format!("iozone-{n}-{j}"),
                round,
                readers: n,
                disk: j,
                pages,
                next: 0,
                start: 0,
                record_pages: (spec.record.0 / PAGE_SIZE) as u32,
                direct: spec.direct,
                buf: Vec::new(),
                dio: 0,
                wq,
                shared: shared.clone(),
                start_wq,
                done_wq,
            };
            sim.spawn(Box::new(r), cpus[j % cpus.len()]);
        }
    }
    let driver = Driver { counts: spec.readers.clone(), file_pages: u64::from(pages), setup: false, shared: shared.clone(), start_wq, done_wq };
    sim.spawn(Box::new(driver), cpus[0]);
    IozoneRun { shared }
}

impl WorkloadRun for IozoneRun {
    fn metrics(&self, _sim: &Sim) -> Vec<MetricSample> {
        let sh = self.shared.borrow();
        let mut out: Vec<MetricSample> = Vec::new();
        for &(n, kbs) in &sh.results {
            let op = n.to_string();
            match out.iter_mut().find(|m| m.op == op) {
                Some(m) => m.value += kbs,
                None => out.push(MetricSample { table: "iozone Read Throughput".into(), preferred: Preferred::Higher, unit: "KB/s".into(), op, value: kbs }),
            }
        }
        out
    }
}
