//! LRU list maintenance (mm/swap.c, include/linux/mm_inline.h): adding pages to the LRU,
//! promotion on a second access, and removal.
//!
//! Pages go straight onto the lists; the kernel batches additions in per-CPU pagevecs of 14
//! (15 in later kernels), which only delays them by a few pages.

use super::mm_types::*;
use super::mmzone::{LruList, Lruvec};
use super::vmscan::lru_type;
use super::page_alloc::Mm;
use super::policy::LruOwner;
use super::vmstat::{Era, VmStat};
use super::Pfn;

impl Mm {
    /// The index in `Mm::lruvecs` of the lists a page belongs on (mem_cgroup_page_lruvec):
    /// its zone in 3.x, its node in 6.x.
    #[inline(always)]
    pub fn page_lruvec(&self, pfn: Pfn) -> usize {
        match self.policy.lru_owner {
            LruOwner::PerZone => self.page_zone(pfn),
            LruOwner::PerNode => self.page_to_nid(pfn),
        }
    }

    /// The LRU list a page's flags say it belongs on (page_lru).
    #[inline(always)]
    pub fn page_lru(&self, pfn: Pfn) -> LruList {
        let f = self.pages[pfn as usize].flags;
        if f & PG_UNEVICTABLE != 0 {
            return LruList::Unevictable;
        }
        match (f & PG_SWAPBACKED != 0, f & PG_ACTIVE != 0) {
            (true, false) => LruList::InactiveAnon,
            (true, true) => LruList::ActiveAnon,
            (false, false) => LruList::InactiveFile,
            (false, true) => LruList::ActiveFile,
        }
    }

    /// Puts a page at the head of the list its flags name (add_page_to_lru_list).
    pub fn add_page_to_lru_list(&mut self, pfn: Pfn) {
        self.lru_insert(pfn, false);
    }

    /// Puts a page at the head, or with `tail` the tail, of the list its flags name.
    fn lru_insert(&mut self, pfn: Pfn, tail: bool) {
        debug_assert_eq!(self.pages[pfn as usize].flags & PG_LRU, 0, "pfn {pfn} already on an LRU");
        let lru = self.page_lru(pfn);
        let v = self.page_lruvec(pfn);
        let list = &mut self.lruvecs[v].lists[lru as usize];
        if tail {
            list_add_tail(&mut self.pages, list, pfn);
        } else {
            list_add(&mut self.pages, list, pfn);
        }
        self.pages[pfn as usize].flags |= PG_LRU;
        self.cost_ns += self.costs.lru_op_ns;
    }

    /// Takes a page off its LRU list (del_page_from_lru_list + ClearPageLRU).
    pub fn del_page_from_lru_list(&mut self, pfn: Pfn) {
        debug_assert_ne!(self.pages[pfn as usize].flags & PG_LRU, 0, "pfn {pfn} is on no LRU");
        let lru = self.page_lru(pfn);
        let v = self.page_lruvec(pfn);
        list_del(&mut self.pages, &mut self.lruvecs[v].lists[lru as usize], pfn);
        self.pages[pfn as usize].flags &= !PG_LRU;
        self.cost_ns += self.costs.lru_op_ns;
    }

    /// Adds a newly allocated page to the LRU (lru_cache_add). `active` is where it starts: 3.x
    /// puts new anonymous pages on the active list (lru_cache_add_lru(page, LRU_ACTIVE_ANON)),
    /// file pages start inactive. In 3.x the addition also counts in the zone's reclaim
    /// statistics (____pagevec_lru_add_fn's update_page_reclaim_stat, 2.6.28 to 5.8): a page
    /// added is a page recently scanned, and one added active is also a page recently
    /// rotated, so that get_scan_count weighs a list by how much of what enters it stays in use.
    pub fn lru_cache_add(&mut self, pfn: Pfn, active: bool) {
        if active {
            self.pages[pfn as usize].flags |= PG_ACTIVE;
        } else {
            self.pages[pfn as usize].flags &= !PG_ACTIVE;
        }
        self.add_page_to_lru_list(pfn);
        self.update_page_reclaim_stat(pfn, active);
    }

    /// update_page_reclaim_stat (3.x): one more page recently scanned on the page's LRU type,
    /// and recently rotated if `rotated`. 6.x has no such statistics (5.9 replaced them by
    /// the lists' reclaim costs): nothing is counted.
    fn update_page_reclaim_stat(&mut self, pfn: Pfn, rotated: bool) {
        if self.era != Era::Linux3 {
            return;
        }
        let t = lru_type(self.pages[pfn as usize].flags);
        let lv = self.page_lruvec(pfn);
        let rs = &mut self.lruvecs[lv].reclaim_stat;
        rs.recent_scanned[t] += 1;
        if rotated {
            rs.recent_rotated[t] += 1;
        }
    }

    /// Moves an inactive LRU page to its active list (activate_page), counting pgactivate.
    pub fn activate_page(&mut self, pfn: Pfn) {
        let f = self.pages[pfn as usize].flags;
        if f & PG_LRU == 0 || f & PG_ACTIVE != 0 || f & PG_UNEVICTABLE != 0 {
            return;
        }
        self.del_page_from_lru_list(pfn);
        self.pages[pfn as usize].flags |= PG_ACTIVE;
        self.add_page_to_lru_list(pfn);
        self.events.count(VmStat::Pgactivate, 1);
        // __activate_page: a rotation.
        self.update_page_reclaim_stat(pfn, true);
    }

    /// deactivate_page / lru_deactivate_fn (2.6.39+; 6.x deactivate_file_folio): a page
    /// invalidate_mapping_pages could not free moves to its inactive list, its referenced bit
    /// cleared. A clean one goes to the tail, to be reclaimed next (pgrotated); a dirty one or
    /// one under writeback to the head with PG_reclaim, so that the end of its writeback
    /// rotates it to the tail. Mapped pages, pages off the LRU and unevictable ones are left
    /// alone. Counts pgdeactivate for an active page and, in 3.x, a page recently scanned.
    pub fn deactivate_page(&mut self, pfn: Pfn) {
        let f = self.pages[pfn as usize].flags;
        if f & PG_LRU == 0 || f & (PG_UNEVICTABLE | PG_MAPPED) != 0 {
            return;
        }
        self.del_page_from_lru_list(pfn);
        self.pages[pfn as usize].flags &= !(PG_ACTIVE | PG_REFERENCED);
        let busy = f & (PG_WRITEBACK | PG_DIRTY) != 0;
        self.lru_insert(pfn, !busy);
        if busy {
            self.pages[pfn as usize].flags |= PG_RECLAIM;
        } else {
            self.events.count(VmStat::Pgrotated, 1);
        }
        if f & PG_ACTIVE != 0 {
            self.events.count(VmStat::Pgdeactivate, 1);
        }
        self.update_page_reclaim_stat(pfn, false);
    }

    /// Records a read or write of a page through a syscall (mark_page_accessed): the first
    /// access sets PG_referenced; a second one on an inactive LRU page activates it.
    pub fn mark_page_accessed(&mut self, pfn: Pfn) {
        let f = self.pages[pfn as usize].flags;
        if f & PG_ACTIVE == 0 && f & PG_UNEVICTABLE == 0 && f & PG_REFERENCED != 0 && f & PG_LRU != 0 {
            self.activate_page(pfn);
            self.pages[pfn as usize].flags &= !PG_REFERENCED;
        } else if f & PG_REFERENCED == 0 {
            self.pages[pfn as usize].flags |= PG_REFERENCED;
        }
    }

    /// The LRU sizes summed over every lruvec (global_page_state(NR_LRU_BASE + lru)).
    pub fn nr_lru_pages(&self, lru: LruList) -> u64 {
        self.lruvecs.iter().map(|v: &Lruvec| v.size(lru)).sum()
    }
}
