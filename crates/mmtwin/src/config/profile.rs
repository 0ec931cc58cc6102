//! Kernel profiles: an era's policies and sysctl defaults under one name.

use serde::{Deserialize, Serialize};

use super::sysctl::VmSysctl;
use crate::mm::policy::*;
use crate::mm::vmstat::Era;

/// A kernel profile, chosen by name in `[[kernel]] profile = "..."`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Profile {
    /// Linux 2.6.32 (2009): the kernel of the pcp-cold-pfn-order seed.
    #[serde(rename = "linux-2.6.32")]
    Linux2632,
    /// Linux 3.0 (2011): the kernels of the zlc and per-zone-dirty seeds.
    #[serde(rename = "linux-3.0")]
    Linux30,
    /// Linux 6.x (read from 6.12).
    #[serde(rename = "linux-6.x")]
    Linux6x,
    /// Linux 6.1 (Debian 12's kernel, which the oracle boots): 6.x less what 6.2–6.12 changed
    /// that the model distinguishes (see MmPolicy::LINUX_6_1).
    #[serde(rename = "linux-6.1")]
    Linux61,
}

impl Profile {
    pub fn era(self) -> Era {
        match self {
            Profile::Linux2632 | Profile::Linux30 => Era::Linux3,
            Profile::Linux6x | Profile::Linux61 => Era::Linux6,
        }
    }

    pub fn alloc_policy(self) -> MmPolicy {
        match self {
            Profile::Linux2632 => MmPolicy::LINUX_2_6_32,
            Profile::Linux30 => MmPolicy::LINUX_3_0,
            Profile::Linux6x => MmPolicy::LINUX_6_X,
            Profile::Linux61 => MmPolicy::LINUX_6_1,
        }
    }

    /// The sysctl defaults of this era.
    pub fn sysctl(self) -> VmSysctl {
        let mut s = VmSysctl::default();
        if matches!(self, Profile::Linux30 | Profile::Linux2632) {
            // 3.x has no scale factor or boost; its reserve-ratio array has no Movable entry.
            s.watermark_scale_factor = 0;
            s.watermark_boost_factor = 0;
        }
        s
    }

    /// The largest computed min_free_kbytes (3.x 64 MiB; 6.x 256 MiB).
    pub fn min_free_kbytes_max(self) -> u64 {
        match self {
            Profile::Linux2632 | Profile::Linux30 => 65536,
            Profile::Linux6x | Profile::Linux61 => 262144,
        }
    }
}

/// `[kernel.policy]` in a scenario: any subset of the allocator policies, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyOverrides {
    pub watermark_setup: Option<WatermarkSetup>,
    pub watermark_check: Option<WatermarkCheck>,
    pub fallback: Option<FallbackPolicy>,
    pub pcp: Option<PcpPolicy>,
    pub cold_refill: Option<ColdRefill>,
    pub zonelist: Option<ZonelistPolicy>,
    pub atomic_reserve: Option<AtomicReserve>,
    pub zonelist_cache: Option<ZonelistCache>,
    pub lru_owner: Option<LruOwner>,
    pub page_count_basis: Option<PageCountBasis>,
    pub reclaim_writeback: Option<ReclaimWriteback>,
    pub dirty_placement: Option<DirtyPlacement>,
    pub reclaim_wait: Option<ReclaimWait>,
    pub reclaim_drain: Option<ReclaimDrain>,
    pub readahead_gfp: Option<ReadaheadGfp>,
    pub scan_batch: Option<ScanBatch>,
    pub lowmem_reserve: Option<LowmemReserve>,
    pub blk_plug: Option<BlkPlugPolicy>,
    pub request_alloc: Option<RequestAlloc>,
    pub shrinker: Option<ShrinkerPolicy>,
    pub inode_lru: Option<InodeLru>,
    pub slab_high_order: Option<SlabHighOrder>,
    pub dirty_ratelimit: Option<DirtyRatelimit>,
    pub balance_dirty_pages: Option<BalanceDirtyPages>,
    pub writeback_chunk: Option<WritebackChunk>,
    pub vmstat_threshold: Option<VmstatThreshold>,
    pub writeout_fraction: Option<WriteoutFraction>,
    pub kswapd_sleep: Option<KswapdSleep>,
    pub merge_tail_heuristic: Option<bool>,
    pub deactivate_invalidated: Option<bool>,
    pub active_file_aging: Option<ActiveFileAging>,
}

impl PolicyOverrides {
    /// Applies the overrides on top of a profile's policies.
    pub fn apply(&self, base: MmPolicy) -> MmPolicy {
        let mut p = base;
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { p.$f = v; } )* };
        }
        set!(watermark_setup, watermark_check, fallback, pcp, cold_refill, zonelist, atomic_reserve,
             zonelist_cache, lru_owner, page_count_basis, reclaim_writeback, dirty_placement, reclaim_wait,
             reclaim_drain, readahead_gfp, scan_batch, lowmem_reserve, blk_plug, request_alloc, shrinker, inode_lru, slab_high_order, dirty_ratelimit, balance_dirty_pages, writeback_chunk, vmstat_threshold, writeout_fraction, kswapd_sleep, merge_tail_heuristic, deactivate_invalidated, active_file_aging);
        p
    }
}
