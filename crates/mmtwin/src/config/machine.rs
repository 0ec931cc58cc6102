//! The `[machine]` section: NUMA nodes with CPUs and memory, the distance table, holes in the
//! physical address space and `movablecore`; and the x86_64 zone layout derived from it.

use serde::{Deserialize, Serialize};

use super::size::{format_bytes, Bytes};
use super::ConfigError;
use crate::mm::mmzone::{ZoneType, MAX_NR_ZONES};
use crate::mm::vmstat::Era;
use crate::mm::PAGE_SIZE;

/// One NUMA node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Node id; nodes must be listed as 0, 1, 2, ...
    pub id: usize,
    /// Number of CPUs on the node (at least 1).
    pub cpus: usize,
    /// Memory on the node (a whole number of 4 KiB pages).
    pub memory: Bytes,
    /// Physical address where the node starts (node 0 only; default 0). Later nodes follow on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Bytes>,
}

/// A range of physical addresses with no memory behind it (e.g. the 3G–4G PCI hole).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoleSpec {
    pub start: Bytes,
    pub size: Bytes,
}

/// The `[machine]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    /// Base page size; only 4096 (x86_64) is modelled.
    #[serde(default = "default_page_size")]
    pub page_size: u64,
    pub nodes: Vec<NodeSpec>,
    /// NUMA distances (node_distance); default 10 local, 20 remote.
    #[serde(default)]
    pub distance: Vec<Vec<u32>>,
    #[serde(default)]
    pub holes: Vec<HoleSpec>,
    /// Memory given to ZONE_MOVABLE, spread over the nodes from the top (the boot parameter).
    #[serde(default)]
    pub movablecore: Bytes,
    /// Memory reserved at boot on node 0 besides the memmap (kernel image, initrd, page tables,
    /// firmware): taken from the start of DMA32 (or Normal). Default 32M.
    #[serde(default = "default_boot_reserved")]
    pub boot_reserved: Bytes,
    /// The disk holding the file system (a 2011 SATA disk by default; see block::DeviceModel).
    #[serde(default)]
    pub disk: crate::block::DeviceModel,
    /// Number of such disks, each with a file system of its own (sda, sdb, …; default 1).
    #[serde(default = "default_disks")]
    pub disks: u32,
    /// The architecture's zone layout: x86_64 (ZONE_DMA below 16M, DMA32 below 4G, Normal
    /// above) or s390x (ZONE_DMA below 2G, Normal above; no firmware MiB).
    #[serde(default)]
    pub arch: Arch,
    /// A swap partition of this size at the start of the disk, before the file system
    /// (0: no swap, the default).
    #[serde(default)]
    pub swap: Bytes,
    /// The mem= boot parameter: physical memory at and above this address is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<Bytes>,
    /// The type of the file system the benchmarks run on: ext2, ext3, ext4 (default) or xfs.
    #[serde(default)]
    pub fs: crate::fs::FsType,
    /// The system's own resident processes (daemons): anonymous memory they keep mapped and
    /// touch while the benchmark runs (none by default).
    #[serde(default)]
    pub system: crate::workloads::daemons::SystemSpec,
    /// How many times longer than the cost table's reference core this machine's CPUs take for
    /// the same kernel work: 1 for native hardware (the default); the oracle's QEMU/TCG guest,
    /// which translates every instruction, fits 12 (docs/calibration.md). Every entry of the
    /// cost table (after `[costs]` overrides) is multiplied by it; device and timer times are not.
    #[serde(default = "native_cpu", skip_serializing_if = "is_native_cpu")]
    pub cpu_slowdown: f64,
}

fn native_cpu() -> f64 {
    1.0
}

fn is_native_cpu(f: &f64) -> bool {
    *f == 1.0
}

fn default_disks() -> u32 {
    1
}

/// The architecture whose zone boundaries the machine uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arch {
    #[default]
    #[serde(rename = "x86_64")]
    X86_64,
    /// s390x: MAX_DMA_ADDRESS 0x80000000 (arch/s390/include/asm/dma.h), no ZONE_DMA32.
    S390x,
}

impl Arch {
    /// (end of ZONE_DMA, end of ZONE_DMA32) in bytes.
    pub fn zone_limits(self) -> (u64, u64) {
        match self {
            Arch::X86_64 => (DMA_END, DMA32_END),
            Arch::S390x => (2 << 30, 2 << 30),
        }
    }

    /// Where the boot reservation (kernel image, initrd, early page tables) starts: above
    /// ZONE_DMA on x86_64, at the start of memory on s390x.
    pub fn boot_reserve_from(self) -> u64 {
        match self {
            Arch::X86_64 => DMA_END,
            Arch::S390x => 0,
        }
    }

    /// The highest buddy order (MAX_ORDER - 1 before 6.4, MAX_PAGE_ORDER after). x86_64 keeps
    /// the default MAX_ORDER of 11. s390 forced MAX_ORDER to 9 in 2.6.25 (Kconfig
    /// FORCE_MAX_ZONEORDER, "[S390] Fix IPL from NSS": z/VM hands out memory in 1M
    /// increments) and still does in 3.1; 6.12's s390 Kconfig no longer sets it, so it has
    /// the default 10.
    pub fn max_page_order(self, era: Era) -> usize {
        match (self, era) {
            (Arch::S390x, Era::Linux3) => 8,
            _ => crate::mm::MAX_PAGE_ORDER,
        }
    }

    /// The pageblock order (include/linux/pageblock-flags.h): HUGETLB_PAGE_ORDER when the
    /// kernel has hugetlb pages, else MAX_ORDER - 1. x86_64: the 2M PMD page, order 9. s390:
    /// HPAGE_SHIFT 20, order 8, which is also its MAX_ORDER - 1 in 2.6.25-3.x; 1M blocks
    /// either way, in every era modelled.
    pub fn pageblock_order(self) -> usize {
        match self {
            Arch::X86_64 => crate::mm::PAGEBLOCK_ORDER,
            Arch::S390x => 8,
        }
    }

    /// The CONFIG_HZ a kernel built for this architecture has when the scenario does not say:
    /// s390's defconfig sets HZ_100 (2.6.32 and 6.12 alike, as its distributions did);
    /// x86_64 kernels of the distributions mostly ran at 250 (Kconfig.hz's default).
    pub fn default_hz(self) -> u32 {
        match self {
            Arch::X86_64 => 250,
            Arch::S390x => 100,
        }
    }

    /// Memory at the start of node 0 that firmware keeps (present but reserved).
    pub fn low_reserved(self) -> u64 {
        match self {
            Arch::X86_64 => LOW_RESERVED,
            Arch::S390x => 0,
        }
    }
}

fn default_page_size() -> u64 {
    PAGE_SIZE
}
fn default_boot_reserved() -> Bytes {
    Bytes(32 << 20)
}

/// x86_64 zone boundaries (physical addresses).
pub const DMA_END: u64 = 16 << 20;
pub const DMA32_END: u64 = 4 << 30;
/// The first MiB of node 0 is firmware/BIOS memory: present but reserved.
pub const LOW_RESERVED: u64 = 1 << 20;
/// Bytes of `struct page` per page frame in the kernel (memmap reservation).
pub const STRUCT_PAGE_SIZE: u64 = 64;

/// A node's layout in page frames.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLayout {
    pub start_pfn: u64,
    pub end_pfn: u64,
    pub cpus: usize,
    /// Present ranges [start, end) in pfns.
    pub present: Vec<(u64, u64)>,
    /// Zone spans [start, end) in pfns per zone type (start == end when empty).
    pub zones: [(u64, u64); MAX_NR_ZONES],
}

/// The machine in page frames, ready for mm_init.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineLayout {
    pub nodes: Vec<NodeLayout>,
    pub distance: Vec<Vec<u32>>,
    pub max_pfn: u64,
    pub boot_reserved_pages: u64,
    pub nr_cpus: usize,
    pub arch: Arch,
    /// Disks, each with its own file system.
    pub disks: u32,
}

impl MachineLayout {
    /// Present pages of zone type `zt` on `node` (pages in its span that are not holes).
    pub fn zone_present(&self, node: usize, zt: ZoneType) -> u64 {
        let n = &self.nodes[node];
        let (s, e) = n.zones[zt as usize];
        n.present.iter().map(|&(a, b)| b.min(e).saturating_sub(a.max(s))).sum()
    }

    /// Total present pages.
    pub fn total_present(&self) -> u64 {
        self.nodes.iter().flat_map(|n| n.present.iter()).map(|(a, b)| b - a).sum()
    }
}

impl MachineSpec {
    /// The default distance table: 10 local, 20 remote.
    fn distance_or_default(&self) -> Vec<Vec<u32>> {
        if !self.distance.is_empty() {
            return self.distance.clone();
        }
        let n = self.nodes.len();
        (0..n).map(|i| (0..n).map(|j| if i == j { 10 } else { 20 }).collect()).collect()
    }

    /// Fills in defaults (distance) so the resolved config shows them.
    pub fn resolve(&mut self) {
        self.distance = self.distance_or_default();
    }

    /// Checks the machine is possible and lays it out in page frames: nodes in order, memory
    /// placed upwards around the holes, zones cut at 16 MiB and 4 GiB, ZONE_MOVABLE from the top.
    pub fn layout(&self) -> Result<MachineLayout, ConfigError> {
        let err = |key: &str, msg: String| ConfigError::new(format!("machine.{key}"), msg);
        if self.page_size != PAGE_SIZE {
            return Err(err("page_size", format!("only 4096-byte pages are modelled, not {}", self.page_size)));
        }
        if self.swap.0 > 0 && self.swap.0 < 16 * PAGE_SIZE {
            return Err(err("swap", format!("a swap area needs at least 64K (16 pages), not {} bytes; 0 means no swap", self.swap.0)));
        }
        if !(self.cpu_slowdown.is_finite() && (0.01..=1000.0).contains(&self.cpu_slowdown)) {
            return Err(err("cpu_slowdown", format!("a CPU slowdown between 0.01 and 1000 (1: native), not {}", self.cpu_slowdown)));
        }
        if !(1..=256).contains(&self.disks) {
            return Err(err("disks", format!("between 1 and 256 disks are modelled, not {}", self.disks)));
        }
        if self.swap.0 >= self.disk.size.0 {
            return Err(err("swap", format!("{} bytes of swap do not fit on the {}-byte disk (machine.disk.size)", self.swap.0, self.disk.size.0)));
        }
        self.system.validate().map_err(|(k, m)| err(&format!("system.{k}"), m))?;
        if self.nodes.is_empty() {
            return Err(err("nodes", "the machine needs at least one node".into()));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.id != i {
                return Err(err(&format!("nodes[{i}].id"), format!("nodes must be listed in id order 0, 1, 2, ...; found id {} at position {i}", n.id)));
            }
            if n.cpus == 0 {
                return Err(err(&format!("nodes[{i}].cpus"), format!("node {i} has no CPUs; every node needs at least one")));
            }
            if n.memory.0 == 0 {
                return Err(err(&format!("nodes[{i}].memory"), format!("node {i} has no memory, so its zones would be empty")));
            }
            if n.memory.0 % PAGE_SIZE != 0 {
                return Err(err(&format!("nodes[{i}].memory"), format!("{} bytes is not a whole number of 4096-byte pages", n.memory.0)));
            }
            if i > 0 && n.start.is_some() {
                return Err(err(&format!("nodes[{i}].start"), "only node 0 may set start; later nodes follow the previous one".into()));
            }
        }
        if self.nodes.len() > 64 {
            return Err(err("nodes", format!("at most 64 nodes are modelled, not {}", self.nodes.len())));
        }
        let distance = self.distance_or_default();
        let nn = self.nodes.len();
        if distance.len() != nn || distance.iter().any(|r| r.len() != nn) {
            return Err(err("distance", format!("the distance table must be {nn}×{nn} (one row and column per node)")));
        }
        for i in 0..nn {
            if distance[i][i] != 10 {
                return Err(err("distance", format!("node {i}'s distance to itself must be 10 (LOCAL_DISTANCE), not {}", distance[i][i])));
            }
            for j in 0..nn {
                if i != j && distance[i][j] <= 10 {
                    return Err(err("distance", format!("distance from node {i} to node {j} must be above 10, not {}", distance[i][j])));
                }
            }
        }
        // Holes: page aligned, non-empty, sorted and non-overlapping.
        let mut holes: Vec<(u64, u64)> = Vec::new();
        for (i, h) in self.holes.iter().enumerate() {
            if h.start.0 % PAGE_SIZE != 0 || h.size.0 % PAGE_SIZE != 0 {
                return Err(err(&format!("holes[{i}]"), "a hole's start and size must be whole 4096-byte pages".into()));
            }
            if h.size.0 == 0 {
                return Err(err(&format!("holes[{i}].size"), "a hole cannot be empty".into()));
            }
            holes.push((h.start.0 / PAGE_SIZE, (h.start.0 + h.size.0) / PAGE_SIZE));
        }
        holes.sort();
        for w in holes.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(err("holes", format!(
                    "holes overlap: [{}, +{}) and [{}, +{})",
                    format_bytes(w[0].0 * PAGE_SIZE), format_bytes((w[0].1 - w[0].0) * PAGE_SIZE),
                    format_bytes(w[1].0 * PAGE_SIZE), format_bytes((w[1].1 - w[1].0) * PAGE_SIZE))));
            }
        }
        let start = self.nodes[0].start.map_or(0, |b| b.0);
        if start % PAGE_SIZE != 0 {
            return Err(err("nodes[0].start", "the start address must be a whole number of pages".into()));
        }
        let mut pfn = start / PAGE_SIZE;
        let mut nodes = Vec::new();
        for n in &self.nodes {
            let mut remaining = n.memory.0 / PAGE_SIZE;
            let node_start = pfn;
            let mut present = Vec::new();
            while remaining > 0 {
                if let Some(&(_, he)) = holes.iter().find(|&&(hs, he)| pfn >= hs && pfn < he) {
                    pfn = he;
                    continue;
                }
                let next_hole = holes.iter().map(|&(hs, _)| hs).filter(|&hs| hs > pfn).min().unwrap_or(u64::MAX);
                let chunk = remaining.min(next_hole - pfn);
                present.push((pfn, pfn + chunk));
                pfn += chunk;
                remaining -= chunk;
            }
            // A node starting inside a hole begins at its first present page.
            let node_start = present.first().map_or(node_start, |r| r.0);
            nodes.push(NodeLayout { start_pfn: node_start, end_pfn: pfn, cpus: n.cpus, present, zones: [(0, 0); MAX_NR_ZONES] });
        }
        // mem=: memory at and above this physical address is not used.
        if let Some(limit) = self.mem {
            if limit.0 % PAGE_SIZE != 0 || limit.0 == 0 {
                return Err(err("mem", format!("mem= must be a whole, non-zero number of 4096-byte pages, not {} bytes", limit.0)));
            }
            let lim = limit.0 / PAGE_SIZE;
            for (i, n) in nodes.iter_mut().enumerate() {
                n.present = n.present.iter().filter(|r| r.0 < lim).map(|&(a, b)| (a, b.min(lim))).collect();
                if n.present.is_empty() {
                    return Err(err("mem", format!("mem={} leaves node {i} without memory; it must be above the node's first address {}", format_bytes(limit.0), format_bytes(n.start_pfn * PAGE_SIZE))));
                }
                n.end_pfn = n.end_pfn.min(lim);
            }
            pfn = pfn.min(lim);
        }
        let max_pfn = pfn;
        if max_pfn > u32::MAX as u64 - 1 {
            return Err(err("nodes", format!("{} of address space is more than the 16 TiB a 32-bit pfn can address", format_bytes(max_pfn * PAGE_SIZE))));
        }
        // Zones by address.
        let (dma_end, dma32_end) = self.arch.zone_limits();
        let (dma_end, dma32_end) = (dma_end / PAGE_SIZE, dma32_end / PAGE_SIZE);
        for n in nodes.iter_mut() {
            let clip = |a: u64, b: u64| {
                let s = a.max(n.start_pfn);
                let e = b.min(n.end_pfn);
                if s < e { (s, e) } else { (0, 0) }
            };
            n.zones[ZoneType::Dma as usize] = clip(0, dma_end);
            n.zones[ZoneType::Dma32 as usize] = clip(dma_end, dma32_end);
            n.zones[ZoneType::Normal as usize] = clip(dma32_end, u64::MAX);
        }
        // ZONE_MOVABLE: movablecore spread evenly over nodes with Normal memory, from the top,
        // the start rounded up to a MAX_ORDER block (find_zone_movable_pfns_for_nodes).
        if self.movablecore.0 > 0 {
            if self.movablecore.0 % PAGE_SIZE != 0 {
                return Err(err("movablecore", "movablecore must be a whole number of pages".into()));
            }
            let with_normal: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].zones[2].1 > nodes[i].zones[2].0).collect();
            if with_normal.is_empty() {
                return Err(err("movablecore", "no node has memory above 4G (ZONE_NORMAL), so there is nothing to make movable".into()));
            }
            let share = self.movablecore.0 / PAGE_SIZE / with_normal.len() as u64;
            for &i in &with_normal {
                let (ns, ne) = nodes[i].zones[ZoneType::Normal as usize];
                let max_block = 1u64 << crate::mm::MAX_PAGE_ORDER;
                let mstart = (ne.saturating_sub(share)).div_ceil(max_block) * max_block;
                if mstart <= ns {
                    return Err(err("movablecore", format!(
                        "movablecore {} leaves node {i} no ZONE_NORMAL (its Normal memory is {})",
                        format_bytes(self.movablecore.0), format_bytes((ne - ns) * PAGE_SIZE))));
                }
                if mstart < ne {
                    nodes[i].zones[ZoneType::Normal as usize] = (ns, mstart);
                    nodes[i].zones[ZoneType::Movable as usize] = (mstart, ne);
                }
            }
        }
        let layout = MachineLayout {
            nr_cpus: nodes.iter().map(|n| n.cpus).sum(),
            nodes,
            distance,
            max_pfn,
            boot_reserved_pages: self.boot_reserved.0.div_ceil(PAGE_SIZE),
            arch: self.arch,
            disks: self.disks,
        };
        if self.system.cpu >= layout.nr_cpus {
            return Err(err("system.cpu", format!("CPU {} does not exist; the machine has CPUs 0..{}", self.system.cpu, layout.nr_cpus - 1)));
        }
        // The system's page cache is read on its CPU's node and must leave most of it free.
        let mut first = 0;
        for (nid, n) in layout.nodes.iter().enumerate() {
            if self.system.cpu < first + n.cpus {
                let present: u64 = n.present.iter().map(|(a, b)| b - a).sum::<u64>() * PAGE_SIZE;
                if self.system.page_cache.0 > present / 2 {
                    return Err(err("system.page_cache", format!(
                        "{} is more than half of node {nid}'s {} (the node of system.cpu {})",
                        format_bytes(self.system.page_cache.0), format_bytes(present), self.system.cpu)));
                }
                break;
            }
            first += n.cpus;
        }
        // Every populated zone must have at least one present page, and the boot reservation
        // must fit.
        let n0: u64 = layout.nodes[0].present.iter().map(|(a, b)| b - a).sum();
        let memmap0 = (n0 * STRUCT_PAGE_SIZE).div_ceil(PAGE_SIZE);
        if layout.boot_reserved_pages + memmap0 + self.arch.low_reserved() / PAGE_SIZE >= n0 {
            return Err(err("boot_reserved", format!(
                "node 0 has {} of memory, too little for the boot reservations ({} + memmap {})",
                format_bytes(n0 * PAGE_SIZE), format_bytes(self.boot_reserved.0), format_bytes(memmap0 * PAGE_SIZE))));
        }
        Ok(layout)
    }

    /// Bytes of host memory the twin's page frames need (24 per frame, holes included).
    pub fn twin_bytes(&self) -> u64 {
        let total: u64 = self.nodes.iter().map(|n| n.memory.0).sum::<u64>()
            + self.holes.iter().map(|h| h.size.0).sum::<u64>()
            + self.nodes.first().and_then(|n| n.start).map_or(0, |b| b.0);
        total / PAGE_SIZE * core::mem::size_of::<crate::mm::Page>() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(nodes: &[(usize, u64)]) -> MachineSpec {
        MachineSpec {
            page_size: 4096,
            nodes: nodes.iter().enumerate().map(|(i, &(c, m))| NodeSpec { id: i, cpus: c, memory: Bytes(m), start: None }).collect(),
            distance: vec![],
            holes: vec![],
            movablecore: Bytes(0),
            boot_reserved: Bytes(32 << 20),
            disk: Default::default(),
            disks: 1,
            arch: Arch::X86_64,
            swap: Bytes(0),
            mem: None,
            fs: Default::default(),
            system: Default::default(),
            cpu_slowdown: 1.0,
        }
    }

    #[test]
    fn zones_are_cut_at_16m_and_4g_and_holes_push_memory_up() {
        let mut s = spec(&[(2, 6 << 30)]);
        s.holes.push(HoleSpec { start: Bytes(3 << 30), size: Bytes(1 << 30) });
        let l = s.layout().unwrap();
        let n = &l.nodes[0];
        assert_eq!(n.zones[0], (0, 4096));
        assert_eq!(n.zones[1], (4096, 1 << 20));
        assert_eq!(n.zones[2], (1 << 20, 7 << 18));
        assert_eq!(l.zone_present(0, ZoneType::Dma32), (3 << 18) - 4096);
        assert_eq!(l.total_present(), 6 << 18);
    }

    #[test]
    fn second_node_follows_the_first_and_movablecore_comes_from_the_top() {
        let mut s = spec(&[(1, 4 << 30), (1, 4 << 30)]);
        s.movablecore = Bytes(2 << 30);
        let l = s.layout().unwrap();
        assert_eq!(l.nodes[1].start_pfn, 1 << 20);
        // Node 0 ends at 4G and has no Normal memory, so node 1 takes all of movablecore.
        assert_eq!(l.nodes[1].zones[ZoneType::Movable as usize], (6 << 18, 8 << 18));
        assert_eq!(l.nodes[0].zones[ZoneType::Movable as usize], (0, 0));
    }

    #[test]
    fn impossible_machines_are_refused_with_the_key() {
        let e = spec(&[(0, 1 << 30)]).layout().unwrap_err();
        assert_eq!(e.key, "machine.nodes[0].cpus");
        let e = spec(&[(1, (1 << 30) + 7)]).layout().unwrap_err();
        assert!(e.message.contains("whole number"), "{}", e.message);
        let mut s = spec(&[(1, 1 << 30)]);
        s.holes = vec![HoleSpec { start: Bytes(1 << 20), size: Bytes(4 << 20) }, HoleSpec { start: Bytes(2 << 20), size: Bytes(1 << 20) }];
        assert!(s.layout().unwrap_err().message.contains("overlap"));
        let e = spec(&[(1, 0)]).layout().unwrap_err();
        assert!(e.message.contains("empty"));
    }
}
