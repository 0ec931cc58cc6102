//! vm sysctls (/proc/sys/vm/*) with their kernel names and defaults.

use serde::{Deserialize, Serialize};

use crate::mm::policy::NumaZonelistOrder;

/// The vm sysctls in effect (resolved: every value set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmSysctl {
    /// vm.min_free_kbytes; 0 means "computed at boot" (init_per_zone_wmark_min).
    pub min_free_kbytes: u64,
    /// vm.watermark_scale_factor (6.x; 10 = 0.1% of the zone between watermarks).
    pub watermark_scale_factor: u64,
    /// vm.watermark_boost_factor (6.x; 15000 = 150% of the high watermark).
    pub watermark_boost_factor: u64,
    /// vm.lowmem_reserve_ratio per zone type: DMA, DMA32, Normal, Movable.
    pub lowmem_reserve_ratio: [u64; 4],
    /// vm.percpu_pagelist_fraction (3.x; 0 = use the batch formula).
    pub percpu_pagelist_fraction: u64,
    /// vm.percpu_pagelist_high_fraction (6.x; 0 = derive from the low watermark).
    pub percpu_pagelist_high_fraction: u64,
    /// vm.numa_zonelist_order (3.x).
    pub numa_zonelist_order: NumaZonelistOrder,
    /// vm.zone_reclaim_mode; `None` in a scenario means the kernel's boot-time choice
    /// (3.x turns it on when a node distance exceeds RECLAIM_DISTANCE).
    pub zone_reclaim_mode: Option<u32>,
    /// vm.min_unmapped_ratio (percent of a zone).
    pub min_unmapped_ratio: u64,
    /// vm.min_slab_ratio (percent of a zone).
    pub min_slab_ratio: u64,
    /// vm.swappiness.
    pub swappiness: u64,
    /// vm.extfrag_threshold.
    pub extfrag_threshold: u64,
    /// vm.stat_interval: seconds between vmstat refreshes on each CPU.
    pub stat_interval: u64,
    /// vm.dirty_ratio: % of dirtyable memory a dirtier may fill before it is throttled.
    pub dirty_ratio: u64,
    /// vm.dirty_background_ratio: % of dirtyable memory above which the flushers write back.
    pub dirty_background_ratio: u64,
    /// vm.dirty_bytes (0 = use dirty_ratio).
    pub dirty_bytes: u64,
    /// vm.dirty_background_bytes (0 = use dirty_background_ratio).
    pub dirty_background_bytes: u64,
    /// vm.dirty_writeback_centisecs: the flushers' periodic wakeup.
    pub dirty_writeback_centisecs: u64,
    /// vm.dirty_expire_centisecs: age at which dirty data is written by periodic writeback.
    pub dirty_expire_centisecs: u64,
    /// vm.vfs_cache_pressure: weight of dentry/inode reclaim against page cache.
    pub vfs_cache_pressure: u64,
    /// vm.page-cluster: swap readahead reads 2^page_cluster slots around a faulting one.
    pub page_cluster: u64,
}

impl Default for VmSysctl {
    fn default() -> Self {
        VmSysctl {
            min_free_kbytes: 0,
            watermark_scale_factor: 10,
            watermark_boost_factor: 15000,
            lowmem_reserve_ratio: [256, 256, 32, 0],
            percpu_pagelist_fraction: 0,
            percpu_pagelist_high_fraction: 0,
            numa_zonelist_order: NumaZonelistOrder::Default,
            zone_reclaim_mode: None,
            min_unmapped_ratio: 1,
            min_slab_ratio: 5,
            swappiness: 60,
            extfrag_threshold: 500,
            stat_interval: 1,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_writeback_centisecs: 500,
            dirty_expire_centisecs: 3000,
            vfs_cache_pressure: 100,
            page_cluster: 3,
        }
    }
}

/// `[kernel.sysctl]` in a scenario: any subset of the sysctls.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SysctlOverrides {
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: Option<u64>,
    pub watermark_boost_factor: Option<u64>,
    pub lowmem_reserve_ratio: Option<[u64; 4]>,
    pub percpu_pagelist_fraction: Option<u64>,
    pub percpu_pagelist_high_fraction: Option<u64>,
    pub numa_zonelist_order: Option<NumaZonelistOrder>,
    pub zone_reclaim_mode: Option<u32>,
    pub min_unmapped_ratio: Option<u64>,
    pub min_slab_ratio: Option<u64>,
    pub swappiness: Option<u64>,
    pub extfrag_threshold: Option<u64>,
    pub stat_interval: Option<u64>,
    pub dirty_ratio: Option<u64>,
    pub dirty_background_ratio: Option<u64>,
    pub dirty_bytes: Option<u64>,
    pub dirty_background_bytes: Option<u64>,
    pub dirty_writeback_centisecs: Option<u64>,
    pub dirty_expire_centisecs: Option<u64>,
    pub vfs_cache_pressure: Option<u64>,
    pub page_cluster: Option<u64>,
}

impl SysctlOverrides {
    /// Applies the overrides on top of `base`.
    pub fn apply(&self, base: &VmSysctl) -> VmSysctl {
        let mut s = base.clone();
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f.clone() { s.$f = v; } )* };
        }
        set!(min_free_kbytes, watermark_scale_factor, watermark_boost_factor, lowmem_reserve_ratio,
             percpu_pagelist_fraction, percpu_pagelist_high_fraction, numa_zonelist_order,
             min_unmapped_ratio, min_slab_ratio, swappiness, extfrag_threshold, stat_interval,
             dirty_ratio, dirty_background_ratio, dirty_bytes, dirty_background_bytes,
             dirty_writeback_centisecs, dirty_expire_centisecs, vfs_cache_pressure, page_cluster);
        if self.zone_reclaim_mode.is_some() {
            s.zone_reclaim_mode = self.zone_reclaim_mode;
        }
        s
    }
}
