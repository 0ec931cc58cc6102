//! The memory manager's side of the block layer (block/blk-core.c): submitting bios, plugging,
//! starting the device and completing its requests.
//!
//! Plugging, by era (`BlkPlugPolicy`):
//! * 2.6.32 queue plugging: a request that finds the queue empty plugs the queue; dispatch is
//!   held back until 4 requests are queued, 3 ms have passed, a request of the device
//!   completes, or the submitter waits for its I/O. A reader always does (lock_page →
//!   sync_page, or page_cache_async_readahead's explicit blk_run_backing_dev), and so do a
//!   direct I/O and the journal (its waits on buffers), so in the model a read or a write
//!   someone waits for unplugs at once; page cache writeback waits for the rest.
//! * 2.6.39+ task plugging: the places the kernel brackets with blk_start_plug/blk_finish_plug
//!   (`PlugSite`) collect their requests in the task's plug (`Mm::plug`, current->plug), merge
//!   later bios into them, and flush them to the queues when the bracket ends, when the plug is
//!   full, or before the task would sleep. A bracket never spans a simulated sleep: every
//!   plugging call here returns before its task sleeps, and flushes on the way out, as the
//!   kernel flushes on schedule().

use super::{Bio, Dir, HeldBio, Pool, IoContext, Plug, Request, BLK_BATCH_REQ, BLK_MAX_REQUEST_COUNT_3X, BLK_MAX_REQUEST_COUNT_6X, BLK_PLUG_FLUSH_SIZE_SECTORS, SECTORS_PER_PAGE};
use crate::mm::mm_types::*;
use crate::mm::page_alloc::Mm;
use crate::mm::policy::{BlkPlugPolicy, RequestAlloc};
use crate::mm::vmstat::VmStat;

/// 2.6.32 q->unplug_thresh: a plugged queue holding this many requests is unplugged.
pub const UNPLUG_THRESH: usize = 4;
/// 2.6.32 q->unplug_delay (3 ms): a plugged queue is unplugged this long after it was plugged.
pub const UNPLUG_DELAY_NS: u64 = 3_000_000;

/// Kernel code that submits its I/O under a task plug (a blk_start_plug call site). Whether
/// the era plugs there is `Mm::plugs_at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlugSite {
    /// A file's writeback: generic_writepages / mpage_writepages (3.x: ext2, ext3, xfs; ext4's
    /// own ext4_da_writepages does not plug), the flusher's wb_writeback (6.x: every file
    /// system). `own_writepages` is true for a file system with its own ->writepages (ext4).
    Writepages { own_writepages: bool },
    /// write() (3.x generic_file_aio_write): the writer's own writeback in balance_dirty_pages.
    Write,
    /// The journal: a commit's data and log writes (journal_commit_transaction), and each
    /// checkpoint batch (__flush_batch).
    Journal,
    /// read_pages of a readahead.
    Readahead,
    /// One direct I/O call (generic_file_aio_read / __iomap_dio_rw).
    DirectIo,
    /// 6.x shrink_lruvec: reclaim's pageout writes.
    Reclaim,
    /// 6.x swap_cluster_readahead.
    SwapReadahead,
}

impl Mm {
    /// Whether this era's kernel has a blk_start_plug at `site`.
    pub fn plugs_at(&self, site: PlugSite) -> bool {
        match self.policy.blk_plug {
            BlkPlugPolicy::QueuePlug => false,
            BlkPlugPolicy::TaskPlug => match site {
                PlugSite::Writepages { own_writepages } => !own_writepages,
                PlugSite::Write | PlugSite::Journal | PlugSite::Readahead | PlugSite::DirectIo => true,
                PlugSite::Reclaim | PlugSite::SwapReadahead => false,
            },
            BlkPlugPolicy::MqPlug => site != PlugSite::Write,
        }
    }

    /// blk_start_plug at `site`: starts the current task's plug if the era plugs there and no
    /// plug is active (a nested plug is not installed). Returns whether this call started it;
    /// hand that to `blk_finish_plug`.
    pub fn blk_start_plug(&mut self, site: PlugSite) -> bool {
        if self.plug.is_some() || !self.plugs_at(site) {
            return false;
        }
        self.plug = Some(Plug::default());
        true
    }

    /// blk_finish_plug: flushes the plug this bracket started and removes it.
    pub fn blk_finish_plug(&mut self, started: bool) {
        if started {
            self.blk_flush_plug_list();
            self.plug = None;
        }
    }

    /// blk_flush_plug_list: moves the plugged requests into their queues, device by device in
    /// plug order (plug_rq_cmp sorts by queue only), each joining the back of a queued request
    /// that ends where it starts if they fit together, and starts idle devices.
    pub fn blk_flush_plug_list(&mut self) {
        let Some(plug) = self.plug.as_mut() else { return };
        let mut list = std::mem::take(&mut plug.list);
        list.sort_by_key(|&(dev, _)| dev);
        let mut kick: Option<usize> = None;
        for (dev, rq) in list {
            if kick.is_some_and(|k| k != dev) {
                self.blk_kick(kick.take().expect("a device"));
            }
            if self.bdevs[dev].insert_request(rq, self.now_ns) {
                kick = Some(dev);
            }
        }
        if let Some(k) = kick {
            self.blk_kick(k);
        }
    }

    /// Submits a bio to device `dev` (submit_bio → generic_make_request → __make_request),
    /// counting pgpgin / pgpgout in KiB: into the task's plug if one is active, else into the
    /// queue, starting the device if it is idle and its queue not plugged. The bio gets its
    /// request whatever the pool holds: reads, direct I/O, and a write whose request its
    /// writer already had (`submit_bio_or_sleep` is the asking form).
    pub fn submit_bio(&mut self, dev: usize, mut bio: Bio) {
        bio.owner = self.sched.current_pid;
        self.count_bio(&bio);
        self.queue_bio(dev, bio);
    }

    /// submit_bio's accounting: pgpgin / pgpgout in KiB, and the call's CPU time.
    fn count_bio(&mut self, bio: &Bio) {
        let kib = bio.pages.len() as u64 * SECTORS_PER_PAGE / 2;
        let item = if bio.dir == Dir::Write { VmStat::Pgpgout } else { VmStat::Pgpgin };
        self.events.count(item, kib);
        self.cost_ns += self.costs.submit_bio_ns;
    }

    /// __make_request for a page-cache or swap write whose writer asks for a request as the
    /// kernel's does (the flusher, a throttled dirtier, the journal's ordered data, reclaim's
    /// pageout): a bio that merges into a plugged or queued request needs none; one that
    /// needs a new request gets it if the task may have one (`may_get_request`). If not, the
    /// task sleeps in get_request_wait holding the bio, its pages under writeback and not yet
    /// queued (`Mm::held_bio`; it owes the wait, `Mm::rq_wait_owed`), and queues it when it
    /// wakes (`woken_for_request`). Returns false if the bio is held.
    pub fn submit_bio_or_sleep(&mut self, dev: usize, bio: Bio) -> bool {
        self.submit_or_hold(dev, bio, false)
    }

    /// `submit_bio_or_sleep` for the first page of a request of ext3's page-by-page writers
    /// (`FsType::writes_page_by_page`): held, it stays open when the task wakes, for the
    /// writer to add its next pages to (`take_granted_bio`), as they merge into that request
    /// in the kernel's plug.
    pub fn submit_first_page_or_sleep(&mut self, dev: usize, bio: Bio) -> bool {
        self.submit_or_hold(dev, bio, true)
    }

    /// `submit_bio_or_sleep`, the held bio marked `open` or not. A task that owes the wait
    /// already (a second bio in the same step) queues at once.
    fn submit_or_hold(&mut self, dev: usize, mut bio: Bio, open: bool) -> bool {
        bio.owner = self.sched.current_pid;
        let pool = self.bdevs[dev].bio_pool(&bio);
        if self.rq_wait_owed.is_some() || self.bio_merges(dev, &bio) || self.may_get_request(dev, pool) {
            self.submit_bio(dev, bio);
            return true;
        }
        self.submit_held_bio();
        let pid = self.sched.current_pid as usize;
        if self.held_bio.len() <= pid {
            self.held_bio.resize_with(pid + 1, || None);
        }
        self.held_bio[pid] = Some(HeldBio { dev, bio, open, granted: false });
        self.rq_wait_owed = Some(self.sleep_for_request(dev, pool));
        false
    }

    /// The current task is back from get_request_wait with its request (it is a batcher now):
    /// the bio it held is queued, or, if open, left for its writer to go on with until the
    /// step ends (`submit_held_bio`).
    pub fn woken_for_request(&mut self) {
        let pid = self.sched.current_pid as usize;
        let Some(h) = self.held_bio.get(pid).and_then(Option::as_ref) else { return };
        let (dev, pool, open) = (h.dev, self.bdevs[h.dev].bio_pool(&h.bio), h.open);
        self.may_get_request(dev, pool);
        if open {
            self.held_bio[pid].as_mut().expect("a held bio").granted = true;
        } else {
            self.submit_held_bio();
        }
    }

    /// The open bio the current task got its request for, if it is of device `dev`: its
    /// writer adds its next pages to it.
    pub fn take_granted_bio(&mut self, dev: usize) -> Option<Bio> {
        let slot = self.held_bio.get_mut(self.sched.current_pid as usize)?;
        if slot.as_ref().is_some_and(|h| h.granted && h.dev == dev) {
            return slot.take().map(|h| h.bio);
        }
        None
    }

    /// Queues the bio the current task holds: at the end of the step it was woken in (its
    /// writer did not go on with it), or now if it does not sleep for the request after all
    /// (it owed another sleep first: one request early).
    pub fn submit_held_bio(&mut self) {
        let pid = self.sched.current_pid as usize;
        if let Some(h) = self.held_bio.get_mut(pid).and_then(Option::take) {
            self.submit_bio(h.dev, h.bio);
        }
    }

    /// Whether the current task holds a bio it has the request for (`take_granted_bio`).
    pub fn holds_granted_bio(&self) -> bool {
        self.held_bio.get(self.sched.current_pid as usize).is_some_and(|h| h.as_ref().is_some_and(|h| h.granted))
    }

    /// Whether `bio` would merge into a request: a plugged one of its device (3.x tries them
    /// all, latest first; 6.x only the latest), or a queued one (`plug_bio`'s and the queue's
    /// order of trying).
    fn bio_merges(&self, dev: usize, bio: &Bio) -> bool {
        if let Some(plug) = &self.plug {
            let mq = self.policy.blk_plug == BlkPlugPolicy::MqPlug;
            let mut mine = plug.list.iter().rev().filter(|(d, _)| *d == dev).take(if mq { 1 } else { usize::MAX });
            if mine.any(|(_, rq)| self.bdevs[dev].plug_merge_end(rq, bio).is_some()) {
                return true;
            }
        }
        self.bdevs[dev].would_queue_merge(bio)
    }

    /// The queueing half of submit_bio: the task's plug, a 2.6.32 queue plug, or the queue.
    fn queue_bio(&mut self, dev: usize, bio: Bio) {
        let pool = self.bdevs[dev].bio_pool(&bio);
        let count = self.bdevs[dev].allocated(pool);
        if self.plug.is_some() {
            self.plug_bio(dev, bio);
            self.get_request_accounting(dev, pool, count);
            return;
        }
        if self.policy.blk_plug == BlkPlugPolicy::QueuePlug {
            self.queue_plug_bio(dev, bio);
            self.get_request_accounting(dev, pool, count);
            return;
        }
        let idle = self.bdevs[dev].submit_bio(bio, self.now_ns);
        self.get_request_accounting(dev, pool, count);
        if idle {
            self.blk_kick(dev);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Request allocation (get_request, get_request_wait, 2.6.x–4.x).

    /// The current task's io_context.
    fn ioc_mut(&mut self) -> &mut IoContext {
        let pid = self.sched.current_pid as usize;
        if self.iocs.len() <= pid {
            self.iocs.resize(pid + 1, IoContext::default());
        }
        &mut self.iocs[pid]
    }

    /// ioc_batching: the current task may allocate past a full pool — a whole new batch, or
    /// some of one begun less than BLK_BATCH_TIME (HZ/50) ago.
    fn ioc_batching(&mut self) -> bool {
        let now = self.sched.jiffies_at(self.now_ns + self.cost_ns);
        let batch_time = 1_000_000_000 / self.sched.jiffy_ns / 50;
        let ioc = *self.ioc_mut();
        ioc.nr_batch_requests == BLK_BATCH_REQ || (ioc.nr_batch_requests > 0 && now < ioc.last_waited + batch_time)
    }

    /// ioc_set_batching: a task that is not batching starts a batch now.
    fn ioc_set_batching(&mut self) {
        if self.ioc_batching() {
            return;
        }
        let now = self.sched.jiffies_at(self.now_ns + self.cost_ns);
        let ioc = self.ioc_mut();
        ioc.nr_batch_requests = BLK_BATCH_REQ;
        ioc.last_waited = now;
    }

    /// Whether the current task would get a request from pool `pool` of device `dev` now, or
    /// must sleep for one (get_request's checks; a task back from get_request_wait's sleep is
    /// a batcher first). The queue is marked full (blk_queue_full) from the allocation that
    /// fills the pool until a freed request leaves room again, that is while the pool is full;
    /// only a batcher gets a request then. With `request_alloc = "tags"` a request is had
    /// while the pool has one.
    pub fn may_get_request(&mut self, dev: usize, pool: Pool) -> bool {
        let count = self.bdevs[dev].allocated(pool);
        let nr = self.bdevs[dev].model.nr_requests as usize;
        if self.policy.request_alloc == RequestAlloc::Tags {
            return count < nr;
        }
        if std::mem::take(&mut self.ioc_mut().slept) {
            self.ioc_set_batching();
        }
        if count >= nr && !self.ioc_batching() {
            return false;
        }
        count < 3 * nr / 2
    }

    /// The current task goes to sleep in get_request_wait for pool `pool` of device `dev`:
    /// returns the (exclusive) wait queue. When it looks again it is a batcher.
    pub fn sleep_for_request(&mut self, dev: usize, pool: Pool) -> usize {
        self.ioc_mut().slept = true;
        self.bdevs[dev].rq_wait[pool as usize]
    }

    /// The current task does not sleep for the request after all (it owed another sleep
    /// first): it is no batcher when it looks again, and the bio it held is queued now, one
    /// request early.
    pub fn request_sleep_cancelled(&mut self) {
        if let Some(ioc) = self.iocs.get_mut(self.sched.current_pid as usize) {
            ioc.slept = false;
        }
        self.submit_held_bio();
    }

    /// get_request's bookkeeping once a bio of pool `pool` has been queued on `dev`, whose
    /// pool held `count` requests before: if it took a new request and that filled the pool,
    /// its task becomes a batcher (it marked the queue full), and a batcher's allocation near
    /// the full mark uses up one of its batch.
    fn get_request_accounting(&mut self, dev: usize, pool: Pool, count: usize) {
        if self.bdevs[dev].allocated(pool) <= count {
            return; // merged into a request already plugged or queued
        }
        let nr = self.bdevs[dev].model.nr_requests as usize;
        if self.policy.request_alloc == RequestAlloc::Tags || count + 1 < nr {
            return;
        }
        if count + 1 == nr {
            self.ioc_set_batching();
        }
        if self.ioc_batching() {
            let ioc = self.ioc_mut();
            ioc.nr_batch_requests = ioc.nr_batch_requests.saturating_sub(1);
        }
    }

    /// The plugged half of __make_request / blk_mq_submit_bio: the bio joins a plugged request
    /// of its device it touches (3.x tries them all, latest first; 6.x only the latest), else
    /// a queued request as without a plug, else it becomes a new request at the end of the
    /// plug, which is flushed first when full.
    fn plug_bio(&mut self, dev: usize, bio: Bio) {
        let mq = self.policy.blk_plug == BlkPlugPolicy::MqPlug;
        let Mm { plug, bdevs, .. } = self;
        let list = &mut plug.as_mut().expect("an active plug").list;
        for (pdev, rq) in list.iter_mut().rev() {
            if *pdev == dev {
                if bdevs[dev].plug_merge(rq, &bio) {
                    return;
                }
                if mq {
                    break;
                }
            }
        }
        // Then the queue's own merge (elv_merge / blk_mq_sched_bio_merge), before a request.
        let Err(bio) = self.bdevs[dev].queue_merge(bio) else { return };
        let list = &self.plug.as_ref().expect("an active plug").list;
        let full = if mq {
            list.len() >= BLK_MAX_REQUEST_COUNT_6X || list.last().is_some_and(|(_, r)| r.nr_sectors >= BLK_PLUG_FLUSH_SIZE_SECTORS)
        } else {
            list.len() >= BLK_MAX_REQUEST_COUNT_3X
        };
        if full {
            self.blk_flush_plug_list();
        }
        let rq = self.bdevs[dev].plug_request(bio);
        self.plug.as_mut().expect("an active plug").list.push((dev, rq));
    }

    /// 2.6.32 __make_request with queue plugging: a request that finds the queue empty plugs
    /// it (arming the unplug timer); a read or a write its submitter waits for (direct I/O, the
    /// journal) unplugs it at once, as the waiter would; so does a fourth queued request.
    fn queue_plug_bio(&mut self, dev: usize, bio: Bio) {
        let waited_for = bio.dir == Dir::Read || bio.dio != 0;
        let d = &mut self.bdevs[dev];
        if d.elv_queue_empty() && !d.queue_plugged {
            d.queue_plugged = true;
            d.unplug_at = self.now_ns + UNPLUG_DELAY_NS;
            self.unplug_timers.push((d.unplug_at, dev));
        }
        let d = &mut self.bdevs[dev];
        d.submit_bio(bio, self.now_ns);
        if waited_for || d.nr_queued(Dir::Read) + d.nr_queued(Dir::Write) >= UNPLUG_THRESH {
            self.blk_unplug(dev);
        } else if !d.queue_plugged {
            self.blk_kick(dev);
        }
    }

    /// Unplugs a plugged queue (2.6.32 __generic_unplug_device / blk_remove_plug) and starts
    /// the device.
    pub fn blk_unplug(&mut self, dev: usize) {
        self.bdevs[dev].queue_plugged = false;
        self.blk_kick(dev);
    }

    /// The unplug timer of device `dev` (2.6.32 blk_unplug_timeout, run from kblockd); a timer
    /// of an earlier plugging that a new one re-armed does nothing.
    /// The same event serves CFQ's idle slice timer (cfq_idle_slice_timer, then the queue is
    /// run if it says so).
    pub fn blk_unplug_timeout(&mut self, dev: usize) {
        if self.bdevs[dev].queue_plugged && self.now_ns >= self.bdevs[dev].unplug_at {
            self.blk_unplug(dev);
        }
        if self.bdevs[dev].cfq_timer_fired(self.now_ns) {
            self.blk_kick(dev);
        }
    }

    /// Starts the next request on an idle device whose queue is not plugged; arms CFQ's idle
    /// timer if its scheduler chose to wait instead.
    pub fn blk_kick(&mut self, dev: usize) {
        if let Some(t) = self.bdevs[dev].dispatch(self.now_ns, &mut self.host_free_at) {
            self.io_timers.push((t, dev));
        }
        if let Some(t) = self.bdevs[dev].cfq_timer_to_arm() {
            self.unplug_timers.push((t, dev));
        }
    }

    /// A device finished its request: completes every page (reads become uptodate and are
    /// unlocked, writes end their writeback), wakes a waiter for a request of its pool, and,
    /// for an async write (writeback, reclaim; not the journal's WRITE_SYNC or O_DIRECT's
    /// WRITE_ODIRECT), the tasks in congestion_wait(BLK_RW_ASYNC) if the async pool is below
    /// its congestion-off mark (__freed_request → clear_bdi_congested, whether or not it was
    /// congested), and starts the next request (running the queue removes a 2.6.32 queue
    /// plug).
    pub fn blk_complete(&mut self, dev: usize) {
        let rq: Request = self.bdevs[dev].complete(self.now_ns);
        if rq.dio != 0 {
            self.dio_complete(rq.dio, rq.pages.len() as u32);
        }
        for (i, &pfn) in rq.pages.iter().enumerate().filter(|_| rq.dio == 0) {
            if let Some(&next) = rq.pages.get(i + crate::mm::PREFETCH_AHEAD) {
                self.prefetch_page(next);
            }
            match rq.dir {
                Dir::Read => {
                    let p = &mut self.pages[pfn as usize];
                    p.flags |= PG_UPTODATE;
                    p.flags &= !PG_LOCKED;
                    self.wake_up_page(pfn);
                    if !self.meta_read_waiters.is_empty() {
                        self.meta_read_done(pfn);
                    }
                }
                Dir::Write => {
                    let f = self.pages[pfn as usize].flags;
                    if f & PG_BUF_LOCKED != 0 {
                        // The journal's write of the page's buffers (end_buffer_write_sync:
                        // unlock_buffer wakes the waiters); the page itself stays dirty.
                        self.pages[pfn as usize].flags &= !PG_BUF_LOCKED;
                        self.wake_up_page(pfn);
                    } else if f & PG_SWAPBACKED != 0 {
                        self.end_swap_writeback(pfn, dev);
                    } else {
                        self.end_page_writeback(pfn, dev);
                    }
                }
            }
        }
        self.blk_unplug(dev);
        let d = &self.bdevs[dev];
        let pool = d.pool(rq.dir, rq.sync);
        let (full, rq_wait, io_wait) = (d.queue_full(pool), d.rq_wait[pool as usize], d.io_wait);
        // The wake class is the request's own (rw_is_sync), whichever pool the model counts
        // it in: a REQ_SYNC write never ends a congestion_wait(BLK_RW_ASYNC).
        let decongested = rq.dir == Dir::Write && !rq.sync && d.below_congestion_off(Pool::Async);
        if !full {
            // __freed_request: room for one more wakes one waiter (and clears the full mark).
            self.wake_up(rq_wait);
        }
        self.wake_up(io_wait);
        if decongested {
            self.wake_up(self.congestion_wqh);
        }
    }
}
