//! Dirty page accounting and throttling (mm/page-writeback.c, 3.1 semantics).
//!
//! * set_page_dirty / clear_page_dirty_for_io / cancel_dirty_page keep NR_FILE_DIRTY, the
//!   mapping's dirty tag and the inode's dirty state.
//! * test_set_page_writeback / end_page_writeback keep NR_WRITEBACK and NR_WRITTEN; a page that
//!   reclaim marked PG_reclaim is rotated to the inactive tail when its write completes.
//! * global_dirty_limits: dirty_ratio and dirty_background_ratio (or the _bytes forms) of the
//!   dirtyable memory (free + file LRU, + anon LRU with swap; 6.x also minus totalreserve).
//! * balance_dirty_pages (3.1, before the IO-less rework of 3.2): the task that brings its
//!   CPU's count of dirtied pages (its own count from 3.2) to the ratelimit checks the limits;
//!   over them, it writes back a chunk of the device's dirty pages itself and pauses (1 jiffy
//!   doubling to HZ/10), until the dirty + writeback count falls back or 200 ms have passed
//!   with the excess halved.

use crate::block::PlugSite;
use super::gfp::{AllocFlags, Gfp, ALLOC_WMARK_LOW, ALLOC_WMARK_MASK};
use super::mm_types::*;
use super::policy::{DirtyPlacement, DirtyRatelimit};
use super::mmzone::{LruList, ZoneStat};
use super::page_alloc::Mm;
use super::radix_tree::{PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK};
use super::vmstat::{Era, VmStat};
use super::Pfn;
use crate::fs::{Ino, I_DIRTY_PAGES, I_SYNC};

/// A jiffy in ns at HZ = 250, the common x86 distribution setting and the default of a kernel
/// whose CONFIG_HZ the scenario does not set (see `Arch::default_hz`); a run's own jiffy is
/// `SchedState::jiffy_ns`.
pub const JIFFY_NS: u64 = 4_000_000;
/// balance_dirty_pages gives up waiting after this long once the excess is halved (MAX_PAUSE).
pub const MAX_PAUSE_NS: u64 = 200_000_000;

/// A task's dirty-throttling state (the fields of task_struct and the per-cpu ratelimit that
/// balance_dirty_pages uses), owned by the workload task.
#[derive(Clone, Debug, Default)]
pub struct DirtyThrottle {
    /// Pages dirtied since the last balance_dirty_pages call (current->nr_dirtied; the
    /// `per-task` DirtyRatelimit policy).
    pub ratelimit: u64,
    /// Inside balance_dirty_pages: when the loop was entered.
    pub throttled_since: Option<u64>,
    /// The current pause (doubles per iteration).
    pub pause_ns: u64,
    /// Pages this task wrote back itself in the current balance_dirty_pages loop.
    pub pages_written: u64,
    pub write_chunk: u64,
    /// The task's recent dirtying (prop_local_single: decays by half each period).
    pub dirties: u64,
    pub period: u64,
    /// The task's id for messages; not used by the model.
    pub tid: usize,
}

/// Machine-wide dirtying proportions (vm_dirties prop_descriptor): periods of `dirty_thresh`
/// pages, each halving every task's share.
#[derive(Clone, Debug, Default)]
pub struct DirtyProportions {
    pub events: u64,
    pub period: u64,
}

impl Mm {
    /// How long a kernel timeout of `ns` set now sleeps (schedule_timeout): until the tick
    /// that ends it in whole jiffies, so up to a jiffy less than `ns`.
    pub fn schedule_timeout_ns(&self, ns: u64) -> u64 {
        self.sched.timer_expiry(self.now_ns, ns) - self.now_ns
    }

    // ------------------------------------------------------------------------------------------
    // Dirty bits.

    /// set_page_dirty for a page cache page (__set_page_dirty_nobuffers): returns true if the
    /// page was newly dirtied.
    pub fn set_page_dirty(&mut self, pfn: Pfn) -> bool {
        if self.pages[pfn as usize].flags & PG_DIRTY != 0 {
            return false;
        }
        self.pages[pfn as usize].flags |= PG_DIRTY;
        self.mod_page_state(pfn, ZoneStat::NrFileDirty, 1);
        self.mod_page_state(pfn, ZoneStat::NrDirtied, 1);
        self.page_tag_set(pfn, PAGECACHE_TAG_DIRTY);
        let ino = self.mapping(self.pages[pfn as usize].mapping).host as Ino;
        if let Some(dev) = self.page_bdev(pfn) {
            self.bdi_stat[dev].reclaimable += 1;
        }
        self.__mark_inode_dirty(ino);
        true
    }

    /// __mark_inode_dirty(I_DIRTY_PAGES): the first dirtying stamps dirtied_when and queues the
    /// inode on its superblock's dirty list (unless it is being written, which requeues it).
    pub fn __mark_inode_dirty(&mut self, ino: Ino) {
        let now = self.now_ns;
        let i = self.inode(ino);
        if i.state & I_DIRTY_PAGES != 0 {
            return;
        }
        let sb = i.sb;
        let syncing = i.state & I_SYNC != 0;
        let key = self.sbs[sb].next_key();
        let i = self.inode_mut(ino);
        i.state |= I_DIRTY_PAGES;
        i.dirtied_when = now;
        if !syncing && i.dirty_key.is_none() {
            i.dirty_key = Some(key);
            self.sbs[sb].b_dirty.insert(key, ino);
        }
    }

    /// Clears the dirty bit before writing a page (clear_page_dirty_for_io); a mapped page is
    /// write-protected again (page_mkclean). Returns true if it was dirty.
    pub fn clear_page_dirty_for_io(&mut self, pfn: Pfn) -> bool {
        if self.pages[pfn as usize].flags & PG_DIRTY == 0 {
            return false;
        }
        if self.pages[pfn as usize].flags & PG_MAPPED != 0 {
            self.cost_ns += self.costs.rmap_walk_ns;
        }
        self.clear_dirty(pfn);
        true
    }

    /// Drops a page's dirty state without writing it (cancel_dirty_page, at truncation).
    pub fn cancel_dirty_page(&mut self, pfn: Pfn) {
        if self.pages[pfn as usize].flags & PG_DIRTY != 0 {
            self.clear_dirty(pfn);
        }
    }

    fn clear_dirty(&mut self, pfn: Pfn) {
        self.pages[pfn as usize].flags &= !PG_DIRTY;
        self.mod_page_state(pfn, ZoneStat::NrFileDirty, -1);
        if self.pages[pfn as usize].mapping != 0 {
            self.page_tag_clear(pfn, PAGECACHE_TAG_DIRTY);
            if let Some(dev) = self.page_bdev(pfn) {
                self.bdi_stat[dev].reclaimable -= 1;
            }
        }
    }

    /// test_set_page_writeback.
    pub fn set_page_writeback(&mut self, pfn: Pfn, dev: usize) {
        self.pages[pfn as usize].flags |= PG_WRITEBACK;
        self.mod_page_state(pfn, ZoneStat::NrWriteback, 1);
        self.bdi_stat[dev].writeback += 1;
        self.page_tag_set(pfn, PAGECACHE_TAG_WRITEBACK);
    }

    /// end_page_writeback: the write finished. A page reclaim wanted (PG_reclaim) moves to the
    /// inactive tail so the next scan frees it (rotate_reclaimable_page, pgrotated); waiters on
    /// the page are woken.
    pub fn end_page_writeback(&mut self, pfn: Pfn, dev: usize) {
        let f = self.pages[pfn as usize].flags;
        debug_assert!(f & PG_WRITEBACK != 0, "pfn {pfn} was not under writeback");
        self.pages[pfn as usize].flags &= !PG_WRITEBACK;
        self.page_tag_clear(pfn, PAGECACHE_TAG_WRITEBACK);
        self.mod_page_state(pfn, ZoneStat::NrWriteback, -1);
        self.mod_page_state(pfn, ZoneStat::NrWritten, 1);
        self.bdi_stat[dev].writeback -= 1;
        self.bdi_stat[dev].completions += 1;
        if f & PG_RECLAIM != 0 {
            self.pages[pfn as usize].flags &= !PG_RECLAIM;
            self.rotate_reclaimable_page(pfn);
        }
        self.wake_up_page(pfn);
        self.acct_reclaim_writeback(pfn);
    }

    /// 5.16+ acct_reclaim_writeback: while reclaimers wait in reclaim_throttle for writeback,
    /// count the pages written and wake them once more than SWAP_CLUSTER_MAX per waiter have
    /// completed since the first began to wait.
    fn acct_reclaim_writeback(&mut self, pfn: Pfn) {
        let nid = self.page_to_nid(pfn);
        let node = &mut self.nodes[nid];
        if node.nr_writeback_throttled == 0 {
            return;
        }
        node.throttled_written += 1;
        if node.throttled_written - node.nr_reclaim_start > super::SWAP_CLUSTER_MAX * u64::from(node.nr_writeback_throttled) {
            let wq = node.reclaim_wait_writeback;
            if wq != usize::MAX {
                self.wakeups.push(wq);
            }
        }
    }

    /// rotate_reclaimable_page: a clean, inactive, unlocked LRU page goes to the tail.
    pub(crate) fn rotate_reclaimable_page(&mut self, pfn: Pfn) {
        let f = self.pages[pfn as usize].flags;
        if f & (PG_LOCKED | PG_DIRTY | PG_ACTIVE | PG_UNEVICTABLE) != 0 || f & PG_LRU == 0 {
            return;
        }
        let lru = self.page_lru(pfn);
        debug_assert!(lru == LruList::InactiveFile || lru == LruList::InactiveAnon);
        let lv = self.page_lruvec(pfn);
        list_del(&mut self.pages, &mut self.lruvecs[lv].lists[lru as usize], pfn);
        list_add_tail(&mut self.pages, &mut self.lruvecs[lv].lists[lru as usize], pfn);
        self.events.count(VmStat::Pgrotated, 1);
    }

    // ------------------------------------------------------------------------------------------
    // Limits.

    /// determine_dirtyable_memory (3.x) / global_dirtyable_memory (6.x).
    pub fn dirtyable_memory(&self) -> u64 {
        let free = self.zones.iter().map(|z| z.nr_free_pages.max(0) as u64).sum::<u64>();
        let mut x = free + self.nr_lru_pages(LruList::InactiveFile) + self.nr_lru_pages(LruList::ActiveFile);
        if self.nr_swap_pages() > 0 && self.era == Era::Linux3 {
            x += self.nr_lru_pages(LruList::InactiveAnon) + self.nr_lru_pages(LruList::ActiveAnon);
        }
        if self.era == Era::Linux6 {
            x = x.saturating_sub(self.totalreserve_pages);
        }
        x + 1
    }

    /// global_dirty_limits: (background threshold, dirty threshold) in pages.
    pub fn global_dirty_limits(&self) -> (u64, u64) {
        let avail = self.dirtyable_memory();
        let s = &self.sysctl;
        let dirty = if s.dirty_bytes > 0 { s.dirty_bytes.div_ceil(super::PAGE_SIZE) } else { s.dirty_ratio * avail / 100 };
        let mut bg = if s.dirty_background_bytes > 0 { s.dirty_background_bytes.div_ceil(super::PAGE_SIZE) } else { s.dirty_background_ratio * avail / 100 };
        if bg >= dirty {
            bg = dirty / 2;
        }
        (bg, dirty)
    }

    /// Scales the global (background, dirty) thresholds to a share `mem` of dirtyable memory
    /// out of `global` (v1 zone_dirty_limits; node_dirty_limit): the ratios apply to the share
    /// directly, the _bytes forms in proportion.
    fn dirty_limits_of(&self, mem: u64, global: u64) -> (u64, u64) {
        let s = &self.sysctl;
        let scale = |bytes: u64| bytes.div_ceil(super::PAGE_SIZE) * mem / global.max(1);
        let dirty = if s.dirty_bytes > 0 { scale(s.dirty_bytes) } else { s.dirty_ratio * mem / 100 };
        let mut bg = if s.dirty_background_bytes > 0 { scale(s.dirty_background_bytes) } else { s.dirty_background_ratio * mem / 100 };
        if bg >= dirty {
            bg = dirty / 2;
        }
        (bg, dirty)
    }

    /// Per-zone dirty limits v1 (July 2011): a zone's dirtyable memory (1 + free +
    /// zone_reclaimable_pages, no reserve taken off) and its (background, dirty) thresholds.
    pub fn zone_dirty_limits(&self, zid: usize) -> (u64, u64) {
        let z = &self.zones[zid];
        let mem = 1 + z.nr_free_pages.max(0) as u64 + self.zone_reclaimable_pages(zid);
        self.dirty_limits_of(mem, self.dirtyable_memory())
    }

    /// Dirty and under-writeback pages of a zone.
    fn zone_dirty_pages(&self, zid: usize) -> u64 {
        let z = &self.zones[zid];
        z.page_state(ZoneStat::NrFileDirty) + z.page_state(ZoneStat::NrWriteback)
    }

    /// zone_dirty_ok (v1): dirty + writeback pages within the zone's dirty threshold.
    pub fn zone_dirty_ok(&self, zid: usize) -> bool {
        self.zone_dirty_pages(zid) <= self.zone_dirty_limits(zid).1
    }

    /// 6.x node_dirty_ok: a node's dirty + writeback pages within dirty_ratio of its dirtyable
    /// memory (free minus its reserves, plus its file LRU pages).
    pub fn node_dirty_ok(&self, nid: usize) -> bool {
        let zones = (0..super::mmzone::MAX_NR_ZONES).map(|t| nid * super::mmzone::MAX_NR_ZONES + t);
        let (mut free, mut reserve, mut dirty) = (0u64, 0u64, 0u64);
        for zid in zones {
            let z = &self.zones[zid];
            free += z.nr_free_pages.max(0) as u64;
            reserve += z.lowmem_reserve.iter().copied().max().unwrap_or(0) + z.high_wmark_pages();
            dirty += self.zone_dirty_pages(zid);
        }
        let file = if self.policy.lru_owner == super::policy::LruOwner::PerNode {
            let lists = &self.lruvecs[nid].lists;
            u64::from(lists[LruList::InactiveFile as usize].len + lists[LruList::ActiveFile as usize].len)
        } else {
            self.node_page_state(nid, ZoneStat::NrFilePages)
        };
        let mem = free - free.min(reserve) + file;
        dirty <= self.dirty_limits_of(mem, self.dirtyable_memory()).1
    }

    /// Whether a __GFP_WRITE allocation must pass over zone `zid` because of dirty limits, by
    /// the kernel's DirtyPlacement policy: v1 per-zone limits on every pass, 6.x per-node
    /// limits on the first (ALLOC_WMARK_LOW) pass only.
    #[inline]
    pub fn zone_dirty_limited(&self, zid: usize, gfp: Gfp, alloc_flags: AllocFlags) -> bool {
        if !gfp.has(Gfp::WRITE) {
            return false;
        }
        match self.policy.dirty_placement {
            DirtyPlacement::Global => false,
            DirtyPlacement::Perzonedirty => !self.zone_dirty_ok(zid),
            DirtyPlacement::PerNode => alloc_flags & ALLOC_WMARK_MASK == ALLOC_WMARK_LOW && !self.node_dirty_ok(self.zones[zid].node),
        }
    }

    /// v1 __alloc_pages_writeback, the slow-path stage before reclaim for __GFP_WRITE
    /// allocations (try_to_writeback_pages): wakes the flushers for every zone above its
    /// background threshold with more dirty than writeback pages, and if every zone is over
    /// its dirty threshold waits HZ/10 on congestion.
    pub fn try_to_writeback_pages(&mut self, zones: &[usize]) {
        let mut all_over = true;
        let mut nr = 0;
        for &zid in zones {
            let (bg, dirty_limit) = self.zone_dirty_limits(zid);
            let z = &self.zones[zid];
            let (dirty, wb) = (z.page_state(ZoneStat::NrFileDirty), z.page_state(ZoneStat::NrWriteback));
            if dirty + wb > bg && dirty > wb {
                nr += dirty - wb;
            }
            if dirty + wb <= dirty_limit {
                all_over = false;
            }
        }
        if nr > 0 {
            self.wakeup_flusher_threads(nr);
        }
        if all_over {
            self.congestion_wait(super::vmscan::HZ_10_NS);
        }
    }

    /// over_bground_thresh: dirty pages above the background threshold.
    pub fn over_bground_thresh(&self) -> bool {
        let (bg, _) = self.global_dirty_limits();
        self.global_page_state(ZoneStat::NrFileDirty) > bg
    }

    /// bdi_dirty_limit: the device's share of the dirty threshold by its share of recent
    /// writeback completions (all of it with one device).
    fn bdi_dirty_limit(&self, dev: usize, dirty: u64) -> u64 {
        let total: u64 = self.bdi_stat.iter().map(|b| b.completions).sum();
        if self.bdi_stat.len() <= 1 || total == 0 {
            return dirty;
        }
        dirty * self.bdi_stat[dev].completions / total
    }

    /// task_dirty_limit: a heavy dirtier's limit is lowered by up to 1/8 of the device's.
    fn task_dirty_limit(&self, t: &DirtyThrottle, bdi_thresh: u64) -> u64 {
        let (num, den) = self.task_dirty_share(t);
        let dec = bdi_thresh / 8 * num / den.max(1);
        bdi_thresh.saturating_sub(dec).max(bdi_thresh / 2)
    }

    /// The task's share of recent dirtying (num, den), decayed per period.
    fn task_dirty_share(&self, t: &DirtyThrottle) -> (u64, u64) {
        let shift = (self.dirty_props.period - t.period).min(63);
        let mine = t.dirties >> shift;
        let den = (self.dirty_props.events % self.dirty_period().max(1)) + self.dirty_period();
        (mine.min(den), den)
    }

    fn dirty_period(&self) -> u64 {
        // The period follows the dirty threshold (calc_period_shift): about dirty_thresh pages.
        self.global_dirty_limits().1.max(1024)
    }

    /// Records a page dirtied by task `t` (task_dirty_inc).
    fn task_dirty_inc(&mut self, t: &mut DirtyThrottle) {
        let period = self.dirty_period();
        self.dirty_props.events += 1;
        if self.dirty_props.events % period == 0 {
            self.dirty_props.period += 1;
        }
        let shift = (self.dirty_props.period - t.period).min(63);
        t.dirties = (t.dirties >> shift) + 1;
        t.period = self.dirty_props.period;
    }

    /// balance_dirty_pages_ratelimited_nr: after a page is dirtied, every ratelimit_pages
    /// (8 while the device's limit is exceeded) run balance_dirty_pages, counted per CPU
    /// (2.6.x–3.1) or per task (3.2+) as the DirtyRatelimit policy says. A task still in its
    /// throttling loop dirties nothing: it goes on with the loop first
    /// (`balance_dirty_pages_resume`).
    pub fn balance_dirty_pages_ratelimited(&mut self, t: &mut DirtyThrottle, dev: usize, newly_dirtied: bool, cpu: usize) {
        debug_assert!(t.throttled_since.is_none(), "a page dirtied inside the throttling loop");
        if newly_dirtied {
            self.task_dirty_inc(t);
        }
        let ratelimit = self.ratelimit_pages();
        let limit = if self.bdi_stat[dev].dirty_exceeded { 8 } else { ratelimit };
        let count = match self.policy.dirty_ratelimit {
            DirtyRatelimit::PerCpu => &mut self.bdp_ratelimits[cpu],
            DirtyRatelimit::PerTask => &mut t.ratelimit,
        };
        *count += 1;
        if *count < limit {
            return;
        }
        let dirtied = std::mem::take(count);
        t.write_chunk = dirtied.max(ratelimit) * 3 / 2;
        self.balance_dirty_pages(t, dev, cpu);
    }

    /// A task whose step ended inside balance_dirty_pages' loop, sleeping its pause, goes on
    /// with that loop before it dirties anything else: the kernel's writer does not return from
    /// balance_dirty_pages_ratelimited (nor a write fault from its handler) until the loop lets
    /// it go. Returns true while the task stays throttled (its next pause is owed).
    /// `ino` is the file being written; a write() (not a fault) plugs the loop's writeback, as
    /// generic_file_aio_write does.
    pub fn balance_dirty_pages_resume(&mut self, t: &mut DirtyThrottle, ino: Ino, cpu: usize, write_syscall: bool) -> bool {
        if t.throttled_since.is_none() {
            return false;
        }
        let dev = self.sbs[self.inode(ino).sb].dev;
        let plugged = write_syscall && self.blk_start_plug(PlugSite::Write);
        self.balance_dirty_pages(t, dev, cpu);
        self.blk_finish_plug(plugged);
        t.throttled_since.is_some()
    }

    /// ratelimit_pages: total pages / (CPUs × 32), within [16, 1024].
    fn ratelimit_pages(&self) -> u64 {
        let total: u64 = self.zones.iter().map(|z| z.present_pages).sum();
        (total / (self.cpu_to_node.len() as u64 * 32)).clamp(16, 1024)
    }

    /// One iteration of 3.1 balance_dirty_pages for task `t` on device `dev`. If the task stays
    /// throttled, its pause is added to the task's sleep (after the current step), and the
    /// task's next write or write fault continues the loop before it dirties anything
    /// (`balance_dirty_pages_resume`).
    pub fn balance_dirty_pages(&mut self, t: &mut DirtyThrottle, dev: usize, cpu: usize) {
        let now = self.now_ns;
        let (bg, dirty) = self.global_dirty_limits();
        let nr_reclaimable = self.global_page_state(ZoneStat::NrFileDirty);
        let nr_dirty = nr_reclaimable + self.global_page_state(ZoneStat::NrWriteback);
        let bdi_thresh = self.bdi_dirty_limit(dev, dirty);
        let task_limit = self.task_dirty_limit(t, bdi_thresh);
        let bdi_reclaimable = self.bdi_stat[dev].reclaimable.max(0) as u64;
        let bdi_dirty = bdi_reclaimable + self.bdi_stat[dev].writeback.max(0) as u64;
        let entered = *t.throttled_since.get_or_insert(now);
        let mut leave = nr_dirty <= (bg + dirty) / 2;
        let exceeded = bdi_dirty > task_limit || nr_dirty > dirty;
        if !leave && !exceeded {
            leave = true;
        }
        if !leave {
            self.bdi_stat[dev].dirty_exceeded = true;
            if bdi_reclaimable > task_limit {
                let want = t.write_chunk.saturating_sub(t.pages_written);
                t.pages_written += self.writeback_inodes_wb(dev, want, cpu);
                if t.pages_written >= t.write_chunk {
                    leave = true;
                }
            }
        }
        if !leave && now - entered > MAX_PAUSE_NS && nr_dirty < dirty && bdi_dirty < (task_limit + bdi_thresh) / 2 {
            leave = true;
        }
        if !leave {
            t.pause_ns = if t.pause_ns == 0 { self.sched.jiffy_ns } else { (t.pause_ns * 2).min(super::vmscan::HZ_10_NS) };
            self.sleep_ns += self.schedule_timeout_ns(t.pause_ns);
            return;
        }
        // Out of the loop.
        let min_task_limit = bdi_thresh - bdi_thresh / 8;
        if bdi_dirty <= min_task_limit && nr_dirty <= dirty {
            self.bdi_stat[dev].dirty_exceeded = false;
        }
        t.throttled_since = None;
        t.pause_ns = 0;
        t.pages_written = 0;
        if !self.writeback_in_progress(dev) && nr_reclaimable > bg {
            self.bdi_start_background_writeback(dev);
        }
    }
}
