//! Dirty page accounting and throttling (mm/page-writeback.c; 3.0, 3.1 and 6.x by policy).
//!
//! * set_page_dirty / clear_page_dirty_for_io / cancel_dirty_page keep NR_FILE_DIRTY, the
//!   mapping's dirty tag and the inode's dirty state.
//! * test_set_page_writeback / end_page_writeback keep NR_WRITEBACK and NR_WRITTEN; a page that
//!   reclaim marked PG_reclaim is rotated to the inactive tail when its write completes.
//! * global_dirty_limits: dirty_ratio and dirty_background_ratio (or the _bytes forms) of the
//!   dirtyable memory (free + file LRU, + anon LRU with swap; 6.x also minus totalreserve).
//! * balance_dirty_pages, by the `balance_dirty_pages` policy:
//!   - `io-full` (2.6.x–3.0): the task that brings its CPU's count of dirtied pages (its own
//!     count from 3.2) to the ratelimit checks the limits; over them, it writes back a chunk of
//!     the device's dirty pages itself and pauses (1 jiffy doubling to HZ/10), until the dirty
//!     + writeback count falls back or it has written its chunk; `io-full-max-pause` (3.1)
//!     also lets it go once 200 ms have passed with the excess halved.
//!   - `io-less` (3.2+, read from 6.1): the task sleeps in proportion to the pages it dirtied,
//!     at a rate fed back from the device's estimated write bandwidth (see
//!     `balance_dirty_pages_ioless`); it never writes. Not modelled: strictlimit devices,
//!     memory cgroup domains and the RT tasks' boosted limits. The estimates are updated by
//!     throttled tasks, at the end of each inode's writepages, and 200 ms after an inode's
//!     writeback ends.

use crate::block::PlugSite;
use super::gfp::{AllocFlags, Gfp, ALLOC_WMARK_LOW, ALLOC_WMARK_MASK};
use super::mm_types::*;
use super::policy::{BalanceDirtyPages, DirtyPlacement, DirtyRatelimit, WriteoutFraction};
use crate::klib::flex_proportions::FpropGlobal;
use crate::klib::proportions::{calc_period_shift, PropGlobal, PropLocal};
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
/// MAX_PAUSE, 200 ms: from 3.1 a throttled dirtier in the max-pause area leaves after this long
/// (`io-full-max-pause`).
pub const MAX_PAUSE_NS: u64 = 200_000_000;
/// INIT_BW: the write bandwidth and dirty rate limit a device starts with, 100 MB/s in pages.
pub const INIT_BW: u64 = 100 << (20 - 12);
/// RATELIMIT_CALC_SHIFT: pos_ratio is a fixed-point fraction of 1 << 10.
pub const RATELIMIT_CALC_SHIFT: u32 = 10;
/// DIRTY_POLL_THRESH: 128 KB in pages, the pages a task dirties between checks at least.
pub const DIRTY_POLL_THRESH: u64 = 32;

/// The global writeback domain of the IO-less throttle (struct wb_domain): the hard dirty
/// limit, which follows the threshold down slowly, and ratelimit_pages (writeback_set_ratelimit
/// at boot).
#[derive(Clone, Debug, Default)]
pub struct WbDomain {
    pub dirty_limit: u64,
    pub dirty_limit_tstamp: u64,
    pub ratelimit_pages: u64,
    /// The devices' recent writeback completions (`flex-proportions`: dom->completions and
    /// its period timer).
    pub completions: FpropGlobal,
}

/// VM_COMPLETIONS_PERIOD_LEN: the flexible proportions age every 3 s (in jiffies: 3 × HZ).
const VM_COMPLETIONS_PERIODS_SEC: u64 = 3;

/// ilog2 of a positive number.
fn ilog2(x: u64) -> u64 {
    u64::from(63 - x.max(1).leading_zeros())
}

/// pos_ratio_polynom: the global control line of the IO-less throttle, in 1/1024ths:
/// 1 + ((setpoint − dirty) / (limit − setpoint))³, within [0, 2]. 1 at the setpoint, 2 at or
/// below the freerun ceiling, 0 at the limit.
pub fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> u64 {
    // 128 bits: the kernel's 64 cannot overflow where it is called (dirty above the freerun
    // ceiling keeps |x| within 1 << 10), but this function takes any values.
    let x = ((i128::from(setpoint) - i128::from(dirty)) << RATELIMIT_CALC_SHIFT) / ((i128::from(limit) - i128::from(setpoint)) | 1);
    let mut r = x;
    r = r * x >> RATELIMIT_CALC_SHIFT;
    r = r * x >> RATELIMIT_CALC_SHIFT;
    r += 1 << RATELIMIT_CALC_SHIFT;
    r.clamp(0, 2 << RATELIMIT_CALC_SHIFT) as u64
}

/// A task's dirty-throttling state (the fields of task_struct and the per-cpu ratelimit that
/// balance_dirty_pages uses), owned by the workload task.
#[derive(Clone, Debug, Default)]
pub struct DirtyThrottle {
    /// Pages dirtied since the last balance_dirty_pages call (current->nr_dirtied; the
    /// `per-task` DirtyRatelimit policy and the `io-less` throttle).
    pub ratelimit: u64,
    /// Inside balance_dirty_pages: when the loop was entered.
    pub throttled_since: Option<u64>,
    /// The current pause (doubles per iteration).
    pub pause_ns: u64,
    /// Pages this task wrote back itself in the current balance_dirty_pages loop.
    pub pages_written: u64,
    pub write_chunk: u64,
    /// Inside writeback_inodes_wb, asleep in get_request_wait: the pages the call has still
    /// to write (0: not in the call), and the inode it stopped in with what is left of that
    /// inode's turn (held with I_SYNC).
    pub wb_want: u64,
    pub wb_held: Option<(Ino, u64)>,
    /// The task's recent dirtying (tsk->dirties, a member of `vm_dirties`; `proportions`
    /// only).
    pub dirties: PropLocal,
    /// The task's id for messages; not used by the model.
    pub tid: usize,
    /// `io-less`: pages the task may dirty before its next check (current->nr_dirtied_pause;
    /// None until the first check: the 32 a new task starts with).
    pub nr_dirtied_pause: Option<u64>,
    /// `io-less`: when the task's last pause ended, in jiffies (current->dirty_paused_when; 0:
    /// never paused).
    pub dirty_paused_when: u64,
    /// `io-less`: inside balance_dirty_pages, the pages the call was made for, and what the
    /// loop does when the pause it sleeps ends: go round again (`None`), or end (whether the
    /// device was over its limit, and the dirty pages and background threshold it saw).
    pub pages_dirtied: u64,
    pub ends_after_pause: Option<(bool, u64, u64)>,
}

/// The writeback proportions of 2.6.24–3.4 (`proportions`): the devices' writeback
/// completions (vm_completions) and the tasks' dirtied pages (vm_dirties), both with the
/// period page_writeback_init sets from the dirty threshold at boot.
#[derive(Clone, Debug, Default)]
pub struct DirtyProportions {
    pub vm_completions: PropGlobal,
    pub vm_dirties: PropGlobal,
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
        // The write dirties the page's buffers too (mark_buffer_dirty, __set_page_dirty_buffers).
        self.pages[pfn as usize].flags &= !PG_BUF_CLEAN;
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
            self.bdi_stat[dev].dirtied += 1;
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
        self.bdi_writeout_inc(dev);
        self.wb_inode_writeback_end(pfn, dev);
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
        let free = self.zones.iter().map(|z| z.nr_free_pages_vmstat()).sum::<i64>().max(0) as u64;
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
        let mem = 1 + z.nr_free_pages_vmstat().max(0) as u64 + self.zone_reclaimable_pages(zid);
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
            free += z.nr_free_pages_vmstat().max(0) as u64;
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

    /// jiffies now and VM_COMPLETIONS_PERIOD_LEN in jiffies: the clock of the
    /// `flex-proportions` period timer.
    fn completions_clock(&self) -> (u64, u64) {
        (self.jiffies(), VM_COMPLETIONS_PERIODS_SEC * self.hz())
    }

    /// __bdi_writeout_inc / __wb_writeout_add: one page's writeback completed on `dev`
    /// (WB_WRITTEN, and the device's event in the completion proportions).
    pub fn bdi_writeout_inc(&mut self, dev: usize) {
        self.bdi_stat[dev].completions += 1;
        match self.policy.writeout_fraction {
            WriteoutFraction::Proportions => self.dirty_props.vm_completions.inc(&mut self.bdi_stat[dev].writeout),
            WriteoutFraction::FlexProportions => {
                let (jiffies, len) = self.completions_clock();
                self.wb_domain.completions.writeout_add(&mut self.bdi_stat[dev].writeout, 1, jiffies, len);
            }
        }
    }

    /// bdi_dirty_limit (2.6.24–3.1) / __wb_calc_thresh (3.2+): the device's share of the dirty
    /// threshold, by its share of recent writeback completions (bdi_writeout_fraction); every
    /// device has min_ratio 0 and max_ratio 100.
    pub fn bdi_dirty_limit(&mut self, dev: usize, dirty: u64) -> u64 {
        let (num, den) = match self.policy.writeout_fraction {
            WriteoutFraction::Proportions => self.dirty_props.vm_completions.fraction(&mut self.bdi_stat[dev].writeout),
            WriteoutFraction::FlexProportions => {
                let (jiffies, len) = self.completions_clock();
                self.wb_domain.completions.fraction(&mut self.bdi_stat[dev].writeout, jiffies, len)
            }
        };
        dirty * num / den.max(1)
    }

    /// task_dirty_limit: a heavy dirtier's limit is lowered by up to 1/8 of the device's, by
    /// its share of recently dirtied pages (task_dirties_fraction), and not below half.
    pub fn task_dirty_limit(&self, t: &mut DirtyThrottle, bdi_thresh: u64) -> u64 {
        let (num, den) = self.dirty_props.vm_dirties.fraction(&mut t.dirties);
        let dec = bdi_thresh / 8 * num / den.max(1);
        bdi_thresh.saturating_sub(dec).max(bdi_thresh / 2)
    }

    /// task_dirty_inc: a page dirtied by task `t`.
    fn task_dirty_inc(&mut self, t: &mut DirtyThrottle) {
        self.dirty_props.vm_dirties.inc(&mut t.dirties);
    }

    /// balance_dirty_pages_ratelimited_nr: after a page is dirtied, every ratelimit_pages
    /// (8 while the device's limit is exceeded) run balance_dirty_pages, counted per CPU
    /// (2.6.x–3.1) or per task (3.2+) as the DirtyRatelimit policy says. A task still in its
    /// throttling loop dirties nothing: it goes on with the loop first
    /// (`balance_dirty_pages_resume`).
    pub fn balance_dirty_pages_ratelimited(&mut self, t: &mut DirtyThrottle, dev: usize, newly_dirtied: bool, cpu: usize) {
        debug_assert!(t.throttled_since.is_none(), "a page dirtied inside the throttling loop");
        if self.policy.balance_dirty_pages == BalanceDirtyPages::IoLess {
            self.balance_dirty_pages_ratelimited_ioless(t, dev, newly_dirtied, cpu);
            return;
        }
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
        self.balance_dirty_pages(t, dev);
    }

    /// A task whose step ended inside balance_dirty_pages' loop, sleeping its pause, goes on
    /// with that loop before it dirties anything else: the kernel's writer does not return from
    /// balance_dirty_pages_ratelimited (nor a write fault from its handler) until the loop lets
    /// it go. Returns true while the task stays throttled (its next pause is owed).
    /// `ino` is the file being written; a write() (not a fault) plugs the loop's writeback, as
    /// generic_file_aio_write does.
    pub fn balance_dirty_pages_resume(&mut self, t: &mut DirtyThrottle, ino: Ino, write_syscall: bool) -> bool {
        if t.throttled_since.is_none() {
            return false;
        }
        let dev = self.sbs[self.inode(ino).sb].dev;
        let plugged = write_syscall && self.blk_start_plug(PlugSite::Write);
        self.balance_dirty_pages(t, dev);
        self.blk_finish_plug(plugged);
        t.throttled_since.is_some()
    }

    /// ratelimit_pages: total pages / (CPUs × 32), within [16, 1024].
    fn ratelimit_pages(&self) -> u64 {
        let total: u64 = self.zones.iter().map(|z| z.present_pages).sum();
        (total / (self.cpu_to_node.len() as u64 * 32)).clamp(16, 1024)
    }

    /// One iteration of 3.0 balance_dirty_pages (3.1 with `io-full-max-pause`) for task `t` on
    /// device `dev`. If the task stays throttled, its pause is added to the task's sleep (after
    /// the current step), and the task's next write or write fault continues the loop before it
    /// dirties anything (`balance_dirty_pages_resume`). A task whose own writeback
    /// (writeback_inodes_wb) found the device's requests used up sleeps in get_request_wait
    /// instead (`Mm::rq_wait_owed`), holding its inode and a bio, and when it runs again goes
    /// on with that writeback before anything else, as the kernel's writer returns to the loop
    /// only once the call has written its pages.
    pub fn balance_dirty_pages(&mut self, t: &mut DirtyThrottle, dev: usize) {
        if self.policy.balance_dirty_pages == BalanceDirtyPages::IoLess {
            self.balance_dirty_pages_ioless(t, dev);
            return;
        }
        let now = self.now_ns;
        let (bg, dirty) = self.global_dirty_limits();
        let nr_reclaimable = self.global_page_state(ZoneStat::NrFileDirty);
        let nr_dirty = nr_reclaimable + self.global_page_state(ZoneStat::NrWriteback);
        let bdi_thresh = self.bdi_dirty_limit(dev, dirty);
        let task_limit = self.task_dirty_limit(t, bdi_thresh);
        let bdi_reclaimable = self.bdi_stat[dev].reclaimable.max(0) as u64;
        let bdi_dirty = bdi_reclaimable + self.bdi_stat[dev].writeback.max(0) as u64;
        let entered = *t.throttled_since.get_or_insert(now);
        let mut leave = false;
        let mut writing = t.wb_want > 0;
        if !writing {
            leave = nr_dirty <= (bg + dirty) / 2 || !(bdi_dirty > task_limit || nr_dirty > dirty);
            if !leave {
                self.bdi_stat[dev].dirty_exceeded = true;
                if bdi_reclaimable > task_limit {
                    t.wb_want = t.write_chunk.saturating_sub(t.pages_written);
                    writing = true;
                }
            }
        }
        if writing {
            let mut held = t.wb_held.take();
            let (written, blocked) = self.writeback_inodes_wb(dev, t.wb_want, &mut held);
            t.pages_written += written;
            t.wb_want = t.wb_want.saturating_sub(written);
            if blocked && t.wb_want > 0 {
                // Asleep in get_request_wait holding a bio (`Mm::rq_wait_owed`).
                t.wb_held = held;
                return;
            }
            if let Some((ino, _)) = held {
                self.release_held_inode(ino, dev);
            }
            t.wb_want = 0;
            if t.pages_written >= t.write_chunk {
                leave = true;
            }
        }
        let max_pause_area = self.policy.balance_dirty_pages == BalanceDirtyPages::IoFullMaxPause;
        if max_pause_area && !leave && now - entered > MAX_PAUSE_NS && nr_dirty < dirty && bdi_dirty < (task_limit + bdi_thresh) / 2 {
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

// ----------------------------------------------------------------------------------------------
// The IO-less throttle (3.2+, read from 6.1).

impl Mm {
    /// CONFIG_HZ of the running kernel.
    fn hz(&self) -> u64 {
        1_000_000_000 / self.sched.jiffy_ns
    }

    /// jiffies now (at this task's point in its step).
    fn jiffies(&self) -> u64 {
        self.sched.jiffies_at(self.now_ns + self.cost_ns)
    }

    /// BANDWIDTH_INTERVAL: the estimates are updated at most every 200 ms.
    fn bandwidth_interval(&self) -> u64 {
        (self.hz() / 5).max(1)
    }

    /// wb_stat_error: how far the per-CPU batched device counters may be off
    /// (nr_cpu_ids × WB_STAT_BATCH, WB_STAT_BATCH = 8 × (1 + ilog2(nr_cpu_ids))).
    fn wb_stat_error(&self) -> u64 {
        let n = self.cpu_to_node.len() as u64;
        n * 8 * (1 + ilog2(n))
    }

    /// page_writeback_init (boot): the ratelimits, and for `proportions` the period of the
    /// completion and dirtying proportions from the dirty threshold now (calc_period_shift;
    /// vm_dirty_bytes in pages when it is set).
    ///
    /// The devices are not new: a benchmark's disk has been written before it runs (mkfs, the
    /// harness's setup, earlier iterations on the same boot), so each device starts with an
    /// equal share of a half period of completions, the steady state of devices that wrote
    /// alike (a machine's only device has the whole threshold, as after a few half periods of
    /// its writes). This is an assumption about the machine's past, not a kernel rule: a
    /// device that has never completed a write has none of the threshold until its writes
    /// build it up over a few half periods. The benchmark's tasks are new, so their dirtying
    /// shares start empty (prop_local_init_single at fork). `flex-proportions` devices start
    /// empty: a machine's only writer has the whole threshold from its first completion.
    pub fn page_writeback_init(&mut self) {
        self.writeback_set_ratelimit();
        let dirty_total = if self.sysctl.dirty_bytes > 0 { self.sysctl.dirty_bytes / super::PAGE_SIZE } else { self.sysctl.dirty_ratio * self.dirtyable_memory() / 100 };
        let shift = calc_period_shift(dirty_total);
        self.dirty_props = DirtyProportions { vm_completions: PropGlobal::new(shift), vm_dirties: PropGlobal::new(shift) };
        if self.policy.writeout_fraction == WriteoutFraction::Proportions {
            let n = self.bdi_stat.len().max(1) as u64;
            let share = (1u64 << (shift - 1)) / n;
            for b in &mut self.bdi_stat {
                b.writeout = PropLocal { events: share, period: 0 };
            }
        }
    }

    /// writeback_set_ratelimit (boot): the hard dirty limit starts at the dirty threshold, and
    /// ratelimit_pages = dirty threshold / (CPUs × 32), at least 16.
    fn writeback_set_ratelimit(&mut self) {
        let (_, dirty) = self.global_dirty_limits();
        self.wb_domain.dirty_limit = dirty;
        self.wb_domain.ratelimit_pages = (dirty / (self.cpu_to_node.len() as u64 * 32)).max(16);
    }

    /// A task that may have dirtied pages exits on `cpu` (do_exit, 3.2+): the pages it dirtied
    /// since its last check go to the CPU's dirty_throttle_leaks, for the next dirtier there to
    /// be charged with, so that short-lived tasks do not escape the throttle (54848d73f9f2,
    /// "writeback: charge leaked page dirties to active tasks"). `io-less` only.
    pub fn dirty_throttle_exit(&mut self, t: &mut DirtyThrottle, cpu: usize) {
        if let Some((ino, _)) = t.wb_held.take() {
            // The model's writer can end (its last page written) inside the throttle's
            // writeback, where the kernel's would still be in write(): it lets go of the inode.
            let dev = self.sbs[self.inode(ino).sb].dev;
            self.release_held_inode(ino, dev);
        }
        t.wb_want = 0;
        if self.policy.balance_dirty_pages == BalanceDirtyPages::IoLess {
            self.dirty_throttle_leaks[cpu] += t.ratelimit;
        }
    }

    /// hard_dirty_limit: the domain's slowly-following limit, never below the threshold.
    fn hard_dirty_limit(&self, thresh: u64) -> u64 {
        self.wb_domain.dirty_limit.max(thresh)
    }

    /// 3.2+ balance_dirty_pages_ratelimited: a newly dirtied page counts for the task
    /// (current->nr_dirtied) and for its CPU (bdp_ratelimits). The task is checked once its
    /// count reaches its nr_dirtied_pause (at most 8 while the device is over its limit), or
    /// when its CPU's count reaches ratelimit_pages (which protects against many tasks each
    /// allowed a large first batch). Pages that tasks which exited on this CPU dirtied since
    /// their last check (dirty_throttle_leaks) are charged to it first, up to its limit.
    fn balance_dirty_pages_ratelimited_ioless(&mut self, t: &mut DirtyThrottle, dev: usize, newly_dirtied: bool, cpu: usize) {
        if newly_dirtied {
            t.ratelimit += 1;
            self.bdp_ratelimits[cpu] += 1;
        }
        let mut ratelimit = t.nr_dirtied_pause.unwrap_or(DIRTY_POLL_THRESH);
        if self.bdi_stat[dev].dirty_exceeded {
            ratelimit = ratelimit.min(DIRTY_POLL_THRESH / 4);
        }
        let p = &mut self.bdp_ratelimits[cpu];
        if t.ratelimit >= ratelimit {
            *p = 0;
        } else if *p >= self.wb_domain.ratelimit_pages {
            *p = 0;
            ratelimit = 0;
        }
        // Pages dirtied by tasks that exited on this CPU before they were checked.
        let leaks = &mut self.dirty_throttle_leaks[cpu];
        if *leaks > 0 && t.ratelimit < ratelimit {
            let n = (*leaks).min(ratelimit - t.ratelimit);
            *leaks -= n;
            t.ratelimit += n;
        }
        if t.ratelimit >= ratelimit {
            t.pages_dirtied = t.ratelimit;
            self.balance_dirty_pages_ioless(t, dev);
        }
    }

    /// One pass of 3.2+ balance_dirty_pages' loop for task `t`, which dirtied
    /// `t.pages_dirtied` pages, on device `dev`. Decides:
    /// * dirty + writeback pages at or below the freerun ceiling ((background + dirty
    ///   threshold) / 2): no sleep; the task may dirty 2^(ilog2(threshold − dirty) / 2) pages
    ///   before the next check (dirty_poll_interval).
    /// * above it: background writeback is started if idle, the bandwidth estimates are
    ///   updated if 200 ms have passed, and the task sleeps for its period, pages_dirtied ×
    ///   HZ / task_ratelimit (task_ratelimit = dirty_ratelimit × pos_ratio), less the time since
    ///   its last pause ended, within [min_pause, max_pause]; a pause shorter than min_pause is
    ///   carried over to the next check instead. At the hard limit (pos_ratio 0) it sleeps
    ///   max_pause and goes round again.
    /// The sleep comes after the current step; the task's next write goes on with the loop
    /// first (`balance_dirty_pages_resume`). Read from 6.1 and checked against 6.12, which
    /// starts background writeback at the top of each pass rather than after the loop and
    /// leaves dirty_exceeded alone on a free-running check; the model keeps 6.1's order.
    fn balance_dirty_pages_ioless(&mut self, t: &mut DirtyThrottle, dev: usize) {
        // The pause slept: the loop ends (or goes round again).
        if let Some((exceeded, nr_reclaimable, bg_thresh)) = t.ends_after_pause.take() {
            self.balance_dirty_pages_ioless_done(t, dev, exceeded, nr_reclaimable, bg_thresh);
            return;
        }
        t.throttled_since.get_or_insert(self.now_ns);
        let hz = self.hz();
        let mut now = self.jiffies();
        let (bg_thresh, thresh) = self.global_dirty_limits();
        let nr_reclaimable = self.global_page_state(ZoneStat::NrFileDirty);
        let dirty = nr_reclaimable + self.global_page_state(ZoneStat::NrWriteback);
        if dirty <= (thresh + bg_thresh) / 2 {
            // free_running
            let intv = if thresh > dirty { 1 << (ilog2(thresh - dirty) >> 1) } else { 1 };
            t.dirty_paused_when = now;
            t.ratelimit = 0;
            t.nr_dirtied_pause = Some(intv);
            self.balance_dirty_pages_ioless_done(t, dev, false, nr_reclaimable, bg_thresh);
            return;
        }
        if !self.writeback_in_progress(dev) {
            self.bdi_start_background_writeback(dev);
        }
        // wb_dirty_limits: the device's share of the threshold and its dirty pages.
        let wb_thresh = self.bdi_dirty_limit(dev, thresh);
        let b = &self.bdi_stat[dev];
        let wb_dirty = (b.reclaimable + b.writeback).max(0) as u64;
        let exceeded = wb_dirty > wb_thresh && dirty > thresh;
        let pos_ratio = self.wb_position_ratio(dev, dirty, thresh, bg_thresh, wb_thresh, wb_dirty);
        if exceeded {
            self.bdi_stat[dev].dirty_exceeded = true;
        }
        if now >= self.bdi_stat[dev].bw_time_stamp + self.bandwidth_interval() {
            self.__wb_update_bandwidth(dev, Some((dirty, thresh, bg_thresh, pos_ratio)));
        }
        let dirty_ratelimit = self.bdi_stat[dev].dirty_ratelimit;
        let task_ratelimit = dirty_ratelimit * pos_ratio >> RATELIMIT_CALC_SHIFT;
        let max_pause = self.wb_max_pause(dev, wb_dirty);
        let (min_pause, nr_dirtied_pause) = self.wb_min_pause(dev, max_pause, task_ratelimit, dirty_ratelimit);
        let pause = if task_ratelimit == 0 {
            max_pause
        } else {
            let period = hz * t.pages_dirtied / task_ratelimit;
            let mut pause = period as i64;
            if t.dirty_paused_when != 0 {
                pause -= now as i64 - t.dirty_paused_when as i64;
            }
            if pause < min_pause as i64 {
                // Too short to sleep: carried over (think time under a second is made up in
                // later periods; more is forgotten, a light dirtier).
                if pause < -(hz as i64) {
                    t.dirty_paused_when = now;
                    t.ratelimit = 0;
                } else if period > 0 {
                    t.dirty_paused_when += period;
                    t.ratelimit = 0;
                } else if t.nr_dirtied_pause.unwrap_or(DIRTY_POLL_THRESH) <= t.pages_dirtied {
                    t.nr_dirtied_pause = Some(t.nr_dirtied_pause.unwrap_or(DIRTY_POLL_THRESH) + t.pages_dirtied);
                }
                self.balance_dirty_pages_ioless_done(t, dev, exceeded, nr_reclaimable, bg_thresh);
                return;
            }
            if pause > max_pause as i64 {
                now += (pause as u64 - max_pause).min(max_pause);
                pause = max_pause as i64;
            }
            pause as u64
        };
        // io_schedule_timeout(pause), after this step.
        self.sleep_ns += self.schedule_timeout_ns(pause * self.sched.jiffy_ns);
        t.dirty_paused_when = now + pause;
        t.ratelimit = 0;
        t.nr_dirtied_pause = Some(nr_dirtied_pause);
        // The loop ends after this pause unless the limit itself was reached (and the device
        // still has more than its counters' error in dirty pages).
        if task_ratelimit > 0 || wb_dirty <= self.wb_stat_error() {
            t.ends_after_pause = Some((exceeded, nr_reclaimable, bg_thresh));
        }
    }

    /// The end of 3.2+ balance_dirty_pages: the device's dirty_exceeded is cleared if the last
    /// pass found it within its limit, and background writeback starts if it is not running
    /// and dirty pages exceed the background threshold.
    fn balance_dirty_pages_ioless_done(&mut self, t: &mut DirtyThrottle, dev: usize, exceeded: bool, nr_reclaimable: u64, bg_thresh: u64) {
        t.throttled_since = None;
        if !exceeded {
            self.bdi_stat[dev].dirty_exceeded = false;
        }
        if !self.writeback_in_progress(dev) && nr_reclaimable > bg_thresh {
            self.bdi_start_background_writeback(dev);
        }
    }

    /// wb_position_ratio (single device, no strictlimit): pos_ratio_polynom around the global
    /// setpoint, then the device's control line (pos_ratio falls linearly to 0 at wb_setpoint
    /// + span, span = 8 × write bandwidth with one device, and is quartered beyond 3/4 of it),
    /// then its reserve area (raised up to 8× while the device has under half its threshold
    /// dirty, so the disk does not run dry). 0 at or over the hard limit.
    pub fn wb_position_ratio(&self, dev: usize, dirty: u64, thresh: u64, bg_thresh: u64, wb_thresh: u64, wb_dirty: u64) -> u64 {
        let write_bw = self.bdi_stat[dev].avg_write_bandwidth;
        let freerun = (thresh + bg_thresh) / 2;
        let limit = self.hard_dirty_limit(thresh);
        if dirty >= limit {
            return 0;
        }
        let setpoint = (freerun + limit) / 2;
        let mut pos_ratio = pos_ratio_polynom(setpoint, dirty, limit);
        let wb_thresh = wb_thresh.min(thresh).max((limit - dirty) / 8);
        let x = (wb_thresh << 16) / (thresh | 1);
        let wb_setpoint = setpoint * x >> 16;
        let span = (thresh.saturating_sub(wb_thresh) + 8 * write_bw) * x >> 16;
        let x_intercept = wb_setpoint + span;
        if wb_dirty < x_intercept - span / 4 {
            pos_ratio = pos_ratio * (x_intercept - wb_dirty) / ((x_intercept - wb_setpoint) | 1);
        } else {
            pos_ratio /= 4;
        }
        let x_intercept = wb_thresh / 2;
        if wb_dirty < x_intercept {
            if wb_dirty > x_intercept / 8 {
                pos_ratio = pos_ratio * x_intercept / wb_dirty;
            } else {
                pos_ratio *= 8;
            }
        }
        pos_ratio
    }

    /// wb_max_pause: the longest sleep, short enough that the device's dirty pages would not run
    /// out at its write bandwidth (with a safety factor of 8), at most MAX_PAUSE (HZ/5).
    fn wb_max_pause(&self, dev: usize, wb_dirty: u64) -> u64 {
        let bw = self.bdi_stat[dev].avg_write_bandwidth;
        let t = wb_dirty / (1 + bw / (1 + self.hz() / 8).next_power_of_two()) + 1;
        t.min((self.hz() / 5).max(1))
    }

    /// wb_min_pause: the pause to aim at (10 ms, plus 10 ms per doubling of the dirtier count
    /// that write bandwidth / dirty_ratelimit suggests, at most max_pause / 2) and the pages
    /// the task may dirty before its next check (nr_dirtied_pause), at least
    /// DIRTY_POLL_THRESH where the rate allows. Returns (min_pause, nr_dirtied_pause).
    fn wb_min_pause(&self, dev: usize, max_pause: u64, task_ratelimit: u64, dirty_ratelimit: u64) -> (u64, u64) {
        let hz = self.hz();
        let hi = ilog2(self.bdi_stat[dev].avg_write_bandwidth);
        let lo = ilog2(self.bdi_stat[dev].dirty_ratelimit);
        let mut t = (hz / 100).max(1);
        if hi > lo {
            t += (hi - lo) * (10 * hz) / 1024;
        }
        t = t.min(1 + max_pause / 2);
        let hz_pow2 = hz.next_power_of_two();
        let mut pages = dirty_ratelimit * t / hz_pow2;
        if pages < DIRTY_POLL_THRESH {
            t = max_pause;
            pages = dirty_ratelimit * t / hz_pow2;
            if pages > DIRTY_POLL_THRESH {
                pages = DIRTY_POLL_THRESH;
                t = hz * DIRTY_POLL_THRESH / dirty_ratelimit;
            }
        }
        let pause = hz * pages / (task_ratelimit + 1);
        if pause > max_pause {
            t = max_pause;
            pages = task_ratelimit * t / hz_pow2;
        }
        (if pages >= DIRTY_POLL_THRESH { 1 + t / 2 } else { t }, pages)
    }

    /// __wb_update_bandwidth: the write bandwidth from the pages written since the last update,
    /// and, called from balance_dirty_pages with what it saw (`Some((dirty, threshold,
    /// background threshold, pos_ratio))`), the domain's hard limit and the device's
    /// dirty_ratelimit.
    fn __wb_update_bandwidth(&mut self, dev: usize, throttle: Option<(u64, u64, u64, u64)>) {
        let now = self.jiffies();
        let b = &self.bdi_stat[dev];
        let elapsed = now.saturating_sub(b.bw_time_stamp).max(1);
        let (dirtied, written) = (b.dirtied, b.completions);
        if let Some((dirty, thresh, bg_thresh, pos_ratio)) = throttle {
            self.domain_update_dirty_limit(dirty, thresh, now);
            self.wb_update_dirty_ratelimit(dev, dirty, thresh, bg_thresh, pos_ratio, dirtied, elapsed);
        }
        self.wb_update_write_bandwidth(dev, elapsed, written);
        let b = &mut self.bdi_stat[dev];
        b.dirtied_stamp = dirtied;
        b.written_stamp = written;
        b.bw_time_stamp = now;
    }

    /// domain_update_dirty_limit / update_dirty_limit: every 200 ms the hard limit jumps up to
    /// the threshold, or falls 1/32 of the way to max(threshold, dirty pages).
    fn domain_update_dirty_limit(&mut self, dirty: u64, thresh: u64, now: u64) {
        if now < self.wb_domain.dirty_limit_tstamp + self.bandwidth_interval() {
            return;
        }
        let limit = self.wb_domain.dirty_limit;
        if limit < thresh {
            self.wb_domain.dirty_limit = thresh;
        } else {
            let target = thresh.max(dirty);
            if limit > target {
                self.wb_domain.dirty_limit = limit - ((limit - target) >> 5);
            }
        }
        self.wb_domain.dirty_limit_tstamp = now;
    }

    /// wb_update_dirty_ratelimit: the rate that would balance dirtying with writeback,
    /// task_ratelimit × write bandwidth / dirty rate (at most the write bandwidth), and a step
    /// of dirty_ratelimit towards it — only when the dirty pages' side of the setpoint and the
    /// last and current balanced rates and task_ratelimit all agree on the direction, by an
    /// eighth of the gap, smaller the closer it gets.
    #[allow(clippy::too_many_arguments)]
    fn wb_update_dirty_ratelimit(&mut self, dev: usize, dirty: u64, thresh: u64, bg_thresh: u64, pos_ratio: u64, dirtied: u64, elapsed: u64) {
        let freerun = (thresh + bg_thresh) / 2;
        let limit = self.hard_dirty_limit(thresh);
        let setpoint = (freerun + limit) / 2;
        let hz = self.hz();
        let b = &mut self.bdi_stat[dev];
        let write_bw = b.avg_write_bandwidth;
        let mut dirty_ratelimit = b.dirty_ratelimit;
        let dirty_rate = (dirtied - b.dirtied_stamp) * hz / elapsed;
        let task_ratelimit = (dirty_ratelimit * pos_ratio >> RATELIMIT_CALC_SHIFT) + 1;
        let balanced = (task_ratelimit * write_bw / (dirty_rate | 1)).min(write_bw);
        let mut step = 0;
        if dirty < setpoint {
            let x = b.balanced_dirty_ratelimit.min(balanced).min(task_ratelimit);
            if dirty_ratelimit < x {
                step = x - dirty_ratelimit;
            }
        } else {
            let x = b.balanced_dirty_ratelimit.max(balanced).max(task_ratelimit);
            if dirty_ratelimit > x {
                step = dirty_ratelimit - x;
            }
        }
        let shift = dirty_ratelimit / (2 * step + 1);
        step = if shift < 64 { (step >> shift).div_ceil(8) } else { 0 };
        if dirty_ratelimit < balanced {
            dirty_ratelimit += step;
        } else {
            dirty_ratelimit -= step;
        }
        b.dirty_ratelimit = dirty_ratelimit.max(1);
        b.balanced_dirty_ratelimit = balanced;
    }

    /// wb_update_write_bandwidth: pages written per second since the last update, averaged
    /// into write_bandwidth over a period of roundup_pow_of_two(3 s), and avg_write_bandwidth
    /// following it by an eighth of the gap when both move the same way.
    fn wb_update_write_bandwidth(&mut self, dev: usize, elapsed: u64, written: u64) {
        let hz = self.hz();
        let period = (3 * hz).next_power_of_two();
        let b = &mut self.bdi_stat[dev];
        let mut avg = b.avg_write_bandwidth;
        let old = b.write_bandwidth;
        let mut bw = (written - written.min(b.written_stamp)) * hz;
        if elapsed > period {
            bw /= elapsed;
            avg = bw;
        } else {
            bw += old * (period - elapsed);
            bw >>= ilog2(period);
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        b.write_bandwidth = bw;
        b.avg_write_bandwidth = avg.max(1);
    }

    /// wb_inode_writeback_end (5.15+), `io-less` only: when page `pfn` was the last of its
    /// inode under writeback, a bandwidth update is queued for 200 ms later (bw_dwork; one at a
    /// time, so inodes that finish close together share it).
    fn wb_inode_writeback_end(&mut self, pfn: Pfn, dev: usize) {
        if self.policy.balance_dirty_pages != BalanceDirtyPages::IoLess || self.bdi_stat[dev].bw_dwork_queued {
            return;
        }
        let mapping = self.pages[pfn as usize].mapping;
        if mapping == 0 || self.mapping_tagged(mapping, PAGECACHE_TAG_WRITEBACK) {
            return;
        }
        self.bdi_stat[dev].bw_dwork_queued = true;
        let at = self.sched.timer_expiry(self.now_ns, self.bandwidth_interval() * self.sched.jiffy_ns);
        self.bw_timers.push((at, dev));
    }

    /// wb_update_bandwidth_workfn: the queued bandwidth update runs (the write bandwidth only).
    pub fn wb_update_bandwidth_workfn(&mut self, dev: usize) {
        self.bdi_stat[dev].bw_dwork_queued = false;
        self.__wb_update_bandwidth(dev, None);
    }

    /// The writeback side of the bandwidth estimate (do_writepages, 5.15+), `io-less` only:
    /// before an inode's writepages, stamps that have aged over a second with nothing under
    /// writeback are reset (wb_bandwidth_estimate_start), so idle time does not count as slow
    /// writing; after it, the write bandwidth is updated if 200 ms have passed.
    pub fn wb_bandwidth_estimate(&mut self, dev: usize, start: bool) {
        if self.policy.balance_dirty_pages != BalanceDirtyPages::IoLess {
            return;
        }
        let (now, hz) = (self.jiffies(), self.hz());
        let b = &mut self.bdi_stat[dev];
        if start {
            if now.saturating_sub(b.bw_time_stamp) > hz && b.writeback <= 0 {
                b.dirtied_stamp = b.dirtied;
                b.written_stamp = b.completions;
                b.bw_time_stamp = now;
            }
        } else if now >= b.bw_time_stamp + self.bandwidth_interval() {
            self.__wb_update_bandwidth(dev, None);
        }
    }
}
