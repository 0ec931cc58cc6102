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
//! entries are left in them. An anonymous region or a file mapping is taken to start on a 1 GiB
//! boundary, so page i of it sits under PTE page i / 512 and PMD page i / 262144; a real
//! mapping's start needs at most one more page of each. A task with an address space of its
//! own (anon-churn) uses its virtual page numbers, and its munmap frees only the tables no
//! other mapping touches. A transparent huge page's mapping deposits a PTE page instead of
//! using one (pgtable_trans_huge_deposit). The PUD and PGD pages belong to process creation,
//! which is not modelled, and every machine gets x86_64's layout (s390's 2 KiB tables are not
//! modelled).

use std::collections::BTreeMap;

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
}

/// Pages one PTE page maps (PTRS_PER_PTE on x86_64: 2 MiB).
pub const PTRS_PER_PTE: u64 = 512;
/// Pages one PMD page maps (PTRS_PER_PMD × PTRS_PER_PTE: 1 GiB).
pub const PMD_SPAN_PAGES: u64 = 512 * PTRS_PER_PTE;

/// The page-table pages of one address space (or of the one mapping a region or file stands
/// for): PTE pages by the 2 MiB span they map, PMD pages by 1 GiB span, and the PTE page a
/// transparent huge page's mapping deposits (pgtable_trans_huge_deposit), by the huge page's
/// first virtual page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageTables {
    pub pte: BTreeMap<u64, Pfn>,
    pub pmd: BTreeMap<u64, Pfn>,
    pub deposit: BTreeMap<u64, Pfn>,
}

impl PageTables {
    /// Every page-table page: PMD pages, PTE pages, deposited PTE pages.
    pub fn pages(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.pmd.values().chain(self.pte.values()).chain(self.deposit.values()).copied()
    }
}

/// Whose page tables: an anonymous region, a file's shared mapping (one mapper per file; both
/// taken to start on a 1 GiB boundary, so their page i is at virtual page i), or a task's
/// whole address space (virtual page numbers are its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TableOwner {
    Anon(u32),
    File(Ino),
    Task(u32),
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

    /// Whether NR_PAGETABLE counts PMD pages (6.x's pagetable_pmd_ctor; not 3.x).
    pub fn pmd_pages_counted(&self) -> bool {
        self.era == Era::Linux6
    }

    /// pmd_alloc and pte_alloc for virtual page `va` of `owner` (handle_mm_fault before the
    /// fault itself): the PMD page of its 1 GiB span and the PTE page of its 2 MiB span, each
    /// allocated if missing. `may_sleep`: the caller can stop for the allocator's wait (the
    /// file fault), so a stalled allocation ends the fault and it is retried after the sleep.
    pub fn pte_alloc(&mut self, owner: TableOwner, va: u64, cpu: usize, may_sleep: bool) -> Result<(), AllocFailure> {
        let span = va / PTRS_PER_PTE;
        if self.last_pte == Some((owner, span)) {
            return Ok(());
        }
        let t = self.page_tables.get(&owner);
        if !t.is_some_and(|t| t.pte.contains_key(&span)) {
            self.pmd_alloc(owner, va, cpu, may_sleep)?;
            let pfn = self.pgtable_alloc(cpu, may_sleep, true)?;
            self.page_tables.entry(owner).or_default().pte.insert(span, pfn);
        }
        self.last_pte = Some((owner, span));
        Ok(())
    }

    /// pmd_alloc for virtual page `va` of `owner`: the PMD page of its 1 GiB span if missing.
    pub fn pmd_alloc(&mut self, owner: TableOwner, va: u64, cpu: usize, may_sleep: bool) -> Result<(), AllocFailure> {
        let span = va / PMD_SPAN_PAGES;
        if self.page_tables.get(&owner).is_some_and(|t| t.pmd.contains_key(&span)) {
            return Ok(());
        }
        let counted = self.pmd_pages_counted();
        let pfn = self.pgtable_alloc(cpu, may_sleep, counted)?;
        self.page_tables.entry(owner).or_default().pmd.insert(span, pfn);
        Ok(())
    }

    /// The PTE page a huge page's mapping at virtual page `va` (2 MiB aligned) deposits
    /// (3.0 __do_huge_pmd_anonymous_page: pte_alloc_one after the huge page is allocated;
    /// 6.x the same): a counted page-table page, kept until the huge mapping goes.
    pub fn thp_deposit(&mut self, owner: TableOwner, va: u64, cpu: usize) -> Result<(), AllocFailure> {
        let pfn = self.pgtable_alloc(cpu, false, true)?;
        let old = self.page_tables.entry(owner).or_default().deposit.insert(va, pfn);
        debug_assert!(old.is_none(), "two huge pages deposited at virtual page {va}");
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

    /// Frees one page-table page, uncounted from NR_PAGETABLE first when `counted` (the dtor);
    /// hot, as the mmu_gather batch frees them.
    fn pgtable_free(&mut self, pfn: Pfn, counted: bool, cpu: usize) {
        if counted {
            self.mod_page_state(pfn, ZoneStat::NrPageTable, -1);
        }
        self.free_pages(pfn, 0, cpu);
    }

    /// free_pgtables for part of an address space at munmap: the PTE pages of the 2 MiB spans
    /// and the PMD pages of the 1 GiB spans of `[start, end)` that `spans_in_use` says no
    /// mapping touches any more, and the pages deposited for huge pages there; PTE pages before
    /// the PMD pages above them, as free_pgd_range frees them bottom up (the kernel decides
    /// which from the neighbouring vmas, its floor and ceiling).
    pub fn free_pgtables_range(&mut self, owner: TableOwner, start: u64, end: u64, cpu: usize, spans_in_use: impl Fn(u64, u64) -> bool) {
        let pmd_counted = self.pmd_pages_counted();
        self.last_pte = None;
        let Some(t) = self.page_tables.get_mut(&owner) else { return };
        let unused = |span: u64, pages: u64| !spans_in_use(span * pages, (span + 1) * pages);
        let deposits: Vec<u64> = t.deposit.range(start..end).map(|(&k, _)| k).collect();
        let ptes: Vec<u64> = t.pte.range(start / PTRS_PER_PTE..end.div_ceil(PTRS_PER_PTE)).map(|(&k, _)| k).filter(|&k| unused(k, PTRS_PER_PTE)).collect();
        let pmds: Vec<u64> = t.pmd.range(start / PMD_SPAN_PAGES..end.div_ceil(PMD_SPAN_PAGES)).map(|(&k, _)| k).filter(|&k| unused(k, PMD_SPAN_PAGES)).collect();
        let mut freed: Vec<(Pfn, bool)> = Vec::new();
        freed.extend(deposits.iter().map(|k| (t.deposit.remove(k).unwrap(), true)));
        freed.extend(ptes.iter().map(|k| (t.pte.remove(k).unwrap(), true)));
        freed.extend(pmds.iter().map(|k| (t.pmd.remove(k).unwrap(), pmd_counted)));
        if t.pte.is_empty() && t.pmd.is_empty() && t.deposit.is_empty() {
            self.page_tables.remove(&owner);
        }
        for (pfn, counted) in freed {
            self.pgtable_free(pfn, counted, cpu);
        }
    }

    /// free_pgtables at munmap or exit of everything `owner` maps: every page-table page goes.
    pub fn free_pgtables(&mut self, owner: TableOwner, cpu: usize) {
        self.free_pgtables_range(owner, 0, u64::MAX, cpu, |_, _| false);
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
                if self.pte_alloc(TableOwner::Anon(vma), u64::from(index), cpu, false).is_err() {
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
