//! fsync and fdatasync of a file (fs/sync.c vfs_fsync_range and the file systems' ->fsync,
//! 3.0; 6.x alike for what is modelled).
//!
//! 3.0's vfs_fsync_range first writes and waits for the file's dirty pages
//! (filemap_write_and_wait_range: do_writepages with WB_SYNC_ALL, then
//! wait_on_page_writeback_range), then calls the file system's ->fsync. ext3_sync_file and
//! ext4_sync_file (data=ordered) ask the journal thread to commit the transaction that last
//! logged a change to the file that fdatasync must make durable (i_datasync_tid: its size and
//! block allocations; fsync's i_sync_tid also covers its times, which the model logs in the
//! same transactions) and sleep until that commit is complete (log_start_commit,
//! log_wait_commit). Not modelled: xfs's log force (the model has no xfs log), ext2's
//! write of the inode's own buffer (generic_file_fsync), and the cache flush a mount with
//! barriers sends (3.0 mounts ext3 without them).

use super::{Ino, I_SYNC};
use crate::mm::mm_types::{PG_BUF_LOCKED, PG_DIRTY, PG_LOCKED, PG_WRITEBACK};
use crate::mm::page_alloc::Mm;
use crate::mm::radix_tree::{PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK};

/// Where an fsync is (`Mm::vfs_fsync`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FsyncPhase {
    /// filemap_fdatawrite: writing the dirty pages (WB_SYNC_ALL).
    #[default]
    Write,
    /// filemap_fdatawait: waiting for the pages under writeback.
    Wait,
    /// ->fsync: waiting for the journal's commit.
    Commit,
    /// Done.
    Done,
}

/// One fsync in progress: its phase, and whether its writer holds the inode (I_SYNC) while
/// asleep for a request.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fsync {
    pub phase: FsyncPhase,
    holding: bool,
}

/// What the task doing an fsync does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsyncStep {
    /// The fsync is complete.
    Done,
    /// Go on at the next step (asleep for a request first if the task owes that wait).
    Continue,
    /// Sleep on this wait queue, then go on.
    Wait(usize),
    /// Sleep on this wait queue at most this many ns, then go on.
    WaitTimeout(usize, u64),
}

impl Mm {
    /// Advances an fsync or fdatasync (alike here) of file `ino` by the current task; call
    /// again after each step's wait until it returns `FsyncStep::Done`.
    pub fn vfs_fsync(&mut self, ino: Ino, f: &mut Fsync) -> FsyncStep {
        let sb = self.inode(ino).sb;
        let dev = self.sbs[sb].dev;
        loop {
            match f.phase {
                FsyncPhase::Write => {
                    if self.inode(ino).state & I_SYNC != 0 && !f.holding {
                        // Another writer has the inode (the flusher): writeback_single_inode
                        // with WB_SYNC_ALL waits for it (inode_wait_for_writeback).
                        return FsyncStep::WaitTimeout(self.bdevs[dev].io_wait, self.sched.jiffy_ns);
                    }
                    let (_, blocked) = self.writeback_single_inode_sync(ino, true);
                    f.holding = blocked && self.inode(ino).state & I_SYNC != 0;
                    if blocked {
                        return FsyncStep::Continue;
                    }
                    let mapping = self.inode(ino).mapping;
                    if !self.mapping_tagged(mapping, PAGECACHE_TAG_DIRTY) {
                        f.phase = FsyncPhase::Wait;
                        continue;
                    }
                    // A dirty page the walk could not write now: wait for it and walk again.
                    let mut dirty = Vec::new();
                    self.find_get_pages_tag(mapping, 0, u32::MAX, PAGECACHE_TAG_DIRTY, usize::MAX, &mut dirty);
                    let busy = dirty.iter().filter_map(|&i| self.find_get_page(mapping, i)).find(|&p| {
                        let fl = self.pages[p as usize].flags;
                        fl & PG_DIRTY != 0 && fl & (PG_LOCKED | PG_WRITEBACK | PG_BUF_LOCKED) != 0
                    });
                    return match busy {
                        Some(pfn) => FsyncStep::Wait(self.page_waitqueue(pfn)),
                        None => FsyncStep::WaitTimeout(self.bdevs[dev].io_wait, self.sched.jiffy_ns),
                    };
                }
                FsyncPhase::Wait => {
                    let mapping = self.inode(ino).mapping;
                    let mut wb = Vec::new();
                    self.find_get_pages_tag(mapping, 0, u32::MAX, PAGECACHE_TAG_WRITEBACK, 1, &mut wb);
                    if let Some(pfn) = wb.first().and_then(|&i| self.find_get_page(mapping, i)) {
                        return FsyncStep::Wait(self.page_waitqueue(pfn));
                    }
                    f.phase = FsyncPhase::Commit;
                }
                FsyncPhase::Commit => {
                    let Some(j) = self.sbs[sb].journal else {
                        f.phase = FsyncPhase::Done;
                        continue;
                    };
                    let tid = self.inode(ino).datasync_tid;
                    let jr = &mut self.journals[j];
                    if tid <= jr.commit_sequence {
                        f.phase = FsyncPhase::Done;
                        continue;
                    }
                    // log_start_commit of the running transaction wakes the journal thread;
                    // one being committed is only waited for.
                    if tid >= jr.tid && jr.commit_request < tid {
                        jr.commit_request = tid;
                        let wq = jr.wait;
                        self.wake_up(wq);
                    }
                    return FsyncStep::Wait(self.journals[j].done_wait);
                }
                FsyncPhase::Done => return FsyncStep::Done,
            }
        }
    }
}
