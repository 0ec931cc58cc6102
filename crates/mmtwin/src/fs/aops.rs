//! ->writepage of each file system type when reclaim calls it (pageout), 3.0 behaviour:
//! ext2_writepage / ext3_ordered_writepage, ext4_writepage, xfs_vm_writepage with
//! xfs_cluster_write. See the table in the module comment of `fs`.

use super::{FsType, Ino, Writepage};
use crate::block::{Bio, Dir};
use crate::mm::mm_types::*;
use crate::mm::page_alloc::Mm;
use crate::mm::vmscan::Reclaimer;
use crate::mm::Pfn;

/// Pages xfs_cluster_write adds after the target: pageout's wbc.nr_to_write (SWAP_CLUSTER_MAX).
pub const XFS_CLUSTER_PAGES: u32 = 32;

impl Mm {
    /// ->writepage of dirty file page `pfn` from reclaim, as its file system does it.
    pub fn writepage(&mut self, pfn: Pfn) -> Writepage {
        let Some(dev) = self.page_bdev(pfn) else { return Writepage::Redirtied };
        let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
        let ino = self.mapping(mapping).host as Ino;
        let fs = self.sbs[self.inode(ino).sb].fs_type;
        match fs {
            FsType::Ext2 | FsType::Ext3 => self.write_one_page(pfn, ino, index, dev),
            // A delalloc page has no block yet: ext4 will not allocate from reclaim.
            FsType::Ext4 => match self.bmap(ino, index) {
                None => {
                    self.cost_ns += self.costs.writeback_page_ns;
                    Writepage::Redirtied
                }
                Some(_) => self.write_one_page(pfn, ino, index, dev),
            },
            FsType::Xfs => {
                if self.reclaimer == Reclaimer::Direct {
                    self.cost_ns += self.costs.writeback_page_ns;
                    return Writepage::Redirtied;
                }
                self.xfs_writepage_cluster(pfn, ino, index, dev)
            }
        }
    }

    /// Starts writeback of one dirty page: clear_page_dirty_for_io, set_page_writeback, and
    /// a bio for its block (mapped now if it has none). None if the page was clean.
    fn page_write_bio(&mut self, pfn: Pfn, ino: Ino, index: u32, dev: usize) -> Option<Bio> {
        if !self.clear_page_dirty_for_io(pfn) {
            return None;
        }
        self.writeback_page_buffers(pfn, self.inode(ino).sb);
        self.set_page_writeback(pfn, dev);
        self.cost_ns += self.costs.writeback_page_ns;
        let sector = self.get_block(ino, index);
        Some(Bio::new(Dir::Write, sector, pfn))
    }

    /// block_write_full_page of one page: a one-page bio to its block (nothing, if the
    /// journal's commit wrote its buffers).
    fn write_one_page(&mut self, pfn: Pfn, ino: Ino, index: u32, dev: usize) -> Writepage {
        if let Some(w) = self.writepage_clean_buffers(pfn, dev) {
            return w;
        }
        match self.page_write_bio(pfn, ino, index, dev) {
            Some(bio) => {
                // A reclaimer without a request sleeps holding it (`Mm::rq_wait_owed`).
                let _ = self.submit_bio_or_sleep(dev, bio);
                Writepage::Submitted
            }
            None => Writepage::Clean,
        }
    }

    /// xfs from kswapd: xfs_map_blocks allocates the whole delalloc extent around the page (the
    /// run of cached, dirty, unallocated pages it lies in, in file order), then the page and up
    /// to XFS_CLUSTER_PAGES following dirty pages of the extent go out in one ioend.
    fn xfs_writepage_cluster(&mut self, pfn: Pfn, ino: Ino, index: u32, dev: usize) -> Writepage {
        let mapping = self.inode(ino).mapping;
        if self.bmap(ino, index).is_none() {
            let delalloc = |mm: &Mm, i: u32| {
                mm.find_get_page(mapping, i).is_some_and(|p| mm.pages[p as usize].flags & PG_DIRTY != 0) && mm.bmap(ino, i).is_none()
            };
            let mut first = index;
            while first > 0 && delalloc(self, first - 1) {
                first -= 1;
            }
            let mut last = index;
            while delalloc(self, last + 1) {
                last += 1;
            }
            for i in first..=last {
                self.get_block(ino, i);
            }
        }
        let Some(mut bio) = self.page_write_bio(pfn, ino, index, dev) else { return Writepage::Clean };
        let sector = bio.sector;
        // xfs_convert_page, forwards only: cached, unlocked, dirty, not under writeback and
        // mapped right after the previous page.
        let mut next_sector = sector + crate::block::SECTORS_PER_PAGE;
        for i in index + 1..=index + XFS_CLUSTER_PAGES {
            let Some(p) = self.find_get_page(mapping, i) else { break };
            let f = self.pages[p as usize].flags;
            if f & (PG_LOCKED | PG_WRITEBACK) != 0 || f & PG_DIRTY == 0 || self.bmap(ino, i) != Some(next_sector) {
                break;
            }
            self.clear_page_dirty_for_io(p);
            self.set_page_writeback(p, dev);
            self.cost_ns += self.costs.writeback_page_ns;
            bio.pages.push(p);
            next_sector += crate::block::SECTORS_PER_PAGE;
        }
        let _ = self.submit_bio_or_sleep(dev, bio);
        Writepage::Submitted
    }
}
