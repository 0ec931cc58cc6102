//! Buffer heads of page cache pages (fs/buffer.c), as far as memory goes: a page a file system
//! reads or writes through buffers carries one `struct buffer_head` per block (one per page
//! with 4 KiB blocks), an object of the buffer_head slab cache (SLAB_RECLAIM_ACCOUNT,
//! allocated GFP_NOFS), held until the page leaves the page cache (try_to_release_page in
//! reclaim and truncation). Their slabs are reclaimable, non-movable allocations from the
//! normal zones, like the file systems' other metadata.
//!
//! Which pages get buffers, by file system and era (`FsType::data_buffer_heads`,
//! `FsType::page_mkwrite_buffers`): buffered writes of every ext* and the 3.x xfs
//! (block_write_begin / __block_write_begin), write faults of ext4 and the 3.x xfs
//! (block_page_mkwrite), writeback of a page that has none yet (block_write_full_page,
//! xfs_vm_writepage), and every block-device page (grow_dev_page). mpage reads of 4 KiB-block
//! files map pages without buffers.

use crate::mm::mm_types::PG_LOCKED;
use crate::mm::page_alloc::Mm;
use crate::mm::slab::BH_CACHE;
use crate::mm::Pfn;

impl Mm {
    /// page_has_buffers.
    #[inline(always)]
    pub fn page_has_buffers(&self, pfn: Pfn) -> bool {
        self.buffers.contains_key(&pfn)
    }

    /// create_empty_buffers (alloc_page_buffers + attach_page_buffers) for a page cache page
    /// without buffers. The callers hold the page lock, so the reclaim the allocation may run
    /// cannot take the page itself. If no buffer head can be had the page stays without (the
    /// kernel retries after freeing memory; a model shortcut).
    pub fn create_empty_buffers(&mut self, pfn: Pfn, cpu: usize) {
        if self.page_has_buffers(pfn) {
            return;
        }
        let locked = self.pages[pfn as usize].flags & PG_LOCKED;
        self.pages[pfn as usize].flags |= PG_LOCKED;
        let slab = self.kmem_cache_alloc(BH_CACHE, cpu);
        self.pages[pfn as usize].flags = (self.pages[pfn as usize].flags & !PG_LOCKED) | locked;
        if let Some(slab) = slab {
            self.buffers.insert(pfn, slab);
        }
    }

    /// try_to_free_buffers: drops a page's buffer heads (free_buffer_head).
    pub fn try_to_free_buffers(&mut self, pfn: Pfn, cpu: usize) {
        if let Some(slab) = self.buffers.remove(&pfn) {
            self.kmem_cache_free(BH_CACHE, slab, cpu);
        }
    }

    /// Buffers for a file page being written back, if its file system writes data through
    /// buffers and the page has none yet (block_write_full_page, xfs_vm_writepage), from the
    /// CPU of whoever writes it (a reclaimer or the running task).
    pub fn writeback_page_buffers(&mut self, pfn: Pfn, sb: usize) {
        if self.sbs[sb].fs_type.data_buffer_heads(self.era) && !self.page_has_buffers(pfn) {
            let cpu = if self.in_reclaim { self.reclaim_cpu } else { self.sched.current_cpu };
            self.create_empty_buffers(pfn, cpu);
        }
    }
}
