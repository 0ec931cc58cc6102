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

use super::{Bio, Dir, Plug, Request, BLK_MAX_REQUEST_COUNT_3X, BLK_MAX_REQUEST_COUNT_6X, BLK_PLUG_FLUSH_SIZE_SECTORS, SECTORS_PER_PAGE};
use crate::mm::mm_types::*;
use crate::mm::page_alloc::Mm;
use crate::mm::policy::BlkPlugPolicy;
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
    /// queue, starting the device if it is idle and its queue not plugged.
    pub fn submit_bio(&mut self, dev: usize, bio: Bio) {
        let kib = bio.pages.len() as u64 * SECTORS_PER_PAGE / 2;
        let item = if bio.dir == Dir::Write { VmStat::Pgpgout } else { VmStat::Pgpgin };
        self.events.count(item, kib);
        self.cost_ns += self.costs.submit_bio_ns;
        if self.plug.is_some() {
            self.plug_bio(dev, bio);
            return;
        }
        if self.policy.blk_plug == BlkPlugPolicy::QueuePlug {
            self.queue_plug_bio(dev, bio);
            return;
        }
        if self.bdevs[dev].submit_bio(bio, self.now_ns) {
            self.blk_kick(dev);
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
        if d.nr_queued(Dir::Read) + d.nr_queued(Dir::Write) == 0 && !d.queue_plugged {
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
    pub fn blk_unplug_timeout(&mut self, dev: usize) {
        if self.bdevs[dev].queue_plugged && self.now_ns >= self.bdevs[dev].unplug_at {
            self.blk_unplug(dev);
        }
    }

    /// Starts the next request on an idle device whose queue is not plugged.
    pub fn blk_kick(&mut self, dev: usize) {
        if let Some(t) = self.bdevs[dev].dispatch(self.now_ns, &mut self.host_free_at) {
            self.io_timers.push((t, dev));
        }
    }

    /// A device finished its request: completes every page (reads become uptodate and are
    /// unlocked, writes end their writeback), wakes waiters for requests, and, for an async
    /// write (writeback; not O_DIRECT's WRITE_ODIRECT, a sync write), the tasks in
    /// congestion_wait(BLK_RW_ASYNC) if the queue is below its congestion-off mark
    /// (__freed_request → clear_bdi_congested, whether or not it was congested), and starts
    /// the next request (running the queue removes a 2.6.32 queue plug).
    pub fn blk_complete(&mut self, dev: usize) {
        let rq: Request = self.bdevs[dev].complete();
        if rq.dio != 0 {
            self.dio_complete(rq.dio, rq.pages.len() as u32);
        }
        for &pfn in rq.pages.iter().filter(|_| rq.dio == 0) {
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
                    if self.pages[pfn as usize].flags & PG_SWAPBACKED != 0 {
                        self.end_swap_writeback(pfn, dev);
                    } else {
                        self.end_page_writeback(pfn, dev);
                    }
                }
            }
        }
        self.blk_unplug(dev);
        let d = &self.bdevs[dev];
        let (full, rq_wait) = (d.queue_full(rq.dir), d.rq_wait);
        let decongested = rq.dir == Dir::Write && rq.dio == 0 && d.below_congestion_off(Dir::Write);
        if !full {
            self.wake_up(rq_wait);
        }
        if decongested {
            self.wake_up(self.congestion_wqh);
        }
    }
}
