//! /proc/vmstat counters as one enum with the kernel's names, and the /proc text dumps
//! (buddyinfo, pagetypeinfo, zoneinfo) in each era's layout (mm/vmstat.c).
//!
//! Event counters are incremented where the kernel increments them. State items (nr_free_pages,
//! …) are read from the structures they describe when a snapshot is taken, as /proc does.

use std::fmt::Write as _;

use super::mmzone::{LruList, MigrateType, NumaStat, Zone, ZoneStat, ZoneType, MAX_NR_ZONES, MIGRATE_TYPES, NR_ZONE_STAT_ITEMS, WMARK_HIGH, WMARK_LOW, WMARK_MIN, WMARK_PROMO};
use super::page_alloc::Mm;

/// Which kernel's /proc layout and counter set to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Era {
    /// Linux 3.0/3.1 (2011).
    Linux3,
    /// Linux 6.x.
    Linux6,
}

/// Which eras print a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum In {
    Both,
    Old,
    New,
}

macro_rules! vmstat_items {
    ($($variant:ident => $name:literal, $era:ident;)*) => {
        /// A /proc/vmstat item. The discriminant indexes counter arrays.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        pub enum VmStat { $($variant,)* }

        /// Number of items.
        pub const NR_VMSTAT_ITEMS: usize = [$($name,)*].len();

        impl VmStat {
            /// Every item, in /proc/vmstat order.
            pub const ALL: [VmStat; NR_VMSTAT_ITEMS] = [$(VmStat::$variant,)*];

            /// The exact /proc/vmstat name.
            pub const fn name(self) -> &'static str {
                match self { $(VmStat::$variant => $name,)* }
            }

            /// Which eras have this item.
            pub const fn era(self) -> In {
                match self { $(VmStat::$variant => In::$era,)* }
            }
        }
    };
}

vmstat_items! {
    NrFreePages => "nr_free_pages", Both;
    NrInactiveAnon => "nr_inactive_anon", Both;
    NrActiveAnon => "nr_active_anon", Both;
    NrInactiveFile => "nr_inactive_file", Both;
    NrActiveFile => "nr_active_file", Both;
    NrUnevictable => "nr_unevictable", Both;
    NrMlock => "nr_mlock", Both;
    NrAnonPages => "nr_anon_pages", Both;
    NrMapped => "nr_mapped", Both;
    NrFilePages => "nr_file_pages", Both;
    NrDirty => "nr_dirty", Both;
    NrWriteback => "nr_writeback", Both;
    NrSlabReclaimable => "nr_slab_reclaimable", Both;
    NrSlabUnreclaimable => "nr_slab_unreclaimable", Both;
    NrPageTablePages => "nr_page_table_pages", Both;
    NrKernelStack => "nr_kernel_stack", Both;
    NrUnstable => "nr_unstable", Old;
    NrBounce => "nr_bounce", Both;
    NrVmscanWrite => "nr_vmscan_write", Both;
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim", Both;
    NrWritebackTemp => "nr_writeback_temp", Both;
    NrIsolatedAnon => "nr_isolated_anon", Both;
    NrIsolatedFile => "nr_isolated_file", Both;
    NrShmem => "nr_shmem", Both;
    NrDirtied => "nr_dirtied", Both;
    NrWritten => "nr_written", Both;
    NrAnonTransparentHugepages => "nr_anon_transparent_hugepages", Both;
    NrFreeCma => "nr_free_cma", New;
    NrDirtyThreshold => "nr_dirty_threshold", Both;
    NrDirtyBackgroundThreshold => "nr_dirty_background_threshold", Both;
    NumaHit => "numa_hit", Both;
    NumaMiss => "numa_miss", Both;
    NumaForeign => "numa_foreign", Both;
    NumaInterleave => "numa_interleave", Both;
    NumaLocal => "numa_local", Both;
    NumaOther => "numa_other", Both;
    Pgpgin => "pgpgin", Both;
    Pgpgout => "pgpgout", Both;
    Pswpin => "pswpin", Both;
    Pswpout => "pswpout", Both;
    PgallocDma => "pgalloc_dma", Both;
    PgallocDma32 => "pgalloc_dma32", Both;
    PgallocNormal => "pgalloc_normal", Both;
    PgallocMovable => "pgalloc_movable", Both;
    AllocstallDma => "allocstall_dma", New;
    AllocstallDma32 => "allocstall_dma32", New;
    AllocstallNormal => "allocstall_normal", New;
    AllocstallMovable => "allocstall_movable", New;
    PgskipDma => "pgskip_dma", New;
    PgskipDma32 => "pgskip_dma32", New;
    PgskipNormal => "pgskip_normal", New;
    PgskipMovable => "pgskip_movable", New;
    Pgfree => "pgfree", Both;
    Pgactivate => "pgactivate", Both;
    Pgdeactivate => "pgdeactivate", Both;
    Pgfault => "pgfault", Both;
    Pgmajfault => "pgmajfault", Both;
    PgrefillDma => "pgrefill_dma", Old;
    PgrefillDma32 => "pgrefill_dma32", Old;
    PgrefillNormal => "pgrefill_normal", Old;
    PgrefillMovable => "pgrefill_movable", Old;
    Pgrefill => "pgrefill", New;
    PgstealDma => "pgsteal_dma", Old;
    PgstealDma32 => "pgsteal_dma32", Old;
    PgstealNormal => "pgsteal_normal", Old;
    PgstealMovable => "pgsteal_movable", Old;
    PgstealKswapd => "pgsteal_kswapd", New;
    PgstealDirect => "pgsteal_direct", New;
    PgscanKswapdDma => "pgscan_kswapd_dma", Old;
    PgscanKswapdDma32 => "pgscan_kswapd_dma32", Old;
    PgscanKswapdNormal => "pgscan_kswapd_normal", Old;
    PgscanKswapdMovable => "pgscan_kswapd_movable", Old;
    PgscanDirectDma => "pgscan_direct_dma", Old;
    PgscanDirectDma32 => "pgscan_direct_dma32", Old;
    PgscanDirectNormal => "pgscan_direct_normal", Old;
    PgscanDirectMovable => "pgscan_direct_movable", Old;
    PgscanKswapd => "pgscan_kswapd", New;
    PgscanDirect => "pgscan_direct", New;
    PgscanDirectThrottle => "pgscan_direct_throttle", New;
    PgscanAnon => "pgscan_anon", New;
    PgscanFile => "pgscan_file", New;
    PgstealAnon => "pgsteal_anon", New;
    PgstealFile => "pgsteal_file", New;
    ZoneReclaimFailed => "zone_reclaim_failed", Both;
    Pginodesteal => "pginodesteal", Both;
    SlabsScanned => "slabs_scanned", Both;
    KswapdSteal => "kswapd_steal", Old;
    KswapdInodesteal => "kswapd_inodesteal", Both;
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly", Both;
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly", Both;
    KswapdSkipCongestionWait => "kswapd_skip_congestion_wait", Old;
    Pageoutrun => "pageoutrun", Both;
    Allocstall => "allocstall", Old;
    Pgrotated => "pgrotated", Both;
    CompactBlocksMoved => "compact_blocks_moved", Old;
    CompactPagesMoved => "compact_pages_moved", Old;
    CompactPagemigrateFailed => "compact_pagemigrate_failed", Old;
    PgmigrateSuccess => "pgmigrate_success", New;
    PgmigrateFail => "pgmigrate_fail", New;
    CompactMigrateScanned => "compact_migrate_scanned", New;
    CompactFreeScanned => "compact_free_scanned", New;
    CompactIsolated => "compact_isolated", New;
    CompactStall => "compact_stall", Both;
    CompactFail => "compact_fail", Both;
    CompactSuccess => "compact_success", Both;
    CompactDaemonWake => "compact_daemon_wake", New;
    CompactDaemonMigrateScanned => "compact_daemon_migrate_scanned", New;
    CompactDaemonFreeScanned => "compact_daemon_free_scanned", New;
    ThpFaultAlloc => "thp_fault_alloc", Both;
    ThpFaultFallback => "thp_fault_fallback", Both;
    ThpCollapseAlloc => "thp_collapse_alloc", Both;
    ThpCollapseAllocFailed => "thp_collapse_alloc_failed", Both;
    ThpSplit => "thp_split", Old;
    ThpSplitPage => "thp_split_page", New;
    OomKill => "oom_kill", New;
}

impl VmStat {
    /// Whether `era` prints this item.
    pub fn in_era(self, era: Era) -> bool {
        match (self.era(), era) {
            (In::Both, _) | (In::Old, Era::Linux3) | (In::New, Era::Linux6) => true,
            _ => false,
        }
    }

    /// The per-zone-type item following `first` (pgalloc_dma → pgalloc_<zone>).
    #[inline(always)]
    pub fn for_zone(first: VmStat, zt: ZoneType) -> VmStat {
        VmStat::ALL[first as usize + zt as usize]
    }

    /// Looks an item up by its /proc/vmstat name.
    pub fn from_name(name: &str) -> Option<VmStat> {
        VmStat::ALL.iter().copied().find(|v| v.name() == name)
    }
}

/// Event counters (the vm_event_states sum over CPUs) plus accumulated state deltas.
#[derive(Clone, Debug)]
pub struct VmEvents {
    pub v: [u64; NR_VMSTAT_ITEMS],
}

impl Default for VmEvents {
    fn default() -> Self {
        VmEvents { v: [0; NR_VMSTAT_ITEMS] }
    }
}

impl VmEvents {
    /// count_vm_events.
    #[inline(always)]
    pub fn count(&mut self, item: VmStat, n: u64) {
        self.v[item as usize] += n;
    }

    #[inline(always)]
    pub fn get(&self, item: VmStat) -> u64 {
        self.v[item as usize]
    }
}

/// The /proc/vmstat items that are sums of zone page state counters.
const ZONE_STAT_NAMES: [(VmStat, ZoneStat); NR_ZONE_STAT_ITEMS] = [
    (VmStat::NrFilePages, ZoneStat::NrFilePages),
    (VmStat::NrAnonPages, ZoneStat::NrAnonPages),
    (VmStat::NrMapped, ZoneStat::NrFileMapped),
    (VmStat::NrDirty, ZoneStat::NrFileDirty),
    (VmStat::NrWriteback, ZoneStat::NrWriteback),
    (VmStat::NrSlabReclaimable, ZoneStat::NrSlabReclaimable),
    (VmStat::NrSlabUnreclaimable, ZoneStat::NrSlabUnreclaimable),
    (VmStat::NrIsolatedAnon, ZoneStat::NrIsolatedAnon),
    (VmStat::NrIsolatedFile, ZoneStat::NrIsolatedFile),
    (VmStat::NrShmem, ZoneStat::NrShmem),
    (VmStat::NrDirtied, ZoneStat::NrDirtied),
    (VmStat::NrWritten, ZoneStat::NrWritten),
    (VmStat::NrVmscanWrite, ZoneStat::NrVmscanWrite),
    (VmStat::NrVmscanImmediateReclaim, ZoneStat::NrVmscanImmediate),
    (VmStat::NrPageTablePages, ZoneStat::NrPageTable),
    (VmStat::NrAnonTransparentHugepages, ZoneStat::NrAnonThps),
];

/// The per-node page counts the vmstat timeline samples besides /proc/vmstat (the node's
/// vmstat file names; None is nr_free_pages, counted in the free lists): where memory sits on a
/// NUMA machine, which the global counters do not show.
pub const NODE_TIMELINE_ITEMS: [(&str, Option<ZoneStat>); 5] = [
    ("nr_free_pages", None),
    ("nr_file_pages", Some(ZoneStat::NrFilePages)),
    ("nr_mapped", Some(ZoneStat::NrFileMapped)),
    ("nr_dirty", Some(ZoneStat::NrFileDirty)),
    ("nr_writeback", Some(ZoneStat::NrWriteback)),
];

impl Mm {
    /// Adds `delta` to a zone's page state counter (__mod_zone_page_state).
    #[inline(always)]
    pub fn mod_zone_page_state(&mut self, zid: usize, item: ZoneStat, delta: i64) {
        self.zones[zid].vm_stat[item as usize] += delta;
    }

    /// Adds `delta` to the counter of the zone of `pfn` (mod_zone_page_state(page_zone(page))).
    #[inline(always)]
    pub fn mod_page_state(&mut self, pfn: super::Pfn, item: ZoneStat, delta: i64) {
        let zid = self.page_zone(pfn);
        self.zones[zid].vm_stat[item as usize] += delta;
    }

    /// A node's counter: the sum over its zones (node_page_state).
    pub fn node_page_state(&self, nid: usize, item: ZoneStat) -> u64 {
        let first = nid * MAX_NR_ZONES;
        self.zones[first..first + MAX_NR_ZONES].iter().map(|z| z.vm_stat[item as usize]).sum::<i64>().max(0) as u64
    }

    /// The machine-wide counter (global_page_state).
    pub fn global_page_state(&self, item: ZoneStat) -> u64 {
        self.zones.iter().map(|z| z.vm_stat[item as usize]).sum::<i64>().max(0) as u64
    }

    /// The per-node counters the vmstat timeline samples, node after node, in the order of
    /// `NODE_TIMELINE_ITEMS` (/sys/devices/system/node/nodeN/vmstat's values for them).
    pub fn node_timeline_snapshot(&self) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.nodes.len() * NODE_TIMELINE_ITEMS.len());
        for nid in 0..self.nodes.len() {
            for (_, item) in NODE_TIMELINE_ITEMS {
                out.push(match item {
                    Some(zs) => self.node_page_state(nid, zs) as i64,
                    None => self.zones[nid * MAX_NR_ZONES..(nid + 1) * MAX_NR_ZONES].iter().map(|z| z.nr_free_pages).sum(),
                });
            }
        }
        out
    }

    /// A full /proc/vmstat snapshot: events as counted, state items read from the structures.
    pub fn vmstat_snapshot(&self) -> [i64; NR_VMSTAT_ITEMS] {
        let mut out = [0i64; NR_VMSTAT_ITEMS];
        for (i, v) in self.events.v.iter().enumerate() {
            out[i] = *v as i64;
        }
        out[VmStat::NrFreePages as usize] = self.zones.iter().map(|z| z.nr_free_pages).sum();
        for (item, zs) in ZONE_STAT_NAMES {
            out[item as usize] = self.global_page_state(zs) as i64;
        }
        out[VmStat::NrInactiveAnon as usize] = self.nr_lru_pages(LruList::InactiveAnon) as i64;
        out[VmStat::NrActiveAnon as usize] = self.nr_lru_pages(LruList::ActiveAnon) as i64;
        out[VmStat::NrInactiveFile as usize] = self.nr_lru_pages(LruList::InactiveFile) as i64;
        out[VmStat::NrActiveFile as usize] = self.nr_lru_pages(LruList::ActiveFile) as i64;
        out[VmStat::NrUnevictable as usize] = self.nr_lru_pages(LruList::Unevictable) as i64;
        let numa = [
            (VmStat::NumaHit, NumaStat::Hit),
            (VmStat::NumaMiss, NumaStat::Miss),
            (VmStat::NumaForeign, NumaStat::Foreign),
            (VmStat::NumaInterleave, NumaStat::InterleaveHit),
            (VmStat::NumaLocal, NumaStat::Local),
            (VmStat::NumaOther, NumaStat::Other),
        ];
        for (item, ns) in numa {
            out[item as usize] = self.zones.iter().map(|z| z.numa_stat[ns as usize] as i64).sum();
        }
        out
    }

    /// /proc/vmstat text for this era.
    pub fn proc_vmstat(&self) -> String {
        let snap = self.vmstat_snapshot();
        let mut s = String::new();
        for item in VmStat::ALL {
            if item.in_era(self.era) {
                let _ = writeln!(s, "{} {}", item.name(), snap[item as usize]);
            }
        }
        s
    }

    /// /proc/buddyinfo: one line per populated zone with nr_free per order.
    pub fn proc_buddyinfo(&self) -> String {
        let mut s = String::new();
        for z in self.zones.iter().filter(|z| z.populated()) {
            let _ = write!(s, "Node {}, zone {:>8} ", z.node, z.zone_type.name());
            for o in 0..self.max_order + 1 {
                let _ = write!(s, "{:6} ", z.free_area[o].nr_free);
            }
            s.push('\n');
        }
        s
    }

    /// The migratetypes /proc/pagetypeinfo lists for this era, in its column order.
    fn pagetypeinfo_types(&self) -> Vec<(&'static str, Option<MigrateType>)> {
        match self.era {
            Era::Linux3 => vec![
                ("Unmovable", Some(MigrateType::Unmovable)),
                ("Reclaimable", Some(MigrateType::Reclaimable)),
                ("Movable", Some(MigrateType::Movable)),
                ("Reserve", Some(MigrateType::Reserve)),
                ("Isolate", Some(MigrateType::Isolate)),
            ],
            Era::Linux6 => vec![
                ("Unmovable", Some(MigrateType::Unmovable)),
                ("Movable", Some(MigrateType::Movable)),
                ("Reclaimable", Some(MigrateType::Reclaimable)),
                ("HighAtomic", Some(MigrateType::HighAtomic)),
                ("CMA", None),
                ("Isolate", Some(MigrateType::Isolate)),
            ],
        }
    }

    /// /proc/pagetypeinfo: free blocks per zone, type and order, then pageblocks per type.
    pub fn proc_pagetypeinfo(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Page block order: {}", self.pageblock_order);
        let _ = writeln!(s, "Pages per block:  {}", self.pageblock_nr_pages());
        s.push('\n');
        let _ = write!(s, "{:<43}", "Free pages count per migrate type at order");
        for o in 0..self.max_order + 1 {
            let _ = write!(s, "{:6} ", o);
        }
        s.push('\n');
        let types = self.pagetypeinfo_types();
        for z in self.zones.iter().filter(|z| z.populated()) {
            for (name, mt) in &types {
                let _ = write!(s, "Node {:4}, zone {:>8}, type {:>12} ", z.node, z.zone_type.name(), name);
                for o in 0..self.max_order + 1 {
                    let n = mt.map_or(0, |mt| z.free_area[o].free_list[mt as usize].len as u64);
                    if self.era == Era::Linux6 && n >= 100000 {
                        let _ = write!(s, ">{:6} ", 100000);
                    } else {
                        let _ = write!(s, "{:6} ", n);
                    }
                }
                s.push('\n');
            }
        }
        s.push('\n');
        let _ = write!(s, "{:<23}", "Number of blocks type ");
        for (name, _) in &types {
            let _ = write!(s, "{:>12} ", name);
        }
        s.push('\n');
        for z in self.zones.iter().filter(|z| z.populated()) {
            let mut counts = [0u64; MIGRATE_TYPES];
            let start = z.zone_start_pfn as u64 & !(self.pageblock_nr_pages() - 1);
            let mut pfn = start;
            while pfn < z.zone_end_pfn() as u64 {
                if self.block_has_present(pfn as u32) {
                    counts[self.get_pageblock_migratetype(pfn as u32) as usize] += 1;
                }
                pfn += self.pageblock_nr_pages();
            }
            let _ = write!(s, "Node {}, zone {:>8} ", z.node, z.zone_type.name());
            for (_, mt) in &types {
                let _ = write!(s, "{:12} ", mt.map_or(0, |mt| counts[mt as usize]));
            }
            s.push('\n');
        }
        s
    }

    /// /proc/zoneinfo in this era's layout (the fields this model has; others print 0).
    pub fn proc_zoneinfo(&self) -> String {
        if self.era == Era::Linux3 {
            return self.proc_zoneinfo_3x();
        }
        let mut s = String::new();
        for z in self.zones.iter() {
            let _ = writeln!(s, "Node {}, zone {:>8}", z.node, z.zone_type.name());
            if z.zone_type == ZoneType::Dma && z.node < self.nodes.len() {
                let _ = writeln!(s, "  per-node stats");
                let anon = self.node_page_state(z.node, ZoneStat::NrAnonPages);
                let _ = writeln!(s, "      nr_anon_pages {}", anon);
            }
            let _ = writeln!(s, "  pages free     {}", z.nr_free_pages);
            let _ = writeln!(s, "        boost    {}", z.watermark_boost);
            let _ = writeln!(s, "        min      {}", z.wmark_pages(WMARK_MIN));
            let _ = writeln!(s, "        low      {}", z.wmark_pages(WMARK_LOW));
            let _ = writeln!(s, "        high     {}", z.wmark_pages(WMARK_HIGH));
            let _ = writeln!(s, "        promo    {}", z.wmark_pages(WMARK_PROMO));
            let _ = writeln!(s, "        spanned  {}", z.spanned_pages);
            let _ = writeln!(s, "        present  {}", z.present_pages);
            let _ = writeln!(s, "        managed  {}", z.managed_pages);
            let _ = writeln!(s, "        cma      0");
            let prot: Vec<String> = z.lowmem_reserve.iter().map(|v| v.to_string()).collect();
            let _ = writeln!(s, "        protection: ({})", prot.join(", "));
            let _ = writeln!(s, "      nr_free_pages {}", z.nr_free_pages);
            if !z.populated() {
                continue;
            }
            let _ = writeln!(s, "  pagesets");
            for (cpu, p) in z.pcp.iter().enumerate() {
                let _ = writeln!(s, "    cpu: {}", cpu);
                let _ = writeln!(s, "              count: {}", p.count);
                let _ = writeln!(s, "              high:  {}", p.high);
                let _ = writeln!(s, "              batch: {}", p.batch);
            }
            let _ = writeln!(s, "  node_unreclaimable:  0");
            let _ = writeln!(s, "  start_pfn:           {}", z.zone_start_pfn);
        }
        s
    }

    /// 3.x /proc/zoneinfo (zoneinfo_show_print, 3.0–3.1): populated zones only; the
    /// watermarks, pages_scanned and sizes, then every zone counter by its vmstat name (the
    /// ones this model does not keep — unevictable, mlock, kernel stacks, NFS
    /// unstable, bounce, writeback_temp — print 0), the lowmem protection, each CPU's
    /// pageset with its stat threshold, and the reclaim state.
    fn proc_zoneinfo_3x(&self) -> String {
        let mut s = String::new();
        let cpus = self.cpu_to_node.len() as u64;
        for z in self.zones.iter().filter(|z| z.populated()) {
            let _ = writeln!(s, "Node {}, zone {:>8}", z.node, z.zone_type.name());
            let _ = writeln!(s, "  pages free     {}", z.nr_free_pages);
            let _ = writeln!(s, "        min      {}", z.wmark_pages(WMARK_MIN));
            let _ = writeln!(s, "        low      {}", z.wmark_pages(WMARK_LOW));
            let _ = writeln!(s, "        high     {}", z.wmark_pages(WMARK_HIGH));
            let _ = writeln!(s, "        scanned  {}", z.pages_scanned);
            let _ = writeln!(s, "        spanned  {}", z.spanned_pages);
            let _ = writeln!(s, "        present  {}", z.present_pages);
            for (name, v) in self.zone_stat_items_3x(z) {
                let _ = writeln!(s, "    {:<12} {}", name, v);
            }
            let prot: Vec<String> = z.lowmem_reserve.iter().map(|v| v.to_string()).collect();
            let _ = writeln!(s, "        protection: ({})", prot.join(", "));
            let _ = writeln!(s, "  pagesets");
            let threshold = stat_threshold_3x(z.present_pages, cpus);
            for (cpu, p) in z.pcp.iter().enumerate() {
                let _ = writeln!(s, "    cpu: {}", cpu);
                let _ = writeln!(s, "              count: {}", p.count);
                let _ = writeln!(s, "              high:  {}", p.high);
                let _ = writeln!(s, "              batch: {}", p.batch);
                let _ = writeln!(s, "  vm stats threshold: {}", threshold);
            }
            let _ = writeln!(s, "  all_unreclaimable: {}", u32::from(z.all_unreclaimable));
            let _ = writeln!(s, "  start_pfn:         {}", z.zone_start_pfn);
            let _ = writeln!(s, "  inactive_ratio:    {}", inactive_ratio(z.present_pages));
        }
        s
    }

    /// The 3.x zone counters (enum zone_stat_item, 3.0–3.1) with their vmstat names, in order.
    fn zone_stat_items_3x(&self, z: &Zone) -> [(&'static str, u64); 32] {
        let lv = &self.lruvecs[z.id];
        let st = |i: ZoneStat| z.page_state(i);
        let numa = |i: NumaStat| z.numa_stat[i as usize];
        [
            ("nr_free_pages", z.nr_free_pages.max(0) as u64),
            ("nr_inactive_anon", lv.size(LruList::InactiveAnon)),
            ("nr_active_anon", lv.size(LruList::ActiveAnon)),
            ("nr_inactive_file", lv.size(LruList::InactiveFile)),
            ("nr_active_file", lv.size(LruList::ActiveFile)),
            ("nr_unevictable", 0),
            ("nr_mlock", 0),
            ("nr_anon_pages", st(ZoneStat::NrAnonPages)),
            ("nr_mapped", st(ZoneStat::NrFileMapped)),
            ("nr_file_pages", st(ZoneStat::NrFilePages)),
            ("nr_dirty", st(ZoneStat::NrFileDirty)),
            ("nr_writeback", st(ZoneStat::NrWriteback)),
            ("nr_slab_reclaimable", st(ZoneStat::NrSlabReclaimable)),
            ("nr_slab_unreclaimable", st(ZoneStat::NrSlabUnreclaimable)),
            ("nr_page_table_pages", st(ZoneStat::NrPageTable)),
            ("nr_kernel_stack", 0),
            ("nr_unstable", 0),
            ("nr_bounce", 0),
            ("nr_vmscan_write", st(ZoneStat::NrVmscanWrite)),
            ("nr_writeback_temp", 0),
            ("nr_isolated_anon", st(ZoneStat::NrIsolatedAnon)),
            ("nr_isolated_file", st(ZoneStat::NrIsolatedFile)),
            ("nr_shmem", st(ZoneStat::NrShmem)),
            ("nr_dirtied", st(ZoneStat::NrDirtied)),
            ("nr_written", st(ZoneStat::NrWritten)),
            ("numa_hit", numa(NumaStat::Hit)),
            ("numa_miss", numa(NumaStat::Miss)),
            ("numa_foreign", numa(NumaStat::Foreign)),
            ("numa_interleave", numa(NumaStat::InterleaveHit)),
            ("numa_local", numa(NumaStat::Local)),
            ("numa_other", numa(NumaStat::Other)),
            ("nr_anon_transparent_hugepages", st(ZoneStat::NrAnonThps)),
        ]
    }
}

impl Mm {
    /// The periodic per-CPU vmstat refresh (refresh_cpu_vm_stats with do_pagesets, from
    /// vmstat_update every `stat_interval`): folds the CPU's NR_FREE_PAGES diffs into the
    /// zones' counters; 6.x decays auto-tuned pcp `high` marks; both eras
    /// drain this CPU's pcp lists of remote-node zones a batch at a time once it has left them
    /// alone for three refreshes. Returns the number of changes.
    pub fn refresh_cpu_vm_stats(&mut self, cpu: usize) -> u32 {
        let mut changes = 0;
        let local = self.cpu_to_node[cpu];
        for zid in 0..self.zones.len() {
            if !self.zones[zid].populated() {
                continue;
            }
            {
                let pcp = &mut self.zones[zid].pcp[cpu];
                if std::mem::take(&mut pcp.stat_diff) {
                    pcp.expire = 3;
                }
            }
            self.fold_zone_freepage_diff(zid, cpu);
            if self.policy.pcp == super::policy::PcpPolicy::OrderListsAutotune {
                changes += self.decay_pcp_high(zid, cpu);
            }
            let node = self.zones[zid].node;
            let pcp = &mut self.zones[zid].pcp[cpu];
            if pcp.expire == 0 || pcp.count == 0 {
                continue;
            }
            if node == local {
                pcp.expire = 0;
                continue;
            }
            pcp.expire -= 1;
            if pcp.expire > 0 {
                changes += 1;
                continue;
            }
            self.drain_zone_pages(zid, cpu);
            changes += 1;
        }
        changes
    }
}

/// The per-CPU vmstat worker (vmstat_update): refreshes counters and pcp lists every
/// `stat_interval`.
#[derive(Debug)]
pub struct VmstatWorker {
    pub cpu: usize,
    pub interval_ns: u64,
    name: String,
}

impl VmstatWorker {
    pub fn new(cpu: usize, interval_ns: u64) -> VmstatWorker {
        VmstatWorker { cpu, interval_ns, name: format!("kworker/{cpu}:vmstat") }
    }
}

impl crate::sim::Task for VmstatWorker {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_workload(&self) -> bool {
        false
    }

    fn step(&mut self, cx: &mut crate::sim::TaskCx) -> crate::sim::Step {
        cx.mm.refresh_cpu_vm_stats(self.cpu);
        crate::sim::Step { user_ns: 0, system_ns: cx.mm.costs.vmstat_update_ns, after: crate::sim::After::Sleep(self.interval_ns) }
    }
}

/// 3.x zone->inactive_ratio for anon: int_sqrt(10 × GB), at least 1 (calculate_zone_inactive_ratio).
/// 3.x calculate_threshold: a zone's per-CPU counter drift allowed before folding, 2 ×
/// fls(CPUs) × (1 + fls(memory in 128 MB units)), at most 125.
pub fn stat_threshold_3x(present_pages: u64, cpus: u64) -> u64 {
    let fls = |x: u64| u64::from(64 - x.leading_zeros());
    let mem = (present_pages * super::PAGE_SIZE) >> 27;
    (2 * fls(cpus) * (1 + fls(mem))).min(125)
}

pub fn inactive_ratio(pages: u64) -> u64 {
    let gb = (pages * super::PAGE_SIZE) >> 30;
    if gb == 0 {
        1
    } else {
        crate::util::int_sqrt(10 * gb).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_lookup_round_trips() {
        let mut names: Vec<&str> = VmStat::ALL.iter().map(|v| v.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), NR_VMSTAT_ITEMS);
        assert_eq!(VmStat::from_name("pgalloc_dma32"), Some(VmStat::PgallocDma32));
        assert_eq!(VmStat::for_zone(VmStat::PgallocDma, ZoneType::Normal), VmStat::PgallocNormal);
        assert_eq!(VmStat::for_zone(VmStat::PgscanKswapdDma, ZoneType::Movable), VmStat::PgscanKswapdMovable);
        assert!(VmStat::KswapdSteal.in_era(Era::Linux3) && !VmStat::KswapdSteal.in_era(Era::Linux6));
    }
}
