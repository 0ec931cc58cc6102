//! The page cache (mm/filemap.c, mm/readahead.c, the file parts of mm/memory.c): pages of
//! files indexed by (address space, offset); the buffered read path with on-demand readahead,
//! the buffered write path, page faults on shared file mappings, and the hashed page wait
//! queues tasks sleep on while a page is locked for I/O.
//!
//! An address space maps page offsets to frames in its page-cache tree (mm/radix_tree.rs), with
//! the dirty and writeback tags on the tree's slots. A frame's `mapping` is its address space id
//! (0 = none) and `index` its offset, as in struct page.

use super::gfp::Gfp;
use super::page_writeback::DirtyThrottle;
use super::vmstat::{Era, VmStat};
use crate::block::{Bio, Dir, PlugSite};
use crate::fs::Ino;

use super::mm_types::*;
use super::mmzone::ZoneStat;
use super::page_alloc::{AllocFailure, Mm};
use super::radix_tree::RadixTreeRoot;
use super::Pfn;

/// An address space (struct address_space) of one file.
#[derive(Clone, Debug, Default)]
pub struct AddressSpace {
    /// The inode this is the page cache of.
    pub host: u64,
    /// The page-cache tree (i_pages / page_tree): cached pages by offset, with the dirty and
    /// writeback tags; its nodes are in `Mm::radix_nodes`.
    pub i_pages: RadixTreeRoot,
    /// Pages in the cache (nrpages).
    pub nrpages: u64,
}

/// Number of hashed page wait queues (the page_wait_table); they are the engine's first wait
/// queue ids.
pub const NR_PAGE_WAITQUEUES: usize = 64;

/// VM_MAX_READAHEAD: 128 KiB of readahead per file, the default of a device's read_ahead_kb.
pub const VM_MAX_READAHEAD_KB: u32 = 128;
/// MMAP_LOTSAMISS: past this many missed faults, mmap read-around stops.
pub const MMAP_LOTSAMISS: u32 = 100;

/// 3.x RADIX_TREE_MAX_PATH on 64-bit: the nodes radix_tree_preload keeps per CPU.
pub const RADIX_TREE_MAX_PATH: usize = 11;

/// The outcome of a page-sized file operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageIo {
    Done,
    /// The page is locked for I/O: sleep on this wait queue and try again.
    Wait(usize),
    /// No memory could be had (the allocation failed even after reclaim).
    NoMem,
    /// The task slept before it could do the page: in the allocator (congestion_wait,
    /// `Mm::alloc_pages_or_sleep`), or in the previous page's dirty-throttling loop, which
    /// goes on (`Mm::balance_dirty_pages_resume`). Do the same page again when the task runs
    /// next.
    Retry,
}

/// A readahead window whose allocation slept part-way (__do_page_cache_readahead's loop, in
/// which page_cache_alloc_cold may sleep): the pages still to allocate, and the pages
/// allocated so far, which are read when the window is whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingReadahead {
    pub ino: Ino,
    pub start: u32,
    pub nr: u32,
    pub lookahead: u32,
    /// The next offset in the window to allocate.
    pub next: u32,
    /// (index, pfn) of the allocated pages to read.
    pub to_read: Vec<(u32, Pfn)>,
}

impl AddressSpace {
    /// Pages in the cache (nrpages).
    pub fn nrpages(&self) -> u64 {
        self.nrpages
    }
}

impl Mm {
    /// Creates the page cache of a new inode; returns its address space id (never 0).
    pub fn new_mapping(&mut self, host: u64) -> u32 {
        let space = AddressSpace { host, ..AddressSpace::default() };
        if let Some(id) = self.free_mappings.pop() {
            self.mappings[id as usize - 1] = space;
            return id;
        }
        self.mappings.push(space);
        self.mappings.len() as u32
    }

    /// Releases an empty address space id for reuse.
    pub fn free_mapping(&mut self, mapping: u32) {
        debug_assert_eq!(self.mapping(mapping).nrpages(), 0);
        debug_assert_eq!(self.mapping(mapping).i_pages.height, 0, "mapping {mapping} freed with tree nodes");
        self.free_mappings.push(mapping);
    }

    /// The address space with id `mapping`.
    #[inline(always)]
    pub fn mapping(&self, mapping: u32) -> &AddressSpace {
        &self.mappings[mapping as usize - 1]
    }

    #[inline(always)]
    pub fn mapping_mut(&mut self, mapping: u32) -> &mut AddressSpace {
        &mut self.mappings[mapping as usize - 1]
    }

    /// The wait queue a task sleeps on for page `pfn` (page_waitqueue: a hash of the page).
    #[inline(always)]
    pub fn page_waitqueue(&self, pfn: Pfn) -> usize {
        (pfn as usize).wrapping_mul(0x9E37_79B9) % NR_PAGE_WAITQUEUES
    }

    /// Wakes the tasks waiting on `pfn`'s hashed queue (wake_up_page); they re-check.
    pub fn wake_up_page(&mut self, pfn: Pfn) {
        let wq = self.page_waitqueue(pfn);
        self.wake_up(wq);
    }

    /// Asks the engine to wake every task on wait queue `wq`.
    #[inline(always)]
    pub fn wake_up(&mut self, wq: usize) {
        if wq != usize::MAX && !self.wakeups.contains(&wq) {
            self.wakeups.push(wq);
        }
    }

    /// Asks the engine to wake task `tid` alone if it sleeps on wait queue `wq` (a waiter whose
    /// step is still running when asked sees the queue woken and checks again).
    pub fn wake_up_task(&mut self, wq: usize, tid: usize) {
        self.task_wakeups.push((wq, tid));
    }

    /// The gfp of file `ino`'s page cache allocations (mapping_gfp_mask): its file system's.
    pub fn mapping_gfp_mask(&self, ino: Ino) -> Gfp {
        self.sbs[self.inode(ino).sb].fs_type.mapping_gfp(self.era)
    }

    /// Cost factor ×10 of touching memory on `page_node` from `cpu` (NUMA distance / 10).
    #[inline(always)]
    pub fn numa_factor_x10(&self, cpu: usize, pfn: Pfn) -> u64 {
        let a = self.cpu_to_node[cpu];
        let b = self.page_to_nid(pfn);
        if a == b {
            10
        } else {
            u64::from(self.node_distance(a, b))
        }
    }

    /// Copying a page-sized chunk between user memory and page `pfn` from `cpu`.
    #[inline(always)]
    pub fn copy_page_cost(&self, cpu: usize, pfn: Pfn, bytes: u64) -> u64 {
        self.costs.copy_page_ns * bytes / super::PAGE_SIZE * self.numa_factor_x10(cpu, pfn) / 10
    }

    // ------------------------------------------------------------------------------------------
    // Buffered write.

    /// Writes `bytes` into page `index` of file `ino` (one iteration of generic_perform_write):
    /// finds or allocates the page cache page, copies, marks it accessed and dirty, extends the
    /// file, and throttles the writer (balance_dirty_pages_ratelimited). The copy is charged.
    pub fn file_write_page(&mut self, ino: Ino, index: u32, bytes: u64, cpu: usize, t: &mut DirtyThrottle) -> PageIo {
        let dev = self.sbs[self.inode(ino).sb].dev;
        let outer = self.current_bdi.replace(dev);
        let r = self.generic_perform_write_page(ino, index, bytes, cpu, t);
        self.current_bdi = outer;
        r
    }

    /// The body of `file_write_page`, run with current->backing_dev_info set to the file's
    /// device.
    fn generic_perform_write_page(&mut self, ino: Ino, index: u32, bytes: u64, cpu: usize, t: &mut DirtyThrottle) -> PageIo {
        let mapping = self.inode(ino).mapping;
        // Still in the previous page's balance_dirty_pages loop: that first.
        if self.balance_dirty_pages_resume(t, ino, true) {
            return PageIo::Retry;
        }
        // The journal's get_write_access may wait for the commit's log write.
        if let Some(wq) = self.jbd_shadow_wait(ino, index) {
            return PageIo::Wait(wq);
        }
        let mut new_page = false;
        let pfn = match self.find_get_page(mapping, index) {
            Some(p) => p,
            None => {
                new_page = true;
                // grab_cache_page_write_begin: the page will be dirtied (__GFP_WRITE); a file
                // system that asks for AOP_FLAG_NOFS gets the page and its tree nodes without
                // __GFP_FS.
                let nofs = self.sbs[self.inode(ino).sb].fs_type.write_begin_nofs(self.era);
                let fs_bit = if nofs { Gfp::FS } else { Gfp(0) };
                let gfp = self.mapping_gfp_mask(ino).with(Gfp::WRITE).without(fs_bit);
                let pfn = match self.alloc_pages_or_sleep(gfp, 0, cpu) {
                    Ok(p) => p,
                    Err(AllocFailure::SleepFirst) => return PageIo::Retry,
                    Err(AllocFailure::NoMem) => return PageIo::NoMem,
                };
                self.add_to_page_cache_lru(pfn, mapping, index, Gfp::GFP_KERNEL.without(fs_bit), cpu);
                // A whole-page write (or one past EOF) needs no read first.
                self.pages[pfn as usize].flags |= PG_UPTODATE;
                pfn
            }
        };
        if self.pages[pfn as usize].flags & PG_LOCKED != 0 {
            return PageIo::Wait(self.page_waitqueue(pfn));
        }
        // write_begin returns the page locked and write_end unlocks it: the allocations in
        // between (the block and its indirect blocks, buffer heads, the journal's) may run
        // reclaim, which must not take the page (trylock_page fails).
        self.pages[pfn as usize].flags |= PG_LOCKED;
        // write_begin of a file system without delayed allocation maps the block now.
        if new_page && !self.sbs[self.inode(ino).sb].fs_type.delalloc() {
            self.write_begin_get_block(ino, index);
        }
        let sb = self.inode(ino).sb;
        if self.sbs[sb].fs_type.data_buffer_heads(self.era) {
            self.create_empty_buffers(pfn, cpu);
        }
        self.cost_ns += self.copy_page_cost(cpu, pfn, bytes) + self.costs.write_begin_end_ns;
        self.mark_page_accessed(pfn);
        let newly = self.set_page_dirty(pfn);
        let i = self.inode_mut(ino);
        i.size_pages = i.size_pages.max(u64::from(index) + 1);
        self.jbd_write_end(ino);
        // Nobody can have queued on the page while this step held it.
        self.pages[pfn as usize].flags &= !PG_LOCKED;
        let dev = self.sbs[self.inode(ino).sb].dev;
        // generic_file_aio_write plugs the whole call, the writer's own writeback included.
        let plugged = self.blk_start_plug(PlugSite::Write);
        self.balance_dirty_pages_ratelimited(t, dev, newly, cpu);
        self.blk_finish_plug(plugged);
        PageIo::Done
    }

    // ------------------------------------------------------------------------------------------
    // Buffered read.

    /// Reads page `index` of file `ino` (one iteration of do_generic_file_read): a miss starts
    /// synchronous readahead, a page carrying the readahead mark starts the next window
    /// asynchronously, a page still locked for I/O makes the reader wait. On Done the copy has
    /// been charged and the page marked accessed.
    pub fn file_read_page(&mut self, ino: Ino, index: u32, bytes: u64, cpu: usize) -> PageIo {
        let mapping = self.inode(ino).mapping;
        self.cost_ns += self.costs.page_cache_lookup_ns;
        let pfn = match self.find_get_page(mapping, index) {
            Some(p) => p,
            None => {
                self.page_cache_sync_readahead(ino, index, cpu);
                match self.find_get_page(mapping, index) {
                    Some(p) => p,
                    None if self.readahead_pending() => return PageIo::Retry,
                    None => return PageIo::NoMem,
                }
            }
        };
        if self.pages[pfn as usize].flags & PG_READAHEAD != 0 {
            self.page_cache_async_readahead(ino, pfn, index, cpu);
        }
        if self.pages[pfn as usize].flags & PG_UPTODATE == 0 {
            return PageIo::Wait(self.page_waitqueue(pfn));
        }
        self.cost_ns += self.copy_page_cost(cpu, pfn, bytes);
        let ra = &mut self.inode_mut(ino).ra;
        let first_touch = ra.prev_index != index;
        ra.prev_index = index;
        if first_touch {
            self.mark_page_accessed(pfn);
        }
        PageIo::Done
    }

    /// ra->ra_pages of file `ino`: its device's read_ahead_kb in pages (file_ra_state_init).
    fn ra_pages(&self, ino: Ino) -> u32 {
        let dev = self.sbs[self.inode(ino).sb].dev;
        self.bdevs[dev].model.read_ahead_kb / 4
    }

    /// page_cache_sync_readahead: a cache miss at `index`.
    fn page_cache_sync_readahead(&mut self, ino: Ino, index: u32, cpu: usize) {
        self.ondemand_readahead(ino, false, index, 1, cpu);
    }

    /// page_cache_async_readahead: the reader reached a page marked PG_readahead.
    fn page_cache_async_readahead(&mut self, ino: Ino, pfn: Pfn, index: u32, cpu: usize) {
        if self.pages[pfn as usize].flags & PG_WRITEBACK != 0 {
            return;
        }
        self.pages[pfn as usize].flags &= !PG_READAHEAD;
        let dev = self.sbs[self.inode(ino).sb].dev;
        if self.bdevs[dev].is_congested(crate::block::Pool::Sync) {
            return;
        }
        self.ondemand_readahead(ino, true, index, 1, cpu);
    }

    /// ondemand_readahead (3.1): sizes the next window from the previous one for sequential
    /// access (×4 while small, then ×2, up to 32 pages), starts a fresh window at the start of
    /// a file or after a jump, and reads only the request for random access.
    fn ondemand_readahead(&mut self, ino: Ino, hit_marker: bool, offset: u32, req: u32, cpu: usize) {
        let max = self.ra_pages(ino);
        let ra = self.inode(ino).ra;
        let (start, mut size, mut async_size);
        if offset == 0 || (!hit_marker && offset == ra.prev_index + 1 && ra.size == 0) {
            start = offset;
            size = get_init_ra_size(req, max);
            async_size = if size > req { size - req } else { size };
        } else if ra.size > 0 && (offset == ra.start + ra.size - ra.async_size || offset == ra.start + ra.size) {
            start = ra.start + ra.size;
            size = get_next_ra_size(ra.size, max);
            async_size = size;
        } else if hit_marker {
            // Find the first page not yet cached after the marker.
            let mapping = self.inode(ino).mapping;
            let mut next = offset + 1;
            while next < offset + max && self.find_get_page(mapping, next).is_some() {
                next += 1;
            }
            start = next;
            size = get_next_ra_size(next - offset + req, max);
            async_size = size;
        } else if offset.wrapping_sub(ra.prev_index) <= 1 {
            start = offset;
            size = get_init_ra_size(req, max);
            async_size = if size > req { size - req } else { size };
        } else {
            // Random read: just the request.
            self.__do_page_cache_readahead(ino, offset, req, 0, cpu);
            return;
        }
        if offset == start && size == async_size {
            let add = get_next_ra_size(size, max);
            size += add;
            async_size += add;
        }
        let r = &mut self.inode_mut(ino).ra;
        r.start = start;
        r.size = size;
        r.async_size = async_size;
        self.__do_page_cache_readahead(ino, start, size, async_size, cpu);
    }

    /// __do_page_cache_readahead + read_pages: allocates cold pages for the uncached offsets of
    /// [start, start + nr) within the file, marks the page that starts the async part, and reads
    /// them: runs of adjacent blocks become one bio; holes are zero-filled without I/O.
    ///
    /// An allocation that sleeps in the allocator (congestion_wait) stops the window there: the
    /// pages allocated so far stay locked in the cache, unread, and the task finishes the window
    /// when it runs again (`resume_kernel_work`), as the kernel's reader finishes its loop after
    /// the sleep. (The kernel keeps those pages on a private list until read_pages adds them to
    /// the cache; here they are in the cache, locked, so only their own reader can meet them.)
    pub fn __do_page_cache_readahead(&mut self, ino: Ino, start: u32, nr: u32, lookahead: u32, cpu: usize) {
        let ra = PendingReadahead { ino, start, nr, lookahead, next: 0, to_read: Vec::new() };
        self.readahead_window(ra, cpu);
    }

    /// Allocates the rest of readahead window `ra` and reads it, or parks it again if an
    /// allocation sleeps.
    fn readahead_window(&mut self, mut ra: PendingReadahead, cpu: usize) {
        let (ino, start, nr, lookahead) = (ra.ino, ra.start, ra.nr, ra.lookahead);
        let mapping = self.inode(ino).mapping;
        let size = self.inode(ino).size_pages;
        let gfp = match self.policy.readahead_gfp {
            super::policy::ReadaheadGfp::Cold => self.mapping_gfp_mask(ino).with(Gfp::COLD),
            super::policy::ReadaheadGfp::ColdNoretry => self.mapping_gfp_mask(ino).with(Gfp::COLD).with(Gfp::NORETRY).with(Gfp::NOWARN),
        };
        let plugged = self.blk_start_plug(PlugSite::Readahead);
        while ra.next < nr {
            let i = ra.next;
            let index = start + i;
            if u64::from(index) >= size.max(1) {
                break;
            }
            if self.find_get_page(mapping, index).is_some() {
                ra.next += 1;
                continue;
            }
            let pfn = match self.alloc_pages_or_sleep(gfp, 0, cpu) {
                Ok(p) => p,
                Err(AllocFailure::SleepFirst) => {
                    self.blk_finish_plug(plugged);
                    self.pending_readahead.push((self.sched.current_pid, ra));
                    return;
                }
                Err(AllocFailure::NoMem) => break,
            };
            ra.next += 1;
            // 3.x read_pages adds the pages with GFP_KERNEL; 6.x with the pages' own mask.
            let tree_gfp = if self.era == Era::Linux3 { Gfp::GFP_KERNEL } else { gfp };
            self.add_to_page_cache_lru(pfn, mapping, index, tree_gfp, cpu);
            if i == nr - lookahead && lookahead > 0 {
                self.pages[pfn as usize].flags |= PG_READAHEAD;
            }
            match self.bmap(ino, index) {
                None => {
                    // A hole: zero the page, no I/O.
                    self.cost_ns += self.costs.clear_page_ns;
                    self.pages[pfn as usize].flags |= PG_UPTODATE;
                }
                Some(_) => {
                    self.pages[pfn as usize].flags |= PG_LOCKED;
                    ra.to_read.push((index, pfn));
                }
            }
        }
        self.mpage_readpages(ino, ra.to_read, Some(cpu));
        self.blk_finish_plug(plugged);
    }

    /// Whether the current task has a readahead window parked by a sleep in the allocator.
    pub fn readahead_pending(&self) -> bool {
        let pid = self.sched.current_pid;
        self.pending_readahead.iter().any(|(p, _)| *p == pid)
    }

    /// Kernel work the current task resumes when it runs again after a sleep inside the
    /// allocator: the rest of a parked readahead window. Returns whether the task has to sleep
    /// again before it can go on (the allocation slept once more).
    pub fn resume_kernel_work(&mut self, cpu: usize) -> bool {
        let pid = self.sched.current_pid;
        let Some(i) = self.pending_readahead.iter().position(|(p, _)| *p == pid) else { return false };
        let (_, ra) = self.pending_readahead.swap_remove(i);
        self.readahead_window(ra, cpu);
        self.readahead_pending()
    }

    /// read_pages → mpage_readpages: maps each locked page's block and gathers the pages into
    /// read bios (do_mpage_readpage: a new bio when the block does not follow on or
    /// bio_add_page refuses the page). On ext2/ext3 mapping a block looks up the indirect
    /// blocks on its path (ext2_get_branch); one that is not cached is read with sb_bread while
    /// the bio built so far is still held, and the reader sleeps until it arrives (the sleep
    /// flushes the task's plug), so the metadata read reaches the disk first. The held bio is
    /// queued behind it at once (the kernel submits it when the reader wakes and finds the
    /// next block discontiguous), and the remaining pages wait in `meta_read_waiters` until
    /// the read completes. `cpu` is the reader's CPU when it runs
    /// in the reader's own context, None when it resumes from a read's completion (where a
    /// further metadata page is taken without direct reclaim).
    pub fn mpage_readpages(&mut self, ino: Ino, pages: Vec<(u32, Pfn)>, cpu: Option<usize>) {
        let Some(inode) = self.inodes.get(ino as usize).and_then(|i| i.as_ref()) else { return };
        let (sb, mapping) = (inode.sb, inode.mapping);
        let dev = self.sbs[sb].dev;
        let mut bio: Option<Bio> = None;
        let mut run = None;
        for (k, &(index, pfn)) in pages.iter().enumerate() {
            // A page truncated while its readahead waited is not read.
            if self.pages[pfn as usize].mapping != mapping || self.pages[pfn as usize].index != index {
                continue;
            }
            let Some(sector) = self.bmap(ino, index) else { continue };
            if let Some(meta) = self.map_block_for_read(ino, index, &mut run, cpu) {
                if let Some(b) = bio.take() {
                    self.submit_bio(dev, b);
                }
                self.meta_read_waiters.push((meta, crate::fs::MetaWaiter::Readahead { ino, pages: pages[k..].to_vec() }));
                return;
            }
            if !bio.as_mut().is_some_and(|b| b.add_page(&self.bdevs[dev].model, sector, pfn)) {
                if let Some(b) = bio.replace(Bio::new(Dir::Read, sector, pfn)) {
                    self.submit_bio(dev, b);
                }
            }
        }
        if let Some(b) = bio.take() {
            self.submit_bio(dev, b);
        }
    }

    /// Resumes the reads that waited for metadata page `pfn`, now read (the reader wakes from
    /// sb_bread and carries on mapping and submitting), in the order they began waiting.
    pub fn meta_read_done(&mut self, pfn: Pfn) {
        if !self.meta_read_waiters.iter().any(|w| w.0 == pfn) {
            return;
        }
        let (ready, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.meta_read_waiters).into_iter().partition(|w| w.0 == pfn);
        self.meta_read_waiters = rest;
        for (_, w) in ready {
            match w {
                crate::fs::MetaWaiter::Readahead { ino, pages } => self.mpage_readpages(ino, pages, None),
                crate::fs::MetaWaiter::Dio { id, ino, index, buf } => {
                    self.dio_map_and_submit(id, ino, index, &buf, None);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Shared file mappings.

    /// A page fault on a file mapping (handle_mm_fault's page-table allocation, then
    /// filemap_fault + __do_fault): finds the page or reads around it (32 pages centred on the
    /// fault, until faults keep missing), maps it young (`exec`: by a VM_EXEC mapping, program
    /// text), and for a write dirties it and throttles the writer. Wait means retry after the
    /// I/O.
    pub fn filemap_fault(&mut self, ino: Ino, index: u32, write: bool, exec: bool, cpu: usize, t: &mut DirtyThrottle) -> PageIo {
        let mapping = self.inode(ino).mapping;
        // The previous write fault's balance_dirty_pages loop ends before this fault.
        if self.balance_dirty_pages_resume(t, ino, false) {
            return PageIo::Retry;
        }
        self.cost_ns += self.costs.page_fault_ns;
        match self.pte_alloc(super::memory::TableOwner::File(ino), u64::from(index), cpu, true) {
            Ok(()) => {}
            Err(AllocFailure::SleepFirst) => return PageIo::Retry,
            Err(AllocFailure::NoMem) => return PageIo::NoMem,
        }
        let pfn = match self.find_get_page(mapping, index) {
            Some(p) => {
                let ra = &mut self.inode_mut(ino).ra;
                ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
                if self.pages[p as usize].flags & PG_READAHEAD != 0 {
                    self.page_cache_async_readahead(ino, p, index, cpu);
                }
                p
            }
            None => {
                let ra = &mut self.inode_mut(ino).ra;
                ra.mmap_miss += 1;
                if ra.mmap_miss > MMAP_LOTSAMISS {
                    self.__do_page_cache_readahead(ino, index, 1, 0, cpu);
                } else {
                    let ra_pages = self.ra_pages(ino);
                    let start = index.saturating_sub(ra_pages / 2);
                    let r = &mut self.inode_mut(ino).ra;
                    r.start = start;
                    r.size = ra_pages;
                    r.async_size = ra_pages / 4;
                    self.__do_page_cache_readahead(ino, start, ra_pages, ra_pages / 4, cpu);
                }
                match self.find_get_page(mapping, index) {
                    Some(p) => {
                        if self.pages[p as usize].flags & PG_UPTODATE == 0 {
                            // VM_FAULT_MAJOR: the fault waits for a read.
                            self.events.count(VmStat::Pgmajfault, 1);
                        }
                        p
                    }
                    None if self.readahead_pending() => return PageIo::Retry,
                    None => return PageIo::NoMem,
                }
            }
        };
        if self.pages[pfn as usize].flags & PG_UPTODATE == 0 {
            return PageIo::Wait(self.page_waitqueue(pfn));
        }
        self.events.count(VmStat::Pgfault, 1);
        if self.pages[pfn as usize].flags & PG_MAPPED == 0 {
            self.pages[pfn as usize].flags |= PG_MAPPED;
            self.mod_page_state(pfn, ZoneStat::NrFileMapped, 1);
        }
        self.pages[pfn as usize].flags |= PG_YOUNG;
        if exec {
            self.pages[pfn as usize].flags |= PG_EXEC_MAPPED;
        }
        if write {
            let sb = self.inode(ino).sb;
            if self.sbs[sb].fs_type.page_mkwrite_buffers(self.era) {
                self.create_empty_buffers(pfn, cpu);
            }
            self.cost_ns += self.costs.touch_page_ns * self.numa_factor_x10(cpu, pfn) / 10;
            let newly = self.set_page_dirty(pfn);
            let dev = self.sbs[self.inode(ino).sb].dev;
            // With ->page_mkwrite the fault always balances.
            self.balance_dirty_pages_ratelimited(t, dev, newly, cpu);
        }
        PageIo::Done
    }

    /// Unmaps a page from its (single) mapper (try_to_unmap / zap_pte_range): a young PTE
    /// counts as an access.
    pub fn try_to_unmap(&mut self, pfn: Pfn) {
        self.cost_ns += self.costs.rmap_walk_ns;
        let p = &mut self.pages[pfn as usize];
        if p.flags & PG_MAPPED == 0 {
            return;
        }
        if p.flags & PG_SWAPBACKED != 0 {
            self.try_to_unmap_anon(pfn);
        } else {
            self.mod_page_state(pfn, ZoneStat::NrFileMapped, -1);
        }
        self.pages[pfn as usize].flags &= !(PG_MAPPED | PG_YOUNG | PG_EXEC_MAPPED);
    }

    /// munmap / exit of a shared file mapping on `cpu`: every mapped page of the file is
    /// unmapped, a young one marked accessed (zap_pte_range), and the mapping's page-table
    /// pages are freed (free_pgtables).
    pub fn unmap_file(&mut self, ino: Ino, cpu: usize) {
        let mapping = self.inode(ino).mapping;
        let pages = self.mapping_pages(mapping);
        for pfn in pages {
            let f = self.pages[pfn as usize].flags;
            if f & PG_MAPPED == 0 {
                continue;
            }
            self.cost_ns += self.costs.unmap_page_ns;
            if f & PG_YOUNG != 0 {
                self.mark_page_accessed(pfn);
            }
            let p = &mut self.pages[pfn as usize];
            p.flags &= !(PG_MAPPED | PG_YOUNG | PG_EXEC_MAPPED);
            self.mod_page_state(pfn, ZoneStat::NrFileMapped, -1);
        }
        self.free_pgtables(super::memory::TableOwner::File(ino), cpu);
    }
}

/// get_init_ra_size: the first window for a request of `req` pages.
fn get_init_ra_size(req: u32, max: u32) -> u32 {
    let r = req.next_power_of_two();
    if r <= max / 32 {
        r * 4
    } else if r <= max / 4 {
        r * 2
    } else {
        max
    }
}

/// get_next_ra_size: the window after one of `cur` pages.
fn get_next_ra_size(cur: u32, max: u32) -> u32 {
    if cur < max / 16 { cur * 4 } else { cur * 2 }.min(max)
}

impl Mm {
    /// The cached page of (mapping, index), if any (find_get_page).
    #[inline]
    pub fn find_get_page(&self, mapping: u32, index: u32) -> Option<Pfn> {
        self.radix_nodes.lookup(&self.mapping(mapping).i_pages, index)
    }

    /// The pages of a file's cache in offset order (a find_get_pages walk from 0).
    pub fn mapping_pages(&self, mapping: u32) -> Vec<Pfn> {
        self.radix_nodes.items(&self.mapping(mapping).i_pages).into_iter().map(|(_, p)| p).collect()
    }

    /// mapping_tagged: whether any page of the file carries `tag`.
    #[inline]
    pub fn mapping_tagged(&self, mapping: u32, tag: usize) -> bool {
        self.radix_nodes.tagged(&self.mapping(mapping).i_pages, tag)
    }

    /// The offsets of up to `max` pages in `[from, to)` that carry `tag`, in order, appended to
    /// `out` (pagevec_lookup_tag / find_get_pages_tag).
    pub fn find_get_pages_tag(&self, mapping: u32, from: u32, to: u32, tag: usize, max: usize, out: &mut Vec<u32>) {
        self.radix_nodes.gang_lookup(&self.mapping(mapping).i_pages, from, to, max, Some(tag), out);
    }

    /// The page cache a booted system holds when the benchmark starts (`[machine.system]
    /// page_cache`): `pages` pages of one file of the root file system, read from `cpu` (so
    /// from its node first), each read twice so that mark_page_accessed has moved it to the
    /// active list; clean, unmapped, with no I/O. Machine state at the start, like
    /// boot_reserved: it costs no simulated time.
    pub fn system_page_cache(&mut self, pages: u64, cpu: usize) {
        if pages == 0 {
            return;
        }
        let ino = self.create_file(0, cpu).expect("the root file system has room for one file");
        self.read_at_boot(ino, pages, cpu);
    }

    /// The files a booted system has looked up, read and closed when the benchmark starts
    /// (`[machine.system] files`): `files` files of `pages` pages each (`boot_file`), read as
    /// `system_page_cache` reads its file, then closed, so that each leaves an unused dentry
    /// (DCACHE_REFERENCED, on the dentry LRU) pinning its inode. Pruning the dentry puts the
    /// inode on the inode LRU; pruning the inode takes its pages (inode steals). Machine state
    /// at the start: no simulated time.
    pub fn system_files(&mut self, files: u32, pages: u64, cpu: usize) {
        for _ in 0..files {
            let Some(ino) = self.boot_file(0, cpu) else { break };
            self.read_at_boot(ino, pages, cpu);
            self.close_file(ino);
        }
        self.take_cost();
    }

    /// Reads `pages` pages of file `ino` into the page cache twice, without I/O (boot state).
    fn read_at_boot(&mut self, ino: Ino, pages: u64, cpu: usize) {
        let mapping = self.inode(ino).mapping;
        for index in 0..pages as u32 {
            let Some(pfn) = self.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, cpu) else { break };
            self.add_to_page_cache_lru(pfn, mapping, index, Gfp::GFP_KERNEL, cpu);
            self.pages[pfn as usize].flags |= PG_UPTODATE;
            self.mark_page_accessed(pfn);
            self.mark_page_accessed(pfn);
            self.inode_mut(ino).size_pages = u64::from(index) + 1;
        }
        self.take_cost();
    }

    /// Inserts a freshly allocated page into the page cache and the inactive file LRU
    /// (add_to_page_cache_lru). The tree nodes the insertion needs are taken from the CPU's
    /// preloaded ones, allocated beforehand with `tree_gfp` (radix_tree_preload; reclaim may
    /// run then, before the page is in the cache). Returns false if the offset is already
    /// cached.
    pub fn add_to_page_cache_lru(&mut self, pfn: Pfn, mapping: u32, index: u32, tree_gfp: Gfp, cpu: usize) -> bool {
        // add_to_page_cache_locked preloads before it finds out whether the offset is taken.
        self.radix_tree_preload(mapping, index, tree_gfp, cpu);
        // A node the pool cannot supply has no object (a model shortcut for -ENOMEM).
        let pool = &mut self.radix_preload[cpu];
        let root = &mut self.mappings[mapping as usize - 1].i_pages;
        if !self.radix_nodes.insert(root, index, pfn, &mut || pool.pop().unwrap_or(NIL)) {
            return false;
        }
        self.mappings[mapping as usize - 1].nrpages += 1;
        let p = &mut self.pages[pfn as usize];
        p.mapping = mapping;
        p.index = index;
        p.flags &= !(PG_SWAPBACKED | PG_ACTIVE | PG_REFERENCED);
        self.mod_page_state(pfn, ZoneStat::NrFilePages, 1);
        self.cost_ns += self.costs.page_cache_op_ns;
        self.lru_cache_add(pfn, false);
        true
    }

    /// Removes a page from the page cache (try_to_release_page's buffer freeing, then
    /// delete_from_page_cache / __remove_mapping); the caller has taken it off the LRU and
    /// frees it. Tree nodes left empty go back to their cache, leaf first (radix_tree_delete;
    /// the RCU grace period before the kernel frees them is not modelled).
    pub fn delete_from_page_cache(&mut self, pfn: Pfn, cpu: usize) {
        let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
        debug_assert!(mapping != 0, "pfn {pfn} is in no page cache");
        self.try_to_free_buffers(pfn, cpu);
        let removed = self.radix_nodes.delete(&mut self.mappings[mapping as usize - 1].i_pages, index).expect("a cached page is in its tree");
        debug_assert_eq!(removed.item, pfn);
        self.mappings[mapping as usize - 1].nrpages -= 1;
        for &slab in &removed.freed[..removed.nr_freed] {
            if slab != NIL {
                self.kmem_cache_free(super::slab::RADIX_CACHE, slab, cpu);
            }
        }
        self.pages[pfn as usize].mapping = 0;
        self.mod_page_state(pfn, ZoneStat::NrFilePages, -1);
        self.cost_ns += self.costs.page_cache_op_ns;
        let p = &mut self.pages[pfn as usize];
        p.flags &= !(PG_UPTODATE | PG_READAHEAD | PG_REFERENCED | PG_ACTIVE);
        // 5.16+: the file's last page gone, its unused inode may go on the inode LRU.
        if self.mappings[mapping as usize - 1].nrpages == 0 {
            let host = self.mappings[mapping as usize - 1].host;
            self.inode_add_lru(host as crate::fs::Ino);
        }
    }

    /// Tags the page at `pfn` in its file's tree (radix_tree_tag_set).
    #[inline]
    pub(crate) fn page_tag_set(&mut self, pfn: Pfn, tag: usize) {
        let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
        self.radix_nodes.tag_set(&self.mappings[mapping as usize - 1].i_pages, index, tag);
    }

    /// Untags the page at `pfn` in its file's tree (radix_tree_tag_clear).
    #[inline]
    pub(crate) fn page_tag_clear(&mut self, pfn: Pfn, tag: usize) {
        let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
        self.radix_nodes.tag_clear(&self.mappings[mapping as usize - 1].i_pages, index, tag);
    }

    /// radix_tree_preload (3.x: the CPU's pool topped up to RADIX_TREE_MAX_PATH nodes) / 6.x
    /// xas_nomem (the nodes this insertion needs): node objects allocated with `gfp`, which
    /// the page cache's callers pass without __GFP_HIGHMEM, so they come from the normal
    /// zones. An allocation that fails leaves the pool short; the insertion then goes ahead
    /// without a node object for the missing level (a model shortcut for -ENOMEM).
    fn radix_tree_preload(&mut self, mapping: u32, index: u32, gfp: Gfp, cpu: usize) {
        let target = match self.era {
            Era::Linux3 => RADIX_TREE_MAX_PATH,
            Era::Linux6 => self.radix_nodes.nodes_needed(&self.mapping(mapping).i_pages, index),
        };
        while self.radix_preload[cpu].len() < target {
            match self.kmem_cache_alloc_gfp(super::slab::RADIX_CACHE, gfp.without(Gfp::HIGHMEM), cpu) {
                Some(slab) => self.radix_preload[cpu].push(slab),
                None => break,
            }
        }
    }
}
