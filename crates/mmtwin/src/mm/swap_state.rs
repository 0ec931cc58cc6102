//! The swap cache (mm/swap_state.c) and swap I/O (mm/page_io.c).
//!
//! A page in the swap cache has PG_swapcache and its slot in `SwapInfo::slot_of` (the kernel's
//! page_private); the cache maps slots back to pages. Swap cache pages count in NR_FILE_PAGES,
//! as they do in both eras. Reclaim puts an anonymous page into the cache (add_to_swap, which
//! also dirties it), unmaps it, writes it (swap_writepage) and frees it once clean; a fault on
//! a swapped-out address reads the slot and its neighbours back (swapin_readahead).

use super::gfp::Gfp;
use super::mm_types::*;
use super::mmzone::ZoneStat;
use super::page_alloc::Mm;
use super::vmstat::VmStat;
use super::Pfn;
use crate::block::{Bio, Dir};

impl Mm {
    /// __add_to_swap_cache: `pfn` stands for `slot` from now on.
    fn add_to_swap_cache(&mut self, pfn: Pfn, slot: u32) {
        let si = self.swap.as_mut().expect("swap area");
        si.cache.insert(slot, pfn);
        si.slot_of.insert(pfn, slot);
        self.pages[pfn as usize].flags |= PG_SWAPCACHE;
        self.mod_page_state(pfn, ZoneStat::NrFilePages, 1);
        self.cost_ns += self.costs.page_cache_op_ns;
    }

    /// add_to_swap: gives an anonymous page a slot and puts it in the swap cache, dirty (its
    /// contents exist nowhere else yet). False when swap is full or absent.
    pub fn add_to_swap(&mut self, pfn: Pfn) -> bool {
        debug_assert!(self.pages[pfn as usize].flags & (PG_SWAPBACKED | PG_SWAPCACHE) == PG_SWAPBACKED);
        let Some(slot) = self.get_swap_page() else { return false };
        self.add_to_swap_cache(pfn, slot);
        self.pages[pfn as usize].flags |= PG_DIRTY;
        true
    }

    /// __delete_from_swap_cache + swapcache_free: the page no longer stands for its slot.
    pub fn delete_from_swap_cache(&mut self, pfn: Pfn) {
        let si = self.swap.as_mut().expect("swap area");
        let slot = si.slot_of.remove(&pfn).expect("page in the swap cache");
        let removed = si.cache.remove(&slot);
        debug_assert_eq!(removed, Some(pfn));
        self.pages[pfn as usize].flags &= !PG_SWAPCACHE;
        self.mod_page_state(pfn, ZoneStat::NrFilePages, -1);
        self.cost_ns += self.costs.page_cache_op_ns;
        self.swapcache_free(slot);
    }

    /// __remove_mapping for a reclaimed swap cache page: out of the cache, then freed by the
    /// caller.
    pub fn delete_from_swap_cache_for_reclaim(&mut self, pfn: Pfn) {
        debug_assert_eq!(self.pages[pfn as usize].flags & PG_MAPPED, 0, "reclaiming mapped pfn {pfn}");
        self.delete_from_swap_cache(pfn);
        let p = &mut self.pages[pfn as usize];
        p.mapping = 0;
        p.flags &= !(PG_UPTODATE | PG_REFERENCED | PG_ACTIVE | PG_SWAPBACKED);
    }

    /// try_to_free_swap: drops the swap copy of a page no page table refers to by slot any
    /// more, unless it is being written. True if it was dropped.
    pub fn try_to_free_swap(&mut self, pfn: Pfn) -> bool {
        let f = self.pages[pfn as usize].flags;
        if f & PG_SWAPCACHE == 0 || f & PG_WRITEBACK != 0 {
            return false;
        }
        let slot = self.page_swap_slot(pfn);
        if self.swap.as_ref().expect("swap area").swap_count(slot) > 0 {
            return false;
        }
        self.delete_from_swap_cache(pfn);
        true
    }

    /// lookup_swap_cache.
    pub fn lookup_swap_cache(&mut self, slot: u32) -> Option<Pfn> {
        self.cost_ns += self.costs.page_cache_lookup_ns;
        self.swap.as_ref().and_then(|s| s.cache.get(&slot).copied())
    }

    /// read_swap_cache_async: the page of `slot`, from the cache or newly allocated, added to
    /// the cache and the inactive anon list and read (locked until the read completes).
    /// None if the slot was freed meanwhile or no page could be had.
    pub fn read_swap_cache_async(&mut self, slot: u32, cpu: usize) -> Option<Pfn> {
        if let Some(pfn) = self.lookup_swap_cache(slot) {
            return Some(pfn);
        }
        let si = self.swap.as_ref()?;
        if si.swap_map[slot as usize] == 0 {
            return None;
        }
        let pfn = self.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, cpu)?;
        // swapcache_prepare: the slot now has a cache page.
        let si = self.swap.as_mut().expect("swap area");
        debug_assert_eq!(si.swap_map[slot as usize] & super::swapfile::SWAP_HAS_CACHE, 0);
        si.swap_map[slot as usize] |= super::swapfile::SWAP_HAS_CACHE;
        {
            let p = &mut self.pages[pfn as usize];
            p.mapping = 0;
            p.index = 0;
            p.flags = (p.flags & !(PG_ACTIVE | PG_REFERENCED | PG_DIRTY)) | PG_SWAPBACKED | PG_LOCKED;
        }
        self.add_to_swap_cache(pfn, slot);
        self.lru_cache_add(pfn, false);
        self.events.count(VmStat::Pswpin, 1);
        // swap_readpage: a one-page bio.
        let si = self.swap.as_ref().expect("swap area");
        let (dev, sector) = (si.bdev, si.slot_sector(slot));
        self.submit_bio(dev, Bio::new(Dir::Read, sector, pfn));
        Some(pfn)
    }

    /// swapin_readahead: reads the allocated slots next to `slot` within its aligned cluster
    /// of 2^page_cluster (3.x valid_swaphandles: the contiguous run of slots in use around
    /// it), lowest first, the faulting one among them. 6.x plugs the reads (blk_start_plug in
    /// swap_cluster_readahead), so they reach the queue merged; 3.x submits each at once, so
    /// the first goes straight to an idle disk and the rest merge behind it.
    pub fn swapin_readahead(&mut self, slot: u32, cpu: usize) -> Option<Pfn> {
        let cluster = 1u32 << self.sysctl.page_cluster;
        let si = self.swap.as_ref()?;
        let base = ((slot / cluster) * cluster).max(1);
        let end = ((slot / cluster + 1) * cluster).min(si.swap_map.len() as u32);
        let mut lo = slot;
        while lo > base && si.swap_map[lo as usize - 1] != 0 {
            lo -= 1;
        }
        let mut hi = slot + 1;
        while hi < end && si.swap_map[hi as usize] != 0 {
            hi += 1;
        }
        let plugged = self.blk_start_plug(crate::block::PlugSite::SwapReadahead);
        for s in lo..hi {
            if self.read_swap_cache_async(s, cpu).is_none() {
                break;
            }
        }
        self.blk_finish_plug(plugged);
        self.read_swap_cache_async(slot, cpu)
    }

    /// swap_writepage: writes a dirty swap cache page to its slot; the page is under writeback
    /// until the write completes. A page no page table needs by slot is dropped from swap
    /// instead (try_to_free_swap) and stays dirty.
    pub fn swap_writepage(&mut self, pfn: Pfn) -> bool {
        if self.try_to_free_swap(pfn) {
            return false;
        }
        let slot = self.page_swap_slot(pfn);
        let si = self.swap.as_ref().expect("swap area");
        let (dev, sector) = (si.bdev, si.slot_sector(slot));
        let p = &mut self.pages[pfn as usize];
        p.flags &= !PG_DIRTY;
        p.flags |= PG_WRITEBACK;
        self.mod_page_state(pfn, ZoneStat::NrWriteback, 1);
        self.events.count(VmStat::Pswpout, 1);
        self.cost_ns += self.costs.writeback_page_ns;
        let _ = self.submit_bio_or_sleep(dev, Bio::new(Dir::Write, sector, pfn));
        true
    }

    /// end_swap_bio_write: the slot is written; a page reclaim is waiting for goes to the tail
    /// of the inactive list.
    pub fn end_swap_writeback(&mut self, pfn: Pfn, _dev: usize) {
        let f = self.pages[pfn as usize].flags;
        debug_assert!(f & PG_WRITEBACK != 0, "pfn {pfn} was not under writeback");
        self.pages[pfn as usize].flags &= !PG_WRITEBACK;
        self.mod_page_state(pfn, ZoneStat::NrWriteback, -1);
        self.mod_page_state(pfn, ZoneStat::NrWritten, 1);
        if f & PG_RECLAIM != 0 {
            self.pages[pfn as usize].flags &= !PG_RECLAIM;
            self.rotate_reclaimable_page(pfn);
        }
        self.wake_up_page(pfn);
    }
}
