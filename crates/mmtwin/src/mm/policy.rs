//! Era policies of the page allocator: every behaviour that differs between the kernels we model
//! is one small enum chosen by name, grouped into kernel profiles (`config::profile`).
//!
//! Names are kebab-case strings in scenario files; an unknown name is rejected with the list of
//! valid ones (serde's "unknown variant … expected one of …").

use serde::{Deserialize, Serialize};

/// How min/low/high watermarks are derived from min_free_kbytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WatermarkSetup {
    /// 3.x setup_per_zone_wmarks: low = min + min/4, high = min + min/2.
    MinQuarterHalf,
    /// 4.6+ __setup_per_zone_wmarks: gap = max(min/4, managed × watermark_scale_factor / 10000).
    ScaleFactor,
}

/// How zone_watermark_ok judges an order > 0 request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WatermarkCheck {
    /// 3.x: subtract the free pages of each lower order and halve the mark per order.
    OrderHalving,
    /// 4.x+/6.x: pass if any free list of order ≥ the request is non-empty (pcp types).
    FreeListPresence,
}

/// What __rmqueue_fallback steals when the requested migratetype's lists are empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FallbackPolicy {
    /// 3.x: the largest block first; move the whole pageblock's free pages when the block is at
    /// least half a pageblock or the request is reclaimable; relabel when ≥ half were moved.
    StealLargestHalfBlock,
    /// 6.x: steal_suitable_fallback counting free and "alike" pages, watermark boost,
    /// ALLOC_NOFRAGMENT, smallest-page fallback for movable requests that cannot claim a block.
    StealAlikeBoost,
}

/// Per-cpu page list organisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PcpPolicy {
    /// 3.x: order-0 only, one list per pcp migratetype, batch ≤ 31, high = 6 × batch,
    /// hot requests from the head, cold from the tail; drain round-robin with batch_free.
    Order0HotCold,
    /// 2.6.25–2.6.31 (before 5f8dcc21, which split the list per type in 2.6.32): order-0 only,
    /// ONE list per CPU and zone shared by every migratetype, each page's type in page_private
    /// (the requested type for a refill, the pageblock's for a free). batch and high as
    /// `order0-hot-cold`. An allocation searches the list for a page of its type, cold from
    /// the tail and hot from the head; when there is none it refills a batch (placed as
    /// `cold_refill` says) and takes the list's head, whatever its type. Hot frees go to the
    /// head, cold frees to the tail; an overflow frees a batch from the tail.
    Order0SingleList,
    /// 5.14–6.6 (read from 6.1): lists per (order ≤ 3, type) plus pageblock order; batch ≤ 63;
    /// a fixed high of the low watermark split over the node's CPUs (at least 4 batches),
    /// capped at 4 batches while kswapd has the zone ZONE_RECLAIM_ACTIVE; a refill is one batch
    /// (>> order); each drain in a run of frees without an allocation doubles (free_factor).
    OrderListsFixedHigh,
    /// 6.7+: lists per (order ≤ 3, type) plus pageblock order; batch ≤ 63; high auto-tuned between
    /// high_min and high_max; refill scaled by alloc_factor; drain list by list.
    OrderListsAutotune,
}

/// How rmqueue_bulk lays out a refill for a cold (__GFP_COLD) request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ColdRefill {
    /// Before e084b2d95e48: refills are always added with list_add after the previous page, so a
    /// cold request (taken from the tail) receives the batch in descending PFN order.
    ReversePfn,
    /// e084b2d95e48 (2.6.31 to 4.14): cold refills use list_add_tail so the tail yields
    /// ascending PFNs.
    PfnOrder,
    /// 4.15+: no cold hint; refills are added at the tail and every request takes the head.
    NoColdHint,
}

/// How the fallback zonelist is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZonelistPolicy {
    /// 3.x: the numa_zonelist_order sysctl chooses node or zone order ("default" decides by size).
    NumaZonelistOrder,
    /// 4.14+: node order only.
    NodeOrder,
}

/// The 2011 zonelist cache (ZLC) and where get_page_from_freelist sets it up; the variants of
/// the zlc-zone-reclaim seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZonelistCache {
    /// No zonelist cache (removed in 4.4).
    None,
    /// 3.0-rc6: zlc_setup only after the first zone was tried (including zone_reclaim), and a
    /// zone whose zone_reclaim returned FULL is marked full.
    Vanilla,
    /// cd38b115d5ad (patch 1): zlc_setup before the first zone_reclaim, re-check the cache for
    /// that zone, and mark a zone full only when a scan ran and the watermark still fails.
    Zlcfirst,
    /// Patches 1+2 (76d3fbf8fbf6): also clear the cache after direct reclaim makes progress
    /// (`Mm::zlc_clear_zones_full`).
    Zlcreconsider,
}

/// Which reclaimers may write dirty file pages (pageout), and what becomes of the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReclaimWriteback {
    /// 3.0: kswapd and direct reclaim both hand dirty pages to ->writepage, unless the queue
    /// is congested and the task lacks PF_SWAPWRITE.
    Vanilla,
    /// Mel Gorman's July 2011 "Reduce filesystem writeback from page reclaim", patches 1-7 as
    /// tested in the per-zone-dirty-limits seed (merged in 3.2): direct reclaim never writes
    /// file pages; kswapd only at priority < DEF_PRIORITY - 2; a skipped page gets PG_reclaim
    /// so it is freed as soon as the flusher has written it (nr_vmscan_immediate_reclaim, then
    /// called nr_vmscan_invalidate); reclaim waits (wait_iff_congested) when the isolated batch
    /// was mostly dirty.
    Lesskswapd,
    /// 6.x: only kswapd writes, only a page met twice (PG_reclaim) while its node is flagged
    /// PGDAT_DIRTY; other dirty file pages are activated with PG_reclaim.
    PgdatDirty,
}

/// When reclaim ages the active file list (shrink_list's treatment of LRU_ACTIVE_FILE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActiveFileAging {
    /// Rik van Riel's "evict use-once pages first" (56e49d21, 2.6.31) and every kernel since:
    /// the active file list's share of a pass is scanned only while the list is larger than
    /// the inactive one (inactive_file_is_low), so a streaming workload reclaims from the
    /// inactive list alone and leaves the active list (its working set) as it is.
    EvictOnce,
    /// Before 56e49d21 (2.6.28–2.6.30), and 2.6.32 with it reverted as in Mel Gorman's 2010
    /// bisection: the active file list is aged by its share of every pass.
    Proportional,
}

/// Whether page-cache allocations for writes (__GFP_WRITE) are spread by dirty limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyPlacement {
    /// 3.0: no; only the global limit throttles the dirtier.
    Global,
    /// Johannes Weiner's "mm: per-zone dirty limiting" v1 (July 2011), as tested in the seed:
    /// on every zonelist pass a __GFP_WRITE allocation skips a zone whose dirty + writeback
    /// pages exceed dirty_ratio of the zone's dirtyable memory; when every zone is over its
    /// limit the slow path first wakes the flushers for zones over their background limit and
    /// waits HZ/10 on congestion, before reclaim.
    Perzonedirty,
    /// 6.x: the same test per node (node_dirty_ok), on the fast path only (spread_dirty_pages).
    PerNode,
}

/// How reclaim and the allocator's retry loop wait for the disks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReclaimWait {
    /// 2.6.32: congestion_wait(BLK_RW_ASYNC, …) everywhere — before the allocator retries
    /// (HZ/50), in direct reclaim at priority < DEF_PRIORITY - 2 (HZ/10) and in kswapd (HZ/10,
    /// even when a zone is under its min watermark). It sleeps until a write queue drops below
    /// its congestion-off mark or the timeout passes, so with no writes it sleeps the timeout.
    CongestionWait,
    /// 2.6.37+ (Mel Gorman's wait_iff_congested, 0e093d99763e): direct reclaim and the retry
    /// loop sleep only if a write queue is congested and the zone met congestion; kswapd skips
    /// its nap while a zone is under its min watermark (kswapd_skip_congestion_wait).
    WaitIffCongested,
    /// 5.16+ (Mel Gorman's reclaim_throttle series, 8cd7c588decf): no congestion waits and no
    /// wait before the allocator retries; kswapd sleeps up to HZ/10 when it meets pages marked
    /// for immediate reclaim still under writeback (woken once enough writeback completes),
    /// direct reclaim a jiffy when kswapd found the node's dirty pages all congested or when it
    /// made no progress at priority 1.
    ReclaimThrottle,
}

/// Whether direct reclaim drains the per-cpu lists when the allocation after it fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReclaimDrain {
    /// 2.6.32 __alloc_pages_direct_reclaim: drain_all_pages() only for order > 0, before the
    /// retry; order-0 pages freed to other CPUs' lists (and the caller's own, below `high`)
    /// stay there, outside NR_FREE_PAGES.
    HighOrderOnly,
    /// 2.6.36+ (9ee493ce0a60): for any order, retry once after drain_all_pages().
    AnyOrder,
}

/// The gfp flags of readahead page allocations (page_cache_alloc_readahead).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadaheadGfp {
    /// 2.6.32: page_cache_alloc_cold (mapping gfp | __GFP_COLD): readahead may reclaim and
    /// retry like any allocation.
    Cold,
    /// 2.6.35+: __GFP_COLD | __GFP_NORETRY | __GFP_NOWARN — readahead gives up rather than
    /// retrying (the cold hint is ignored from 4.15).
    ColdNoretry,
}

/// What shrink_zone does with a list's share of a priority pass that is smaller than a batch
/// (SWAP_CLUSTER_MAX pages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScanBatch {
    /// 2.6.29–2.6.38 nr_scan_try_batch: the share (list size >> priority) is added to the
    /// list's nr_saved_scan in the zone's reclaim_stat, shared by kswapd and every direct
    /// reclaimer; nothing is scanned until the saved count reaches SWAP_CLUSTER_MAX, and then all
    /// of it is. On small lists a pass at DEF_PRIORITY scans nothing, so reclaim drops priority
    /// — below DEF_PRIORITY - 2 kswapd and direct reclaim take their congestion nap.
    SavedScan,
    /// 3.0 get_scan_count (246e87a93934, the memcg small-target fix that removed
    /// nr_saved_scan): each pass scans its share directly; kswapd scans SWAP_CLUSTER_MAX, split
    /// by the anon/file fraction, of a list whose share rounds to zero only in a zone whose
    /// lists together are small at this priority ((anon + file) >> priority below
    /// SWAP_CLUSTER_MAX, anon counted even without swap).
    ForceScanSmallZone,
    /// 3.1 get_scan_count (a4d3e9e76337): kswapd force-scans a list whose share rounds to zero
    /// in any zone.
    ForceScan,
    /// 6.x get_scan_count (read from 6.12): no force-scan; every reclaimer scans each list's
    /// share as it is, nothing where it rounds to zero (only an offline memcg's lists are
    /// scraped).
    NoForceScan,
}

/// The reserve that protects high-order atomic allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AtomicReserve {
    /// 2.6.32–3.x setup_zone_migrate_reserve: pageblocks labelled MIGRATE_RESERVE, used only
    /// when all other types fail; ⌈min_wmark / pageblock⌉ of them, at most two (78986a678f6,
    /// 2.6.32-rc1).
    MigrateReserve,
    /// 2.6.24–2.6.31: the same MIGRATE_RESERVE blocks without the cap of two, so a zone keeps
    /// ⌈min_wmark / pageblock⌉ of them (the kernel Christian Ehrhardt's bisection tested
    /// e084b2d95e48 in).
    MigrateReserveUncapped,
    /// 4.4+: MIGRATE_HIGHATOMIC blocks reserved on demand by high-order atomic allocations.
    Highatomic,
}

/// Which page count the watermark and reserve formulas use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageCountBasis {
    /// 3.x: zone->present_pages.
    Present,
    /// 3.14+: zone_managed_pages.
    Managed,
}

/// What lowmem_reserve a zone keeps against allocations whose highest zone is an empty one
/// (setup_per_zone_lowmem_reserve, 4.x+ form; 3.x has its own, see mm_init).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LowmemReserve {
    /// Up to 6.4: every higher zone index j gets managed pages of the zones up to j / ratio,
    /// empty zones included, so DMA stays protected from a movable page-cache allocation on a
    /// machine without a Normal zone (6.1: DMA protection (0, 190, 190, 190, 190) in a 256M
    /// guest).
    KeepEmpty,
    /// 6.5+ (96a5c186efff, "don't show protection in zone's ->lowmem_reserve[] for empty
    /// zone"): the entry of an empty higher zone is 0.
    ClearEmpty,
}

/// Where the LRU lists live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LruOwner {
    /// 2.6.28–4.7: one set of LRU lists per zone (zone->lruvec).
    PerZone,
    /// 4.8+: one set per node (pgdat->__lruvec), reclaim is node-based.
    PerNode,
}

/// How the block layer holds a submitter's I/O back so that adjacent bios become one request
/// before the device starts on them (plugging).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlkPlugPolicy {
    /// 2.6.32 queue plugging (blk_plug_device, read from 2.6.32 block/blk-core.c and
    /// elevator.c): a request that finds its queue empty plugs the queue, which holds back
    /// dispatch until 4 requests are queued (unplug_thresh), 3 ms have passed (unplug_delay),
    /// a request of the device completes (__blk_run_queue) or a task waits for the I/O
    /// (sync_page / sync_buffer, which a reader, a direct I/O and a journal commit always do).
    QueuePlug,
    /// 2.6.39–4.x on-stack plugging (blk_start_plug, read from 3.1): generic_writepages (ext2,
    /// ext3, xfs; not ext4's own writepages), write() (generic_file_aio_write: the writer's own
    /// writeback in balance_dirty_pages), the journal's commit and checkpoint batches,
    /// readahead and direct I/O collect their requests in the task's plug, merging each bio
    /// into any plugged request it touches; the plug is flushed into the queue, each request
    /// joining the back of a queued one that ends where it starts (ELEVATOR_INSERT_SORT_MERGE),
    /// when the plugging call ends, before the task sleeps, and before a 17th request
    /// (BLK_MAX_REQUEST_COUNT 16).
    TaskPlug,
    /// 5.x–6.x blk-mq plugging (read from 6.12): the flusher's whole writeback work
    /// (wb_writeback), readahead, direct I/O, reclaim's pageout (shrink_lruvec), swap
    /// readahead and the jbd2 commit plug; a bio tries only the latest plugged request of its
    /// queue; the plug is flushed before a 33rd request (BLK_MAX_REQUEST_COUNT 32) or once its
    /// last request reached 128 KiB (BLK_PLUG_FLUSH_SIZE).
    MqPlug,
}

/// Which slab shrinkers reclaim calls and how shrink_slab paces them (the inode and dentry
/// caches are the only shrinkable caches modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShrinkerPolicy {
    /// 2.6.x–3.0 (fs/dcache.c shrink_dcache_memory, fs/inode.c shrink_icache_memory,
    /// mm/vmscan.c shrink_slab, until the per-superblock series of 3.1): two global
    /// shrinkers, registered dcache first: shrink_dcache_memory over every unused dentry
    /// (prune_dcache takes from each superblock in proportion to its unused ones) and
    /// shrink_icache_memory over the one global inode LRU (prune_icache; approximated here by
    /// the same proportional split when there are several file systems, exact with one).
    /// shrink_slab hands each of them work in batches of SHRINK_BATCH (128) and keeps whatever
    /// is left over for the next call, capped only at twice the cache.
    GlobalCaches,
    /// 3.1+ (read from 3.1: per-superblock cache shrinkers): one shrinker per superblock
    /// (prune_super) that splits its batch of 1024 (s_shrink.batch) between the superblock's
    /// unused dentries and inodes; shrink_slab lets deferred work scan at most half the cache
    /// unless the call's own share is a quarter of it (3.1's guard against shrinker wind-up).
    /// 6.x keeps this form in the model (its priority-based share is not modelled).
    PerSuperblock,
}

/// What an unused inode's page cache does to its place on the inode LRU (fs/inode.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InodeLru {
    /// 2.6.x–5.15 (read from 3.1): the last iput puts the inode on the LRU, pages or not
    /// (referenced, as until 3.11; from 3.12's list_lru a new entry is not, which this policy
    /// does not model); the prune invalidates the clean pages of one it meets (inode steals)
    /// and, since the iput after that leaves it at the tail referenced, meets it again at once
    /// and moves it to the head (a second count).
    InvalidateCached,
    /// 5.16+ (read from 6.12, 51b8c1fe250d "vfs: keep inodes with page cache off the inode
    /// shrinker LRU"): an inode with page cache is not put on the LRU, and one met there with
    /// pages is taken off it (on a machine without highmem); the deletion of its last page
    /// from the cache puts it on (inode_add_lru). A newly added inode is not referenced
    /// (list_lru, 3.12+). Its pages go only through the page LRUs: no inode steals.
    CachedOffLru,
}

/// Whether SLUB's first, high-order try at a new slab may reclaim (allocate_slab).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlabHighOrder {
    /// 2.6.23–3.x: the try keeps the caller's reclaim bits with __GFP_NORETRY added: it wakes
    /// kswapd for its order and may run direct reclaim once before falling back.
    MayReclaim,
    /// 6.x (read from 6.12): a try above the fallback order by a caller that may reclaim drops
    /// __GFP_RECLAIM (no kswapd, no direct reclaim) and takes __GFP_NOMEMALLOC.
    NoReclaim,
}

/// Whose count of dirtied pages decides when balance_dirty_pages runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyRatelimit {
    /// 2.6.x–3.1 (3.0's balance_dirty_pages_ratelimited_nr): a per-CPU count
    /// (bdp_ratelimits) of the pages dirtied on that CPU by whichever task ran there; the task
    /// that brings it to ratelimit_pages (8 while the device is over its limit) zeroes it and
    /// enters balance_dirty_pages, so tasks sharing a CPU take turns being checked.
    PerCpu,
    /// 3.2+ (current->nr_dirtied): each task counts its own dirtied pages (with 3.1's
    /// balance_dirty_pages; the `io-less` throttle always counts this way).
    PerTask,
}

/// How a submitter gets a request when its queue's pool is used up (block/blk-core.c
/// get_request and get_request_wait; blk-mq's tags in 5.x–6.x).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestAlloc {
    /// 2.6.x–4.x request lists (read from 3.1): the allocation that fills the pool marks the
    /// queue full and makes its task a batcher; a task that finds the queue full sleeps in
    /// get_request_wait, exclusively, until a freed request wakes it (the longest waiter
    /// first) and then is a batcher too. A batcher may take up to BLK_BATCH_REQ (32)
    /// requests within BLK_BATCH_TIME (HZ/50) of its wakeup, past the full mark, up to half
    /// as many again as nr_requests.
    Batching,
    /// blk-mq (5.x–6.x): a request per free tag, no batches; a waiter sleeps until one is
    /// freed.
    Tags,
}

/// How balance_dirty_pages throttles a dirtier over the limits (mm/page-writeback.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BalanceDirtyPages {
    /// 2.6.x–3.0: the dirtier writes back a chunk of the device's dirty pages itself and
    /// sleeps 1 jiffy doubling to HZ/10 until dirty + writeback pages fall back under its
    /// limits or it has written its chunk.
    IoFull,
    /// 3.1 (Wu Fengguang's 3.1 writeback series; read from 3.1): `io-full` plus the max-pause
    /// area, where a dirtier throttled for more than MAX_PAUSE (200 ms) leaves once the
    /// machine is under its dirty threshold and the device under the midpoint of the task's
    /// and the device's limits.
    IoFullMaxPause,
    /// 3.2+ (143dfe8611a6, "writeback: IO-less balance_dirty_pages()"; read from 6.1): the
    /// dirtier never writes; it sleeps pages_dirtied / task_ratelimit, where task_ratelimit is
    /// the device's dirty_ratelimit (fed back every 200 ms from its estimated write bandwidth
    /// and dirtying rate) scaled by pos_ratio, a cubic of the dirty pages' distance from the
    /// setpoint halfway between the freerun ceiling and the limit. Below the freerun ceiling
    /// ((background + dirty threshold) / 2) nothing sleeps. Dirtied pages are counted per task
    /// (current->nr_dirtied against nr_dirtied_pause) with a per-CPU safety net
    /// (bdp_ratelimits against ratelimit_pages = dirty threshold at boot / (CPUs × 32)),
    /// whatever `dirty_ratelimit` says.
    IoLess,
}

/// How much of one inode's dirty pages background, periodic and reclaim-asked writeback writes
/// before it moves on to the next inode (fs/fs-writeback.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritebackChunk {
    /// 2.6.x–3.0: MAX_WRITEBACK_PAGES, 1024 pages (4 MiB) a pass, so that no inode holds
    /// I_SYNC for long.
    MaxWritebackPages,
    /// 3.1+ (1a12d8bd7b29, "writeback: scale IO chunk size up to half device bandwidth"; read
    /// from 3.1 and 6.12): writeback_chunk_size, half the device's write bandwidth a second,
    /// at most an eighth of the dirty threshold (DIRTY_SCOPE), rounded to 4 MiB.
    Bandwidth,
}

/// What kswapd does once balance_pgdat has balanced its node (mm/vmscan.c, kswapd()).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KswapdSleep {
    /// Up to 2.6.32 (read from a 2.6.32 tree): it goes to sleep on kswapd_wait at once, unless
    /// a wakeup meanwhile asked for a higher order (kswapd_max_order), and sleeps until an
    /// allocation that finds a zone below its low watermark wakes it (wakeup_kswapd).
    AtOnce,
    /// 2.6.33+ (Mel Gorman's "vmscan: have kswapd sleep for a short interval and double check
    /// it should be asleep", December 2009; read from 3.1 and 6.12): kswapd_try_to_sleep goes
    /// on balancing if a zone is below its high watermark again (sleeping_prematurely), else
    /// naps HZ/10, checks once more and only then sleeps; counted in
    /// kswapd_low_wmark_hit_quickly and kswapd_high_wmark_hit_quickly.
    Nap,
}

/// How the per-CPU vmstat counters of NR_FREE_PAGES are bounded while kswapd works (mm/vmstat.c).
/// In every era each CPU keeps its changes to a zone's NR_FREE_PAGES in a diff folded into the
/// zone's counter once it would pass the zone's stat_threshold (2 × fls(CPUs) × (1 + fls(zone
/// size in 128 MiB)), at most 125) and every second by vmstat_update; the watermark checks read
/// the folded counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VmstatThreshold {
    /// Up to 2.6.35: the threshold is fixed, and kswapd reads the folded counter like every
    /// other watermark check.
    Fixed,
    /// 2.6.36+ (aa45484031dd, "calculate a better estimate of NR_FREE_PAGES when memory is low
    /// and kswapd is awake") and 2.6.37+ (88f5acf88ae6, "adjust the per-cpu counter threshold
    /// when memory is low"): kswapd's checks (zone_watermark_ok_safe) add up the CPUs' diffs
    /// when the folded counter is below the zone's percpu_drift_mark, and while kswapd is
    /// awake its node's zones fold at the pressure threshold, (low − min) / CPUs (1..125).
    KswapdPressure,
}

/// How a device's share of the dirty threshold follows its share of recent writeback
/// completions (bdi_writeout_fraction / wb_calc_thresh, mm/page-writeback.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteoutFraction {
    /// 2.6.24–3.4 (lib/proportions.c): the history halves every half period of
    /// 2^(calc_period_shift − 1) completions, between one and two dirty thresholds as set at
    /// boot; a device's fraction is over that half period plus the current one's completions,
    /// so a device without recent completions (even a machine's only one) needs a few half
    /// periods of its writes to approach the whole (the model starts every device with an
    /// equal share, see `page_writeback_init`). The 2.6.24–3.1 throttle also lowers a task's
    /// limit by up to 1/8 by its share of recently dirtied pages, counted the same way.
    Proportions,
    /// 3.5+ (Jan Kara's "block: Convert BDI proportion calculations to flexible proportions";
    /// read from 6.12, lib/flex_proportions.c): the history halves every 3 s while completions
    /// go on; a device's fraction is over all recent completions, so a machine's only device
    /// has all of the threshold.
    FlexProportions,
}

/// The memory manager's era policies, resolved (every field set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MmPolicy {
    pub watermark_setup: WatermarkSetup,
    pub watermark_check: WatermarkCheck,
    pub fallback: FallbackPolicy,
    pub pcp: PcpPolicy,
    pub cold_refill: ColdRefill,
    pub zonelist: ZonelistPolicy,
    pub atomic_reserve: AtomicReserve,
    pub zonelist_cache: ZonelistCache,
    pub lru_owner: LruOwner,
    pub page_count_basis: PageCountBasis,
    pub reclaim_writeback: ReclaimWriteback,
    pub dirty_placement: DirtyPlacement,
    pub reclaim_wait: ReclaimWait,
    pub reclaim_drain: ReclaimDrain,
    pub readahead_gfp: ReadaheadGfp,
    pub scan_batch: ScanBatch,
    pub lowmem_reserve: LowmemReserve,
    pub blk_plug: BlkPlugPolicy,
    pub request_alloc: RequestAlloc,
    pub shrinker: ShrinkerPolicy,
    pub inode_lru: InodeLru,
    pub slab_high_order: SlabHighOrder,
    pub dirty_ratelimit: DirtyRatelimit,
    pub balance_dirty_pages: BalanceDirtyPages,
    pub writeback_chunk: WritebackChunk,
    pub vmstat_threshold: VmstatThreshold,
    pub writeout_fraction: WriteoutFraction,
    pub kswapd_sleep: KswapdSleep,
    /// buddy_merge_likely (both eras): free a block to the list tail when its parent's buddy is
    /// free, so it stays free long enough to merge.
    pub merge_tail_heuristic: bool,
    /// deactivate_page (2.6.39+, 3.x lru_deactivate_fn; 6.x deactivate_file_folio): a page
    /// invalidate_mapping_pages could not free (dirty, under writeback, buffers held) goes to
    /// its inactive list, at the tail if clean, else at the head with PG_reclaim. Before
    /// 2.6.39 such a page is left where it is.
    pub deactivate_invalidated: bool,
    pub active_file_aging: ActiveFileAging,
}

impl MmPolicy {
    /// Linux 3.0 (July 2011). The 3.1 writeback (`io-full-max-pause`, `bandwidth` chunks) is
    /// selectable by policy name.
    pub const LINUX_3_0: MmPolicy = MmPolicy {
        watermark_setup: WatermarkSetup::MinQuarterHalf,
        watermark_check: WatermarkCheck::OrderHalving,
        fallback: FallbackPolicy::StealLargestHalfBlock,
        pcp: PcpPolicy::Order0HotCold,
        cold_refill: ColdRefill::PfnOrder,
        zonelist: ZonelistPolicy::NumaZonelistOrder,
        atomic_reserve: AtomicReserve::MigrateReserve,
        zonelist_cache: ZonelistCache::Vanilla,
        lru_owner: LruOwner::PerZone,
        page_count_basis: PageCountBasis::Present,
        reclaim_writeback: ReclaimWriteback::Vanilla,
        dirty_placement: DirtyPlacement::Global,
        reclaim_wait: ReclaimWait::WaitIffCongested,
        reclaim_drain: ReclaimDrain::AnyOrder,
        readahead_gfp: ReadaheadGfp::ColdNoretry,
        scan_batch: ScanBatch::ForceScanSmallZone,
        lowmem_reserve: LowmemReserve::KeepEmpty,
        blk_plug: BlkPlugPolicy::TaskPlug,
        request_alloc: RequestAlloc::Batching,
        shrinker: ShrinkerPolicy::GlobalCaches,
        inode_lru: InodeLru::InvalidateCached,
        slab_high_order: SlabHighOrder::MayReclaim,
        dirty_ratelimit: DirtyRatelimit::PerCpu,
        balance_dirty_pages: BalanceDirtyPages::IoFull,
        writeback_chunk: WritebackChunk::MaxWritebackPages,
        vmstat_threshold: VmstatThreshold::KswapdPressure,
        writeout_fraction: WriteoutFraction::Proportions,
        kswapd_sleep: KswapdSleep::Nap,
        merge_tail_heuristic: true,
        deactivate_invalidated: true,
        active_file_aging: ActiveFileAging::EvictOnce,
    };

    /// Linux 2.6.32 (December 2009, the pcp-cold-pfn-order seed's kernel): the 3.0 mechanisms
    /// without what arrived in 2.6.33–3.0 that this model distinguishes — congestion_wait
    /// instead of wait_iff_congested, no pcp drain after order-0 direct reclaim, readahead
    /// without __GFP_NORETRY, no buddy tail-merge heuristic (6dda9d55bf54, 2.6.35), scan
    /// shares saved up to a batch (nr_saved_scan, until 2.6.39), queue plugging (per-task
    /// plugs came in 2.6.39), fixed vmstat thresholds (2.6.36–37 added kswapd's), a kswapd
    /// that sleeps at once when its node is balanced (the nap came in 2.6.33), and no
    /// deactivation of the pages invalidate_mapping_pages leaves (2.6.39). It includes
    /// e084b2d95e48 (2.6.31), so cold refills keep PFN order.
    pub const LINUX_2_6_32: MmPolicy = MmPolicy {
        reclaim_wait: ReclaimWait::CongestionWait,
        scan_batch: ScanBatch::SavedScan,
        reclaim_drain: ReclaimDrain::HighOrderOnly,
        readahead_gfp: ReadaheadGfp::Cold,
        blk_plug: BlkPlugPolicy::QueuePlug,
        vmstat_threshold: VmstatThreshold::Fixed,
        kswapd_sleep: KswapdSleep::AtOnce,
        merge_tail_heuristic: false,
        deactivate_invalidated: false,
        ..MmPolicy::LINUX_3_0
    };

    /// Linux 6.x (read from 6.12).
    pub const LINUX_6_X: MmPolicy = MmPolicy {
        watermark_setup: WatermarkSetup::ScaleFactor,
        watermark_check: WatermarkCheck::FreeListPresence,
        fallback: FallbackPolicy::StealAlikeBoost,
        pcp: PcpPolicy::OrderListsAutotune,
        cold_refill: ColdRefill::NoColdHint,
        zonelist: ZonelistPolicy::NodeOrder,
        atomic_reserve: AtomicReserve::Highatomic,
        zonelist_cache: ZonelistCache::None,
        lru_owner: LruOwner::PerNode,
        page_count_basis: PageCountBasis::Managed,
        reclaim_writeback: ReclaimWriteback::PgdatDirty,
        dirty_placement: DirtyPlacement::PerNode,
        reclaim_wait: ReclaimWait::ReclaimThrottle,
        reclaim_drain: ReclaimDrain::AnyOrder,
        readahead_gfp: ReadaheadGfp::ColdNoretry,
        scan_batch: ScanBatch::NoForceScan,
        lowmem_reserve: LowmemReserve::ClearEmpty,
        blk_plug: BlkPlugPolicy::MqPlug,
        request_alloc: RequestAlloc::Tags,
        shrinker: ShrinkerPolicy::PerSuperblock,
        inode_lru: InodeLru::CachedOffLru,
        slab_high_order: SlabHighOrder::NoReclaim,
        dirty_ratelimit: DirtyRatelimit::PerTask,
        balance_dirty_pages: BalanceDirtyPages::IoLess,
        writeback_chunk: WritebackChunk::Bandwidth,
        vmstat_threshold: VmstatThreshold::KswapdPressure,
        writeout_fraction: WriteoutFraction::FlexProportions,
        kswapd_sleep: KswapdSleep::Nap,
        merge_tail_heuristic: true,
        deactivate_invalidated: true,
        active_file_aging: ActiveFileAging::EvictOnce,
    };

    /// Linux 6.1 (Debian 12's kernel, the oracle's): 6.x with what 6.2–6.12 changed that this
    /// model distinguishes — lowmem_reserve entries of empty zones are still set, and the pcp
    /// lists have a fixed high mark (auto-tuning came in 6.7).
    pub const LINUX_6_1: MmPolicy = MmPolicy {
        lowmem_reserve: LowmemReserve::KeepEmpty,
        pcp: PcpPolicy::OrderListsFixedHigh,
        ..MmPolicy::LINUX_6_X
    };
}

/// numa_zonelist_order (3.x sysctl / boot parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NumaZonelistOrder {
    Default,
    Node,
    Zone,
}
