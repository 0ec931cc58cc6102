//! The machine's own resident processes (`[machine.system]`): daemons, shells and the test
//! harness's monitors, which keep anonymous memory mapped while a benchmark runs and wake up
//! now and then to touch part of it. Under page-cache pressure their idle pages are what
//! reclaim swaps out, and their next touches what swaps back in (the "Swap Ins/Outs" rows of
//! a writeback benchmark on a small machine come from them).
//!
//! One task stands for them all: at boot it faults in all its memory, then every `period` it
//! touches `working_set` of its pages, chosen at random, a `write_ratio` share of them as
//! stores. It is a background task: the run ends when the benchmark's tasks have finished.
//!
//! Their program text (`text`: binaries and shared libraries) is a file laid out on disk at
//! boot and read in through executable mappings (VM_EXEC). Each wakeup touches `working_set`
//! of the text pages as well, reading back any that reclaim took. Reclaim gives referenced
//! text pages another round on the active list and counts them rotated, which moves 3.x's
//! anon/file balance (get_scan_count) towards the anonymous lists.
//!
//! The system also holds page cache when the benchmark starts (`page_cache`): the files it read
//! while it booted and while the harness set the benchmark up (libraries, configuration,
//! scripts, downloads). They are read more than once, so they sit on the active file list,
//! clean and unmapped: `Mm::system_page_cache`. It has looked up and closed other files too
//! (`files`, `Mm::system_files`): their unused dentries and inodes wait in the slab caches,
//! each with `file_size` of page cache, and are what the slab shrinkers prune when the
//! benchmark itself has made few (a dd writing one file).

use serde::{Deserialize, Serialize};

use crate::config::size::{Bytes, Duration};
use crate::fs::Ino;
use crate::mm::filemap::PageIo;
use crate::mm::memory::Fault;
use crate::mm::page_writeback::DirtyThrottle;
use crate::mm::PAGE_SIZE;
use crate::sim::{After, Sim, Step, Task, TaskCx};

/// `[machine.system]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SystemSpec {
    /// Anonymous memory the resident processes keep mapped (0: none).
    pub anon: Bytes,
    /// How often they wake up.
    pub period: Duration,
    /// The share of their pages touched at each wakeup.
    pub working_set: f64,
    /// The share of touches that are stores.
    pub write_ratio: f64,
    /// The CPU they run on.
    pub cpu: usize,
    /// Page cache the system holds at the start (0: none), on the node of `cpu`.
    #[serde(skip_serializing_if = "Bytes::is_zero")]
    pub page_cache: Bytes,
    /// Program text the processes map executable (0: none): read in at boot and touched with
    /// the working set.
    #[serde(skip_serializing_if = "Bytes::is_zero")]
    pub text: Bytes,
    /// Files the system has looked up, read and closed by the time the benchmark starts (0:
    /// none): each an unused dentry pinning its inode, the objects 3.0's dcache and icache
    /// shrinkers find to prune besides the benchmark's own.
    #[serde(skip_serializing_if = "is_zero")]
    pub files: u32,
    /// The page cache each of those files holds (read twice: active, clean, unmapped).
    #[serde(skip_serializing_if = "Bytes::is_zero")]
    pub file_size: Bytes,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Default for SystemSpec {
    fn default() -> Self {
        SystemSpec {
            anon: Bytes(0),
            period: Duration(1_000_000_000),
            working_set: 0.05,
            write_ratio: 0.25,
            cpu: 0,
            page_cache: Bytes(0),
            text: Bytes(0),
            files: 0,
            file_size: Bytes(0),
        }
    }
}

impl SystemSpec {
    /// Checks the values; errors name the key (under `machine.system`) and what is valid.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(0.0..=1.0).contains(&self.working_set) {
            return Err(("working_set".into(), format!("is a share of the memory, between 0 and 1, not {}", self.working_set)));
        }
        if !(0.0..=1.0).contains(&self.write_ratio) {
            return Err(("write_ratio".into(), format!("is a share of the touches, between 0 and 1, not {}", self.write_ratio)));
        }
        if (self.anon.0 > 0 || self.text.0 > 0) && self.period.0 == 0 {
            return Err(("period".into(), "must be longer than 0".into()));
        }
        if self.anon.0 >= 1 << 40 {
            return Err(("anon".into(), format!("{} bytes is more than the 1T a region can hold", self.anon.0)));
        }
        if self.text.0 >= 1 << 40 {
            return Err(("text".into(), format!("{} bytes is more than the 1T a file can hold here", self.text.0)));
        }
        if self.file_size.0 >= 1 << 40 {
            return Err(("file_size".into(), format!("{} bytes is more than the 1T a file can hold here", self.file_size.0)));
        }
        Ok(())
    }
}

/// Pages touched per step.
const STEP_PAGES: u32 = 64;
/// User time of one touch.
const USER_NS_PER_TOUCH: u64 = 20;

enum Phase {
    /// Faulting everything in at boot: the anonymous pages, then the text.
    Populate { next: u32 },
    PopulateText { next: u32 },
    /// Touching `left` more random anonymous pages and then `left_text` text pages of this
    /// wakeup; `pending` is a page to retry after its I/O (text: true).
    Touch { left: u32, left_text: u32, pending: Option<(u32, bool, bool)>, wake_at: u64 },
}

struct Daemons {
    vma: u32,
    pages: u32,
    /// The text file and its pages.
    text: Ino,
    text_pages: u32,
    /// Never used: text faults are reads.
    throttle: DirtyThrottle,
    spec: SystemSpec,
    phase: Phase,
}

/// What one touch came to: done; wait on a queue for its I/O; the task slept inside the fault
/// (it owes the sleep; try again after it); no memory (try again in 10 ms).
enum Touched {
    Done,
    Wait(usize),
    Again,
    Later,
}

impl Touched {
    /// How a step that stops at this touch ends.
    fn after(self) -> After {
        match self {
            Touched::Done | Touched::Again => After::Continue,
            Touched::Wait(wq) => After::Wait(wq),
            Touched::Later => After::Sleep(10_000_000),
        }
    }
}

impl Daemons {
    /// Touches anonymous page `index` (a store if `write`) or text page `index`.
    fn touch(&mut self, cx: &mut TaskCx, index: u32, write: bool, text: bool) -> Touched {
        if text {
            return match cx.mm.filemap_fault(self.text, index, false, true, cx.cpu, &mut self.throttle) {
                PageIo::Done => Touched::Done,
                PageIo::Wait(wq) => Touched::Wait(wq),
                PageIo::Retry => Touched::Again,
                PageIo::NoMem => Touched::Later,
            };
        }
        match cx.mm.handle_anon_fault(self.vma, index, write, cx.cpu) {
            Fault::Done { .. } => Touched::Done,
            Fault::Wait(wq) => Touched::Wait(wq),
            Fault::Oom => Touched::Later,
        }
    }

    fn next_wakeup(&self, from: u64) -> Phase {
        let share = |n: u32| (f64::from(n) * self.spec.working_set).round() as u32;
        Phase::Touch { left: share(self.pages), left_text: share(self.text_pages), pending: None, wake_at: from + self.spec.period.0 }
    }
}

impl Task for Daemons {
    fn name(&self) -> &str {
        "system"
    }

    fn is_workload(&self) -> bool {
        false
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        match self.phase {
            Phase::Populate { next } | Phase::PopulateText { next } => {
                let text = matches!(self.phase, Phase::PopulateText { .. });
                let total = if text { self.text_pages } else { self.pages };
                let end = (next + STEP_PAGES).min(total);
                let mut i = next;
                while i < end {
                    let phase = |i| if text { Phase::PopulateText { next: i } } else { Phase::Populate { next: i } };
                    match self.touch(cx, i, !text, text) {
                        Touched::Done => i += 1,
                        stop => {
                            self.phase = phase(i);
                            return Step { user_ns: 0, system_ns: 0, after: stop.after() };
                        }
                    }
                }
                self.phase = match (end == total, text) {
                    (false, false) => Phase::Populate { next: end },
                    (false, true) => Phase::PopulateText { next: end },
                    (true, false) if self.text_pages > 0 => Phase::PopulateText { next: 0 },
                    (true, _) => self.next_wakeup(cx.now),
                };
                Step { user_ns: u64::from(end - next) * USER_NS_PER_TOUCH, system_ns: 0, after: After::Continue }
            }
            Phase::Touch { left, left_text, pending, wake_at } => {
                if cx.now < wake_at {
                    return Step { user_ns: 0, system_ns: 0, after: After::SleepExact(wake_at - cx.now) };
                }
                let (mut left, mut left_text, mut pending) = (left, left_text, pending);
                let mut done = 0u64;
                while left + left_text > 0 && done < u64::from(STEP_PAGES) {
                    let (index, write, text) = pending.take().unwrap_or_else(|| {
                        if left > 0 {
                            (cx.rng.below(u64::from(self.pages)) as u32, cx.rng.unit() < self.spec.write_ratio, false)
                        } else {
                            (cx.rng.below(u64::from(self.text_pages)) as u32, false, true)
                        }
                    });
                    let stop = match self.touch(cx, index, write, text) {
                        Touched::Done => {
                            if text {
                                left_text -= 1;
                            } else {
                                left -= 1;
                            }
                            done += 1;
                            continue;
                        }
                        stop => stop,
                    };
                    self.phase = Phase::Touch { left, left_text, pending: Some((index, write, text)), wake_at };
                    return Step { user_ns: done * USER_NS_PER_TOUCH, system_ns: 0, after: stop.after() };
                }
                self.phase = if left + left_text == 0 { self.next_wakeup(wake_at.max(cx.now)) } else { Phase::Touch { left, left_text, pending, wake_at } };
                Step { user_ns: done * USER_NS_PER_TOUCH, system_ns: 0, after: After::Continue }
            }
        }
    }
}

/// Starts the resident processes of `spec`, if it has any memory, after putting the page
/// cache it holds in place.
pub fn start(spec: &SystemSpec, sim: &mut Sim) {
    sim.mm.system_page_cache(spec.page_cache.0 / PAGE_SIZE, spec.cpu);
    sim.mm.system_files(spec.files, spec.file_size.0.div_ceil(PAGE_SIZE), spec.cpu);
    let pages = (spec.anon.0 / PAGE_SIZE) as u32;
    let text_pages = (spec.text.0 / PAGE_SIZE) as u32;
    if pages == 0 && text_pages == 0 {
        return;
    }
    let vma = if pages > 0 { sim.mm.anon_vma_new(pages) } else { 0 };
    let text = if text_pages > 0 {
        let ino = sim.mm.create_file(0, spec.cpu).expect("the root file system has room for the system's text");
        sim.mm.lay_out_file(ino, u64::from(text_pages));
        ino
    } else {
        0
    };
    let phase = if pages > 0 { Phase::Populate { next: 0 } } else { Phase::PopulateText { next: 0 } };
    let d = Daemons { vma, pages, text, text_pages, throttle: DirtyThrottle::default(), spec: spec.clone(), phase };
    sim.spawn(Box::new(d), spec.cpu);
}
