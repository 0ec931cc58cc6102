//! Anonymous memory: private anonymous regions, their page-table entries and the faults that
//! fill them (mm/memory.c do_anonymous_page and do_swap_page), and the reverse map from an
//! anonymous page to its entry (mm/rmap.c try_to_unmap_anon).
//!
//! A region is one vma with its anon_vma; it has one page-table entry per page: empty, a
//! present page, or a swap slot. An anonymous page records its region in `mapping` (with
//! `PAGE_MAPPING_ANON`, as the kernel tags page->mapping) and its page offset in `index`, which
//! is all try_to_unmap needs to find the entry. One process maps each region.

use super::gfp::Gfp;
use super::mm_types::*;
use super::mmzone::ZoneStat;
use super::page_alloc::Mm;
use super::vmstat::Era;
use super::vmstat::VmStat;
use super::Pfn;

/// page->mapping of an anonymous page: this bit plus the region id.
pub const PAGE_MAPPING_ANON: u32 = 1 << 31;

/// A page-table entry of an anonymous region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pte {
    None,
    Present(Pfn),
    /// Swapped out to this slot.
    Swap(u32),
}

/// One anonymous region (vm_area_struct + anon_vma) and its page-table entries.
#[derive(Clone, Debug, Default)]
pub struct AnonVma {
    pub ptes: Vec<Pte>,
}

/// What a fault on an anonymous address came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The page is mapped; `major` when it came back from swap (read by this fault or found
    /// in the swap cache).
    Done { major: bool },
    /// A swap read is in flight: sleep on this wait queue and fault again.
    Wait(usize),
    /// No page could be had, even after reclaim (VM_FAULT_OOM).
    Oom,
}

impl Mm {
    /// A new anonymous region of `pages` pages, all entries empty (mmap of private anonymous
    /// memory). Returns its id.
    pub fn anon_vma_new(&mut self, pages: u32) -> u32 {
        self.anon_vmas.push(AnonVma { ptes: vec![Pte::None; pages as usize] });
        self.anon_vmas.len() as u32 - 1
    }

    /// handle_mm_fault on an anonymous region: a touch of page `index` (a store if `write`).
    /// A present page only gets its accessed bit set (the hardware does that, no fault); an
    /// empty entry gets a zeroed page; a swap entry is read back.
    pub fn handle_anon_fault(&mut self, vma: u32, index: u32, write: bool, cpu: usize) -> Fault {
        match self.anon_vmas[vma as usize].ptes[index as usize] {
            Pte::Present(pfn) => {
                self.cost_ns += self.costs.touch_page_ns;
                self.pages[pfn as usize].flags |= PG_YOUNG;
                if write && self.pages[pfn as usize].flags & PG_SWAPCACHE != 0 {
                    // do_wp_page → reuse_swap_page: the write makes the swap copy stale.
                    self.cost_ns += self.costs.page_fault_ns;
                    self.try_to_free_swap(pfn);
                }
                Fault::Done { major: false }
            }
            Pte::None => self.do_anonymous_page(vma, index, cpu),
            Pte::Swap(slot) => self.do_swap_page(vma, index, slot, write, cpu),
        }
    }

    /// do_anonymous_page: a zeroed page, mapped young, on the anon LRU (active in 3.x,
    /// page_add_new_anon_rmap; inactive in 6.x, lru_cache_add_inactive_or_unevictable).
    fn do_anonymous_page(&mut self, vma: u32, index: u32, cpu: usize) -> Fault {
        self.cost_ns += self.costs.page_fault_ns;
        let Some(pfn) = self.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, cpu) else { return Fault::Oom };
        self.cost_ns += self.costs.clear_page_ns * self.numa_factor_x10(cpu, pfn) / 10;
        {
            let p = &mut self.pages[pfn as usize];
            p.flags = (p.flags & !(PG_ACTIVE | PG_REFERENCED | PG_DIRTY)) | PG_SWAPBACKED | PG_UPTODATE;
        }
        self.page_add_anon_rmap(pfn, vma, index);
        self.lru_cache_add(pfn, self.era == Era::Linux3);
        Fault::Done { major: false }
    }

    /// do_swap_page: the page of a swapped-out entry, from the swap cache or read with its
    /// neighbours (a major fault). Once the read is done it is mapped and the entry's
    /// reference on the slot dropped; a store, or a swap area more than half full, drops the
    /// swap copy too (reuse_swap_page / try_to_free_swap).
    fn do_swap_page(&mut self, vma: u32, index: u32, slot: u32, write: bool, cpu: usize) -> Fault {
        self.cost_ns += self.costs.page_fault_ns;
        let pfn = match self.lookup_swap_cache(slot) {
            Some(pfn) => pfn,
            None => {
                let Some(pfn) = self.swapin_readahead(slot, cpu) else { return Fault::Oom };
                self.events.count(VmStat::Pgmajfault, 1);
                return Fault::Wait(self.page_waitqueue(pfn));
            }
        };
        if self.pages[pfn as usize].flags & PG_LOCKED != 0 {
            return Fault::Wait(self.page_waitqueue(pfn));
        }
        self.page_add_anon_rmap(pfn, vma, index);
        self.swap_free(slot);
        if write || self.vm_swap_full() {
            self.try_to_free_swap(pfn);
        }
        Fault::Done { major: true }
    }

    /// page_add_anon_rmap: the entry maps the page (NR_ANON_PAGES counts mapped anon pages).
    fn page_add_anon_rmap(&mut self, pfn: Pfn, vma: u32, index: u32) {
        self.anon_vmas[vma as usize].ptes[index as usize] = Pte::Present(pfn);
        let p = &mut self.pages[pfn as usize];
        p.mapping = PAGE_MAPPING_ANON | vma;
        p.index = index;
        p.flags |= PG_MAPPED | PG_YOUNG;
        self.mod_page_state(pfn, ZoneStat::NrAnonPages, 1);
    }

    /// try_to_unmap_one for an anonymous page in the swap cache: its entry becomes the swap
    /// slot (swap_duplicate) and the page is no longer mapped.
    pub fn try_to_unmap_anon(&mut self, pfn: Pfn) {
        let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
        debug_assert!(mapping & PAGE_MAPPING_ANON != 0, "pfn {pfn} is not anonymous");
        let slot = self.page_swap_slot(pfn);
        let vma = (mapping & !PAGE_MAPPING_ANON) as usize;
        debug_assert_eq!(self.anon_vmas[vma].ptes[index as usize], Pte::Present(pfn));
        self.anon_vmas[vma].ptes[index as usize] = Pte::Swap(slot);
        self.swap_duplicate(slot);
        self.mod_page_state(pfn, ZoneStat::NrAnonPages, -1);
    }
}
