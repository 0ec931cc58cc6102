//! kswapd (mm/vmscan.c). One kernel thread per node, woken by the allocator when a zone falls
//! below its low watermark (or, in 6.x, when a fragmenting fallback boosted the watermarks).
//!
//! There are no LRU lists yet, so balance_pgdat finds nothing to reclaim: a pass counts
//! `pageoutrun`, clears the watermark boost as 6.x does at the end of balance_pgdat, and goes
//! back to sleep. Reclaim proper (shrink_node, priorities, kswapd_try_to_sleep) is the next
//! mechanism to land here.

use crate::sim::{After, Step, Task, TaskCx};

use super::gfp::Gfp;
use super::page_alloc::Mm;

use super::mmzone::MAX_NR_ZONES;
use super::vmstat::VmStat;

/// The kswapd thread of one node.
#[derive(Debug)]
pub struct Kswapd {
    pub nid: usize,
    name: String,
}

impl Kswapd {
    pub fn new(nid: usize) -> Kswapd {
        Kswapd { nid, name: format!("kswapd{nid}") }
    }
}

impl Task for Kswapd {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_workload(&self) -> bool {
        false
    }

    /// One balance_pgdat pass, then sleep until woken.
    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let mm = &mut *cx.mm;
        let node = &mut mm.nodes[self.nid];
        node.kswapd_wait_pending = false;
        node.kswapd_order = 0;
        node.kswapd_highest_zoneidx = 0;
        mm.events.count(VmStat::Pageoutrun, 1);
        let first = self.nid * MAX_NR_ZONES;
        for z in &mut mm.zones[first..first + MAX_NR_ZONES] {
            z.watermark_boost = 0;
        }
        Step { user_ns: 0, system_ns: mm.costs.kswapd_pass_ns, after: After::Block }
    }
}

/// zone_reclaim's answers (mm/internal.h ZONE_RECLAIM_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneReclaim {
    /// Did not scan (−2).
    NoScan,
    /// Nothing worth scanning, or the zone is unreclaimable (−1).
    Full,
    /// Scanned but reclaimed less than the request (0).
    Some,
    /// Reclaimed enough (1).
    Success,
}

/// zone_reclaim_mode bits.
pub const RECLAIM_ZONE: u32 = 1;
pub const RECLAIM_WRITE: u32 = 2;
pub const RECLAIM_SWAP: u32 = 4;

impl Mm {
    /// File pages zone_reclaim could free in a zone (zone_pagecache_reclaimable): all file
    /// pages with RECLAIM_SWAP, otherwise the unmapped ones; dirty ones only with RECLAIM_WRITE.
    /// The page cache is not modelled yet, so there are none.
    pub fn zone_pagecache_reclaimable(&self, _zid: usize) -> u64 {
        0
    }

    /// Reclaimable slab pages of a zone (NR_SLAB_RECLAIMABLE); no slab caches are modelled yet.
    pub fn zone_slab_reclaimable(&self, _zid: usize) -> u64 {
        0
    }

    /// 3.x zone_reclaim: decides whether reclaiming from this zone before falling back to
    /// another node is worth it, and does it.
    ///
    /// Returns FULL when the zone's unmapped page cache is at most min_unmapped_ratio% of the zone
    /// and its reclaimable slab at most min_slab_ratio% (nothing worth scanning); NOSCAN for
    /// callers that cannot sleep or zones of another node with CPUs. Scanning itself
    /// (__zone_reclaim: shrink_zone at ZONE_RECLAIM_PRIORITY, shrink_slab) needs the LRU lists,
    /// which arrive with the reclaim model; until then the first test always answers FULL,
    /// which is what the kernel answers for a zone without page cache or slab.
    pub fn zone_reclaim(&mut self, zid: usize, gfp: Gfp, _order: usize, cpu: usize) -> ZoneReclaim {
        let z = &self.zones[zid];
        let min_unmapped_pages = z.present_pages * self.sysctl.min_unmapped_ratio / 100;
        let min_slab_pages = z.present_pages * self.sysctl.min_slab_ratio / 100;
        if self.zone_pagecache_reclaimable(zid) <= min_unmapped_pages && self.zone_slab_reclaimable(zid) <= min_slab_pages {
            return ZoneReclaim::Full;
        }
        if !gfp.allow_blocking() || gfp.has(Gfp::MEMALLOC) {
            return ZoneReclaim::NoScan;
        }
        let node = z.node;
        if node != self.cpu_to_node[cpu] && !self.nodes[node].cpus.is_empty() {
            return ZoneReclaim::NoScan;
        }
        unreachable!("a zone with reclaimable page cache or slab cannot exist before the LRU model")
    }
}
