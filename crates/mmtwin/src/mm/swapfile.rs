//! Swap space (mm/swapfile.c, mm/swap_state.c).
//!
//! The machines modelled so far have no swap device configured (`nr_swap_pages` is 0), which is
//! what reclaim's decisions depend on: get_scan_count leaves the anon lists alone, anon pages
//! are not counted as reclaimable, and the dirtyable memory excludes them. Swap-out and swap-in
//! join with a workload that puts anonymous memory under pressure.

use super::page_alloc::Mm;
use super::Pfn;

impl Mm {
    /// Free swap slots (nr_swap_pages).
    pub fn nr_swap_pages(&self) -> u64 {
        0
    }

    /// The block device swap writes go to.
    pub fn swap_bdev(&self) -> Option<usize> {
        None
    }

    /// add_to_swap: without swap space there is no slot.
    pub fn add_to_swap(&mut self, _pfn: Pfn) -> bool {
        false
    }

    /// swap_writepage: nothing to write to.
    pub fn swap_writepage(&mut self, _pfn: Pfn) -> bool {
        false
    }

    /// __delete_from_swap_cache for a page reclaim frees.
    pub fn delete_from_swap_cache_for_reclaim(&mut self, _pfn: Pfn) {
        unreachable!("no page enters the swap cache without swap space")
    }

    /// end_swap_bio_write.
    pub fn end_swap_writeback(&mut self, _pfn: Pfn, _dev: usize) {
        unreachable!("no swap writes without swap space")
    }
}
