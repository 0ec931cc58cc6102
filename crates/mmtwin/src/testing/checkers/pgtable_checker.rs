//! Page-table pages against the mappings that own them and NR_PAGETABLE.

use std::collections::BTreeSet;

use crate::mm::memory::{Pte, TableOwner, PMD_SPAN_PAGES, PTRS_PER_PTE};
use crate::mm::mm_types::PageState;
use crate::mm::mmzone::ZoneStat;
use crate::mm::Mm;

/// Checks that every page-table page (PMD, PTE, deposited with a huge page) is an allocated
/// order-0 page with no flags (off the LRU, not slab), held by one table slot only; that an
/// anonymous region has a PTE page and the PMD page above it wherever it has an entry that is
/// not empty; that each mapped huge page (NR_ANON_TRANSPARENT_HUGEPAGES) has deposited one
/// PTE page; and that each zone's NR_PAGETABLE counts its PTE and deposited pages, and in 6.x
/// its PMD pages too.
pub fn check(mm: &Mm) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let mut per_zone = vec![0i64; mm.zones.len()];
    let pmd_counted = mm.pmd_pages_counted();
    for (owner, t) in &mm.page_tables {
        for (level, pages, counted) in [("PMD", &t.pmd, pmd_counted), ("PTE", &t.pte, true), ("deposited PTE", &t.deposit, true)] {
            for (&key, &pfn) in pages {
                let p = &mm.pages[pfn as usize];
                if p.state() != PageState::Allocated || p.order != 0 || p.flags != 0 {
                    return Err(format!("{owner:?}: {level} page {key} is pfn {pfn}, which is {:?} of order {} with flags {:#x}", p.state(), p.order, p.flags));
                }
                if !seen.insert(pfn) {
                    return Err(format!("{owner:?}: {level} page {key} is pfn {pfn}, which another table slot also holds"));
                }
                if counted {
                    per_zone[mm.page_zone(pfn)] += 1;
                }
            }
        }
    }
    for (v, vma) in mm.anon_vmas.iter().enumerate() {
        let t = mm.page_tables.get(&TableOwner::Anon(v as u32));
        for (i, pte) in vma.ptes.iter().enumerate() {
            let i = i as u64;
            if *pte != Pte::None && !t.is_some_and(|t| t.pte.contains_key(&(i / PTRS_PER_PTE)) && t.pmd.contains_key(&(i / PMD_SPAN_PAGES))) {
                return Err(format!("anon region {v} has an entry for page {i} but no page table holding it"));
            }
        }
    }
    // Every huge page mapped has deposited one PTE page, and nothing else has.
    let deposits: usize = mm.page_tables.values().map(|t| t.deposit.len()).sum();
    let thps = mm.zones.iter().map(|z| z.vm_stat[ZoneStat::NrAnonThps as usize]).sum::<i64>();
    if deposits as i64 != thps {
        return Err(format!("{deposits} PTE pages are deposited but NR_ANON_TRANSPARENT_HUGEPAGES is {thps}"));
    }
    for (zid, z) in mm.zones.iter().enumerate() {
        let counted = z.vm_stat[ZoneStat::NrPageTable as usize];
        if counted != per_zone[zid] {
            return Err(format!("zone {zid}: NR_PAGETABLE is {counted} but the mappings hold {} counted page-table pages there", per_zone[zid]));
        }
    }
    Ok(())
}
