//! The page allocator (mm/page_alloc.c): the buddy free lists with split and merge, pageblock
//! migratetypes and stealing, per-cpu lists, watermarks and lowmem_reserve, and the zonelist walk.
//!
//! Each function models the kernel function of the same name; the era-dependent ones dispatch on
//! `MmPolicy` (see `policy.rs`). Work done is charged to `Mm::cost_ns` from the cost table, so
//! the time an allocation takes comes out of what it did.

use super::gfp::*;
use super::mm_types::{list_add, list_add_after, list_add_before, list_add_tail, list_del, Page, PageState, NIL};
use super::mmzone::*;
use super::policy::*;
use super::vmscan::ZoneReclaim;
use super::vmstat::{Era, VmEvents, VmStat};
use super::{Pfn, PAGE_ALLOC_COSTLY_ORDER};
use crate::config::sysctl::VmSysctl;
use crate::sim::cost::CostTable;

/// The physical memory of the simulated machine and the allocator's state.
#[derive(Clone, Debug)]
pub struct Mm {
    /// Every page frame, indexed by pfn (holes included).
    pub pages: Vec<Page>,
    /// Pageblock flags, indexed by pfn >> pageblock_order.
    pub pageblock_flags: Vec<u8>,
    /// Zones, node-major: zone id = node * MAX_NR_ZONES + zone type. Empty zones are kept.
    pub zones: Vec<Zone>,
    pub nodes: Vec<PglistData>,
    /// The node of each CPU.
    pub cpu_to_node: Vec<usize>,
    pub events: VmEvents,
    pub policy: MmPolicy,
    pub era: Era,
    /// The highest buddy order of this machine's arch and era (`Arch::max_page_order`).
    pub max_order: usize,
    /// The pageblock order of this machine's arch (`Arch::pageblock_order`).
    pub pageblock_order: usize,
    pub sysctl: VmSysctl,
    /// min_free_kbytes in effect (computed unless the scenario set it).
    pub min_free_kbytes: u64,
    /// Σ over zones of min(managed, max lowmem_reserve + high wmark) (calculate_totalreserve_pages).
    pub totalreserve_pages: u64,
    /// Mobility grouping is off on tiny machines (build_all_zonelists).
    pub page_group_by_mobility_disabled: bool,
    pub costs: CostTable,
    /// Simulated CPU time charged by the allocator since the caller last took it.
    pub cost_ns: u64,
    /// Nodes whose kswapd was woken and not yet told (drained by the engine).
    pub kswapd_wakeups: Vec<usize>,
    /// The scheduler's state as the engine keeps it (which CPUs are busy, whether a woken
    /// kswapd preempts the running step).
    pub sched: crate::sim::sched::SchedState,
    /// NUMA distances (node_distance).
    pub distance: Vec<Vec<u32>>,
    /// Simulated time, kept current by the engine (the allocator's `jiffies`).
    pub now_ns: u64,
    /// LRU lists: one lruvec per zone (3.x) or per node (6.x); see `page_lruvec`.
    pub lruvecs: Vec<Lruvec>,
    /// Page cache address spaces; id i + 1 is `mappings[i]`.
    pub mappings: Vec<super::filemap::AddressSpace>,
    /// Address space ids free for reuse.
    pub free_mappings: Vec<u32>,
    /// Sleep the current task owes after its step (dirty throttling pauses and reclaim
    /// throttling inside the kernel), each already ended at its tick (`schedule_timeout_ns`);
    /// the engine turns it into a sleep.
    pub sleep_ns: u64,
    /// The congestion_wait the current task owes after its step: its timeout (already ended
    /// at its tick; summed if it waited more than once) and its first caller. The engine puts
    /// the task on `congestion_wqh` until a freed request wakes it or the timeout passes, and
    /// credits the time slept to the caller.
    pub congestion_sleep: Option<(u64, super::vmscan::CongestionSite)>,
    /// The wait for a free request the current task owes after its step: a writer whose bio
    /// found its device's request pool used up sleeps in get_request_wait holding it
    /// (`Mm::submit_bio_or_sleep`). The engine puts the task on that exclusive queue unless it
    /// owes a sleep as well (then its bio is queued at once).
    pub rq_wait_owed: Option<usize>,
    /// current->backing_dev_info: the device of the file the running task is writing with a
    /// buffered write() (__generic_file_aio_write sets it for the whole call), whose congested
    /// queue reclaim may still write to (may_write_to_queue).
    pub current_bdi: Option<usize>,
    /// Each task's block-layer io_context (by pid): its request batch after a wait for a
    /// request (`request_alloc = "batching"`).
    pub iocs: Vec<crate::block::IoContext>,
    /// The bio each task (by pid) holds across get_request_wait (`submit_bio_or_sleep`).
    pub held_bio: Vec<Option<crate::block::HeldBio>>,
    /// Set while a caller that can stop and retry after a sleep allocates
    /// (`alloc_pages_or_sleep`): the slow path then ends at its first congestion_wait.
    pub(crate) alloc_may_defer: bool,
    /// The slow path returned no page because the task is to sleep and retry.
    pub(crate) alloc_deferred: bool,
    /// Tasks (pids) that slept in the allocator's wait: when one runs again, its step is the
    /// rest of the interrupted call (`arm_alloc_rebalance`).
    pub alloc_rebalance: Vec<u32>,
    /// Set for the step of a task back from the allocator's wait: its first allocation through
    /// `alloc_pages_or_sleep` (the interrupted one) resumes the slow path at `rebalance`, direct
    /// reclaim first, then the try, as after the kernel's wait. Cleared when the step ends, so
    /// a step that needs no allocation leaves nothing behind (`disarm_alloc_rebalance`).
    pub(crate) alloc_resume: bool,
    /// Readahead windows whose allocation slept part-way, by task (pid): the task finishes
    /// allocating and submits the window when it runs again (`resume_kernel_work`).
    pub pending_readahead: Vec<(u32, super::filemap::PendingReadahead)>,
    /// congestion_wqh[BLK_RW_ASYNC]: congestion_wait(BLK_RW_ASYNC) sleeps here, and every
    /// async (write) request freed on a queue below its congestion-off mark wakes it
    /// (__freed_request → clear_bdi_congested, 2.6.x-5.x).
    pub congestion_wqh: usize,
    /// congestion_wait calls and the time they sleep, by caller (`CongestionSite`): mmtwin's
    /// own "why" figures, the stalls Mel Gorman instrumented in 2010 (pg-Stall, ksd-stall).
    pub congestion_waits: [u64; 3],
    pub congestion_wait_ns: [u64; 3],
    /// Per-cpu list and page placement figures (mmtwin's own, no /proc counter).
    pub pcp_diag: PcpDiag,
    /// Wait queues to wake, collected during an event (drained by the engine). An exclusive
    /// queue's wakeup wakes its longest waiter only.
    pub wakeups: Vec<usize>,
    /// Single tasks to wake, each off the wait queue it sleeps on (wake_up_process of one
    /// waiter, as mutex_unlock wakes the first task on a mutex's wait list): (queue, task).
    pub task_wakeups: Vec<(usize, usize)>,
    /// The first of the hashed wait queues that tasks blocked on a directory's i_mutex sleep
    /// on (`fs::namei::NR_MUTEX_WAITQUEUES` of them).
    pub mutex_wq_base: usize,
    /// Block device completions to schedule: (time, device).
    pub io_timers: Vec<(u64, usize)>,
    /// 2.6.32 queue unplug timers to schedule: (time, device).
    pub unplug_timers: Vec<(u64, usize)>,
    /// Devices' queued bandwidth updates (bw_dwork, `io-less`): (when, device).
    pub bw_timers: Vec<(u64, usize)>,
    /// Reads that stopped at a page whose indirect block is being read (the reader sleeps in
    /// sb_bread inside get_block), by the metadata page they wait for. Resumed when that read
    /// completes.
    pub meta_read_waiters: Vec<(Pfn, crate::fs::MetaWaiter)>,
    /// The current task's block plug (current->plug), while a plugging call runs.
    pub plug: Option<crate::block::Plug>,
    /// Block devices.
    pub bdevs: Vec<crate::block::BlockDevice>,
    /// When the disks' shared host path is next free (DeviceModel::host_bandwidth), ns.
    pub host_free_at: u64,
    /// Direct I/O contexts (id - 1).
    pub dios: Vec<crate::fs::direct_io::Dio>,
    /// Journals of the journaled file systems (`SuperBlock::journal` indexes them).
    pub journals: Vec<crate::fs::jbd::Journal>,
    /// Per-device writeback state.
    pub bdi_stat: Vec<crate::fs::fs_writeback::BdiStat>,
    /// Per-device queued writeback works.
    pub bdi_work: Vec<crate::fs::fs_writeback::BdiWork>,
    /// Per-device: the flusher is running a work.
    pub flusher_busy: Vec<bool>,
    /// Mounted file systems.
    pub sbs: Vec<crate::fs::SuperBlock>,
    /// Inodes by number (None: evicted). A number is never given to another file, so a list
    /// that still names an evicted inode (a transaction's ordered data, a workload's file)
    /// cannot reach another file's pages.
    /// Boxed, so that the numbers of evicted inodes, which are never reused, cost a pointer.
    pub inodes: Vec<Option<Box<crate::fs::Inode>>>,
    /// Files whose in-core inode the shrinkers evicted while they still exist on disk, by
    /// number: what the disk keeps of them (size, place, blocks) until a lookup reads the
    /// inode back (`iget`) or an unlink frees it.
    pub evicted_inodes: std::collections::BTreeMap<u32, Box<crate::fs::Inode>>,
    /// Deleted ext2/ext3 files whose truncate is under way: the metadata blocks it has still
    /// to read, last first (`truncate_reads`), while it waits for one not cached.
    pub truncating: std::collections::BTreeMap<u32, Vec<(u64, usize)>>,
    /// Slab caches.
    pub slab_caches: Vec<super::slab::KmemCache>,
    /// Each CPU's preloaded page-cache tree nodes (radix_tree_preloads): the slabs holding them.
    pub radix_preload: Vec<Vec<Pfn>>,
    /// The nodes of every page-cache tree (each file's `AddressSpace::i_pages` is a root).
    pub radix_nodes: super::radix_tree::RadixTreeNodes,
    /// Work each shrinker could not do yet (shrinker->nr).
    pub shrinker_deferred: Vec<u64>,
    /// Who is reclaiming in the current step, and from which CPU (current_is_kswapd,
    /// PF_MEMALLOC, reclaim_state).
    pub reclaimer: super::vmscan::Reclaimer,
    pub in_reclaim: bool,
    pub reclaim_cpu: usize,
    /// Slab pages freed during the current reclaim (reclaim_state->reclaimed_slab).
    pub reclaimed_slab: u64,
    /// Machine-wide dirtying proportions.
    pub dirty_props: super::page_writeback::DirtyProportions,
    /// Pages dirtied per CPU since its last balance_dirty_pages call (bdp_ratelimits, used by
    /// the `per-cpu` DirtyRatelimit policy).
    pub bdp_ratelimits: Vec<u64>,
    /// Per CPU: pages dirtied by tasks that exited there before their next throttle check
    /// (dirty_throttle_leaks, `io-less` only).
    pub dirty_throttle_leaks: Vec<u64>,
    /// The global writeback domain of the `io-less` balance_dirty_pages (global_wb_domain).
    pub wb_domain: super::page_writeback::WbDomain,
    /// The swap area (swapon), if the machine has one.
    pub swap: Option<super::swapfile::SwapInfo>,
    /// Anonymous regions by id.
    pub anon_vmas: Vec<super::memory::AnonVma>,
    /// The page-table pages of every mapping and address space, by owner.
    pub page_tables: std::collections::BTreeMap<super::memory::TableOwner, super::memory::PageTables>,
    /// The (owner, 2 MiB span) whose PTE page the last fault found or made: a fault next to
    /// the last one skips the table lookups (the simulator's shortcut, not a kernel cache;
    /// cleared whenever tables are freed).
    pub last_pte: Option<(super::memory::TableOwner, u64)>,
}

/// Which zones an allocation may use and in what order (struct alloc_context).
#[derive(Clone, Copy, Debug)]
pub struct AllocContext {
    /// The node whose zonelist is walked.
    pub nid: usize,
    /// Walk only this node (__GFP_THISNODE).
    pub thisnode: bool,
    pub highest_zoneidx: usize,
    pub migratetype: MigrateType,
    /// The first usable zone of the zonelist (preferred_zoneref).
    pub preferred_zone: Option<usize>,
    pub spread_dirty_pages: bool,
}

impl Mm {
    // ------------------------------------------------------------------------------------------
    // Page frame and pageblock helpers.

    /// Returns true if `pfn` has memory behind it (pfn_valid for present frames).
    #[inline(always)]
    pub fn pfn_valid(&self, pfn: Pfn) -> bool {
        (pfn as usize) < self.pages.len() && self.pages[pfn as usize].state() != PageState::Hole
    }

    /// Pages per pageblock (pageblock_nr_pages).
    #[inline(always)]
    pub fn pageblock_nr_pages(&self) -> u64 {
        1 << self.pageblock_order
    }

    /// Returns true if any frame of the pageblock containing `pfn` is present.
    pub fn block_has_present(&self, pfn: Pfn) -> bool {
        let start = pfn as u64 & !(self.pageblock_nr_pages() - 1);
        (start..(start + self.pageblock_nr_pages()).min(self.pages.len() as u64))
            .any(|p| self.pages[p as usize].state() != PageState::Hole)
    }

    /// The migratetype label of the pageblock containing `pfn` (get_pageblock_migratetype).
    #[inline(always)]
    pub fn get_pageblock_migratetype(&self, pfn: Pfn) -> MigrateType {
        MigrateType::from_u8(self.pageblock_flags[(pfn >> self.pageblock_order) as usize] & PB_MIGRATETYPE_MASK)
    }

    /// Relabels the pageblock containing `pfn` (set_pageblock_migratetype).
    #[inline(always)]
    pub fn set_pageblock_migratetype(&mut self, pfn: Pfn, mt: MigrateType) {
        let f = &mut self.pageblock_flags[(pfn >> self.pageblock_order) as usize];
        *f = (*f & !PB_MIGRATETYPE_MASK) | mt as u8;
    }

    /// Returns true if the pageblock's compaction skip hint is set (get_pageblock_skip).
    pub fn get_pageblock_skip(&self, pfn: Pfn) -> bool {
        self.pageblock_flags[(pfn >> self.pageblock_order) as usize] & PB_MIGRATE_SKIP != 0
    }

    /// Sets or clears the compaction skip hint of the pageblock containing `pfn`.
    pub fn set_pageblock_skip(&mut self, pfn: Pfn, skip: bool) {
        let f = &mut self.pageblock_flags[(pfn >> self.pageblock_order) as usize];
        if skip {
            *f |= PB_MIGRATE_SKIP
        } else {
            *f &= !PB_MIGRATE_SKIP
        }
    }

    /// Starts loading frame `pfn` into the CPU's caches (a hint for loops over frames; no
    /// effect on the model). `pfn` may be stale or out of range: then nothing is done.
    #[inline(always)]
    pub fn prefetch_page(&self, pfn: Pfn) {
        if let Some(p) = self.pages.get(pfn as usize) {
            crate::util::prefetch(p);
        }
    }

    /// The zone id of a present frame (page_zone).
    #[inline(always)]
    pub fn page_zone(&self, pfn: Pfn) -> usize {
        self.pages[pfn as usize].zone as usize
    }

    /// The node of a present frame (page_to_nid).
    #[inline(always)]
    pub fn page_to_nid(&self, pfn: Pfn) -> usize {
        self.pages[pfn as usize].zone as usize / MAX_NR_ZONES
    }

    /// The NUMA distance between two nodes (node_distance).
    #[inline(always)]
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        self.distance[a][b]
    }

    /// Takes the simulated CPU time charged since the last call.
    #[inline(always)]
    pub fn take_cost(&mut self) -> u64 {
        std::mem::take(&mut self.cost_ns)
    }

    #[inline(always)]
    fn page_count_of(&self, z: &Zone) -> u64 {
        match self.policy.page_count_basis {
            PageCountBasis::Present => z.present_pages,
            PageCountBasis::Managed => z.managed_pages,
        }
    }

    // ------------------------------------------------------------------------------------------
    // Buddy free lists.

    #[inline(always)]
    fn add_to_free_list(&mut self, zid: usize, pfn: Pfn, order: usize, mt: MigrateType, tail: bool) {
        {
            let p = &mut self.pages[pfn as usize];
            p.set_state(PageState::Buddy);
            p.order = order as u8;
        }
        let z = &mut self.zones[zid];
        let area = &mut z.free_area[order];
        if tail {
            list_add_tail(&mut self.pages, &mut area.free_list[mt as usize], pfn);
        } else {
            list_add(&mut self.pages, &mut area.free_list[mt as usize], pfn);
        }
        area.nr_free += 1;
        z.nr_free_pages += 1 << order;
        self.cost_ns += self.costs.buddy_list_op_ns;
    }

    #[inline(always)]
    fn del_page_from_free_list(&mut self, zid: usize, pfn: Pfn, order: usize, mt: MigrateType) {
        let z = &mut self.zones[zid];
        let area = &mut z.free_area[order];
        list_del(&mut self.pages, &mut area.free_list[mt as usize], pfn);
        area.nr_free -= 1;
        z.nr_free_pages -= 1 << order;
        self.pages[pfn as usize].set_state(PageState::Allocated);
        self.cost_ns += self.costs.buddy_list_op_ns;
    }

    /// Returns true if `buddy` is a free block of exactly `order` in zone `zid` (page_is_buddy).
    #[inline(always)]
    fn page_is_buddy(&self, zid: usize, buddy: Pfn, order: usize) -> bool {
        if (buddy as usize) >= self.pages.len() || !self.zones[zid].spans(buddy) {
            return false;
        }
        let p = &self.pages[buddy as usize];
        p.state() == PageState::Buddy && p.order as usize == order && p.zone as usize == zid
    }

    /// Frees a block of 2^order pages at `pfn` into zone `zid`'s free lists of type `mt`, merging
    /// it with free buddies as far as they go (__free_one_page).
    pub fn __free_one_page(&mut self, zid: usize, mut pfn: Pfn, mut order: usize, mt: MigrateType) {
        debug_assert!(pfn & ((1 << order) - 1) == 0, "unaligned free of {pfn} at order {order}");
        let (max_order, barrier_order) = (self.max_order, if self.era == Era::Linux6 { self.pageblock_order } else { usize::MAX });
        while order < max_order {
            let buddy = pfn ^ (1 << order);
            if !self.page_is_buddy(zid, buddy, order) {
                break;
            }
            // 6.x: from pageblock order up, blocks of types without fallbacks (isolate,
            // highatomic) do not merge with blocks of another type (migratetype_is_mergeable).
            if order >= barrier_order {
                let bmt = self.get_pageblock_migratetype(buddy);
                if bmt != mt && (!mt.is_pcptype() || !bmt.is_pcptype()) {
                    break;
                }
            }
            let bmt = MigrateType::from_u8(self.pages[buddy as usize].private);
            self.del_page_from_free_list(zid, buddy, order, bmt);
            pfn &= buddy;
            order += 1;
        }
        // buddy_merge_likely: if the buddy of the block's parent is free, put the block at the
        // tail so it is less likely to be taken before its own buddy is freed and they merge.
        // Both eras skip the last two orders (3.x: order < MAX_ORDER − 2; 6.x: order <
        // MAX_PAGE_ORDER − 1).
        let mut to_tail = false;
        if self.policy.merge_tail_heuristic && order < max_order - 1 {
            let higher = pfn & !((2u32 << order) - 1);
            let higher_buddy = higher ^ (2 << order);
            to_tail = self.page_is_buddy(zid, higher_buddy, order + 1);
        }
        self.add_free(zid, pfn, order, mt, to_tail);
    }

    /// Adds a free block to a list and records its list type in the page (set_buddy_order).
    #[inline(always)]
    fn add_free(&mut self, zid: usize, pfn: Pfn, order: usize, mt: MigrateType, tail: bool) {
        self.add_to_free_list(zid, pfn, order, mt, tail);
        self.pages[pfn as usize].private = mt as u8;
    }

    /// Removes a free block from its list; its list type is in the page.
    #[inline(always)]
    fn take_free(&mut self, zid: usize, pfn: Pfn, order: usize) -> MigrateType {
        let mt = MigrateType::from_u8(self.pages[pfn as usize].private);
        self.del_page_from_free_list(zid, pfn, order, mt);
        mt
    }

    /// Splits a block of order `high` at `pfn` down to order `low`, returning the upper halves
    /// to the `mt` lists (expand). The caller keeps the lowest piece.
    #[inline(always)]
    fn expand(&mut self, zid: usize, pfn: Pfn, low: usize, mut high: usize, mt: MigrateType) {
        while high > low {
            high -= 1;
            let half = pfn + (1 << high);
            self.add_free(zid, half, high, mt, false);
        }
    }

    /// Takes the first free block of the smallest order ≥ `order` on the `mt` lists, splitting
    /// it as needed (__rmqueue_smallest).
    #[inline(always)]
    pub fn __rmqueue_smallest(&mut self, zid: usize, order: usize, mt: MigrateType) -> Option<Pfn> {
        for current in order..self.max_order + 1 {
            let pfn = self.zones[zid].free_area[current].free_list[mt as usize].head;
            if pfn == NIL {
                continue;
            }
            self.del_page_from_free_list(zid, pfn, current, mt);
            self.expand(zid, pfn, order, current, mt);
            return Some(pfn);
        }
        None
    }

    /// Moves every free block in [start, end] of zone `zid` to the `mt` lists; returns the number
    /// of pages moved (move_freepages).
    fn move_freepages(&mut self, zid: usize, start: Pfn, end: Pfn, mt: MigrateType) -> u64 {
        let mut moved = 0u64;
        let mut pfn = start;
        while pfn <= end {
            let p = &self.pages[pfn as usize];
            if p.state() != PageState::Buddy {
                pfn += 1;
                continue;
            }
            let order = p.order as usize;
            self.take_free(zid, pfn, order);
            self.add_free(zid, pfn, order, mt, false);
            self.cost_ns += self.costs.move_freepages_block_ns;
            moved += 1 << order;
            pfn += 1 << order;
        }
        moved
    }

    /// The pageblock range of `pfn` clipped to the zone, or None if it crosses the zone
    /// boundary (the check move_freepages_block makes).
    fn pageblock_range_in_zone(&self, zid: usize, pfn: Pfn) -> Option<(Pfn, Pfn)> {
        let start = pfn & !(self.pageblock_nr_pages() as Pfn - 1);
        let end = start + self.pageblock_nr_pages() as Pfn - 1;
        let z = &self.zones[zid];
        if !z.spans(start) || !z.spans(end) {
            return None;
        }
        Some((start, end))
    }

    /// Moves the free pages of the pageblock of `pfn` to `mt` (move_freepages_block).
    pub(crate) fn move_freepages_block(&mut self, zid: usize, pfn: Pfn, mt: MigrateType) -> u64 {
        match self.pageblock_range_in_zone(zid, pfn) {
            Some((s, e)) => self.move_freepages(zid, s, e, mt),
            None => 0,
        }
    }

    /// Relabels every pageblock of a block of `order` ≥ pageblock_order (change_pageblock_range).
    fn change_pageblock_range(&mut self, pfn: Pfn, order: usize, mt: MigrateType) {
        let nr = 1u32 << (order - self.pageblock_order);
        for i in 0..nr {
            self.set_pageblock_migratetype(pfn + i * self.pageblock_nr_pages() as Pfn, mt);
        }
    }

    /// The fallback order of migratetypes for `mt` (the fallbacks[][] table; RESERVE and
    /// HIGHATOMIC are never fallbacks).
    #[inline(always)]
    fn fallbacks(mt: MigrateType) -> [MigrateType; 2] {
        match mt {
            MigrateType::Unmovable => [MigrateType::Reclaimable, MigrateType::Movable],
            MigrateType::Reclaimable => [MigrateType::Unmovable, MigrateType::Movable],
            _ => [MigrateType::Reclaimable, MigrateType::Unmovable],
        }
    }

    /// 3.x __rmqueue_fallback: take the largest block of a fallback type, stealing the pageblock
    /// when the block is big or the request is reclaimable.
    #[cold]
    #[inline(never)]
    fn rmqueue_fallback_3x(&mut self, zid: usize, order: usize, start_mt: MigrateType) -> Option<Pfn> {
        for current in (order..self.max_order + 1).rev() {
            for fmt in Self::fallbacks(start_mt) {
                let pfn = self.zones[zid].free_area[current].free_list[fmt as usize].head;
                if pfn == NIL {
                    continue;
                }
                let mut mt = fmt;
                if current >= self.pageblock_order / 2
                    || start_mt == MigrateType::Reclaimable
                    || self.page_group_by_mobility_disabled
                {
                    let moved = self.move_freepages_block(zid, pfn, start_mt);
                    if moved >= 1 << (self.pageblock_order - 1) || self.page_group_by_mobility_disabled {
                        self.set_pageblock_migratetype(pfn, start_mt);
                    }
                    mt = start_mt;
                }
                self.take_free(zid, pfn, current);
                if current >= self.pageblock_order {
                    self.change_pageblock_range(pfn, current, start_mt);
                }
                self.expand(zid, pfn, order, current, mt);
                return Some(pfn);
            }
        }
        None
    }

    /// 6.x can_steal_fallback: may a fallback of `order` claim its whole pageblock?
    #[inline(always)]
    fn can_steal_fallback(&self, order: usize, start_mt: MigrateType) -> bool {
        order >= self.pageblock_order
            || order >= self.pageblock_order / 2
            || start_mt == MigrateType::Reclaimable
            || start_mt == MigrateType::Unmovable
            || self.page_group_by_mobility_disabled
    }

    /// 6.x find_suitable_fallback: the first fallback type with a free block of `order`.
    fn find_suitable_fallback(&self, zid: usize, order: usize, start_mt: MigrateType, only_stealable: bool) -> Option<(MigrateType, bool)> {
        let area = &self.zones[zid].free_area[order];
        if area.nr_free == 0 {
            return None;
        }
        let can_steal = self.can_steal_fallback(order, start_mt);
        for fmt in Self::fallbacks(start_mt) {
            if area.free_list[fmt as usize].is_empty() {
                continue;
            }
            if can_steal || !only_stealable {
                return Some((fmt, can_steal));
            }
        }
        None
    }

    /// 6.x boost_watermark: raise the zone's watermarks after a fragmenting fallback so kswapd
    /// reclaims ahead of further fragmentation. Returns true if the zone was boosted.
    fn boost_watermark(&mut self, zid: usize) -> bool {
        let factor = self.sysctl.watermark_boost_factor;
        let block = self.pageblock_nr_pages();
        let z = &mut self.zones[zid];
        if factor == 0 || z.managed_pages / block < 4 {
            return false;
        }
        let max_boost = (z.watermark[WMARK_HIGH] * factor / 10000).max(block);
        if max_boost == 0 {
            return false;
        }
        z.watermark_boost = (z.watermark_boost + block).min(max_boost);
        true
    }

    /// 6.x steal_suitable_fallback: claim the pageblock of `pfn` for `start_mt` when enough of
    /// it is free or alike; otherwise take only the page. Returns the type to expand under.
    fn steal_suitable_fallback(&mut self, zid: usize, pfn: Pfn, alloc_flags: AllocFlags, start_mt: MigrateType, whole_block: bool) -> MigrateType {
        let old_mt = self.get_pageblock_migratetype(pfn);
        let current = self.pages[pfn as usize].order as usize;
        if old_mt == MigrateType::HighAtomic {
            return MigrateType::from_u8(self.pages[pfn as usize].private);
        }
        if current >= self.pageblock_order {
            self.change_pageblock_range(pfn, current, start_mt);
            return start_mt;
        }
        if self.boost_watermark(zid) && alloc_flags & ALLOC_KSWAPD != 0 {
            self.zones[zid].flags |= ZONE_BOOSTED_WATERMARK;
        }
        if !whole_block {
            return MigrateType::from_u8(self.pages[pfn as usize].private);
        }
        let Some((s, e)) = self.pageblock_range_in_zone(zid, pfn) else {
            return MigrateType::from_u8(self.pages[pfn as usize].private);
        };
        // Count free pages and movable in-use pages (prep_move_freepages_block: a page counts as
        // movable when it is on the LRU, i.e. one per movable allocation's head page).
        let mut free = 0u64;
        let mut movable = 0u64;
        let mut p = s;
        while p <= e {
            let pg = &self.pages[p as usize];
            match pg.state() {
                PageState::Buddy => {
                    free += 1 << pg.order;
                    p += 1 << pg.order;
                    continue;
                }
                PageState::Allocated if pg.flags & PG_MOVABLE_ALLOC != 0 => movable += 1,
                _ => {}
            }
            p += 1;
        }
        // "Alike" pages: movable ones for a movable request; for an unmovable or reclaimable
        // request stealing a movable block, everything that is neither free nor movable.
        let alike = if start_mt == MigrateType::Movable {
            movable
        } else if old_mt == MigrateType::Movable {
            self.pageblock_nr_pages() - (free + movable)
        } else {
            0
        };
        if free + alike >= 1 << (self.pageblock_order - 1) || self.page_group_by_mobility_disabled {
            self.move_freepages(zid, s, e, start_mt);
            self.set_pageblock_migratetype(pfn, start_mt);
            return start_mt;
        }
        MigrateType::from_u8(self.pages[pfn as usize].private)
    }

    /// 6.x __rmqueue_fallback.
    #[cold]
    #[inline(never)]
    fn rmqueue_fallback_6x(&mut self, zid: usize, order: usize, start_mt: MigrateType, alloc_flags: AllocFlags) -> Option<Pfn> {
        let min_order = if order < self.pageblock_order && alloc_flags & ALLOC_NOFRAGMENT != 0 {
            self.pageblock_order
        } else {
            order
        };
        // Largest first, so that a whole block is claimed and future fallbacks are rarer.
        let mut found: Option<(usize, MigrateType, bool)> = None;
        for current in (min_order..self.max_order + 1).rev() {
            if let Some((fmt, can_steal)) = self.find_suitable_fallback(zid, current, start_mt, false) {
                if !can_steal && start_mt == MigrateType::Movable && current > order {
                    // Cannot claim the block: take the smallest suitable page to limit the damage.
                    found = None;
                    for small in order..self.max_order + 1 {
                        if let Some((fmt2, cs2)) = self.find_suitable_fallback(zid, small, start_mt, false) {
                            found = Some((small, fmt2, cs2));
                            break;
                        }
                    }
                    break;
                }
                found = Some((current, fmt, can_steal));
                break;
            }
        }
        let (current, fmt, can_steal) = found?;
        let pfn = self.zones[zid].free_area[current].free_list[fmt as usize].head;
        let mt = self.steal_suitable_fallback(zid, pfn, alloc_flags, start_mt, can_steal);
        if mt == start_mt && current < self.pageblock_order {
            // The block was claimed: its free pages are now on start_mt's lists.
            return self.__rmqueue_smallest(zid, order, start_mt);
        }
        let listed = MigrateType::from_u8(self.pages[pfn as usize].private);
        self.del_page_from_free_list(zid, pfn, current, listed);
        self.expand(zid, pfn, order, current, if current >= self.pageblock_order { start_mt } else { listed });
        Some(pfn)
    }

    /// Takes a block of `order` for `mt` from zone `zid`, falling back to other types
    /// (__rmqueue).
    #[inline]
    pub fn __rmqueue(&mut self, zid: usize, order: usize, mt: MigrateType, alloc_flags: AllocFlags) -> Option<Pfn> {
        if let Some(p) = self.__rmqueue_smallest(zid, order, mt) {
            return Some(p);
        }
        match self.policy.fallback {
            FallbackPolicy::StealLargestHalfBlock => {
                if let Some(p) = self.rmqueue_fallback_3x(zid, order, mt) {
                    return Some(p);
                }
                // 3.x: the last resort is the MIGRATE_RESERVE blocks.
                self.__rmqueue_smallest(zid, order, MigrateType::Reserve)
            }
            FallbackPolicy::StealAlikeBoost => self.rmqueue_fallback_6x(zid, order, mt, alloc_flags),
        }
    }

    // ------------------------------------------------------------------------------------------
    // Per-cpu lists.

    /// Returns true if blocks of `order` go through the pcp lists (pcp_allowed_order).
    #[inline(always)]
    pub fn pcp_allowed_order(&self, order: usize) -> bool {
        match self.policy.pcp {
            PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList => order == 0,
            PcpPolicy::OrderListsFixedHigh | PcpPolicy::OrderListsAutotune => order <= PAGE_ALLOC_COSTLY_ORDER || order == self.pageblock_order,
        }
    }

    /// The pcp list of (order, mt) for this era.
    #[inline(always)]
    fn pindex(&self, mt: MigrateType, order: usize) -> usize {
        match self.policy.pcp {
            PcpPolicy::Order0HotCold => mt as usize,
            // 2.6.31: every type shares the one list.
            PcpPolicy::Order0SingleList => 0,
            PcpPolicy::OrderListsFixedHigh | PcpPolicy::OrderListsAutotune => order_to_pindex(mt as usize, order),
        }
    }

    /// Moves up to `count` blocks of `order` from the buddy lists to pcp list `pindex` of `cpu`
    /// (rmqueue_bulk). Returns the number of blocks moved.
    #[cold]
    #[inline(never)]
    fn rmqueue_bulk(&mut self, zid: usize, cpu: usize, order: usize, count: u32, mt: MigrateType, pindex: usize, cold: bool, alloc_flags: AllocFlags) -> u32 {
        let before = self.zones[zid].nr_free_pages;
        let n = self.rmqueue_bulk_locked(zid, cpu, order, count, mt, pindex, cold, alloc_flags);
        self.mod_zone_freepage_state(zid, cpu, self.zones[zid].nr_free_pages - before);
        n
    }

    /// rmqueue_bulk's work under the zone lock (its NR_FREE_PAGES change is accounted by the
    /// caller, once, as the kernel does after the loop).
    #[inline(always)]
    fn rmqueue_bulk_locked(&mut self, zid: usize, cpu: usize, order: usize, count: u32, mt: MigrateType, pindex: usize, cold: bool, alloc_flags: AllocFlags) -> u32 {
        self.cost_ns += self.costs.zone_lock_ns;
        self.zones[zid].pcp[cpu].stat_diff = true;
        let mut prev = NIL;
        let mut i = 0;
        while i < count {
            let Some(pfn) = self.__rmqueue(zid, order, mt, alloc_flags) else { break };
            {
                let p = &mut self.pages[pfn as usize];
                p.set_state(PageState::Pcp);
                p.order = order as u8;
                p.private = mt as u8;
            }
            let pages = &mut self.pages;
            let list = &mut self.zones[zid].pcp[cpu].lists[pindex];
            match self.policy.cold_refill {
                // Always "list_add(page, list); list = &page->lru": ascending from where the
                // run starts; a cold request reads the tail and so gets descending pfns.
                ColdRefill::ReversePfn => {
                    if prev == NIL {
                        list_add(pages, list, pfn)
                    } else {
                        list_add_after(pages, list, prev, pfn)
                    }
                }
                ColdRefill::PfnOrder => {
                    if !cold {
                        if prev == NIL {
                            list_add(pages, list, pfn)
                        } else {
                            list_add_after(pages, list, prev, pfn)
                        }
                    } else if prev == NIL {
                        list_add_tail(pages, list, pfn)
                    } else {
                        list_add_before(pages, list, prev, pfn)
                    }
                }
                ColdRefill::NoColdHint => list_add_tail(pages, list, pfn),
            }
            prev = pfn;
            i += 1;
        }
        i
    }

    /// 3.x zone_batchsize / 6.x zone_batchsize: the pcp batch for a zone.
    pub fn zone_batchsize(&self, z: &Zone) -> u32 {
        let pages = self.page_count_of(z);
        let cap = match self.policy.pcp {
            PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList => (512 * 1024) / super::PAGE_SIZE,
            PcpPolicy::OrderListsFixedHigh | PcpPolicy::OrderListsAutotune => (1024 * 1024) / super::PAGE_SIZE,
        };
        let mut batch = (pages / 1024).min(cap);
        batch /= 4;
        if batch < 1 {
            batch = 1;
        }
        let b = batch + batch / 2;
        let r = 1u64 << (63 - b.leading_zeros());
        (r - 1).max(1) as u32
    }

    /// 6.x nr_pcp_alloc: how many blocks to refill with; grows while allocations run unopposed.
    #[cold]
    #[inline(never)]
    fn nr_pcp_alloc(&mut self, zid: usize, cpu: usize, order: usize) -> u32 {
        let below_high = self.zones[zid].flags & ZONE_BELOW_HIGH != 0;
        let pcp = &mut self.zones[zid].pcp[cpu];
        let base_batch = pcp.batch as i64;
        let (high_min, high_max) = (pcp.high_min as i64, pcp.high_max as i64);
        let mut high = (pcp.high as i64).clamp(high_min, high_max.max(high_min));
        pcp.high = high as u32;
        if high < base_batch {
            return 1;
        }
        let mut batch = if order > 0 { base_batch } else { base_batch << pcp.alloc_factor };
        if high_min != high_max && !below_high {
            high = (high + batch).min(high_max);
            pcp.high = high as u32;
        }
        if order == 0 {
            let max_nr_alloc = (high - pcp.count as i64 - base_batch).max(base_batch);
            if batch <= max_nr_alloc && pcp.alloc_factor < PCP_BATCH_SCALE_MAX {
                pcp.alloc_factor += 1;
            }
            batch = batch.min(max_nr_alloc);
        }
        if batch > 1 {
            batch = (batch >> order).max(2);
        }
        batch as u32
    }

    /// Takes a block of `order` from `cpu`'s pcp list for `mt`, refilling it from the buddy
    /// lists when empty (rmqueue_pcplist / 3.x buffered_rmqueue order-0 path).
    fn rmqueue_pcplist(&mut self, zid: usize, cpu: usize, order: usize, mt: MigrateType, cold: bool, alloc_flags: AllocFlags) -> Option<Pfn> {
        if self.policy.pcp == PcpPolicy::Order0SingleList {
            return self.rmqueue_pcplist_single(zid, cpu, mt, cold, alloc_flags);
        }
        let pindex = self.pindex(mt, order);
        self.cost_ns += self.costs.pcp_alloc_ns;
        if self.zones[zid].pcp[cpu].lists[pindex].is_empty() && !self.refill_pcplist(zid, cpu, order, mt, pindex, cold, alloc_flags) {
            return None;
        }
        let policy = self.policy.pcp;
        let take_tail = cold && self.policy.cold_refill != ColdRefill::NoColdHint;
        let Mm { pages, zones, .. } = self;
        let pcp = &mut zones[zid].pcp[cpu];
        match policy {
            PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList => {}
            PcpPolicy::OrderListsFixedHigh => pcp.free_factor >>= 1,
            PcpPolicy::OrderListsAutotune => pcp.free_count >>= 1,
        }
        let list = &mut pcp.lists[pindex];
        let pfn = if take_tail { list.tail } else { list.head };
        list_del(pages, list, pfn);
        pcp.count -= 1 << order;
        Some(pfn)
    }

    /// 2.6.25–2.6.31 buffered_rmqueue, order-0 path, on the one per-cpu list that every
    /// migratetype shares (`PcpPolicy::Order0SingleList`). Decides which page an order-0
    /// request gets:
    /// - an empty list is first refilled with a batch of the requested type (rmqueue_bulk,
    ///   laid out as `cold_refill` says); if the buddy lists gave nothing, the request fails;
    /// - the list is searched for a page whose page_private is the requested type: a cold
    ///   request from the tail, a hot one from the head (a cold request of `no-cold-hint`,
    ///   which has no cold side, from the head);
    /// - if none is found, another batch of the requested type is refilled and the request
    ///   takes the list's HEAD ("Allocate more to the pcp list if necessary"). A hot refill
    ///   (and any refill before e084b2d95e48) starts right after the head, so the head is the
    ///   first new page; a cold refill with e084b goes to the tail, so the head is the oldest
    ///   page the search passed over, of another type. If the buddy lists gave nothing, that
    ///   page is handed out too.
    ///
    /// Each page the search passes over costs `pcp_search_ns`. The head handed out to another
    /// type is counted in `Mm::pcp_diag` (mmtwin's own "why" figures).
    fn rmqueue_pcplist_single(&mut self, zid: usize, cpu: usize, mt: MigrateType, cold: bool, alloc_flags: AllocFlags) -> Option<Pfn> {
        self.cost_ns += self.costs.pcp_alloc_ns;
        let batch = self.zones[zid].pcp[cpu].batch;
        if self.zones[zid].pcp[cpu].count == 0 {
            let got = self.rmqueue_bulk(zid, cpu, 0, batch, mt, 0, cold, alloc_flags);
            self.zones[zid].pcp[cpu].count += got;
            if got == 0 {
                return None;
            }
        }
        let from_tail = cold && self.policy.cold_refill != ColdRefill::NoColdHint;
        let (mut cur, mut passed) = {
            let list = &self.zones[zid].pcp[cpu].lists[0];
            (if from_tail { list.tail } else { list.head }, 0u64)
        };
        while cur != NIL && self.pages[cur as usize].private != mt as u8 {
            cur = if from_tail { self.pages[cur as usize].prev } else { self.pages[cur as usize].next };
            passed += 1;
        }
        self.cost_ns += passed * self.costs.pcp_search_ns;
        self.pcp_diag.searched += passed;
        let pfn = if cur != NIL {
            cur
        } else {
            let got = self.rmqueue_bulk(zid, cpu, 0, batch, mt, 0, cold, alloc_flags);
            self.zones[zid].pcp[cpu].count += got;
            self.pcp_diag.allocate_more += 1;
            let head = self.zones[zid].pcp[cpu].lists[0].head;
            let head_mt = self.pages[head as usize].private as usize;
            if head_mt != mt as usize {
                self.pcp_diag.other_type[mt as usize][head_mt] += 1;
            }
            head
        };
        let Mm { pages, zones, .. } = self;
        let pcp = &mut zones[zid].pcp[cpu];
        list_del(pages, &mut pcp.lists[0], pfn);
        pcp.count -= 1;
        Some(pfn)
    }

    /// Refills an empty pcp list from the buddy lists; false if nothing could be taken.
    #[cold]
    #[inline(never)]
    fn refill_pcplist(&mut self, zid: usize, cpu: usize, order: usize, mt: MigrateType, pindex: usize, cold: bool, alloc_flags: AllocFlags) -> bool {
        let (batch, cold) = match self.policy.pcp {
            PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList => (self.zones[zid].pcp[cpu].batch, cold),
            // 6.1 __rmqueue_pcplist: one batch, scaled down by the order.
            PcpPolicy::OrderListsFixedHigh => {
                let batch = self.zones[zid].pcp[cpu].batch;
                (if batch > 1 { (batch >> order).max(2) } else { batch }, false)
            }
            PcpPolicy::OrderListsAutotune => (self.nr_pcp_alloc(zid, cpu, order), false),
        };
        let got = self.rmqueue_bulk(zid, cpu, order, batch, mt, pindex, cold, alloc_flags);
        self.zones[zid].pcp[cpu].count += got << order;
        got > 0
    }

    /// Returns `count` pages' worth of blocks from `cpu`'s pcp lists to the buddy lists
    /// (free_pcppages_bulk). `pindex` is the list just freed to (6.x drains it first).
    #[cold]
    #[inline(never)]
    fn free_pcppages_bulk(&mut self, zid: usize, cpu: usize, count: u32, pindex: usize) {
        if count == 0 {
            return;
        }
        let before = self.zones[zid].nr_free_pages;
        self.free_pcppages_bulk_locked(zid, cpu, count, pindex);
        self.mod_zone_freepage_state(zid, cpu, self.zones[zid].nr_free_pages - before);
    }

    /// free_pcppages_bulk's work under the zone lock.
    #[inline(always)]
    fn free_pcppages_bulk_locked(&mut self, zid: usize, cpu: usize, count: u32, pindex: usize) {
        self.cost_ns += self.costs.zone_lock_ns;
        self.zones[zid].pcp[cpu].stat_diff = true;
        self.zones[zid].all_unreclaimable = false;
        self.zones[zid].pages_scanned = 0;
        match self.policy.pcp {
            // 2.6.25–2.6.31 free_pages_bulk(zone, count, &pcp->list, 0): `count` pages from the
            // tail of the one list, each to the buddy list of the type in its page_private.
            PcpPolicy::Order0SingleList => {
                let mut to_free = count.min(self.zones[zid].pcp[cpu].count);
                while to_free > 0 {
                    let pfn = self.zones[zid].pcp[cpu].lists[0].tail;
                    list_del(&mut self.pages, &mut self.zones[zid].pcp[cpu].lists[0], pfn);
                    self.zones[zid].pcp[cpu].count -= 1;
                    let mt = MigrateType::from_u8(self.pages[pfn as usize].private);
                    self.__free_one_page(zid, pfn, 0, mt);
                    to_free -= 1;
                }
            }
            PcpPolicy::Order0HotCold => {
                // 3.x numbering of the pcp types is UNMOVABLE, RECLAIMABLE, MOVABLE; the round
                // robin starts after 0, so it visits RECLAIMABLE, MOVABLE, UNMOVABLE, ...
                const ORDER_3X: [usize; 3] = [MigrateType::Unmovable as usize, MigrateType::Reclaimable as usize, MigrateType::Movable as usize];
                let mut slot = 0usize;
                let mut batch_free = 0u32;
                let mut to_free = count.min(self.zones[zid].pcp[cpu].count);
                while to_free > 0 {
                    let mut li;
                    loop {
                        batch_free += 1;
                        slot = (slot + 1) % 3;
                        li = ORDER_3X[slot];
                        if !self.zones[zid].pcp[cpu].lists[li].is_empty() {
                            break;
                        }
                    }
                    if batch_free == 3 {
                        batch_free = to_free;
                    }
                    loop {
                        let pfn = self.zones[zid].pcp[cpu].lists[li].tail;
                        list_del(&mut self.pages, &mut self.zones[zid].pcp[cpu].lists[li], pfn);
                        self.zones[zid].pcp[cpu].count -= 1;
                        let mt = MigrateType::from_u8(self.pages[pfn as usize].private);
                        self.__free_one_page(zid, pfn, 0, mt);
                        to_free -= 1;
                        batch_free -= 1;
                        if to_free == 0 || batch_free == 0 || self.zones[zid].pcp[cpu].lists[li].is_empty() {
                            break;
                        }
                    }
                }
            }
            PcpPolicy::OrderListsFixedHigh | PcpPolicy::OrderListsAutotune => {
                let stored_type = self.policy.pcp == PcpPolicy::OrderListsFixedHigh;
                let mut count = count as i64;
                let mut pi = if pindex == 0 { NR_PCP_LISTS - 1 } else { pindex - 1 };
                while count > 0 && self.zones[zid].pcp[cpu].count > 0 {
                    loop {
                        pi += 1;
                        if pi > NR_PCP_LISTS - 1 {
                            pi = 0;
                        }
                        if !self.zones[zid].pcp[cpu].lists[pi].is_empty() {
                            break;
                        }
                    }
                    let order = pindex_to_order(pi, self.pageblock_order);
                    loop {
                        let pfn = self.zones[zid].pcp[cpu].lists[pi].tail;
                        list_del(&mut self.pages, &mut self.zones[zid].pcp[cpu].lists[pi], pfn);
                        count -= 1 << order;
                        self.zones[zid].pcp[cpu].count -= 1 << order;
                        // 6.1 frees with the type recorded when the page entered the list
                        // (get_pcppage_migratetype) unless its block was isolated since;
                        // 6.7+ with the pageblock's current type.
                        let block_mt = self.get_pageblock_migratetype(pfn);
                        let mt = if stored_type && block_mt != MigrateType::Isolate { MigrateType::from_u8(self.pages[pfn as usize].private) } else { block_mt };
                        self.__free_one_page(zid, pfn, order, mt);
                        if count <= 0 || self.zones[zid].pcp[cpu].lists[pi].is_empty() {
                            break;
                        }
                    }
                }
            }
        }
    }

    /// 5.14–6.6 nr_pcp_high (read from 6.1): the fixed high, or none when freeing high orders
    /// in a burst, or at most 4 batches while kswapd reclaims the zone.
    fn nr_pcp_high_fixed(&self, zid: usize, cpu: usize, free_high: bool) -> u32 {
        let pcp = &self.zones[zid].pcp[cpu];
        if pcp.high == 0 || free_high {
            return 0;
        }
        if self.zones[zid].flags & ZONE_RECLAIM_ACTIVE == 0 {
            return pcp.high;
        }
        (pcp.batch << 2).min(pcp.high)
    }

    /// 5.14–6.6 nr_pcp_free (read from 6.1): how many pages a drain frees — everything for a
    /// high-order burst, else one batch doubled per drain since the last allocation
    /// (free_factor), leaving at least a batch on the list.
    fn nr_pcp_free_fixed(&mut self, zid: usize, cpu: usize, high: u32, free_high: bool) -> u32 {
        let pcp = &mut self.zones[zid].pcp[cpu];
        if free_high {
            return pcp.count;
        }
        let batch = pcp.batch as i64;
        let high = high as i64;
        if high < batch {
            return 1;
        }
        let (min_nr_free, max_nr_free) = (batch, high - batch);
        let scaled = batch << pcp.free_factor;
        if scaled < max_nr_free {
            pcp.free_factor += 1;
        }
        // The kernel's clamp() is min(max(v, lo), hi): with high < 2 batches the maximum wins.
        scaled.max(min_nr_free).min(max_nr_free).max(0) as u32
    }

    /// 6.7+ nr_pcp_high: the current drain threshold, shrunk under pressure, grown while freeing.
    fn nr_pcp_high(&mut self, zid: usize, cpu: usize, free_high: bool) -> u32 {
        let zflags = self.zones[zid].flags;
        let pcp = &mut self.zones[zid].pcp[cpu];
        let batch = pcp.batch as i64;
        let (high_min, high_max) = (pcp.high_min as i64, pcp.high_max as i64);
        let mut high = (pcp.high as i64).clamp(high_min, high_max.max(high_min));
        pcp.high = high as u32;
        if high == 0 {
            return 0;
        }
        if free_high {
            pcp.high = (high - (batch << PCP_BATCH_SCALE_MAX)).max(high_min) as u32;
            return 0;
        }
        if zflags & ZONE_RECLAIM_ACTIVE != 0 {
            let free_count = (pcp.free_count as i64).max(batch);
            pcp.high = (high - free_count).max(high_min) as u32;
            return ((batch << 2).min(pcp.high as i64)) as u32;
        }
        if high_min == high_max {
            return high as u32;
        }
        if zflags & ZONE_BELOW_HIGH != 0 {
            let free_count = (pcp.free_count as i64).max(batch);
            pcp.high = (high - free_count).max(high_min) as u32;
            high = (pcp.count as i64).max(high_min);
        } else if pcp.count as i64 >= high {
            let need_high = pcp.free_count as i64 + batch;
            if (pcp.high as i64) < need_high {
                pcp.high = need_high.clamp(high_min, high_max) as u32;
            }
        }
        high as u32
    }

    /// Frees a block of `order` to `cpu`'s pcp list, draining a batch when the list is over its
    /// high mark (free_unref_page / 2.6.x–3.x free_hot_cold_page). On the 2.6.31 single list
    /// a cold free goes to the tail and a hot one to the head, as on 3.x's per-type lists.
    /// (2.6.31 also listed pages of isolated pageblocks; every era here frees those directly.)
    fn free_unref_page(&mut self, zid: usize, cpu: usize, pfn: Pfn, order: usize, cold: bool) {
        // page_private keeps the pageblock's type (3.x frees the page back to that type's buddy
        // list when the pcp list drains, so RESERVE pages return to the reserve).
        let block_mt = self.get_pageblock_migratetype(pfn);
        let mut mt = block_mt;
        if !mt.is_pcptype() {
            if mt == MigrateType::Isolate {
                self.__free_one_page(zid, pfn, order, mt);
                return;
            }
            // RESERVE (3.x) and HIGHATOMIC (6.x) pages go on the movable list.
            mt = MigrateType::Movable;
        }
        self.cost_ns += self.costs.pcp_free_ns;
        let pindex = self.pindex(mt, order);
        {
            let p = &mut self.pages[pfn as usize];
            p.set_state(PageState::Pcp);
            p.order = order as u8;
            p.private = block_mt as u8;
        }
        match self.policy.pcp {
            // 2.6.31 free_hot_cold_page and 2.6.32+ alike, on one list or the type's list.
            PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList => {
                let pcp = &mut self.zones[zid].pcp[cpu];
                if cold {
                    list_add_tail(&mut self.pages, &mut pcp.lists[pindex], pfn);
                } else {
                    list_add(&mut self.pages, &mut pcp.lists[pindex], pfn);
                }
                pcp.count += 1;
                if pcp.count >= pcp.high {
                    let batch = pcp.batch;
                    self.free_pcppages_bulk(zid, cpu, batch, pindex);
                }
            }
            PcpPolicy::OrderListsFixedHigh => {
                let free_high = {
                    let pcp = &mut self.zones[zid].pcp[cpu];
                    list_add(&mut self.pages, &mut pcp.lists[pindex], pfn);
                    pcp.count += 1 << order;
                    pcp.free_factor != 0 && order > 0 && order <= PAGE_ALLOC_COSTLY_ORDER
                };
                let high = self.nr_pcp_high_fixed(zid, cpu, free_high);
                if self.zones[zid].pcp[cpu].count >= high {
                    let to_free = self.nr_pcp_free_fixed(zid, cpu, high, free_high);
                    self.free_pcppages_bulk(zid, cpu, to_free, pindex);
                }
            }
            PcpPolicy::OrderListsAutotune => {
                let free_high;
                {
                    let pcp = &mut self.zones[zid].pcp[cpu];
                    pcp.alloc_factor >>= 1;
                    list_add(&mut self.pages, &mut pcp.lists[pindex], pfn);
                    pcp.count += 1 << order;
                    let batch = pcp.batch;
                    // Free high-order pages in batches when a burst of them is being freed.
                    if order > 0 && order <= PAGE_ALLOC_COSTLY_ORDER {
                        free_high = pcp.free_count >= batch
                            && pcp.flags & PCPF_PREV_FREE_HIGH_ORDER != 0
                            && (pcp.flags & PCPF_FREE_HIGH_BATCH == 0 || pcp.count >= batch);
                        pcp.flags |= PCPF_PREV_FREE_HIGH_ORDER;
                    } else {
                        free_high = false;
                        if pcp.flags & PCPF_PREV_FREE_HIGH_ORDER != 0 {
                            pcp.flags &= !PCPF_PREV_FREE_HIGH_ORDER;
                        }
                    }
                    if pcp.free_count < batch << PCP_BATCH_SCALE_MAX {
                        pcp.free_count += 1 << order;
                    }
                }
                let high = self.nr_pcp_high(zid, cpu, free_high);
                let (count, batch, free_count) = {
                    let pcp = &self.zones[zid].pcp[cpu];
                    (pcp.count, pcp.batch, pcp.free_count)
                };
                if count >= high {
                    let to_free = if free_high {
                        count.min(batch << PCP_BATCH_SCALE_MAX)
                    } else if high < batch {
                        1
                    } else {
                        free_count.clamp(batch, high.saturating_sub(batch).max(batch))
                    };
                    self.free_pcppages_bulk(zid, cpu, to_free, pindex);
                    if self.zones[zid].flags & ZONE_BELOW_HIGH != 0 {
                        let hw = self.zones[zid].high_wmark_pages();
                        if self.zone_watermark_ok(zid, 0, hw, ZoneType::Movable as usize, 0) {
                            self.zones[zid].flags &= !ZONE_BELOW_HIGH;
                        }
                    }
                }
            }
        }
    }

    /// Returns every page on `cpu`'s pcp lists of zone `zid` to the buddy lists (drain_pages_zone).
    pub fn drain_pages_zone(&mut self, zid: usize, cpu: usize) {
        let count = self.zones[zid].pcp[cpu].count;
        if count > 0 {
            self.free_pcppages_bulk(zid, cpu, count, 0);
        }
    }

    /// 6.x decay_pcp_high: once per vmstat refresh, lower an auto-tuned `high` by an eighth
    /// (not below high_min, nor more than a scaled batch below the count) and free what is above
    /// it. Returns the number of changes.
    pub fn decay_pcp_high(&mut self, zid: usize, cpu: usize) -> u32 {
        let mut todo = 0;
        let pcp = &mut self.zones[zid].pcp[cpu];
        let (high_min, batch) = (pcp.high_min as i64, pcp.batch as i64);
        if (pcp.high as i64) > high_min {
            let h = pcp.high as i64;
            pcp.high = (pcp.count as i64 - (batch << PCP_BATCH_SCALE_MAX)).max(h - (h >> 3)).max(high_min) as u32;
            if pcp.high as i64 > high_min {
                todo += 1;
            }
        }
        let to_drain = pcp.count as i64 - pcp.high as i64;
        if to_drain > 0 {
            self.free_pcppages_bulk(zid, cpu, to_drain as u32, 0);
            todo += 1;
        }
        todo
    }

    /// Frees one batch from `cpu`'s pcp lists of a zone (drain_zone_pages).
    pub fn drain_zone_pages(&mut self, zid: usize, cpu: usize) {
        let pcp = &self.zones[zid].pcp[cpu];
        let to_drain = pcp.count.min(pcp.batch);
        if to_drain > 0 {
            self.free_pcppages_bulk(zid, cpu, to_drain, 0);
        }
    }

    /// Drains every CPU's pcp lists in every zone (drain_all_pages).
    pub fn drain_all_pages(&mut self) {
        for zid in 0..self.zones.len() {
            for cpu in 0..self.cpu_to_node.len() {
                self.drain_pages_zone(zid, cpu);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Watermarks.

    /// Returns true if zone `zid` has `mark` pages free beyond what an allocation of `order`
    /// limited to zones ≤ `highest_zoneidx` must leave (__zone_watermark_ok, per era).
    pub fn __zone_watermark_ok(&self, zid: usize, order: usize, mark: u64, highest_zoneidx: usize, alloc_flags: AllocFlags, free_pages: i64) -> bool {
        self.wmark_ok(&self.zones[zid], order, mark, highest_zoneidx, alloc_flags, free_pages)
    }

    /// __zone_watermark_ok on a zone reference.
    #[inline(always)]
    fn wmark_ok(&self, z: &Zone, order: usize, mark: u64, highest_zoneidx: usize, alloc_flags: AllocFlags, free_pages: i64) -> bool {
        let mut min = mark as i64;
        let reserve = z.lowmem_reserve[highest_zoneidx] as i64;
        match self.policy.watermark_check {
            WatermarkCheck::OrderHalving => {
                // 3.1 subtracts (1 << order) + 1.
                let mut free = free_pages - ((1i64 << order) + 1);
                if alloc_flags & ALLOC_HIGH != 0 {
                    min -= min / 2;
                }
                if alloc_flags & ALLOC_HARDER != 0 {
                    min -= min / 4;
                }
                if free <= min + reserve {
                    return false;
                }
                for o in 0..order {
                    free -= (z.free_area[o].nr_free << o) as i64;
                    min >>= 1;
                    if free <= min {
                        return false;
                    }
                }
                true
            }
            WatermarkCheck::FreeListPresence => {
                let mut free = free_pages - ((1i64 << order) - 1);
                if alloc_flags & ALLOC_RESERVES == 0 {
                    free -= z.nr_reserved_highatomic as i64;
                }
                if alloc_flags & ALLOC_RESERVES != 0 {
                    if alloc_flags & ALLOC_HIGH != 0 {
                        min -= min / 2;
                        if alloc_flags & ALLOC_HARDER != 0 {
                            min -= min / 4;
                        }
                    }
                    if alloc_flags & ALLOC_OOM != 0 {
                        min -= min / 2;
                    }
                }
                if free <= min + reserve {
                    return false;
                }
                if order == 0 {
                    return true;
                }
                for o in order..self.max_order + 1 {
                    let area = &z.free_area[o];
                    if area.nr_free == 0 {
                        continue;
                    }
                    for mt in 0..MIGRATE_PCPTYPES {
                        if !area.free_list[mt].is_empty() {
                            return true;
                        }
                    }
                    if alloc_flags & (ALLOC_HIGHATOMIC | ALLOC_OOM) != 0
                        && !area.free_list[MigrateType::HighAtomic as usize].is_empty()
                    {
                        return true;
                    }
                }
                false
            }
        }
    }

    /// zone_watermark_ok with the zone's NR_FREE_PAGES as zone_page_state() reads it (the
    /// CPUs' unfolded diffs left out).
    #[inline(always)]
    pub fn zone_watermark_ok(&self, zid: usize, order: usize, mark: u64, highest_zoneidx: usize, alloc_flags: AllocFlags) -> bool {
        self.__zone_watermark_ok(zid, order, mark, highest_zoneidx, alloc_flags, self.zones[zid].nr_free_pages_vmstat())
    }

    /// zone_watermark_ok_safe (kswapd's check): with `kswapd-pressure` (2.6.36+) the CPUs' diffs
    /// are added up (zone_page_state_snapshot) when the folded counter is below the zone's
    /// percpu_drift_mark; with `fixed` it is zone_watermark_ok.
    pub fn zone_watermark_ok_safe(&self, zid: usize, order: usize, mark: u64, highest_zoneidx: usize, alloc_flags: AllocFlags) -> bool {
        let z = &self.zones[zid];
        let mut free = z.nr_free_pages_vmstat();
        if self.policy.vmstat_threshold == VmstatThreshold::KswapdPressure && z.percpu_drift_mark != 0 && free < z.percpu_drift_mark {
            free = z.nr_free_pages;
        }
        self.__zone_watermark_ok(zid, order, mark, highest_zoneidx, alloc_flags, free)
    }

    /// 6.x zone_watermark_fast: an order-0 shortcut, and the boost exemption for __GFP_HIGH
    /// (3.x: plain zone_watermark_ok). The caller charges the check's cost.
    #[inline(always)]
    fn zone_watermark_fast(&self, z: &Zone, order: usize, mark: u64, highest_zoneidx: usize, alloc_flags: AllocFlags) -> bool {
        let free = z.nr_free_pages_vmstat();
        if self.policy.watermark_check == WatermarkCheck::OrderHalving {
            return self.wmark_ok(z, order, mark, highest_zoneidx, alloc_flags, free);
        }
        if order == 0 {
            let reserved = if alloc_flags & ALLOC_RESERVES == 0 { z.nr_reserved_highatomic as i64 } else { 0 };
            let usable = free - free.min(reserved);
            if usable > (mark + z.lowmem_reserve[highest_zoneidx]) as i64 {
                return true;
            }
        }
        if self.wmark_ok(z, order, mark, highest_zoneidx, alloc_flags, free) {
            return true;
        }
        if order == 0 && alloc_flags & ALLOC_HIGH != 0 && z.watermark_boost > 0 && alloc_flags & ALLOC_WMARK_MASK == ALLOC_WMARK_MIN {
            return self.wmark_ok(z, order, z.watermark[WMARK_MIN], highest_zoneidx, alloc_flags, free);
        }
        false
    }

    /// The watermark checks of the zonelist walk for one zone. 6.7+ (auto-tuned pcp lists) first
    /// probes the high watermark (unless ZONE_BELOW_HIGH is set) and sets ZONE_BELOW_HIGH when it
    /// fails, which tunes the pcp lists; then the requested watermark. Returns whether the zone
    /// may be used.
    #[inline(always)]
    fn zone_allows(&mut self, zid: usize, order: usize, alloc_flags: AllocFlags, highest_zoneidx: usize) -> bool {
        let z = &self.zones[zid];
        let wm = (alloc_flags & ALLOC_WMARK_MASK) as usize;
        let (ok, checks, below_high) = match self.era {
            Era::Linux3 => {
                if alloc_flags & ALLOC_NO_WATERMARKS != 0 {
                    (true, 0, false)
                } else {
                    (self.zone_watermark_fast(z, order, z.watermark[wm], highest_zoneidx, alloc_flags), 1, false)
                }
            }
            Era::Linux6 => {
                let mut checks = 0;
                let mut below_high = false;
                let mut ok = false;
                if z.flags & ZONE_BELOW_HIGH == 0 && self.policy.pcp == PcpPolicy::OrderListsAutotune {
                    checks += 1;
                    ok = self.zone_watermark_fast(z, order, z.high_wmark_pages(), highest_zoneidx, alloc_flags);
                    below_high = !ok;
                }
                if !ok {
                    checks += 1;
                    ok = self.zone_watermark_fast(z, order, z.wmark_pages(wm), highest_zoneidx, alloc_flags)
                        || alloc_flags & ALLOC_NO_WATERMARKS != 0;
                }
                (ok, checks, below_high)
            }
        };
        self.cost_ns += checks * self.costs.watermark_check_ns;
        if below_high {
            self.zones[zid].flags |= ZONE_BELOW_HIGH;
        }
        ok
    }

    // ------------------------------------------------------------------------------------------
    // Allocation.

    /// Takes a block of `order` from zone `zid` through the pcp lists or the buddy lists and
    /// counts it (rmqueue / 3.x buffered_rmqueue).
    fn rmqueue(&mut self, preferred: usize, zid: usize, cpu: usize, order: usize, gfp: Gfp, alloc_flags: AllocFlags, mt: MigrateType) -> Option<Pfn> {
        let cold = gfp.has(Gfp::COLD);
        let mut page = None;
        if self.pcp_allowed_order(order) {
            page = self.rmqueue_pcplist(zid, cpu, order, mt, cold, alloc_flags);
            if page.is_none() && matches!(self.policy.pcp, PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList) {
                return None;
            }
        }
        if page.is_none() {
            page = self.rmqueue_buddy(zid, cpu, order, alloc_flags, mt);
        }
        let pfn = page?;
        {
            let p = &mut self.pages[pfn as usize];
            p.set_state(PageState::Allocated);
            p.order = order as u8;
            p.flags = if mt == MigrateType::Movable { PG_MOVABLE_ALLOC } else { 0 };
        }
        let zt = self.zones[zid].zone_type;
        self.events.count(VmStat::for_zone(VmStat::PgallocDma, zt), 1 << order);
        self.zone_statistics(preferred, zid, cpu);
        if alloc_flags & ALLOC_KSWAPD != 0 && self.zones[zid].flags & ZONE_BOOSTED_WATERMARK != 0 {
            self.wake_for_boost(zid);
        }
        Some(pfn)
    }

    /// Takes a block straight from the buddy lists under the zone lock (rmqueue_buddy): first
    /// the highatomic reserve for high-order atomic requests, then __rmqueue, then the reserve
    /// again for non-blocking or OOM requests.
    #[inline(never)]
    fn rmqueue_buddy(&mut self, zid: usize, cpu: usize, order: usize, alloc_flags: AllocFlags, mt: MigrateType) -> Option<Pfn> {
        let before = self.zones[zid].nr_free_pages;
        let page = self.rmqueue_buddy_locked(zid, cpu, order, alloc_flags, mt);
        self.mod_zone_freepage_state(zid, cpu, self.zones[zid].nr_free_pages - before);
        page
    }

    /// rmqueue_buddy's work under the zone lock.
    #[inline(always)]
    fn rmqueue_buddy_locked(&mut self, zid: usize, cpu: usize, order: usize, alloc_flags: AllocFlags, mt: MigrateType) -> Option<Pfn> {
        self.cost_ns += self.costs.zone_lock_ns;
        self.zones[zid].pcp[cpu].stat_diff = true;
        let highatomic = self.policy.atomic_reserve == AtomicReserve::Highatomic;
        if alloc_flags & ALLOC_HIGHATOMIC != 0 && highatomic {
            if let Some(p) = self.__rmqueue_smallest(zid, order, MigrateType::HighAtomic) {
                return Some(p);
            }
        }
        let page = self.__rmqueue(zid, order, mt, alloc_flags);
        if page.is_none() && alloc_flags & (ALLOC_OOM | ALLOC_HARDER) != 0 && highatomic {
            return self.__rmqueue_smallest(zid, order, MigrateType::HighAtomic);
        }
        page
    }

    /// A boosted zone served an allocation: wake kswapd to reclaim the boost.
    #[cold]
    #[inline(never)]
    fn wake_for_boost(&mut self, zid: usize) {
        self.zones[zid].flags &= !ZONE_BOOSTED_WATERMARK;
        let (node, zt) = (self.zones[zid].node, self.zones[zid].zone_type as usize);
        self.wakeup_kswapd(node, 0, zt);
    }

    /// NUMA hit/miss/local/other accounting (zone_statistics): a hit or miss and local or
    /// other on the zone that served the allocation, foreign on the preferred zone. The
    /// global counters are these summed over the zones (vmstat_snapshot).
    #[inline(always)]
    fn zone_statistics(&mut self, preferred: usize, zid: usize, cpu: usize) {
        let znode = self.zones[zid].node;
        if znode == self.zones[preferred].node {
            self.zones[zid].numa_stat[NumaStat::Hit as usize] += 1;
        } else {
            self.zones[zid].numa_stat[NumaStat::Miss as usize] += 1;
            self.zones[preferred].numa_stat[NumaStat::Foreign as usize] += 1;
        }
        let local = if znode == self.cpu_to_node[cpu] { NumaStat::Local } else { NumaStat::Other };
        self.zones[zid].numa_stat[local as usize] += 1;
    }

    /// 6.x reserve_highatomic_pageblock: after a high-order atomic allocation, reserve its
    /// pageblock for such allocations, up to about 1% of the zone.
    #[cold]
    #[inline(never)]
    fn reserve_highatomic_pageblock(&mut self, pfn: Pfn, zid: usize) {
        let z = &self.zones[zid];
        let max_managed = (z.managed_pages / 100).div_ceil(self.pageblock_nr_pages()) * self.pageblock_nr_pages() + self.pageblock_nr_pages();
        if z.nr_reserved_highatomic >= max_managed {
            return;
        }
        let mt = self.get_pageblock_migratetype(pfn);
        if !mt.is_pcptype() {
            return;
        }
        if self.pageblock_range_in_zone(zid, pfn).is_none() {
            return;
        }
        self.zones[zid].nr_reserved_highatomic += self.pageblock_nr_pages();
        self.set_pageblock_migratetype(pfn, MigrateType::HighAtomic);
        self.move_freepages_block(zid, pfn, MigrateType::HighAtomic);
    }

    /// The zones `ac` may use, in zonelist order.
    #[inline(always)]
    fn zonelist(&self, ac: &AllocContext) -> &[usize] {
        let n = &self.nodes[ac.nid];
        if ac.thisnode {
            &n.zonelist_nofallback
        } else {
            &n.zonelist
        }
    }

    /// Walks the zonelist for a zone that passes the watermark and has a page
    /// (get_page_from_freelist; the 3.x form with the zonelist cache when the policy has one).
    pub fn get_page_from_freelist(&mut self, gfp: Gfp, order: usize, alloc_flags: AllocFlags, ac: &AllocContext, cpu: usize) -> Option<Pfn> {
        if self.policy.zonelist_cache != ZonelistCache::None && !ac.thisnode {
            return self.get_page_from_freelist_zlc(gfp, order, alloc_flags, ac, cpu);
        }
        self.get_page_from_freelist_plain(gfp, order, alloc_flags, ac, cpu)
    }

    /// The zonelist walk without a zonelist cache (6.x, and 3.x without ZLC).
    fn get_page_from_freelist_plain(&mut self, gfp: Gfp, order: usize, mut alloc_flags: AllocFlags, ac: &AllocContext, cpu: usize) -> Option<Pfn> {
        let preferred = ac.preferred_zone?;
        'retry: loop {
            let no_fallback = alloc_flags & ALLOC_NOFRAGMENT != 0;
            let nr = self.zonelist(ac).len();
            for i in 0..nr {
                let zid = self.zonelist(ac)[i];
                if self.zones[zid].zone_type as usize > ac.highest_zoneidx {
                    continue;
                }
                if self.era == Era::Linux6 && no_fallback && self.nodes.len() > 1 && zid != preferred && self.zones[zid].node != self.zones[preferred].node {
                    alloc_flags &= !ALLOC_NOFRAGMENT;
                    continue 'retry;
                }
                if self.zone_dirty_limited(zid, gfp, alloc_flags) {
                    continue;
                }
                if !self.zone_allows(zid, order, alloc_flags, ac.highest_zoneidx) {
                    // 3.x zone_reclaim when the mode is on; 6.x node_reclaim (off by default)
                    // is not modelled.
                    if self.era == Era::Linux6 || self.sysctl.zone_reclaim_mode.unwrap_or(0) == 0 {
                        continue;
                    }
                    match self.zone_reclaim(zid, gfp, order, cpu) {
                        ZoneReclaim::NoScan | ZoneReclaim::Full => continue,
                        _ => {
                            if !self.zone_allows(zid, order, alloc_flags, ac.highest_zoneidx) {
                                continue;
                            }
                        }
                    }
                }
                if let Some(pfn) = self.rmqueue(preferred, zid, cpu, order, gfp, alloc_flags, ac.migratetype) {
                    if alloc_flags & ALLOC_HIGHATOMIC != 0 && order > 0 && self.policy.atomic_reserve == AtomicReserve::Highatomic {
                        self.reserve_highatomic_pageblock(pfn, zid);
                    }
                    return Some(pfn);
                }
            }
            if no_fallback {
                alloc_flags &= !ALLOC_NOFRAGMENT;
                continue 'retry;
            }
            return None;
        }
    }

    /// The 3.x zonelist walk with the zonelist cache (ZLC) and zone_reclaim, in the variant the
    /// policy names (3.0-rc6 `vanilla`, cd38b115d5ad `zlcfirst`, +76d3fbf8fbf6 `zlcreconsider`).
    /// Zones found full are skipped for up to a second; if nothing is found with the cache
    /// active, the zonelist is scanned once more without it.
    fn get_page_from_freelist_zlc(&mut self, gfp: Gfp, order: usize, alloc_flags: AllocFlags, ac: &AllocContext, cpu: usize) -> Option<Pfn> {
        let preferred = ac.preferred_zone?;
        let vanilla = self.policy.zonelist_cache == ZonelistCache::Vanilla;
        let multi_node = self.nodes.len() > 1;
        let reclaim_mode = self.sysctl.zone_reclaim_mode.unwrap_or(0);
        let nid = ac.nid;
        let mut zlc_active = false;
        let mut did_zlc_setup = false;
        loop {
            let nr = self.nodes[nid].zonelist.len();
            for i in 0..nr {
                let zid = self.nodes[nid].zonelist[i];
                if self.zones[zid].zone_type as usize > ac.highest_zoneidx {
                    continue;
                }
                if zlc_active && !self.zlc_zone_worth_trying(nid, i) {
                    continue;
                }
                // None: try the zone; Some(true): this_zone_full; Some(false): next zone unmarked.
                let mut skip: Option<bool> = None;
                // Per-zone dirty limits v1: a __GFP_WRITE allocation treats a zone over its
                // dirty limit as full.
                if self.zone_dirty_limited(zid, gfp, alloc_flags) {
                    skip = Some(true);
                } else if !self.zone_allows(zid, order, alloc_flags, ac.highest_zoneidx) {
                    if !vanilla && !did_zlc_setup && multi_node {
                        self.zlc_setup(nid);
                        zlc_active = true;
                        did_zlc_setup = true;
                    }
                    skip = Some(true);
                    if reclaim_mode != 0 {
                        // cd38b115d5ad: the zone may have just become covered by the cache.
                        if !vanilla && zlc_active && !self.zlc_zone_worth_trying(nid, i) {
                            continue;
                        }
                        skip = match self.zone_reclaim(zid, gfp, order, cpu) {
                            ZoneReclaim::NoScan => Some(false),
                            // 3.0-rc6 marks a FULL zone; cd38b115d5ad leaves it to kswapd and
                            // direct reclaim.
                            ZoneReclaim::Full => Some(vanilla),
                            ZoneReclaim::Some | ZoneReclaim::Success => {
                                if self.zone_allows(zid, order, alloc_flags, ac.highest_zoneidx) {
                                    None
                                } else {
                                    Some(true)
                                }
                            }
                        };
                    }
                }
                if skip.is_none() {
                    if let Some(pfn) = self.rmqueue(preferred, zid, cpu, order, gfp, alloc_flags, ac.migratetype) {
                        return Some(pfn);
                    }
                    skip = Some(true);
                }
                if skip == Some(true) {
                    self.zlc_mark_zone_full(nid, i);
                }
                // 3.0-rc6 sets the cache up only once the first zone has been tried.
                if vanilla && !did_zlc_setup && multi_node {
                    self.zlc_setup(nid);
                    zlc_active = true;
                    did_zlc_setup = true;
                }
            }
            if zlc_active {
                // Disable the cache for a second scan.
                zlc_active = false;
                continue;
            }
            return None;
        }
    }

    /// zlc_setup: clears the full-zones bitmap if it is more than a second old.
    fn zlc_setup(&mut self, nid: usize) {
        let now = self.now_ns;
        let zlc = &mut self.nodes[nid].zlc;
        if now > zlc.last_full_zap_ns + 1_000_000_000 {
            zlc.fullzones.iter_mut().for_each(|b| *b = false);
            zlc.last_full_zap_ns = now;
        }
    }

    /// zlc_zone_worth_trying: the zone was not found full recently (no cpusets: every node is
    /// allowed).
    #[inline(always)]
    fn zlc_zone_worth_trying(&self, nid: usize, i: usize) -> bool {
        !self.nodes[nid].zlc.fullzones[i]
    }

    /// zlc_mark_zone_full.
    #[inline(always)]
    fn zlc_mark_zone_full(&mut self, nid: usize, i: usize) {
        self.nodes[nid].zlc.fullzones[i] = true;
    }

    /// zlc_clear_zones_full: forget every full mark (after direct reclaim, `zlcreconsider`).
    pub fn zlc_clear_zones_full(&mut self, nid: usize) {
        self.nodes[nid].zlc.fullzones.iter_mut().for_each(|b| *b = false);
    }

    /// The alloc_context of an allocation from `cpu` (prepare_alloc_pages).
    pub fn prepare_alloc_pages(&self, gfp: Gfp, cpu: usize, nid: Option<usize>) -> AllocContext {
        let nid = nid.unwrap_or(self.cpu_to_node[cpu]);
        let highest = gfp.gfp_zone() as usize;
        let mt = if self.page_group_by_mobility_disabled { MigrateType::Unmovable } else { gfp.migratetype() };
        let thisnode = gfp.has(Gfp::THISNODE);
        let n = &self.nodes[nid];
        AllocContext {
            nid,
            thisnode,
            highest_zoneidx: highest,
            migratetype: mt,
            preferred_zone: if thisnode { n.preferred_nofallback[highest] } else { n.preferred[highest] },
            spread_dirty_pages: gfp.has(Gfp::WRITE),
        }
    }

    /// 6.x alloc_flags_nofragment: ALLOC_KSWAPD from the gfp, and ALLOC_NOFRAGMENT when the
    /// preferred zone is Normal and a DMA32 zone below it is populated (or there is one node).
    fn alloc_flags_nofragment(&self, preferred: Option<usize>, gfp: Gfp) -> AllocFlags {
        let mut flags = if gfp.has(Gfp::KSWAPD_RECLAIM) { ALLOC_KSWAPD } else { 0 };
        if self.policy.fallback != FallbackPolicy::StealAlikeBoost {
            return flags;
        }
        let Some(zid) = preferred else { return flags };
        if self.zones[zid].zone_type != ZoneType::Normal {
            return flags;
        }
        if self.nodes.len() > 1 && !self.zones[zid - 1].populated() {
            return flags;
        }
        flags |= ALLOC_NOFRAGMENT;
        flags
    }

    /// The slow path's flags (gfp_to_alloc_flags).
    fn gfp_to_alloc_flags(&self, gfp: Gfp, order: usize) -> AllocFlags {
        let mut f = ALLOC_WMARK_MIN | ALLOC_CPUSET;
        if gfp.has(Gfp::HIGH) {
            f |= ALLOC_HIGH;
        }
        if gfp.has(Gfp::KSWAPD_RECLAIM) {
            f |= ALLOC_KSWAPD;
        }
        if !gfp.allow_blocking() {
            f |= ALLOC_HARDER;
            if order > 0 && self.policy.atomic_reserve == AtomicReserve::Highatomic {
                f |= ALLOC_HIGHATOMIC;
            }
            if f & ALLOC_HIGH != 0 {
                f &= !ALLOC_CPUSET;
            }
        }
        f
    }

    /// Records a kswapd wakeup request for node `nid` (wakeup_kswapd); the engine runs kswapd.
    pub fn wakeup_kswapd(&mut self, nid: usize, order: usize, highest_zoneidx: usize) {
        let n = &mut self.nodes[nid];
        if n.kswapd_highest_zoneidx < highest_zoneidx {
            n.kswapd_highest_zoneidx = highest_zoneidx;
        }
        if n.kswapd_order < order {
            n.kswapd_order = order;
        }
        if !n.kswapd_wait_pending {
            n.kswapd_wait_pending = true;
            self.kswapd_wakeups.push(nid);
            self.sched.kswapd_woken(nid, self.cost_ns);
        }
    }

    /// Wakes the kswapd of the nodes in the zonelist that need it (wake_all_kswapds /
    /// 3.x wake_all_kswapd): 3.x asks per zone and skips a zone above its low watermark; 6.x asks
    /// once per node and skips a node that is balanced (some eligible zone above its high
    /// watermark) and not boosted.
    fn wake_all_kswapds(&mut self, order: usize, ac: &AllocContext) {
        let nr = self.zonelist(ac).len();
        let mut last_node = usize::MAX;
        for i in 0..nr {
            let zid = self.zonelist(ac)[i];
            let (zt, node) = (self.zones[zid].zone_type as usize, self.zones[zid].node);
            if zt > ac.highest_zoneidx {
                continue;
            }
            let needed = match self.era {
                Era::Linux3 => {
                    let lw = self.zones[zid].low_wmark_pages();
                    !self.zone_watermark_ok(zid, order, lw, 0, 0)
                }
                Era::Linux6 => {
                    if node == last_node {
                        continue;
                    }
                    last_node = node;
                    !self.pgdat_balanced(node, order, ac.highest_zoneidx) || self.pgdat_watermark_boosted(node, ac.highest_zoneidx)
                }
            };
            if needed {
                self.wakeup_kswapd(node, order, ac.highest_zoneidx);
            }
        }
    }

    /// Returns true if some zone of `node` up to `highest_zoneidx` meets its high watermark for
    /// `order` (6.x pgdat_balanced; a node without managed zones counts as balanced).
    pub fn pgdat_balanced(&self, node: usize, order: usize, highest_zoneidx: usize) -> bool {
        let first = node * MAX_NR_ZONES;
        let mut any = false;
        for zid in first..=first + highest_zoneidx {
            let z = &self.zones[zid];
            if z.managed_pages == 0 {
                continue;
            }
            any = true;
            if self.zone_watermark_ok(zid, order, z.high_wmark_pages(), highest_zoneidx, 0) {
                return true;
            }
        }
        !any
    }

    /// Returns true if a zone of `node` up to `highest_zoneidx` has a watermark boost.
    fn pgdat_watermark_boosted(&self, node: usize, highest_zoneidx: usize) -> bool {
        let first = node * MAX_NR_ZONES;
        self.zones[first..=first + highest_zoneidx].iter().any(|z| z.watermark_boost > 0)
    }

    /// Allocates 2^order contiguous pages for `cpu` (__alloc_pages / __alloc_pages_nodemask).
    /// Returns the first pfn, or None when the allocation fails (at once for an order above
    /// the machine's highest, as the kernel's order >= MAX_ORDER check does).
    pub fn alloc_pages(&mut self, gfp: Gfp, order: usize, cpu: usize) -> Option<Pfn> {
        if order > self.max_order {
            return None;
        }
        if self.congestion_sleep.is_some() {
            self.pcp_diag.alloc_with_wait_owed += 1;
        }
        let ac = self.prepare_alloc_pages(gfp, cpu, None);
        // Back from the wait of an earlier attempt: the kernel's task resumes at rebalance.
        let resume = self.alloc_may_defer && std::mem::take(&mut self.alloc_resume);
        if !resume {
            let mut alloc_flags = ALLOC_WMARK_LOW | ALLOC_CPUSET;
            if self.era == Era::Linux6 {
                alloc_flags |= self.alloc_flags_nofragment(ac.preferred_zone, gfp);
            }
            if let Some(p) = self.get_page_from_freelist(gfp, order, alloc_flags, &ac, cpu) {
                return Some(p);
            }
        }
        let waits0 = self.pcp_diag.stalls;
        let page = self.__alloc_pages_slowpath(gfp, order, &ac, cpu, resume);
        self.pcp_diag.slowpath_waits[((self.pcp_diag.stalls - waits0) as usize).min(8)] += 1;
        if page.is_none() && order > 0 {
            self.pcp_diag.high_order_fail += 1;
        }
        page
    }

    /// Called when task `pid` starts a step: if it slept in the allocator's wait, the step's
    /// first stoppable allocation is the interrupted one, resumed at `rebalance`.
    pub fn arm_alloc_rebalance(&mut self, pid: u32) {
        if let Some(i) = self.alloc_rebalance.iter().position(|&p| p == pid) {
            self.alloc_rebalance.swap_remove(i);
            self.alloc_resume = true;
        }
    }

    /// Called when a task's step ends: a resume the step did not use lapses (the retried call
    /// found its pages cached and allocated nothing).
    pub fn disarm_alloc_rebalance(&mut self) {
        self.alloc_resume = false;
    }

    /// alloc_pages for a caller that can stop where the kernel's task sleeps in the slow path
    /// (the buffered read's readahead, the buffered write, the file fault): the slow path ends
    /// at its first congestion_wait, the task sleeps before it retries, as the kernel's does
    /// (2.6.32-3.x: congestion_wait or wait_iff_congested, then `goto rebalance`), and its
    /// next allocation resumes at rebalance. Other callers retry at the same instant.
    pub fn alloc_pages_or_sleep(&mut self, gfp: Gfp, order: usize, cpu: usize) -> Result<Pfn, AllocFailure> {
        self.alloc_may_defer = true;
        let page = self.alloc_pages(gfp, order, cpu);
        self.alloc_may_defer = false;
        match page {
            Some(p) => Ok(p),
            None if std::mem::take(&mut self.alloc_deferred) => Err(AllocFailure::SleepFirst),
            None => Err(AllocFailure::NoMem),
        }
    }

    /// The slow path (__alloc_pages_slowpath, 3.1 order of steps; 6.x adds nothing modelled
    /// here yet): wake kswapd, retry at the min watermark, then, for callers that may sleep and
    /// are not reclaiming already, direct reclaim (try_to_free_pages) followed by another try —
    /// after clearing the zonelist cache with `zlcreconsider` and after draining the per-cpu
    /// lists once. Without progress the OOM path is reached: the OOM killer is not modelled, so
    /// the allocation fails and counts oom_kill. Small orders retry while reclaim progresses:
    /// after the wait, at once when the caller cannot stop (`alloc_may_defer` unset), or, when
    /// it can, when the task has slept, entering again with `rebalance`. Either way the retry
    /// starts at `rebalance`: the try at the min watermark (with zone_reclaim and the other
    /// nodes), then direct reclaim; kswapd is not woken again.
    #[cold]
    #[inline(never)]
    fn __alloc_pages_slowpath(&mut self, gfp: Gfp, order: usize, ac: &AllocContext, cpu: usize, mut rebalance: bool) -> Option<Pfn> {
        self.cost_ns += self.costs.slowpath_entry_ns;
        let mut stalls = 0;
        loop {
            let alloc_flags = self.gfp_to_alloc_flags(gfp, order);
            // 2.6.32-3.x wake kswapd at `restart` only, and a retry after the wait goes back
            // to `rebalance`, the try at the min watermark; 6.x's `retry` wakes it every time.
            let restart = !std::mem::replace(&mut rebalance, true);
            if (restart || self.era == Era::Linux6) && gfp.has(Gfp::KSWAPD_RECLAIM) {
                self.wake_all_kswapds(order, ac);
            }
            if let Some(p) = self.get_page_from_freelist(gfp, order, alloc_flags, ac, cpu) {
                return Some(p);
            }
            // PF_MEMALLOC (reclaim allocating for itself) may not recurse into reclaim.
            if !gfp.allow_blocking() || self.in_reclaim {
                return None;
            }
            let zones: Vec<usize> = self.zonelist(ac).iter().copied().filter(|&z| self.zones[z].zone_type as usize <= ac.highest_zoneidx).collect();
            if gfp.has(Gfp::WRITE) && self.policy.dirty_placement == super::policy::DirtyPlacement::Perzonedirty {
                self.try_to_writeback_pages(&zones);
                if let Some(p) = self.get_page_from_freelist(gfp, order, alloc_flags, ac, cpu) {
                    return Some(p);
                }
            }
            let pcp_before: u64 = zones.iter().map(|&z| self.zones[z].pcp[cpu].count as u64).sum();
            let unusable_before = self.pcp_unusable_pages(&zones, cpu, order, ac.migratetype);
            let free_before: i64 = zones.iter().map(|&z| self.zones[z].nr_free_pages).sum();
            let progress = self.try_to_free_pages(&zones, gfp, order, cpu);
            let free_gain = zones.iter().map(|&z| self.zones[z].nr_free_pages).sum::<i64>() - free_before;
            let note = |d: &mut PcpDiag, failed: bool| {
                let i = failed as usize;
                d.reclaim_progress[i] += 1;
                d.reclaim_pcp_before[i] += pcp_before;
                d.reclaim_free_gain[i] += free_gain;
                d.reclaim_pcp_unusable[i] += unusable_before.iter().sum::<u64>();
                for (t, n) in unusable_before.iter().enumerate() {
                    d.reclaim_pcp_unusable_by_type[t] += n;
                }
            };
            if progress > 0 {
                // 76d3fbf8fbf6: after successful reclaim, reconsider all zones.
                if self.policy.zonelist_cache == ZonelistCache::Zlcreconsider {
                    self.zlc_clear_zones_full(ac.nid);
                }
                // 2.6.32 drains before its one try, and only for order > 0; 2.6.36+ tries,
                // then drains and tries again, for any order.
                let any_order = self.policy.reclaim_drain == super::policy::ReclaimDrain::AnyOrder;
                if !any_order && order > 0 {
                    self.drain_all_pages();
                }
                if let Some(p) = self.get_page_from_freelist(gfp, order, alloc_flags, ac, cpu) {
                    note(&mut self.pcp_diag, false);
                    return Some(p);
                }
                if any_order {
                    self.drain_all_pages();
                    if let Some(p) = self.get_page_from_freelist(gfp, order, alloc_flags, ac, cpu) {
                        note(&mut self.pcp_diag, false);
                        return Some(p);
                    }
                }
                note(&mut self.pcp_diag, true);
            } else if gfp.has(Gfp::FS) && !gfp.has(Gfp::NORETRY) {
                // __alloc_pages_may_oom: one last try at the high watermark, then the OOM
                // killer would run. It is not modelled: report and fail.
                let high = ALLOC_WMARK_HIGH | ALLOC_CPUSET;
                if let Some(p) = self.get_page_from_freelist(gfp, order, high, ac, cpu) {
                    return Some(p);
                }
                self.events.count(VmStat::OomKill, 1);
                return None;
            }
            // should_alloc_retry: NORETRY never; costly orders do not; small ones do while
            // reclaim makes progress (bounded here so a simulated livelock ends as a failure).
            stalls += 1;
            if gfp.has(Gfp::NORETRY) || order > PAGE_ALLOC_COSTLY_ORDER || stalls > 16 {
                if stalls > 16 {
                    self.events.count(VmStat::OomKill, 1);
                }
                return None;
            }
            // 5.16+ has no wait here (reclaim throttles itself).
            if let Some(z) = ac.preferred_zone.filter(|_| self.policy.reclaim_wait != super::policy::ReclaimWait::ReclaimThrottle) {
                self.pcp_diag.stalls += 1;
                for &zid in &zones {
                    self.pcp_diag.stall_pcp_pages += self.zones[zid].pcp.iter().map(|p| p.count as u64).sum::<u64>();
                    self.pcp_diag.stall_free_pages += self.zones[zid].nr_free_pages;
                }
                self.wait_iff_congested(z, super::vmscan::HZ_10_NS / 5);
                if self.alloc_may_defer && self.congestion_sleep.is_some() {
                    // The task sleeps now and retries at rebalance when it runs again.
                    self.alloc_deferred = true;
                    self.alloc_rebalance.push(self.sched.current_pid);
                    return None;
                }
            }
        }
    }

    /// Pages on `cpu`'s per-cpu lists of `zones` that a request of `order` and type `mt` cannot
    /// take, by their page_private type (for `PcpDiag`): on the 2.6.31 single list the pages of
    /// another type, on per-type lists the pages on the other lists.
    fn pcp_unusable_pages(&self, zones: &[usize], cpu: usize, order: usize, mt: MigrateType) -> [u64; MIGRATE_TYPES] {
        let mut by_type = [0u64; MIGRATE_TYPES];
        if !self.pcp_allowed_order(order) {
            return by_type;
        }
        let own = self.pindex(mt, order);
        let single = self.policy.pcp == PcpPolicy::Order0SingleList;
        for &z in zones {
            for (pi, list) in self.zones[z].pcp[cpu].lists.iter().enumerate() {
                if !single && pi == own {
                    continue;
                }
                for pfn in super::mm_types::list_iter(&self.pages, list) {
                    let t = self.pages[pfn as usize].private as usize;
                    if !single || t != mt as usize {
                        by_type[t] += 1;
                    }
                }
            }
        }
        by_type
    }

    /// Pageblocks of every zone by migratetype (the count /proc/pagetypeinfo ends with).
    pub fn blocks_by_type(&self) -> [u64; MIGRATE_TYPES] {
        let mut counts = [0u64; MIGRATE_TYPES];
        for z in self.zones.iter().filter(|z| z.spanned_pages > 0) {
            let mut pfn = z.zone_start_pfn as u64 & !(self.pageblock_nr_pages() - 1);
            while pfn < z.zone_end_pfn() as u64 {
                if self.block_has_present(pfn as Pfn) {
                    counts[self.get_pageblock_migratetype(pfn as Pfn) as usize] += 1;
                }
                pfn += self.pageblock_nr_pages();
            }
        }
        counts
    }

    /// File pages on the LRU lists by the migratetype of the pageblock they lie in (mmtwin's
    /// own figure: page cache placed outside movable blocks).
    pub fn file_lru_by_block(&self) -> [u64; MIGRATE_TYPES] {
        let mut counts = [0u64; MIGRATE_TYPES];
        for (pfn, p) in self.pages.iter().enumerate() {
            if p.state() == PageState::Allocated && p.flags & super::mm_types::PG_LRU != 0 && p.flags & super::mm_types::PG_SWAPBACKED == 0 {
                counts[self.get_pageblock_migratetype(pfn as Pfn) as usize] += 1;
            }
        }
        counts
    }

    /// Frees 2^order pages at `pfn` from `cpu` (__free_pages / free_the_page).
    pub fn free_pages(&mut self, pfn: Pfn, order: usize, cpu: usize) {
        self.free_pages_hint(pfn, order, cpu, false)
    }

    /// Frees with a cold hint (3.x free_cold_page for order 0).
    pub fn free_pages_hint(&mut self, pfn: Pfn, order: usize, cpu: usize, cold: bool) {
        debug_assert_eq!(self.pages[pfn as usize].state(), PageState::Allocated, "double free of pfn {pfn}");
        debug_assert_eq!(self.pages[pfn as usize].order as usize, order, "free of pfn {pfn} at wrong order");
        debug_assert_eq!(self.pages[pfn as usize].flags & super::mm_types::PG_LRU, 0, "free of pfn {pfn} still on an LRU");
        let zid = self.page_zone(pfn);
        self.pages[pfn as usize].flags = 0;
        self.events.count(VmStat::Pgfree, 1 << order);
        if self.pcp_allowed_order(order) {
            self.free_unref_page(zid, cpu, pfn, order, cold);
        } else {
            self.cost_ns += self.costs.zone_lock_ns;
            self.zones[zid].pcp[cpu].stat_diff = true;
            self.zones[zid].all_unreclaimable = false;
            self.zones[zid].pages_scanned = 0;
            let mt = self.get_pageblock_migratetype(pfn);
            self.__free_one_page(zid, pfn, order, mt);
            self.mod_zone_freepage_state(zid, cpu, 1 << order);
        }
    }

    /// __mod_zone_page_state(zone, NR_FREE_PAGES, delta) on `cpu`: the change goes to the CPU's
    /// diff, and the diff is folded into the zone's counter instead when the change would take
    /// it beyond ± the zone's stat_threshold.
    #[inline(always)]
    pub(crate) fn mod_zone_freepage_state(&mut self, zid: usize, cpu: usize, delta: i64) {
        let z = &mut self.zones[zid];
        let t = i64::from(z.stat_threshold);
        let old = i64::from(z.free_diff[cpu]);
        let x = old + delta;
        if x > t || x < -t {
            z.free_diff_sum -= old;
            z.free_diff[cpu] = 0;
        } else {
            z.free_diff_sum += delta;
            z.free_diff[cpu] = x as i32;
        }
    }

    /// Folds `cpu`'s NR_FREE_PAGES diff of zone `zid` into the zone's counter.
    #[inline(always)]
    pub(crate) fn fold_zone_freepage_diff(&mut self, zid: usize, cpu: usize) {
        let z = &mut self.zones[zid];
        z.free_diff_sum -= i64::from(std::mem::take(&mut z.free_diff[cpu]));
    }
}

/// Why `alloc_pages_or_sleep` returned no page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocFailure {
    /// The allocation failed even after reclaim.
    NoMem,
    /// The task waits in the allocator first (the wait is owed) and retries when it wakes.
    SleepFirst,
}

/// mmtwin's own "why" figures for the per-cpu lists (no /proc counter has them): what the
/// 2.6.31 single list did, and the state the allocator saw when it slept in the slow path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcpDiag {
    /// 2.6.31 single list: pages a search passed over before it found its type.
    pub searched: u64,
    /// 2.6.31 single list: searches that found no page of the requested type and refilled
    /// ("Allocate more to the pcp list if necessary").
    pub allocate_more: u64,
    /// 2.6.31 single list: list heads handed out after such a refill to a request of another
    /// type, by [requested type][the page's page_private type].
    pub other_type: [[u64; MIGRATE_TYPES]; MIGRATE_TYPES],
    /// Every era: the slow path's waits before a retry (congestion_wait or its successors),
    /// with the pages on the per-cpu lists and NR_FREE_PAGES of the zonelist's zones summed
    /// over them (divide by `stalls` for the mean at a wait).
    pub stalls: u64,
    pub stall_pcp_pages: u64,
    pub stall_free_pages: i64,
    /// Allocations of order > 0 that failed (any caller, __GFP_NORETRY first tries included).
    pub high_order_fail: u64,
    /// Direct reclaims that made progress, [0] those after which the allocation succeeded,
    /// [1] those after which it failed (and the task waited or gave up): how many, the pages
    /// on the reclaiming CPU's per-cpu lists before the reclaim, and how much NR_FREE_PAGES
    /// (of the zonelist's zones) rose during it, each summed.
    pub reclaim_progress: [u64; 2],
    pub reclaim_pcp_before: [u64; 2],
    pub reclaim_free_gain: [i64; 2],
    /// Of those pages on the reclaiming CPU's lists, the ones the allocation could not take:
    /// on the single list those whose page_private is another type, on per-type lists those on
    /// the other types' lists; summed, and (all reclaims together) by their page_private type.
    pub reclaim_pcp_unusable: [u64; 2],
    pub reclaim_pcp_unusable_by_type: [u64; MIGRATE_TYPES],
    /// Slow-path calls by the number of waits they made before they returned ([k] for k waits,
    /// the last bucket 8 or more).
    pub slowpath_waits: [u64; 9],
    /// Allocations entered while the task already owed a congestion_wait from an earlier one in
    /// the same step (the sleep comes after the step).
    pub alloc_with_wait_owed: u64,
}

/// 6.x CONFIG_PCP_BATCH_SCALE_MAX default.
pub const PCP_BATCH_SCALE_MAX: u8 = 5;

/// Page flag: the allocation was movable (stands in for PageLRU/__PageMovable when judging
/// whether an in-use page could be migrated).
pub const PG_MOVABLE_ALLOC: u32 = 1 << 0;
