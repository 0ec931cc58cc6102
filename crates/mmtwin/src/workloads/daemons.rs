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
//! The system also holds page cache when the benchmark starts (`page_cache`): the files it read
//! while it booted and while the harness set the benchmark up (libraries, configuration,
//! scripts, downloads). They are read more than once, so they sit on the active file list,
//! clean and unmapped: `Mm::system_page_cache`.

use serde::{Deserialize, Serialize};

use crate::config::size::{Bytes, Duration};
use crate::mm::memory::Fault;
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
}

impl Default for SystemSpec {
    fn default() -> Self {
        SystemSpec { anon: Bytes(0), period: Duration(1_000_000_000), working_set: 0.05, write_ratio: 0.25, cpu: 0, page_cache: Bytes(0) }
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
        if self.anon.0 > 0 && self.period.0 == 0 {
            return Err(("period".into(), "must be longer than 0".into()));
        }
        if self.anon.0 >= 1 << 40 {
            return Err(("anon".into(), format!("{} bytes is more than the 1T a region can hold", self.anon.0)));
        }
        Ok(())
    }
}

/// Pages touched per step.
const STEP_PAGES: u32 = 64;
/// User time of one touch.
const USER_NS_PER_TOUCH: u64 = 20;

enum Phase {
    /// Faulting everything in at boot.
    Populate { next: u32 },
    /// Touching `left` more random pages of this wakeup; `pending` is a page to retry after
    /// its swap read.
    Touch { left: u32, pending: Option<(u32, bool)>, wake_at: u64 },
}

struct Daemons {
    vma: u32,
    pages: u32,
    spec: SystemSpec,
    phase: Phase,
}

impl Task for Daemons {
    fn name(&self) -> &str {
        "system"
    }

    fn is_workload(&self) -> bool {
        false
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let cpu = cx.cpu;
        match self.phase {
            Phase::Populate { next } => {
                let end = (next + STEP_PAGES).min(self.pages);
                let mut i = next;
                while i < end {
                    match cx.mm.handle_anon_fault(self.vma, i, true, cpu) {
                        Fault::Done { .. } => i += 1,
                        Fault::Wait(wq) => {
                            self.phase = Phase::Populate { next: i };
                            return Step { user_ns: 0, system_ns: 0, after: After::Wait(wq) };
                        }
                        Fault::Oom => {
                            self.phase = Phase::Populate { next: i };
                            return Step { user_ns: 0, system_ns: 0, after: After::Sleep(10_000_000) };
                        }
                    }
                }
                self.phase = if end == self.pages { self.next_wakeup(cx.now) } else { Phase::Populate { next: end } };
                Step { user_ns: u64::from(end - next) * USER_NS_PER_TOUCH, system_ns: 0, after: After::Continue }
            }
            Phase::Touch { left, pending, wake_at } => {
                if cx.now < wake_at {
                    return Step { user_ns: 0, system_ns: 0, after: After::SleepExact(wake_at - cx.now) };
                }
                let mut left = left;
                let mut pending = pending;
                let mut done = 0u64;
                while left > 0 && done < u64::from(STEP_PAGES) {
                    let (index, write) = pending.take().unwrap_or_else(|| {
                        let i = cx.rng.below(u64::from(self.pages)) as u32;
                        (i, cx.rng.unit() < self.spec.write_ratio)
                    });
                    match cx.mm.handle_anon_fault(self.vma, index, write, cpu) {
                        Fault::Done { .. } => {
                            left -= 1;
                            done += 1;
                        }
                        Fault::Wait(wq) => {
                            self.phase = Phase::Touch { left, pending: Some((index, write)), wake_at };
                            return Step { user_ns: done * USER_NS_PER_TOUCH, system_ns: 0, after: After::Wait(wq) };
                        }
                        Fault::Oom => {
                            self.phase = Phase::Touch { left, pending: Some((index, write)), wake_at };
                            return Step { user_ns: done * USER_NS_PER_TOUCH, system_ns: 0, after: After::Sleep(10_000_000) };
                        }
                    }
                }
                self.phase = if left == 0 { self.next_wakeup(wake_at.max(cx.now)) } else { Phase::Touch { left, pending, wake_at } };
                Step { user_ns: done * USER_NS_PER_TOUCH, system_ns: 0, after: After::Continue }
            }
        }
    }
}

impl Daemons {
    fn next_wakeup(&self, from: u64) -> Phase {
        let left = (f64::from(self.pages) * self.spec.working_set).round() as u32;
        Phase::Touch { left, pending: None, wake_at: from + self.spec.period.0 }
    }
}

/// Starts the resident processes of `spec`, if it has any memory, after putting the page
/// cache it holds in place.
pub fn start(spec: &SystemSpec, sim: &mut Sim) {
    sim.mm.system_page_cache(spec.page_cache.0 / PAGE_SIZE, spec.cpu);
    let pages = (spec.anon.0 / PAGE_SIZE) as u32;
    if pages == 0 {
        return;
    }
    let vma = sim.mm.anon_vma_new(pages);
    sim.spawn(Box::new(Daemons { vma, pages, spec: spec.clone(), phase: Phase::Populate { next: 0 } }), spec.cpu);
}
