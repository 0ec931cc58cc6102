//! Writeback of dirty file pages (fs/fs-writeback.c, 3.0/3.1): the per-device flusher thread
//! with its queued works, background writeback above dirty_background_ratio, periodic (kupdate)
//! writeback of inodes dirtied more than dirty_expire_centisecs ago, and writeback asked for
//! by reclaim (wakeup_flusher_threads) and by throttled dirtiers (writeback_inodes_wb).
//!
//! Inodes are written oldest-dirtied first, each for a chunk (`writeback_chunk` policy: 3.0's
//! 1024 pages, or 3.1's share of the device's bandwidth, at least 1024); a page's blocks are
//! allocated as it is written (delayed allocation), and runs of pages with adjacent sectors go
//! down as one bio. A writer finding the device's requests used up sleeps holding its bio
//! until a request is freed.

use std::collections::VecDeque;

use super::{Ino, I_DIRTY_PAGES, I_SYNC};
use crate::block::{Bio, Dir, PlugSite};
use crate::mm::mm_types::*;
use crate::mm::page_alloc::Mm;
use crate::mm::radix_tree::PAGECACHE_TAG_DIRTY;
use crate::sim::{After, Step, Task, TaskCx};

/// MIN_WRITEBACK_PAGES (3.1+): every inode gets at least 4 MB of writeback per turn.
pub const MIN_WRITEBACK_PAGES: u64 = 1024;
/// MAX_WRITEBACK_PAGES (2.6.x–3.0): what a writeback pass writes at most, 4 MB.
pub const MAX_WRITEBACK_PAGES: u64 = 1024;
/// PAGEVEC_SIZE: write_cache_pages looks the dirty tag up this many pages at a time.
const WRITEBACK_CHUNK: usize = 14;

/// Per-device writeback counters (bdi_stat and bdi state).
#[derive(Clone, Debug, Default)]
pub struct BdiStat {
    /// Dirty pages of files on this device (BDI_RECLAIMABLE).
    pub reclaimable: i64,
    /// Pages under writeback (BDI_WRITEBACK).
    pub writeback: i64,
    /// Writeback completions (WB_WRITTEN).
    pub completions: u64,
    /// The device as a member of the completion proportions (bdi->completions /
    /// wb->completions): its share of the dirty threshold.
    pub writeout: crate::klib::proportions::PropLocal,
    /// bdi->dirty_exceeded.
    pub dirty_exceeded: bool,
    /// Pages dirtied on the device (WB_DIRTIED).
    pub dirtied: u64,
    /// 3.2+ bandwidth estimation (`io-less` balance_dirty_pages only): when the estimates were
    /// last updated (jiffies) and WB_DIRTIED / WB_WRITTEN then; the write bandwidth, its
    /// smoothed form and the throttle's base rate, in pages per second.
    pub bw_time_stamp: u64,
    pub dirtied_stamp: u64,
    pub written_stamp: u64,
    pub write_bandwidth: u64,
    pub avg_write_bandwidth: u64,
    pub dirty_ratelimit: u64,
    pub balanced_dirty_ratelimit: u64,
    /// A bandwidth update is queued (bw_dwork).
    pub bw_dwork_queued: bool,
}

impl BdiStat {
    /// A device as bdi_init / wb_init leave it: every rate at INIT_BW (100 MB/s).
    pub fn new() -> BdiStat {
        let bw = crate::mm::page_writeback::INIT_BW;
        BdiStat { write_bandwidth: bw, avg_write_bandwidth: bw, dirty_ratelimit: bw, balanced_dirty_ratelimit: bw, ..Default::default() }
    }
}

/// Why a writeback work runs (wb_writeback_work.reason, 3.1 flavours).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkKind {
    /// Until dirty pages are below the background threshold.
    Background,
    /// Inodes dirtied longer than dirty_expire ago.
    Kupdate,
    /// A page count asked for by reclaim (range_cyclic = 0) or a throttled task.
    Pages,
}

/// A queued writeback work (struct wb_writeback_work).
#[derive(Clone, Copy, Debug)]
pub struct WbWork {
    pub kind: WorkKind,
    pub nr_pages: i64,
    /// Only inodes dirtied at or before this time are written.
    pub older_than_ns: u64,
    pub range_cyclic: bool,
}

impl Mm {
    /// Returns true if the device's flusher has work queued or running (writeback_in_progress).
    pub fn writeback_in_progress(&self, dev: usize) -> bool {
        self.flusher_busy[dev] || !self.bdi_work[dev].is_empty()
    }

    /// Queues background writeback and wakes the flusher (bdi_start_background_writeback).
    pub fn bdi_start_background_writeback(&mut self, dev: usize) {
        self.wake_up(self.bdevs[dev].flusher_wait);
    }

    /// wakeup_flusher_threads(nr_pages) from reclaim: every device with dirty pages gets a work
    /// of writing its share of `nr_pages` (all dirty pages if 0), from the start of each file.
    pub fn wakeup_flusher_threads(&mut self, nr_pages: u64) {
        let nr = if nr_pages == 0 { self.global_page_state(crate::mm::mmzone::ZoneStat::NrFileDirty) } else { nr_pages };
        let now = self.now_ns;
        for dev in 0..self.bdevs.len() {
            if self.bdi_stat[dev].reclaimable <= 0 {
                continue;
            }
            self.bdi_work[dev].push_back(WbWork { kind: WorkKind::Pages, nr_pages: nr as i64, older_than_ns: now, range_cyclic: false });
            self.wake_up(self.bdevs[dev].flusher_wait);
        }
    }

    /// What one inode gets per turn for WB_SYNC_NONE writeback, by the `writeback_chunk`
    /// policy: 3.0's MAX_WRITEBACK_PAGES (1024, within the work's pages), or 3.1+'s
    /// writeback_chunk_size, round_down(min(bandwidth/2, dirty limit/8, work pages) + 1024,
    /// 1024).
    fn writeback_chunk_size(&self, dev: usize, work_pages: i64) -> u64 {
        if self.policy.writeback_chunk == crate::mm::policy::WritebackChunk::MaxWritebackPages {
            return MAX_WRITEBACK_PAGES.min(work_pages.max(0) as u64);
        }
        let bw_half = self.bdevs[dev].model.bandwidth / crate::mm::PAGE_SIZE / 2;
        let (_, dirty) = self.global_dirty_limits();
        let pages = bw_half.min(dirty / 8).min(work_pages.max(0) as u64);
        (pages + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
    }

    /// The oldest dirty inode of device `dev` dirtied at or before `older_than` (queue_io +
    /// the b_io tail).
    fn next_dirty_inode(&self, dev: usize, older_than: u64) -> Option<Ino> {
        for sb in self.sbs.iter().filter(|sb| sb.dev == dev) {
            if let Some((_, &ino)) = sb.b_dirty.iter().next() {
                if self.inode(ino).dirtied_when <= older_than {
                    return Some(ino);
                }
            }
        }
        None
    }

    /// writeback_single_inode with write_cache_pages: writes up to `nr_to_write` dirty pages of
    /// the inode in index order (from writeback_index when cyclic), allocating blocks and
    /// merging adjacent ones into bios. Each bio asks for a request as the file system's
    /// writer does (`FsType::writes_page_by_page`): at its first page (ext3), or when it is
    /// submitted (the others). If the pool is used up the writer stops there, asleep in
    /// get_request_wait holding that bio (`submit_bio_or_sleep`). Returns (pages written,
    /// stopped for a request). With `hold` (the flusher, a throttled dirtier), an inode so
    /// stopped keeps I_SYNC and stays off the dirty list for the caller to go on with: the
    /// kernel's writer goes on with the same inode when it wakes (writeback_sb_inodes moves
    /// on only when the turn's nr_to_write is spent or the inode is clean).
    pub fn writeback_single_inode(&mut self, ino: Ino, nr_to_write: u64, range_cyclic: bool, hold: bool) -> (u64, bool) {
        self.writeback_inode_pages(ino, nr_to_write, range_cyclic, hold, false)
    }

    /// `writeback_single_inode` with WB_SYNC_ALL over the whole file, for fsync
    /// (filemap_fdatawrite → do_writepages): every dirty page is written, each bio WRITE_SYNC
    /// (3.0 __block_write_full_page, 6.x wbc_to_write_flags), so it takes its request from the
    /// sync pool. Pages it cannot write now (locked, under writeback, or with buffers the
    /// journal is writing) stay dirty: where the kernel's walk waits for each (lock_page,
    /// wait_on_page_writeback, lock_buffer), the caller waits and calls again
    /// (`Mm::vfs_fsync`). Returns (pages written, stopped for a request).
    pub fn writeback_single_inode_sync(&mut self, ino: Ino, hold: bool) -> (u64, bool) {
        self.writeback_inode_pages(ino, u64::MAX, false, hold, true)
    }

    fn writeback_inode_pages(&mut self, ino: Ino, nr_to_write: u64, range_cyclic: bool, hold: bool, sync_all: bool) -> (u64, bool) {
        let sb = self.inode(ino).sb;
        let dev = self.sbs[sb].dev;
        if let Some(k) = self.inode_mut(ino).dirty_key.take() {
            self.sbs[sb].b_dirty.remove(&k);
        }
        let i = self.inode_mut(ino);
        i.state |= I_SYNC;
        i.state &= !I_DIRTY_PAGES;
        let start = if range_cyclic { i.writeback_index } else { 0 };
        let mapping = i.mapping;
        let fs = self.sbs[sb].fs_type;
        let own_writepages = fs == super::FsType::Ext4;
        let page_by_page = fs.writes_page_by_page(self.era);
        self.wb_bandwidth_estimate(dev, true);
        let plugged = self.blk_start_plug(PlugSite::Writepages { own_writepages });
        let mut written = 0u64;
        let mut blocked = false;
        // ext3's writer back from get_request_wait goes on adding pages to the request it
        // slept for.
        let mut bio: Option<Bio> = if page_by_page { self.take_granted_bio(dev) } else { None };
        let mut next_index = start;
        // The dirty tag is walked from `start` to the end, then (cyclic) from 0 up to `start`,
        // at most `nr_to_write` offsets in all, a pagevec at a time (pagevec_lookup_tag).
        let mut budget = nr_to_write as usize;
        let (mut cursor, mut end) = (start, u32::MAX);
        let mut chunk: Vec<u32> = Vec::with_capacity(WRITEBACK_CHUNK);
        'walk: while budget > 0 {
            chunk.clear();
            self.find_get_pages_tag(mapping, cursor, end, PAGECACHE_TAG_DIRTY, budget.min(WRITEBACK_CHUNK), &mut chunk);
            let Some(&last) = chunk.last() else {
                if range_cyclic && start > 0 && end == u32::MAX {
                    (cursor, end) = (0, start);
                    continue;
                }
                break;
            };
            budget -= chunk.len();
            cursor = last + 1;
            // The pagevec's frames are loaded together (prefetch hints only).
            for &index in &chunk {
                if let Some(pfn) = self.find_get_page(mapping, index) {
                    self.prefetch_page(pfn);
                }
            }
            for &index in &chunk {
                if bio.as_ref().is_some_and(|b| b.is_full(&self.bdevs[dev].model)) {
                    let b = bio.take().expect("a full bio");
                    if !self.submit_writeback_bio(dev, b, page_by_page) {
                        blocked = true;
                        break 'walk;
                    }
                }
                let Some(pfn) = self.find_get_page(mapping, index) else { continue };
                let f = self.pages[pfn as usize].flags;
                if f & (PG_LOCKED | PG_WRITEBACK) != 0 || f & PG_DIRTY == 0 {
                    continue;
                }
                // A page whose buffers the journal's commit wrote is cleaned without I/O. One
                // it is still writing is redirtied, and the walk goes on past it (done_index:
                // the next cyclic walk starts after it). The kernel also counts it against
                // nr_to_write; here no time passes within a walk, so that could only make a
                // writer take the same pages again until its budget is gone.
                if let Some(w) = self.writepage_clean_buffers(pfn, dev) {
                    written += u64::from(w == super::Writepage::Done);
                    next_index = index + 1;
                    continue;
                }
                self.writeback_page_buffers(pfn, sb);
                let sector = self.get_block(ino, index);
                let mut alone = false;
                if !bio.as_mut().is_some_and(|b| b.add_page(&self.bdevs[dev].model, sector, pfn)) {
                    // A gap on the disk (or the segment limit) ends the bio early; if the
                    // writer sleeps with it, this page waits for its next turn.
                    if let Some(b) = bio.take() {
                        if !self.submit_writeback_bio(dev, b, page_by_page) {
                            blocked = true;
                            break 'walk;
                        }
                    }
                    // ext3 asks for the new request at this page: without one it sleeps
                    // holding the page alone.
                    let pool = self.bdevs[dev].pool(Dir::Write, sync_all);
                    alone = page_by_page && !self.may_get_request(dev, pool);
                    let mut b = Bio::new(Dir::Write, sector, pfn);
                    // WRITE_SYNC = WRITE | REQ_SYNC | REQ_NOIDLE.
                    (b.sync, b.noidle) = (sync_all, sync_all);
                    bio = Some(b);
                }
                self.cost_ns += self.costs.writeback_page_ns;
                self.clear_page_dirty_for_io(pfn);
                self.set_page_writeback(pfn, dev);
                written += 1;
                next_index = index + 1;
                if alone && !self.submit_first_page_or_sleep(dev, bio.take().expect("the page's bio")) {
                    blocked = true;
                    break 'walk;
                }
            }
        }
        if let Some(b) = bio.take() {
            blocked |= !self.submit_writeback_bio(dev, b, page_by_page);
        }
        self.blk_finish_plug(plugged);
        self.wb_bandwidth_estimate(dev, false);
        let still_dirty = self.mapping_tagged(mapping, PAGECACHE_TAG_DIRTY);
        self.inode_mut(ino).writeback_index = next_index;
        if blocked && hold && still_dirty {
            return (written, blocked);
        }
        self.writeback_done(ino, still_dirty);
        (written, blocked)
    }

    /// Submits a writeback bio: one that got its request at its first page (`page_by_page`)
    /// is queued; the others ask for one now (`submit_bio_or_sleep`). Returns false if the
    /// writer sleeps holding it.
    fn submit_writeback_bio(&mut self, dev: usize, bio: Bio, page_by_page: bool) -> bool {
        if page_by_page {
            self.submit_bio(dev, bio);
            return true;
        }
        self.submit_bio_or_sleep(dev, bio)
    }

    /// The end of an inode's writeback turn: I_SYNC cleared, and the inode back at the end of
    /// the dirty list if pages are still dirty (requeue), else the writer's iput (a clean
    /// unused inode joins the LRU).
    fn writeback_done(&mut self, ino: Ino, still_dirty: bool) {
        let sb = self.inode(ino).sb;
        let key = self.sbs[sb].next_key();
        let i = self.inode_mut(ino);
        i.state &= !I_SYNC;
        if still_dirty {
            i.state |= I_DIRTY_PAGES;
            i.dirty_key = Some(key);
            self.sbs[sb].b_dirty.insert(key, ino);
        } else {
            self.iput_final_check(ino);
        }
    }

    /// writeback_inodes_wb from a throttled dirtier: writes up to `nr_pages` of the device's
    /// dirty pages, oldest inodes first, going on first with `held`, the inode a full request
    /// pool stopped it in. Returns (pages written, stopped for a request: `held` is then the
    /// inode to go on with and the pages left of its turn).
    pub fn writeback_inodes_wb(&mut self, dev: usize, nr_pages: u64, held: &mut Option<(Ino, u64)>) -> (u64, bool) {
        let now = self.now_ns;
        let mut left = nr_pages;
        let mut written = 0;
        let mut seen = 0;
        while left > 0 && seen < 64 {
            let (ino, chunk) = match held.take().filter(|&(ino, _)| self.still_holds_inode(ino, dev)) {
                Some((ino, chunk)) => (ino, chunk),
                None => {
                    let Some(ino) = self.next_dirty_inode(dev, now) else { break };
                    (ino, self.writeback_chunk_size(dev, left as i64))
                }
            };
            seen += 1;
            let (w, blocked) = self.writeback_single_inode(ino, chunk.min(left), true, true);
            written += w;
            left = left.saturating_sub(w);
            if blocked {
                if self.inodes[ino as usize].as_ref().is_some_and(|i| i.state & I_SYNC != 0) {
                    *held = Some((ino, chunk.min(left + w) - w));
                }
                return (written, true);
            }
            if w == 0 {
                break;
            }
        }
        (written, false)
    }

    /// Whether a writer that a full request pool stopped in the middle of inode `ino`'s turn
    /// on device `dev` still has it to go on with: not if its file was deleted meanwhile —
    /// evicted (the slot empty, or reused by an inode nobody is writing or by another
    /// device's), or unlinked and waiting for its pages under writeback, whose cancelled dirty
    /// pages are not written (the writer lets go of it).
    pub fn still_holds_inode(&mut self, ino: Ino, dev: usize) -> bool {
        let Some(Some(i)) = self.inodes.get_mut(ino as usize) else { return false };
        if i.state & I_SYNC == 0 || self.sbs[i.sb].dev != dev {
            return false;
        }
        if i.nlink == 0 {
            i.state &= !I_SYNC;
            return false;
        }
        true
    }

    /// A writer lets go of the inode it held through a full request pool without finishing
    /// its turn (a throttled task that exits): the inode goes back on the dirty list.
    pub fn release_held_inode(&mut self, ino: Ino, dev: usize) {
        if self.still_holds_inode(ino, dev) {
            let still_dirty = self.mapping_tagged(self.inode(ino).mapping, PAGECACHE_TAG_DIRTY);
            self.writeback_done(ino, still_dirty);
        }
    }
}

/// What the flusher does between steps.
#[derive(Clone, Copy, Debug)]
enum FlusherState {
    Idle,
    Working(WbWork),
}

/// The per-device flusher thread (flush-MAJOR:MINOR, bdi_writeback_thread + wb_do_writeback).
#[derive(Debug)]
pub struct Flusher {
    dev: usize,
    name: String,
    interval_ns: u64,
    last_old_flush: u64,
    state: FlusherState,
    resume: Option<(Ino, u64)>,
}

impl Flusher {
    pub fn new(dev: usize, dirty_writeback_centisecs: u64) -> Flusher {
        Flusher { dev, name: format!("flush-8:{}", dev * 16), interval_ns: dirty_writeback_centisecs * 10_000_000, last_old_flush: 0, state: FlusherState::Idle, resume: None }
    }

    /// When the thread first runs: at boot, to go to sleep on its wait queue (the periodic
    /// wakeup follows every interval from then on).
    pub fn first_wakeup_ns(&self) -> u64 {
        0
    }

    /// The next work: queued works first, then periodic kupdate writeback every interval, then
    /// background writeback while over the background threshold (wb_do_writeback).
    fn next_work(&mut self, mm: &mut Mm, now: u64) -> Option<WbWork> {
        if let Some(w) = mm.bdi_work[self.dev].pop_front() {
            return Some(w);
        }
        if self.interval_ns > 0 && now >= self.last_old_flush + self.interval_ns {
            self.last_old_flush = now;
            let nr = mm.bdi_stat[self.dev].reclaimable.max(0) + mm.jbd_dirty_metadata_pages(self.dev) as i64;
            if nr > 0 {
                let expire = mm.sysctl.dirty_expire_centisecs * 10_000_000;
                return Some(WbWork { kind: WorkKind::Kupdate, nr_pages: nr + 64, older_than_ns: now.saturating_sub(expire), range_cyclic: true });
            }
        }
        if mm.over_bground_thresh() && mm.bdi_stat[self.dev].reclaimable > 0 {
            return Some(WbWork { kind: WorkKind::Background, nr_pages: i64::MAX, older_than_ns: now, range_cyclic: true });
        }
        None
    }
}

impl Task for Flusher {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_workload(&self) -> bool {
        false
    }

    fn waiter(&self) -> Option<crate::sim::Waiter> {
        Some(crate::sim::Waiter::Flusher)
    }

    /// One inode's chunk of a writeback work per step (wb_writeback / writeback_sb_inodes).
    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let mm = &mut *cx.mm;
        let now = cx.now;
        let dev = self.dev;
        let work = match self.state {
            FlusherState::Working(w) => w,
            FlusherState::Idle => match self.next_work(mm, now) {
                Some(w) => {
                    mm.flusher_busy[dev] = true;
                    w
                }
                None => {
                    mm.flusher_busy[dev] = false;
                    let dirty = mm.bdi_stat[dev].reclaimable > 0 || mm.jbd_dirty_metadata_pages(dev) > 0;
                    let after = if dirty || mm.bdi_stat[dev].writeback > 0 {
                        After::WaitTimeout(mm.bdevs[dev].flusher_wait, self.interval_ns.max(1_000_000))
                    } else {
                        After::Wait(mm.bdevs[dev].flusher_wait)
                    };
                    return Step { user_ns: 0, system_ns: mm.costs.kswapd_pass_ns / 4, after };
                }
            },
        };
        // The inode a full queue stopped in the middle of its turn, unless its file was
        // deleted meanwhile.
        let held = self.resume.take().filter(|&(ino, _)| mm.still_holds_inode(ino, dev));
        let (ino, chunk) = match held {
            Some(r) => r,
            None => {
                let background_done = work.kind == WorkKind::Background && !mm.over_bground_thresh();
                let next = if work.nr_pages <= 0 || background_done { None } else { mm.next_dirty_inode(dev, work.older_than_ns) };
                // The block device inode of a journal takes its turn by its place on the dirty
                // list, like the files.
                let meta = if work.nr_pages <= 0 || background_done { None } else { mm.jbd_next_dirty_metadata(dev, work.older_than_ns) };
                if let Some((j, _)) = meta.filter(|&(_, k)| next.is_none_or(|ino| mm.inode(ino).dirty_key.is_none_or(|fk| k < fk))) {
                    let chunk = mm.writeback_chunk_size(dev, work.nr_pages);
                    let written = mm.jbd_writeback_metadata(j, chunk);
                    let mut w = work;
                    w.nr_pages -= written as i64;
                    self.state = FlusherState::Working(w);
                    return Step { user_ns: 0, system_ns: mm.costs.kswapd_pass_ns / 4, after: After::Continue };
                }
                let Some(ino) = next else {
                    self.state = FlusherState::Idle;
                    let unfinished = work.nr_pages > 0 && !background_done && mm.bdi_stat[dev].reclaimable > 0;
                    let after = if unfinished {
                        // The dirty inodes are all in another writer's hands (I_SYNC): requeued
                        // to b_more_io, and wb_writeback sleeps in inode_wait_for_writeback
                        // until that writer is done with one (some I/O finishing here).
                        After::WaitTimeout(mm.bdevs[dev].io_wait, mm.sched.jiffy_ns)
                    } else {
                        After::Continue
                    };
                    return Step { user_ns: 0, system_ns: mm.costs.kswapd_pass_ns / 4, after };
                };
                (ino, mm.writeback_chunk_size(dev, work.nr_pages))
            }
        };
        let (written, blocked) = mm.writeback_single_inode(ino, chunk, work.range_cyclic, true);
        if blocked && mm.inodes[ino as usize].as_ref().is_some_and(|i| i.state & I_SYNC != 0) {
            self.resume = Some((ino, chunk - written));
        }
        let mut w = work;
        w.nr_pages -= written as i64;
        self.state = FlusherState::Working(w);
        let after = if blocked {
            // Asleep in get_request_wait holding its bio (`Mm::rq_wait_owed`, which the engine
            // turns into the wait).
            After::Continue
        } else if written == 0 {
            // Nothing writable in this inode now (pages locked or already under writeback):
            // wait for some I/O to finish before looking again.
            After::WaitTimeout(mm.bdevs[dev].io_wait, mm.sched.jiffy_ns)
        } else {
            After::Continue
        };
        Step { user_ns: 0, system_ns: mm.costs.kswapd_pass_ns / 4, after }
    }
}

/// Waits for writeback queues: the flushers' works per device.
pub type BdiWork = VecDeque<WbWork>;
