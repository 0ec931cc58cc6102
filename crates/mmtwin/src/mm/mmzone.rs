//! Zones, nodes, free areas, per-cpu page sets and pageblock flags (include/linux/mmzone.h,
//! include/linux/pageblock-flags.h).

use super::mm_types::ListHead;
use super::{Pfn, NR_PAGE_ORDERS, PAGE_ALLOC_COSTLY_ORDER};

/// Zone types in kernel order (enum zone_type, x86_64, no HIGHMEM).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ZoneType {
    Dma = 0,
    Dma32 = 1,
    Normal = 2,
    Movable = 3,
}

/// Number of zone types per node.
pub const MAX_NR_ZONES: usize = 4;

impl ZoneType {
    pub const ALL: [ZoneType; MAX_NR_ZONES] =
        [ZoneType::Dma, ZoneType::Dma32, ZoneType::Normal, ZoneType::Movable];

    /// The name /proc prints ("DMA", "DMA32", "Normal", "Movable").
    pub fn name(self) -> &'static str {
        match self {
            ZoneType::Dma => "DMA",
            ZoneType::Dma32 => "DMA32",
            ZoneType::Normal => "Normal",
            ZoneType::Movable => "Movable",
        }
    }

    pub fn from_index(i: usize) -> ZoneType {
        ZoneType::ALL[i]
    }
}

/// Migratetypes. The internal numbering follows 6.x for the three per-cpu types; the 3.x
/// numbering (RECLAIMABLE before MOVABLE) only matters for output and for the order in which
/// 3.x drains per-cpu lists, and is handled where it matters.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MigrateType {
    Unmovable = 0,
    Movable = 1,
    Reclaimable = 2,
    /// 6.x MIGRATE_HIGHATOMIC (4.4+).
    HighAtomic = 3,
    /// 3.x MIGRATE_RESERVE (removed in 4.4).
    Reserve = 4,
    Isolate = 5,
}

/// Number of free lists per order.
pub const MIGRATE_TYPES: usize = 6;
/// The types that have per-cpu lists.
pub const MIGRATE_PCPTYPES: usize = 3;

impl MigrateType {
    pub const ALL: [MigrateType; MIGRATE_TYPES] = [
        MigrateType::Unmovable,
        MigrateType::Movable,
        MigrateType::Reclaimable,
        MigrateType::HighAtomic,
        MigrateType::Reserve,
        MigrateType::Isolate,
    ];

    #[inline(always)]
    pub fn from_u8(v: u8) -> MigrateType {
        MigrateType::ALL[v as usize]
    }

    /// The name /proc/pagetypeinfo prints.
    pub fn name(self) -> &'static str {
        match self {
            MigrateType::Unmovable => "Unmovable",
            MigrateType::Movable => "Movable",
            MigrateType::Reclaimable => "Reclaimable",
            MigrateType::HighAtomic => "HighAtomic",
            MigrateType::Reserve => "Reserve",
            MigrateType::Isolate => "Isolate",
        }
    }

    /// Whether this type has per-cpu lists.
    #[inline(always)]
    pub fn is_pcptype(self) -> bool {
        (self as usize) < MIGRATE_PCPTYPES
    }
}

/// One order's free lists (struct free_area).
#[derive(Clone, Debug, Default)]
pub struct FreeArea {
    pub free_list: [ListHead; MIGRATE_TYPES],
    /// Number of free blocks of this order, all types.
    pub nr_free: u64,
}

/// Per-cpu lists: 3.x uses one order-0 list per pcp type; 6.x one list per (order ≤ 3, type)
/// plus one for pageblock-order (THP) pages.
pub const NR_PCP_LISTS: usize = MIGRATE_PCPTYPES * (PAGE_ALLOC_COSTLY_ORDER + 1) + 1;

/// The pcp list index of (order, migratetype) (order_to_pindex, 6.x).
#[inline(always)]
pub fn order_to_pindex(mt: usize, order: usize) -> usize {
    if order > PAGE_ALLOC_COSTLY_ORDER {
        MIGRATE_PCPTYPES * (PAGE_ALLOC_COSTLY_ORDER + 1)
    } else {
        MIGRATE_PCPTYPES * order + mt
    }
}

/// The order of the pages on pcp list `pindex` (pindex_to_order).
#[inline(always)]
pub fn pindex_to_order(pindex: usize, pageblock_order: usize) -> usize {
    if pindex == MIGRATE_PCPTYPES * (PAGE_ALLOC_COSTLY_ORDER + 1) {
        pageblock_order
    } else {
        pindex / MIGRATE_PCPTYPES
    }
}

/// One CPU's page cache for one zone (struct per_cpu_pages).
#[derive(Clone, Debug, Default)]
pub struct PerCpuPages {
    /// Pages on the lists (6.x counts base pages of all orders).
    pub count: u32,
    /// Drain threshold.
    pub high: u32,
    /// 6.x auto-tuning bounds of `high`.
    pub high_min: u32,
    pub high_max: u32,
    /// Refill and drain chunk.
    pub batch: u32,
    /// 6.7+: pages freed in a row without an allocation (drives larger drains).
    pub free_count: u32,
    /// 6.7+: refills double while allocations continue without frees.
    pub alloc_factor: u8,
    /// 5.14–6.6: drains double while frees continue without allocations.
    pub free_factor: u8,
    /// 6.x PCPF_* bits.
    pub flags: u8,
    /// Refresh rounds left before a remote zone's pcp is drained (NUMA `expire`, 3 when this
    /// CPU changed the zone's counters since the last refresh).
    pub expire: u8,
    /// This CPU changed the zone's NR_FREE_PAGES since the last vmstat refresh (a non-zero
    /// vm_stat_diff).
    pub stat_diff: bool,
    pub lists: [ListHead; NR_PCP_LISTS],
}

/// PCPF_PREV_FREE_HIGH_ORDER: the previous free on this pcp was of a high order.
pub const PCPF_PREV_FREE_HIGH_ORDER: u8 = 1;
/// PCPF_FREE_HIGH_BATCH: freeing high orders in batches.
pub const PCPF_FREE_HIGH_BATCH: u8 = 2;

/// Watermark indexes (enum zone_watermarks).
pub const WMARK_MIN: usize = 0;
pub const WMARK_LOW: usize = 1;
pub const WMARK_HIGH: usize = 2;
pub const WMARK_PROMO: usize = 3;
pub const NR_WMARK: usize = 4;

/// Zone flag bits (enum zone_flags).
pub const ZONE_BOOSTED_WATERMARK: u32 = 1 << 0;
pub const ZONE_RECLAIM_ACTIVE: u32 = 1 << 1;
pub const ZONE_BELOW_HIGH: u32 = 1 << 2;

/// Per-zone page state counters (enum zone_stat_item, 3.x; 6.x keeps most per node and the
/// node figure is the sum over its zones here). /proc/vmstat sums them over all zones.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneStat {
    NrFilePages = 0,
    NrAnonPages,
    NrFileMapped,
    NrFileDirty,
    NrWriteback,
    NrSlabReclaimable,
    NrSlabUnreclaimable,
    NrIsolatedAnon,
    NrIsolatedFile,
    NrShmem,
    NrDirtied,
    NrWritten,
    NrVmscanWrite,
    NrVmscanImmediate,
    /// NR_PAGETABLE: page-table pages (a node item in 6.x, summed the same way).
    NrPageTable,
    /// NR_ANON_TRANSPARENT_HUGEPAGES (6.x NR_ANON_THPS): huge pages mapped anonymously, one
    /// each (their base pages count in NR_ANON_PAGES too).
    NrAnonThps,
}

/// Number of zone stat items.
pub const NR_ZONE_STAT_ITEMS: usize = 16;

/// A zone (struct zone).
#[derive(Clone, Debug)]
pub struct Zone {
    /// Index of this zone in `Mm::zones` (node-major: node * MAX_NR_ZONES + zone type).
    pub id: usize,
    pub node: usize,
    pub zone_type: ZoneType,
    pub zone_start_pfn: Pfn,
    /// Pages spanned including holes.
    pub spanned_pages: u64,
    /// Pages with memory behind them.
    pub present_pages: u64,
    /// Present pages minus boot reservations.
    pub managed_pages: u64,
    /// min, low, high, promo (6.x) in pages, before the boost.
    pub watermark: [u64; NR_WMARK],
    /// 6.x watermark boost after fragmenting fallbacks.
    pub watermark_boost: u64,
    /// Pages an allocation whose highest usable zone is `j` must leave free here.
    pub lowmem_reserve: [u64; MAX_NR_ZONES],
    pub free_area: [FreeArea; NR_PAGE_ORDERS],
    /// NR_FREE_PAGES: pages on the buddy lists (not pcp), exactly: what the CPUs' counters
    /// add up to (zone_page_state_snapshot). What the kernel's readers see is
    /// `nr_free_pages_vmstat()`.
    pub nr_free_pages: i64,
    /// The part of `nr_free_pages` still in the CPUs' `free_diff`s (their sum).
    pub free_diff_sum: i64,
    /// Each CPU's part of NR_FREE_PAGES not yet folded into the zone's counter (the
    /// NR_FREE_PAGES entry of its pageset's vm_stat_diff; kept apart from `pcp` so that the
    /// per-cpu lists' hot fields keep their layout).
    pub free_diff: Vec<i32>,
    /// The per-CPU counter threshold (the pagesets' stat_threshold): a CPU's diff is folded
    /// into the zone's counter when a change would take it beyond ± this.
    pub stat_threshold: i32,
    /// 2.6.36+ percpu_drift_mark: below this folded NR_FREE_PAGES kswapd's watermark checks
    /// sum the CPUs' diffs (0: the drift can never hide the min watermark).
    pub percpu_drift_mark: i64,
    /// 6.x nr_reserved_highatomic.
    pub nr_reserved_highatomic: u64,
    /// One per CPU of the machine.
    pub pcp: Vec<PerCpuPages>,
    /// ZONE_* flag bits.
    pub flags: u32,
    /// zone->contiguous: every pageblock of the span is present and in this zone.
    pub contiguous: bool,
    /// Page state counters (vm_stat).
    pub vm_stat: [i64; NR_ZONE_STAT_ITEMS],
    /// 3.x zone->pages_scanned: pages scanned since a page was last freed to this zone.
    pub pages_scanned: u64,
    /// 3.x zone->all_unreclaimable: reclaim scanned six times the reclaimable pages in vain.
    pub all_unreclaimable: bool,
    /// ZONE_RECLAIM_LOCKED, as a time: a zone_reclaim runs on this zone until this simulated
    /// time (ns). A step's reclaim is done at once in the model but takes the CPU time it is
    /// charged, so another task's step that begins before that time has passed finds the bit
    /// still set.
    pub reclaim_locked_until: u64,
    /// ZONE_CONGESTED: reclaim met only congested queues when writing dirty pages here.
    pub congested: bool,
    /// The zone's NUMA counters (zone_statistics), indexed by `NumaStat`.
    pub numa_stat: [u64; NR_NUMA_STAT_ITEMS],
}

/// The per-zone NUMA counters, in the kernel's order (NUMA_HIT .. NUMA_OTHER).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumaStat {
    Hit = 0,
    Miss,
    Foreign,
    InterleaveHit,
    Local,
    Other,
}

/// Number of per-zone NUMA counters.
pub const NR_NUMA_STAT_ITEMS: usize = 6;

impl Zone {
    /// NR_FREE_PAGES as zone_page_state() reads it: the zone's counter without what the CPUs
    /// have not folded into it yet (it may lag the free lists by up to CPUs × stat_threshold
    /// pages either way).
    #[inline(always)]
    pub fn nr_free_pages_vmstat(&self) -> i64 {
        self.nr_free_pages - self.free_diff_sum
    }

    /// Whether the zone has any present pages (populated_zone).
    #[inline(always)]
    pub fn populated(&self) -> bool {
        self.present_pages > 0
    }

    /// One past the last pfn spanned.
    #[inline(always)]
    pub fn zone_end_pfn(&self) -> Pfn {
        self.zone_start_pfn + self.spanned_pages as Pfn
    }

    /// Whether `pfn` lies in this zone's span (zone_spans_pfn).
    #[inline(always)]
    pub fn spans(&self, pfn: Pfn) -> bool {
        pfn >= self.zone_start_pfn && pfn < self.zone_end_pfn()
    }

    /// The watermark `w` plus the boost (wmark_pages).
    #[inline(always)]
    pub fn wmark_pages(&self, w: usize) -> u64 {
        self.watermark[w] + self.watermark_boost
    }

    pub fn min_wmark_pages(&self) -> u64 {
        self.wmark_pages(WMARK_MIN)
    }
    pub fn low_wmark_pages(&self) -> u64 {
        self.wmark_pages(WMARK_LOW)
    }
    pub fn high_wmark_pages(&self) -> u64 {
        self.wmark_pages(WMARK_HIGH)
    }

    /// A page state counter (zone_page_state).
    #[inline(always)]
    pub fn page_state(&self, item: ZoneStat) -> u64 {
        self.vm_stat[item as usize].max(0) as u64
    }
}

/// A node (pg_data_t).
#[derive(Clone, Debug)]
pub struct PglistData {
    pub node_id: usize,
    /// The first zone id of this node in `Mm::zones`.
    pub first_zone: usize,
    pub node_start_pfn: Pfn,
    pub node_spanned_pages: u64,
    pub node_present_pages: u64,
    /// CPUs of this node (global cpu ids).
    pub cpus: Vec<usize>,
    /// The fallback zonelist: zone ids in the order an allocation tries them.
    pub zonelist: Vec<usize>,
    /// The __GFP_THISNODE zonelist (6.x ZONELIST_NOFALLBACK).
    pub zonelist_nofallback: Vec<usize>,
    /// The first zone of `zonelist` usable with each highest zone index (first_zones_zonelist),
    /// and the same for `zonelist_nofallback`; computed when the zonelists are built.
    pub preferred: [Option<usize>; MAX_NR_ZONES],
    pub preferred_nofallback: [Option<usize>; MAX_NR_ZONES],
    /// kswapd's request: the highest order asked for since it last ran.
    pub kswapd_order: usize,
    /// kswapd's request: the highest zone index asked for (classzone_idx / highest_zoneidx).
    pub kswapd_highest_zoneidx: usize,
    /// kswapd has been woken and not yet run.
    pub kswapd_wait_pending: bool,
    /// 6.x per-node totalreserve_pages (Σ over its zones).
    pub totalreserve_pages: u64,
    /// The 3.x zonelist cache of `zonelist` (struct zonelist_cache).
    pub zlc: ZonelistCacheData,
    /// 6.x kswapd_failures: balance runs in a row that reclaimed nothing.
    pub kswapd_failures: u32,
    /// 6.x PGDAT_DIRTY: reclaim is meeting dirty pages the flushers have not queued.
    pub pgdat_dirty: bool,
    /// 6.x PGDAT_WRITEBACK: everything kswapd isolated in a pass was under writeback.
    pub pgdat_writeback: bool,
    /// 6.x LRUVEC_CONGESTED (the node's lruvec): kswapd found every dirty page it met under
    /// writeback and already marked for immediate reclaim.
    pub lruvec_congested: bool,
    /// 5.16+ reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK): tasks waiting, the written-page count
    /// when the first began (nr_reclaim_start), pages whose writeback ended while any waited
    /// (NR_THROTTLED_WRITTEN), and the wait queue (reclaim_wait[WRITEBACK]).
    pub nr_writeback_throttled: u32,
    pub nr_reclaim_start: u64,
    pub throttled_written: u64,
    pub reclaim_wait_writeback: usize,
}

/// struct zonelist_cache: which zonelist entries were recently found full, and when the bitmap
/// was last cleared. (z_to_n is derived from the zone ids.)
#[derive(Clone, Debug, Default)]
pub struct ZonelistCacheData {
    pub fullzones: Vec<bool>,
    /// Simulated time of the last clearing (last_full_zap, in ns rather than jiffies).
    pub last_full_zap_ns: u64,
}

/// The LRU lists (enum lru_list), in kernel order.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LruList {
    InactiveAnon = 0,
    ActiveAnon = 1,
    InactiveFile = 2,
    ActiveFile = 3,
    Unevictable = 4,
}

/// Number of LRU lists.
pub const NR_LRU_LISTS: usize = 5;

impl LruList {
    pub const ALL: [LruList; NR_LRU_LISTS] =
        [LruList::InactiveAnon, LruList::ActiveAnon, LruList::InactiveFile, LruList::ActiveFile, LruList::Unevictable];

    /// Returns true for the two file lists (is_file_lru).
    pub fn is_file(self) -> bool {
        matches!(self, LruList::InactiveFile | LruList::ActiveFile)
    }

    /// Returns true for the two active lists (is_active_lru).
    pub fn is_active(self) -> bool {
        matches!(self, LruList::ActiveAnon | LruList::ActiveFile)
    }
}

/// Recent reclaim history of one lruvec (struct zone_reclaim_stat): index 0 anon, 1 file.
/// get_scan_count balances anon against file scanning by rotated / scanned.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReclaimStat {
    pub recent_rotated: [u64; 2],
    pub recent_scanned: [u64; 2],
    /// 2.6.29–2.6.38 nr_saved_scan[lru]: scan shares deposited until they make a batch
    /// (`ScanBatch::SavedScan`), indexed like `LruList`.
    pub nr_saved_scan: [u64; NR_LRU_LISTS],
}

/// One set of LRU lists (struct lruvec): per zone in 3.x, per node in 6.x.
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    pub lists: [ListHead; NR_LRU_LISTS],
    pub reclaim_stat: ReclaimStat,
}

impl Lruvec {
    /// Pages on list `lru` (lruvec_lru_size).
    pub fn size(&self, lru: LruList) -> u64 {
        self.lists[lru as usize].len as u64
    }
}

/// Pageblock flag bits: bits 0..2 migratetype, bit 3 PB_migrate_skip.
pub const PB_MIGRATETYPE_MASK: u8 = 0x7;
pub const PB_MIGRATE_SKIP: u8 = 0x8;
