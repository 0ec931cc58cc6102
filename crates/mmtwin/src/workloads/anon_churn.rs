//! `anon-churn`: tasks fault in, touch and free anonymous regions.
//!
//! Each task keeps about `footprint × memory / tasks` mapped. While below that, it picks a region
//! class (by weight), faults the region in as blocks of the class's order (a failed order > 0
//! allocation falls back to base pages, as a THP fault does), touches every page, and keeps the
//! region for an exponentially distributed lifetime. Expired regions are unmapped and freed.
//! Long-lived unmovable classes next to short-lived movable ones fragment memory on purpose.
//!
//! Movable regions are the task's anonymous mappings: each gets virtual addresses in the
//! task's address space (the highest gap below mmap_base that fits, 2 MiB aligned for a THP
//! class) and its faults allocate page tables there (`Mm::pte_alloc`; a huge page deposits a
//! PTE page), so regions next to each other share PTE pages and an unmap frees only the
//! tables no other region touches. Unmovable and reclaimable classes stand for kernel
//! memory (pipe buffers, inodes) and map nothing.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::{MetricSample, Preferred, WorkloadRun};
use crate::config::machine::MachineLayout;
use crate::config::size::{Bytes, Duration};
use crate::config::ConfigError;
use crate::mm::gfp::Gfp;
use crate::mm::memory::{TableOwner, PTRS_PER_PTE};
use crate::mm::mmzone::ZoneStat;
use crate::mm::vmstat::VmStat;
use crate::mm::{Mm, Pfn, MAX_PAGE_ORDER, PAGE_SIZE};
use crate::sim::queue::SimTime;
use crate::sim::{After, Sim, Step, Task, TaskCx};

/// The mobility of a region's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mobility {
    /// User memory (GFP_HIGHUSER_MOVABLE).
    Movable,
    /// Kernel memory that cannot move (GFP_KERNEL).
    Unmovable,
    /// Kernel memory a shrinker can free (GFP_KERNEL | __GFP_RECLAIMABLE).
    Reclaimable,
}

impl Mobility {
    fn gfp(self) -> Gfp {
        match self {
            Mobility::Movable => Gfp::GFP_HIGHUSER_MOVABLE,
            Mobility::Unmovable => Gfp::GFP_KERNEL,
            Mobility::Reclaimable => Gfp::GFP_KERNEL.with(Gfp::RECLAIMABLE),
        }
    }
}

/// One kind of region the tasks map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionClass {
    /// Names the report rows (fault-NAME, order-NAME).
    pub name: String,
    /// Region size; a whole number of blocks of `order`.
    pub size: Bytes,
    /// Allocation order of each block (0 = base pages, 9 = a THP).
    #[serde(default)]
    pub order: usize,
    /// Mean lifetime (exponentially distributed).
    pub lifetime: Duration,
    /// Relative frequency.
    #[serde(default = "one")]
    pub weight: u32,
    #[serde(default = "movable")]
    pub mobility: Mobility,
}

fn one() -> u32 {
    1
}
fn movable() -> Mobility {
    Mobility::Movable
}

/// The `anon-churn` workload definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnonChurnSpec {
    /// Number of tasks (default: one per CPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<usize>,
    /// CPUs the tasks are bound to, round robin (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// Simulated time of one iteration.
    #[serde(default = "default_duration")]
    pub duration: Duration,
    /// Share of the machine's memory all tasks together keep mapped.
    #[serde(default = "default_footprint")]
    pub footprint: f64,
    #[serde(default = "default_classes")]
    pub classes: Vec<RegionClass>,
}

fn default_duration() -> Duration {
    Duration(2_000_000_000)
}
fn default_footprint() -> f64 {
    0.6
}

/// The default mix: short-lived small movable regions, THP-sized movable regions, and
/// long-lived unmovable and reclaimable kernel objects scattered among them.
pub fn default_classes() -> Vec<RegionClass> {
    let c = |name: &str, size: u64, order: usize, life_ms: u64, weight: u32, mobility: Mobility| RegionClass {
        name: name.into(),
        size: Bytes(size),
        order,
        lifetime: Duration(life_ms * 1_000_000),
        weight,
        mobility,
    };
    vec![
        c("small", 64 << 10, 0, 40, 60, Mobility::Movable),
        c("huge", 2 << 20, 9, 300, 8, Mobility::Movable),
        c("kernel", 16 << 10, 2, 2000, 12, Mobility::Unmovable),
        c("slab", 8 << 10, 1, 800, 20, Mobility::Reclaimable),
    ]
}

impl AnonChurnSpec {
    pub fn validate(&self, layout: &MachineLayout) -> Result<(), ConfigError> {
        let err = |k: &str, m: String| ConfigError::new(format!("workload.{k}"), m);
        if let Some(t) = self.tasks {
            if t == 0 {
                return Err(err("tasks", "needs at least one task".into()));
            }
        }
        if let Some(cpus) = &self.cpus {
            if cpus.is_empty() {
                return Err(err("cpus", "lists no CPUs".into()));
            }
            if let Some(&c) = cpus.iter().find(|&&c| c >= layout.nr_cpus) {
                return Err(err("cpus", format!("CPU {c} does not exist; the machine has CPUs 0..{}", layout.nr_cpus - 1)));
            }
        }
        if self.duration.0 == 0 {
            return Err(err("duration", "must be longer than 0".into()));
        }
        if !(self.footprint > 0.0 && self.footprint <= 0.95) {
            return Err(err("footprint", format!("{} is outside (0, 0.95]: the share of memory kept mapped", self.footprint)));
        }
        if self.classes.is_empty() {
            return Err(err("classes", "needs at least one region class".into()));
        }
        for (i, c) in self.classes.iter().enumerate() {
            let k = format!("classes[{i}]");
            if c.name.is_empty() || self.classes[..i].iter().any(|o| o.name == c.name) {
                return Err(err(&format!("{k}.name"), format!("class names must be non-empty and unique ({:?})", c.name)));
            }
            if c.order > MAX_PAGE_ORDER {
                return Err(err(&format!("{k}.order"), format!("order {} is above MAX_PAGE_ORDER ({MAX_PAGE_ORDER})", c.order)));
            }
            let block = PAGE_SIZE << c.order;
            if c.size.0 == 0 || c.size.0 % block != 0 {
                return Err(err(&format!("{k}.size"), format!("{} bytes is not a whole number of order-{} blocks ({block} bytes)", c.size.0, c.order)));
            }
            if c.weight == 0 {
                return Err(err(&format!("{k}.weight"), "must be at least 1".into()));
            }
            if c.lifetime.0 == 0 {
                return Err(err(&format!("{k}.lifetime"), "must be longer than 0".into()));
            }
        }
        Ok(())
    }

    pub fn resolved(&self, layout: &MachineLayout) -> AnonChurnSpec {
        let mut s = self.clone();
        let cpus = s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect());
        s.tasks = Some(s.tasks.unwrap_or(cpus.len()));
        s.cpus = Some(cpus);
        s
    }
}

/// Per-class results of one iteration.
#[derive(Clone, Debug, Default)]
struct ClassStats {
    blocks: u64,
    latency_ns: u64,
    /// Order > 0 blocks that got the requested order.
    requested_ok: u64,
    /// Order > 0 blocks that fell back to base pages.
    fallbacks: u64,
    /// Pages that could not be allocated at all.
    failed_pages: u64,
    bytes: u64,
}

#[derive(Debug, Default)]
struct Stats {
    classes: Vec<ClassStats>,
}

/// A mapped region: its blocks (pfn, order), and for a movable one its first virtual page and
/// length in pages.
struct Region {
    blocks: Vec<(Pfn, u8)>,
    vma: Option<(u64, u64)>,
}

/// x86_64's mmap_base without randomisation, in pages: TASK_SIZE (2^47 less a page) less the
/// smallest stack gap, 128 MiB (mmap_base()).
const MMAP_BASE: u64 = ((1u64 << 47) - 4096 - (128 << 20)) >> 12;

/// A task's anonymous mappings by first virtual page: end page (exclusive).
#[derive(Debug, Default)]
struct AddressSpace {
    vmas: BTreeMap<u64, u64>,
}

impl AddressSpace {
    /// get_unmapped_area, top down: the highest `align`-aligned start below MMAP_BASE whose
    /// `len` pages fit in a gap (6.x vm_unmapped_area; 3.0's arch_get_unmapped_area_topdown
    /// tries its free_area_cache hole first, which is not modelled).
    fn get_unmapped_area(&self, len: u64, align: u64) -> u64 {
        let mut hi = MMAP_BASE;
        for (&start, &end) in self.vmas.range(..MMAP_BASE).rev() {
            if hi >= len && (hi - len) / align * align >= end {
                return (hi - len) / align * align;
            }
            hi = start;
        }
        (hi - len) / align * align
    }

    /// Whether a mapping touches pages `[a, b)`.
    fn in_use(&self, a: u64, b: u64) -> bool {
        self.vmas.range(..b).next_back().is_some_and(|(_, &end)| end > a)
    }
}

struct AnonChurnTask {
    name: String,
    spec: Rc<AnonChurnSpec>,
    stats: Rc<RefCell<Stats>>,
    /// Cumulative weights for picking a class.
    cumulative: Vec<u64>,
    regions: Vec<Option<Region>>,
    free_slots: Vec<usize>,
    expiry: BinaryHeap<Reverse<(SimTime, usize)>>,
    resident_pages: u64,
    target_pages: u64,
    end: SimTime,
    owner: u32,
    mm_space: AddressSpace,
}

impl AnonChurnTask {
    /// Unmaps and frees a region; returns the system time it took.
    fn free_region(&mut self, mm: &mut Mm, cpu: usize, slot: usize) -> u64 {
        let r = self.regions[slot].take().expect("live region");
        self.free_slots.push(slot);
        let mut ns = 0;
        for &(pfn, order) in &r.blocks {
            let n = 1u64 << order;
            ns += mm.costs.unmap_page_ns * n;
            if r.vma.is_some() {
                mm.mod_page_state(pfn, ZoneStat::NrAnonPages, -(n as i64));
                if usize::from(order) == mm.pageblock_order {
                    mm.mod_page_state(pfn, ZoneStat::NrAnonThps, -1);
                }
            }
            mm.pages[pfn as usize].mapping = 0;
            mm.free_pages(pfn, order as usize, cpu);
            self.resident_pages -= n;
        }
        if let Some(vma) = r.vma {
            self.munmap(mm, cpu, vma);
        }
        ns
    }

    /// munmap of the range `(start, len)`: it leaves the address space, then the page tables
    /// nothing else maps through go.
    fn munmap(&mut self, mm: &mut Mm, cpu: usize, (start, len): (u64, u64)) {
        self.mm_space.vmas.remove(&start);
        let space = &self.mm_space;
        mm.free_pgtables_range(TableOwner::Task(self.owner), start, start + len, cpu, |a, b| space.in_use(a, b));
    }

    /// Faults in one region of `class`; returns (user ns, system ns, ran out of memory).
    fn fault_region(&mut self, cx: &mut TaskCx, class: usize) -> (u64, u64, bool) {
        let c = &self.spec.classes[class];
        let order = c.order;
        let gfp = if order > 0 { c.mobility.gfp().with(Gfp::COMP).with(Gfp::NOWARN) } else { c.mobility.gfp() };
        let base_gfp = c.mobility.gfp();
        let nblocks = c.size.0 / (PAGE_SIZE << order);
        let lifetime = c.lifetime.0;
        // A movable PMD-order block is a transparent huge page fault (HPAGE_PMD_ORDER is the
        // pageblock order on both modelled arches: 9 on x86_64, 8 on s390).
        let thp = order == cx.mm.pageblock_order && c.mobility == Mobility::Movable;
        let cpu_node = cx.mm.cpu_to_node[cx.cpu];
        let owner = TableOwner::Task(self.owner);
        // mmap: a movable region gets its virtual range first.
        let vma = (c.mobility == Mobility::Movable).then(|| {
            let len = c.size.0 / PAGE_SIZE;
            let start = self.mm_space.get_unmapped_area(len, if thp { PTRS_PER_PTE } else { 1 });
            self.mm_space.vmas.insert(start, start + len);
            (start, len)
        });
        let mut blocks = Vec::with_capacity(nblocks as usize);
        let (mut user, mut system) = (0u64, 0u64);
        let mut failed = false;
        let mut st = self.stats.borrow_mut();
        let cs = &mut st.classes[class];
        system += cx.mm.take_cost();
        'blocks: for b in 0..nblocks {
            let mut got: Vec<(Pfn, u8)> = Vec::new();
            let mut latency = 0u64;
            let va = vma.map(|(start, _)| start + b * (1 << order));
            // handle_mm_fault: the PMD page first; the PTE pages before base pages.
            let tables = |mm: &mut Mm, ptes: bool| -> bool {
                let Some(va) = va else { return true };
                if !ptes {
                    return mm.pmd_alloc(owner, va, cx.cpu, false).is_ok();
                }
                (va / PTRS_PER_PTE..=(va + (1 << order) - 1) / PTRS_PER_PTE).all(|span| mm.pte_alloc(owner, span * PTRS_PER_PTE, cx.cpu, false).is_ok())
            };
            if !tables(cx.mm, !thp) {
                cs.failed_pages += 1 << order;
                failed = true;
                break 'blocks;
            }
            match cx.mm.alloc_pages(gfp, order, cx.cpu) {
                Some(pfn) if thp && cx.mm.thp_deposit(owner, va.expect("a THP is mapped"), cx.cpu).is_err() => {
                    // No page for the deposit: the huge page goes back, VM_FAULT_OOM.
                    cx.mm.free_pages(pfn, order, cx.cpu);
                    cs.failed_pages += 1 << order;
                    failed = true;
                    break 'blocks;
                }
                Some(pfn) => {
                    got.push((pfn, order as u8));
                    if order > 0 {
                        cs.requested_ok += 1;
                    }
                    if thp {
                        cx.mm.events.count(VmStat::ThpFaultAlloc, 1);
                    }
                }
                None if order > 0 => {
                    // Fall back to base pages, as a THP fault falls back to small pages.
                    if thp {
                        cx.mm.events.count(VmStat::ThpFaultFallback, 1);
                        if !tables(cx.mm, true) {
                            cs.failed_pages += 1 << order;
                            failed = true;
                            break 'blocks;
                        }
                    }
                    cs.fallbacks += 1;
                    for _ in 0..1u64 << order {
                        match cx.mm.alloc_pages(base_gfp, 0, cx.cpu) {
                            Some(pfn) => got.push((pfn, 0)),
                            None => {
                                cs.failed_pages += 1;
                            }
                        }
                    }
                }
                None => cs.failed_pages += 1,
            }
            latency += cx.mm.take_cost();
            for &(pfn, o) in &got {
                let n = 1u64 << o;
                let nid = cx.mm.page_to_nid(pfn);
                // Clearing remote memory costs the NUMA distance ratio.
                let clear = cx.mm.costs.clear_page_ns * n * remote_factor_x10(cx.mm, cpu_node, nid) / 10;
                latency += cx.mm.costs.page_fault_ns + clear;
                cx.mm.events.count(VmStat::Pgfault, 1);
                if vma.is_some() {
                    // Anonymous memory; the kernel classes' pages (pipe buffers, inodes) are not.
                    cx.mm.mod_page_state(pfn, ZoneStat::NrAnonPages, n as i64);
                }
                if thp && usize::from(o) == order {
                    cx.mm.mod_page_state(pfn, ZoneStat::NrAnonThps, 1);
                }
                cx.mm.pages[pfn as usize].mapping = self.owner;
                user += cx.mm.costs.touch_page_ns * n;
                self.resident_pages += n;
                cs.bytes += n * PAGE_SIZE;
            }
            cs.blocks += 1;
            cs.latency_ns += latency;
            system += latency;
            let out_of_memory = got.is_empty();
            blocks.extend(got);
            if out_of_memory {
                // Nothing could be allocated: stop faulting this region (the OOM killer's
                // business once reclaim exists).
                failed = true;
                break 'blocks;
            }
        }
        drop(st);
        if blocks.is_empty() {
            if let Some(vma) = vma {
                self.munmap(cx.mm, cx.cpu, vma);
            }
        } else {
            let region = Region { blocks, vma };
            let slot = match self.free_slots.pop() {
                Some(s) => {
                    self.regions[s] = Some(region);
                    s
                }
                None => {
                    self.regions.push(Some(region));
                    self.regions.len() - 1
                }
            };
            let until = cx.now + cx.rng.exp(lifetime);
            self.expiry.push(Reverse((until, slot)));
        }
        (user, system, failed)
    }
}

/// distance(cpu node, page node) × 10 / LOCAL_DISTANCE: the cost factor of touching the page.
fn remote_factor_x10(mm: &Mm, cpu_node: usize, page_node: usize) -> u64 {
    if cpu_node == page_node {
        10
    } else {
        mm.node_distance(cpu_node, page_node) as u64
    }
}

impl Task for AnonChurnTask {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        if cx.now >= self.end {
            let mut sys = 0;
            for slot in 0..self.regions.len() {
                if self.regions[slot].is_some() {
                    sys += self.free_region(cx.mm, cx.cpu, slot);
                }
            }
            self.expiry.clear();
            return Step { user_ns: 0, system_ns: sys, after: After::Exit };
        }
        if let Some(&Reverse((t, slot))) = self.expiry.peek() {
            if t <= cx.now {
                self.expiry.pop();
                let sys = self.free_region(cx.mm, cx.cpu, slot);
                return Step { user_ns: 0, system_ns: sys, after: After::Continue };
            }
        }
        if self.resident_pages < self.target_pages {
            let total = *self.cumulative.last().unwrap();
            let pick = cx.rng.below(total);
            let class = self.cumulative.iter().position(|&c| pick < c).unwrap();
            let (user, system, failed) = self.fault_region(cx, class);
            // Out of memory: wait for something to expire rather than spin.
            let after = if failed { After::SleepExact(self.next_wakeup(cx.now)) } else { After::Continue };
            return Step { user_ns: user, system_ns: system, after };
        }
        Step { user_ns: 0, system_ns: 0, after: After::SleepExact(self.next_wakeup(cx.now)) }
    }
}

impl AnonChurnTask {
    fn next_wakeup(&self, now: SimTime) -> SimTime {
        let next = self.expiry.peek().map_or(self.end, |Reverse((t, _))| (*t).min(self.end));
        next.saturating_sub(now).max(1000)
    }
}

/// The anon-churn run: its tasks' shared statistics.
pub struct AnonChurnRun {
    spec: Rc<AnonChurnSpec>,
    stats: Rc<RefCell<Stats>>,
}

/// Spawns the tasks of `spec` on `sim`.
pub fn start(spec: &AnonChurnSpec, sim: &mut Sim) -> AnonChurnRun {
    let spec = Rc::new(spec.clone());
    let stats = Rc::new(RefCell::new(Stats { classes: vec![ClassStats::default(); spec.classes.len()] }));
    let cpus = spec.cpus.clone().unwrap_or_else(|| (0..sim.nr_cpus()).collect());
    let ntasks = spec.tasks.unwrap_or(cpus.len());
    let managed: u64 = sim.mm.zones.iter().map(|z| z.managed_pages).sum();
    let target = (managed as f64 * spec.footprint / ntasks as f64) as u64;
    let mut cum = 0;
    let cumulative: Vec<u64> = spec.classes.iter().map(|c| {
        cum += u64::from(c.weight);
        cum
    }).collect();
    for t in 0..ntasks {
        let task = AnonChurnTask {
            name: format!("anonchurn-{t}"),
            spec: spec.clone(),
            stats: stats.clone(),
            cumulative: cumulative.clone(),
            regions: Vec::new(),
            free_slots: Vec::new(),
            expiry: BinaryHeap::new(),
            resident_pages: 0,
            target_pages: target,
            end: sim.now + spec.duration.0,
            owner: t as u32 + 1,
            mm_space: AddressSpace::default(),
        };
        sim.spawn(Box::new(task), cpus[t % cpus.len()]);
    }
    AnonChurnRun { spec, stats }
}

impl WorkloadRun for AnonChurnRun {
    fn metrics(&self, sim: &Sim) -> Vec<MetricSample> {
        let st = self.stats.borrow();
        let mut out = Vec::new();
        let m = |table: &str, preferred, unit: &str, op: String, value| MetricSample {
            table: table.into(),
            preferred,
            unit: unit.into(),
            op,
            value,
        };
        for (c, cs) in self.spec.classes.iter().zip(&st.classes) {
            if cs.blocks > 0 {
                let us = cs.latency_ns as f64 / cs.blocks as f64 / 1000.0;
                out.push(m("anonchurn Fault Latencies", Preferred::Lower, "us", format!("fault-{}", c.name), us));
            }
        }
        for (c, cs) in self.spec.classes.iter().zip(&st.classes) {
            if c.order > 0 && cs.blocks > 0 {
                let pct = cs.requested_ok as f64 * 100.0 / cs.blocks as f64;
                out.push(m("anonchurn Percentage Requested Order", Preferred::Higher, "%", format!("order-{}", c.name), pct));
            }
        }
        let bytes: u64 = st.classes.iter().map(|c| c.bytes).sum();
        let secs = sim.now as f64 / 1e9;
        if secs > 0.0 {
            out.push(m("anonchurn Throughput", Preferred::Higher, "MB/s", "faulted".into(), bytes as f64 / (1 << 20) as f64 / secs));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_go_top_down_into_the_highest_gap_that_fits_and_a_thp_region_is_2m_aligned() {
        let mut a = AddressSpace::default();
        let map = |a: &mut AddressSpace, len: u64, align: u64| {
            let s = a.get_unmapped_area(len, align);
            a.vmas.insert(s, s + len);
            s
        };
        let first = map(&mut a, 16, 1);
        assert_eq!(first, MMAP_BASE - 16, "the first region ends at mmap_base");
        let second = map(&mut a, 16, 1);
        assert_eq!(second, first - 16, "the next one right below it");
        let thp = map(&mut a, 512, 512);
        assert_eq!(thp % 512, 0);
        assert!(thp + 512 <= second && second - (thp + 512) < 512, "the highest aligned start below");
        // Unmapping the first leaves a 16-page hole at the top, which the next 16 pages reuse.
        a.vmas.remove(&first);
        assert_eq!(map(&mut a, 16, 1), first);
        assert!(a.in_use(second, second + 1) && a.in_use(0, MMAP_BASE) && !a.in_use(MMAP_BASE, MMAP_BASE + 16));
        assert!(!a.in_use(0, thp), "nothing below the THP region");
    }
}
