//! Looking up a name for a create: the parent directory's i_mutex (fs/namei.c, do_last of
//! 3.0-3.1, open_last_lookups of 6.x) and the directory blocks an indexed ext3/ext4 directory
//! reads (fs/ext4/namei.c: ext4_lookup → ext4_find_entry → ext4_dx_find_entry, dx_probe).
//!
//! * open(O_CREAT) takes the parent's i_mutex (i_rwsem exclusively in 6.x) before the lookup
//!   and holds it through the create: every task creating in one directory goes through it
//!   one at a time, whatever the lookup or the create waits for meanwhile.
//! * The lookup of a name the dcache does not know (a new name) goes to the file system. An
//!   indexed directory's dx_probe reads block 0 (the dx_root), then the leaf the name's hash
//!   selects; each through ext4_bread, which reads a block synchronously (one 4 KiB REQ_META
//!   read, no readahead) when its buffer is not uptodate. Each create touches its leaf twice
//!   (lookup and add_entry), so leaves go to the active list; a leaf reclaim has dropped all
//!   the same (once the active list is aged) is read back by the next create that hashes to
//!   it. A buffer the journal still holds (logged, committing, or committed and not yet
//!   written home) cannot be freed (jbd2_journal_try_to_free_buffers), so a leaf dirtied
//!   recently is always in memory.
//! * The create's own add_entry then finds the leaf cached: no second read.
//!
//! fs_mark, whose workers create thousands of files in one directory, goes through all of
//! this (lock, `dx_lookup`, `create_file_named`, unlock); the other workloads create a few
//! files each and call `create_file_in` directly.
//!
//! Not modelled: the second index level of directories past 508 leaves (fs_mark's
//! subdirectories stay below it), the extent-tree blocks of a directory, inode-table reads (a
//! new inode's block is either zeroed in memory or dirty and pinned), and lookups by unlink.

use std::collections::VecDeque;

use super::ialloc::{mix64, DirId};
use crate::mm::page_alloc::Mm;
use crate::mm::Pfn;

/// Hashed wait queues for tasks blocked on a directory's i_mutex.
pub const NR_MUTEX_WAITQUEUES: usize = 64;
/// `SuperBlock::meta_hint` slot of the dx_root looked up last (the leaf's is the next).
pub const DIR_HINT_LEVEL: usize = 3;
/// `SuperBlock::meta_hint` slot of the inode table block read last (`Mm::iget`).
pub const ITABLE_HINT_LEVEL: usize = 5;

/// A sleeping lock as 3.0's struct mutex: an owner and a FIFO wait list. mutex_unlock wakes
/// the first waiter, which takes the lock when it runs unless a task that had not waited took
/// it first (the fast path needs no wait list): the woken waiter then sleeps again, still
/// first in the list.
///
/// With optimistic spinning (CONFIG_MUTEX_SPIN_ON_OWNER, 2.6.30+, on for SMP builds, in every
/// profile here) a task that finds the mutex held by an owner running on a CPU does not sleep:
/// it spins (mutex_spin_on_owner) and takes the mutex the moment it is released, ahead of the
/// sleeping waiters and of the owner coming back for it. Spinners leave off and sleep in the
/// wait list when the owner sleeps holding the mutex. The model hands a released mutex to the
/// first spinner; it does not charge the spin as CPU time nor keep the spinner's CPU from
/// its other tasks.
#[derive(Clone, Debug, Default)]
pub struct DirMutex {
    pub owner: Option<usize>,
    /// Waiting tasks and when each began to wait (ns).
    pub wait_list: VecDeque<(usize, u64)>,
    /// Spinning tasks and when each began to spin (ns).
    pub spinners: VecDeque<(usize, u64)>,
    /// The owner sleeps holding the mutex (a read its lookup waits for): nobody spins.
    pub owner_asleep: bool,
    /// The spinner the mutex went to at its release, and when it began to spin, until it runs.
    pub handed: Option<(usize, u64)>,
}

impl Mm {
    /// The wait queue the waiters of directory `dir`'s i_mutex sleep on.
    pub fn dir_mutex_waitqueue(&self, sb: usize, dir: DirId) -> usize {
        if self.mutex_wq_base == usize::MAX {
            return usize::MAX;
        }
        self.mutex_wq_base + (mix64((sb as u64) << 32 | u64::from(dir)) % NR_MUTEX_WAITQUEUES as u64) as usize
    }

    /// mutex_lock(&dir->i_mutex) by task `tid`: Ok when `tid` holds it now, Err(wait queue)
    /// when it must sleep and try again once woken.
    pub fn dir_mutex_lock(&mut self, sb: usize, dir: DirId, tid: usize) -> Result<(), usize> {
        let (wq, now, dev) = (self.dir_mutex_waitqueue(sb, dir), self.now_ns, self.sbs[sb].dev);
        let m = &mut self.sbs[sb].dirs[dir as usize].i_mutex;
        if let Some((_, since)) = m.handed.filter(|&(t, _)| t == tid) {
            // A spinner the mutex went to at its release.
            m.handed = None;
            self.bdevs[dev].stats.i_mutex_wait_ns += now - since;
            return Ok(());
        }
        debug_assert!(m.owner != Some(tid), "task {tid} locks directory {dir}'s i_mutex twice");
        let waiting = m.wait_list.iter().position(|&(t, _)| t == tid);
        let spinning = m.spinners.iter().any(|&(t, _)| t == tid);
        if m.owner.is_none() && !spinning && waiting.is_none_or(|k| k == 0) {
            m.owner = Some(tid);
            if waiting.is_some() {
                let (_, since) = m.wait_list.pop_front().expect("the first waiter");
                self.bdevs[dev].stats.i_mutex_wait_ns += now - since;
            }
            return Ok(());
        }
        if waiting.is_none() && !spinning {
            if m.owner.is_some() && !m.owner_asleep {
                m.spinners.push_back((tid, now));
            } else {
                m.wait_list.push_back((tid, now));
            }
            self.bdevs[dev].stats.i_mutex_waits += 1;
        }
        Err(wq)
    }

    /// The owner of directory `dir`'s i_mutex sleeps holding it (`asleep`) or runs again:
    /// while it sleeps, the spinners give up (mutex_spin_on_owner finds it off its CPU) and
    /// sleep at the end of the wait list, and later contenders sleep there too.
    pub fn dir_mutex_owner_asleep(&mut self, sb: usize, dir: DirId, asleep: bool) {
        let m = &mut self.sbs[sb].dirs[dir as usize].i_mutex;
        m.owner_asleep = asleep;
        if asleep {
            let spinners = std::mem::take(&mut m.spinners);
            m.wait_list.extend(spinners);
        }
    }

    /// mutex_unlock(&dir->i_mutex) by its owner `tid`: the first spinner takes it, or else the
    /// first waiter, if any, is woken.
    pub fn dir_mutex_unlock(&mut self, sb: usize, dir: DirId, tid: usize) {
        let wq = self.dir_mutex_waitqueue(sb, dir);
        let m = &mut self.sbs[sb].dirs[dir as usize].i_mutex;
        debug_assert_eq!(m.owner, Some(tid), "directory {dir}'s i_mutex unlocked by a task that does not hold it");
        m.owner = None;
        m.owner_asleep = false;
        // A spinner takes it at once (its atomic_cmpxchg as the owner lets go).
        if let Some((first, since)) = m.spinners.pop_front() {
            m.owner = Some(first);
            m.handed = Some((first, since));
            if wq != usize::MAX {
                self.wake_up_task(wq, first);
            }
            return;
        }
        if let Some(&(first, _)) = m.wait_list.front() {
            if wq != usize::MAX {
                self.wake_up_task(wq, first);
            }
        }
    }

    /// The lookup of a new name hashing to `name_hash` in directory `dir` (ext4_find_entry
    /// on an indexed directory; ext3's is the same): the directory's dx_root, then the leaf
    /// the hash selects, each read if it is not in memory. Returns the page of the block to
    /// wait for (its read submitted, or already under way for another task), None when both
    /// are uptodate in memory. Only for file systems with `htree_dirs`.
    pub fn dx_lookup(&mut self, sb: usize, dir: DirId, name_hash: u64, cpu: usize) -> Option<Pfn> {
        if !self.sbs[sb].fs_type.htree_dirs() {
            return None;
        }
        let blocks = &self.sbs[sb].dirs[dir as usize].blocks;
        let root = *blocks.first()?;
        let dev = self.sbs[sb].dev;
        let indexed = blocks.len() > 1;
        let leaf = self.dir_leaf_of(sb, dir, name_hash)?;
        for (block, level) in [(root, DIR_HINT_LEVEL), (leaf, DIR_HINT_LEVEL + 1)].into_iter().skip(usize::from(!indexed)) {
            if let Some((p, submitted)) = self.bread_metadata(sb, block, level, Some(cpu)) {
                self.bdevs[dev].stats.dir_reads += u64::from(submitted);
                return Some(p);
            }
        }
        None
    }
}
