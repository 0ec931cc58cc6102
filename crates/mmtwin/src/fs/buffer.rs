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

use crate::mm::mm_types::{NIL, PG_BUF_CLEAN, PG_BUF_LOCKED, PG_LOCKED, PG_PRIVATE};
use crate::mm::page_alloc::Mm;
use crate::mm::slab::BH_CACHE;
use crate::mm::Pfn;

use super::Writepage;

impl Mm {
    /// page_has_buffers (PagePrivate).
    #[inline(always)]
    pub fn page_has_buffers(&self, pfn: Pfn) -> bool {
        self.pages[pfn as usize].flags & PG_PRIVATE != 0
    }

    /// The slab holding a page's buffer heads (page->private), NIL if it has none.
    pub fn page_buffers_slab(&self, pfn: Pfn) -> Pfn {
        if !self.page_has_buffers(pfn) {
            return NIL;
        }
        let p = &self.pages[pfn as usize];
        self.radix_nodes.private(&self.mapping(p.mapping).i_pages, p.index)
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
            let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
            debug_assert!(mapping != 0, "pfn {pfn}: buffers for a page in no page cache");
            self.radix_nodes.set_private(&self.mappings[mapping as usize - 1].i_pages, index, slab);
            self.pages[pfn as usize].flags |= PG_PRIVATE;
        }
    }

    /// try_to_free_buffers: drops a page's buffer heads (free_buffer_head).
    pub fn try_to_free_buffers(&mut self, pfn: Pfn, cpu: usize) {
        if !self.page_has_buffers(pfn) {
            return;
        }
        let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
        let slab = self.radix_nodes.set_private(&self.mappings[mapping as usize - 1].i_pages, index, NIL);
        self.pages[pfn as usize].flags &= !PG_PRIVATE;
        self.kmem_cache_free(BH_CACHE, slab, cpu);
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

    /// ->writepage (block_write_full_page) of dirty page `pfn` on device `dev`, if the
    /// journal's commit wrote its buffers (`PG_BUF_CLEAN`; 3.0 jbd data=ordered): while that
    /// write is in flight the buffer lock cannot be had and the page is redirtied
    /// (redirty_page_for_writepage); once it has completed there is nothing to submit, so the
    /// page's writeback begins and ends at once (nr_underway == 0) and the page is clean
    /// (`Writepage::Done`). None when its buffers are dirty and the page is to be written.
    pub fn writepage_clean_buffers(&mut self, pfn: Pfn, dev: usize) -> Option<Writepage> {
        let f = self.pages[pfn as usize].flags;
        if f & PG_BUF_LOCKED != 0 {
            self.cost_ns += self.costs.writeback_page_ns;
            return Some(Writepage::Redirtied);
        }
        if f & PG_BUF_CLEAN == 0 {
            return None;
        }
        self.cost_ns += self.costs.writeback_page_ns;
        self.clear_page_dirty_for_io(pfn);
        self.pages[pfn as usize].flags &= !PG_BUF_CLEAN;
        self.set_page_writeback(pfn, dev);
        self.end_page_writeback(pfn, dev);
        Some(Writepage::Done)
    }
}
