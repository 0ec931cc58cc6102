//! Anonymous memory: private anonymous regions, their page-table entries and the faults that
//! fill them (mm/memory.c do_anonymous_page and do_swap_page), and the reverse map from an
//! anonymous page to its entry (mm/rmap.c try_to_unmap_anon). Also the page-table pages any
//! mapping's faults allocate (__pte_alloc, __pmd_alloc) and munmap frees (free_pgtables).
//!
//! A region is one vma with its anon_vma; it has one page-table entry per page: empty, a
//! present page, or a swap slot. An anonymous page records its region in `mapping` (with
//! `PAGE_MAPPING_ANON`, as the kernel tags page->mapping) and its page offset in `index`, which
//! is all try_to_unmap needs to find the entry. One process maps each region.
//!
//! Page-table pages (x86_64, four levels): a fault in a 2 MiB span of a mapping that has no
//! PTE page yet allocates one, and a 1 GiB span without a PMD page allocates that first
//! (handle_mm_fault: pmd_alloc, then pte_alloc, before the fault proper). Each is an order-0
//! GFP_KERNEL | __GFP_ZERO page (3.x PGALLOC_GFP; 6.x GFP_PGTABLE_USER), unmovable, taken on
//! the faulting CPU's node and zeroed. NR_PAGETABLE (nr_page_table_pages) counts the PTE pages
//! in 3.x (pgtable_page_ctor; a PMD page is a bare get_zeroed_page there) and PTE and PMD pages
//! in 6.x (pagetable_pte_ctor, pagetable_pmd_ctor). They stay until the mapping goes
//! (munmap or exit: free_pgtables, freed hot through the mmu_gather batch), however few
//! entries are left in them. A mapping is taken to start on a 1 GiB boundary, so page i of it
//! sits under PTE page i / 512 and PMD page i / 262144; a real mapping's start needs at most
//! one more page of each. The PUD and PGD pages belong to process creation, which is not
//! modelled.

use super::gfp::Gfp;
use super::mm_types::*;
use super::mmzone::ZoneStat;
use super::page_alloc::{AllocFailure, Mm};
use super::vmstat::Era;
use super::vmstat::VmStat;
use super::Pfn;
use crate::fs::Ino;

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
    /// The page-table pages holding `ptes`.
    pub tables: PageTables,
}

/// Pages one PTE page maps (PTRS_PER_PTE on x86_64: 2 MiB).
pub const PTRS_PER_PTE: u32 = 512;
/// Pages one PMD page maps (PTRS_PER_PMD × PTRS_PER_PTE: 1 GiB).
pub const PMD_SPAN_PAGES: u32 = 512 * PTRS_PER_PTE;

/// The page-table pages of one mapping: its PTE pages by 2 MiB span and its PMD pages by
/// 1 GiB span (`NIL` where none is allocated yet).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageTables {
    pub pte: Vec<Pfn>,
    pub pmd: Vec<Pfn>,
}

impl PageTables {
    /// Every page-table page, PMD pages first.
    pub fn pages(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.pmd.iter().chain(self.pte.iter()).copied().filter(|&p| p != NIL)
    }
}

/// Whose page tables: an anonymous region or a file's shared mapping (one mapper per file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableOwner {
    Anon(u32),
    File(Ino),
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
        self.anon_vmas.push(AnonVma { ptes: vec![Pte::None; pages as usize], tables: PageTables::default() });
        self.anon_vmas.len() as u32 - 1
    }

    fn tables_mut(&mut self, owner: TableOwner) -> &mut PageTables {
        match owner {
            TableOwner::Anon(vma) => &mut self.anon_vmas[vma as usize].tables,
            TableOwner::File(ino) => self.file_tables.entry(ino).or_default(),
        }
    }

    /// Whether NR_PAGETABLE counts PMD pages (6.x's pagetable_pmd_ctor; not 3.x).
    fn pmd_pages_counted(&self) -> bool {
        self.era == Era::Linux6
    }

    /// pmd_alloc and pte_alloc for page `index` of a mapping (handle_mm_fault before the fault
    /// itself): the PMD page of its 1 GiB span and the PTE page of its 2 MiB span, each
    /// allocated if missing. `may_sleep`: the caller can stop for the allocator's wait (the file
    /// fault), so a stalled allocation ends the fault and it is retried after the sleep.
    pub fn pte_alloc(&mut self, owner: TableOwner, index: u32, cpu: usize, may_sleep: bool) -> Result<(), AllocFailure> {
        let (pmd_i, pte_i) = ((index / PMD_SPAN_PAGES) as usize, (index / PTRS_PER_PTE) as usize);
        let t = match owner {
            TableOwner::Anon(vma) => Some(&self.anon_vmas[vma as usize].tables),
            TableOwner::File(ino) => self.file_tables.get(&ino),
        };
        if t.is_some_and(|t| t.pte.get(pte_i).is_some_and(|&p| p != NIL)) {
            return Ok(());
        }
        let have_pmd = t.is_some_and(|t| t.pmd.get(pmd_i).is_some_and(|&p| p != NIL));
        if !have_pmd {
            let counted = self.pmd_pages_counted();
            let pfn = self.pgtable_alloc(cpu, may_sleep, counted)?;
            let t = self.tables_mut(owner);
            if t.pmd.len() <= pmd_i {
                t.pmd.resize(pmd_i + 1, NIL);
            }
            t.pmd[pmd_i] = pfn;
        }
        let pfn = self.pgtable_alloc(cpu, may_sleep, true)?;
        let t = self.tables_mut(owner);
        if t.pte.len() <= pte_i {
            t.pte.resize(pte_i + 1, NIL);
        }
        t.pte[pte_i] = pfn;
        Ok(())
    }

    /// One zeroed page-table page for `cpu` (pte_alloc_one / pmd_alloc_one), counted in
    /// NR_PAGETABLE when `counted` (the era's ctor).
    fn pgtable_alloc(&mut self, cpu: usize, may_sleep: bool, counted: bool) -> Result<Pfn, AllocFailure> {
        let gfp = Gfp::GFP_KERNEL.with(Gfp::ZERO);
        let pfn = if may_sleep { self.alloc_pages_or_sleep(gfp, 0, cpu)? } else { self.alloc_pages(gfp, 0, cpu).ok_or(AllocFailure::NoMem)? };
        self.cost_ns += self.costs.clear_page_ns * self.numa_factor_x10(cpu, pfn) / 10;
        if counted {
            self.mod_page_state(pfn, ZoneStat::NrPageTable, 1);
        }
        Ok(pfn)
    }

    /// free_pgtables at munmap or exit: every page-table page of the mapping goes back (hot,
    /// as the mmu_gather batch frees them), uncounted from NR_PAGETABLE first (the dtor).
    pub fn free_pgtables(&mut self, owner: TableOwner, cpu: usize) {
        let t = std::mem::take(self.tables_mut(owner));
        if let TableOwner::File(ino) = owner {
            self.file_tables.remove(&ino);
        }
        let counted = self.pmd_pages_counted();
        for (pfn, is_pte) in t.pmd.iter().map(|&p| (p, false)).chain(t.pte.iter().map(|&p| (p, true))) {
            if pfn == NIL {
                continue;
            }
            if is_pte || counted {
                self.mod_page_state(pfn, ZoneStat::NrPageTable, -1);
            }
            self.free_pages(pfn, 0, cpu);
        }
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
            Pte::None => {
                if self.pte_alloc(TableOwner::Anon(vma), index, cpu, false).is_err() {
                    return Fault::Oom;
                }
                self.do_anonymous_page(vma, index, cpu)
            }
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
