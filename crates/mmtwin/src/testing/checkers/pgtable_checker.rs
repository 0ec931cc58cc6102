//! Page-table pages against the mappings that own them and NR_PAGETABLE.

use std::collections::BTreeSet;

use crate::mm::memory::{PageTables, PMD_SPAN_PAGES, PTRS_PER_PTE};
use crate::mm::mm_types::{PageState, NIL};
use crate::mm::mmzone::ZoneStat;
use crate::mm::vmstat::Era;
use crate::mm::Mm;

/// Checks that every page-table page of every mapping is an allocated order-0 page with no
/// flags (off the LRU, not slab), owned by one table slot only; that an anonymous region has
/// a PTE page (and the PMD page above it) wherever it has an entry that is not empty; and that
/// each zone's NR_PAGETABLE counts its PTE pages, and in 6.x its PMD pages too.
pub fn check(mm: &Mm) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let mut per_zone = vec![0i64; mm.zones.len()];
    let mut visit = |what: String, t: &PageTables| -> Result<(), String> {
        for (level, pages, counted) in [("PMD", &t.pmd, mm.era == Era::Linux6), ("PTE", &t.pte, true)] {
            for (i, &pfn) in pages.iter().enumerate() {
                if pfn == NIL {
                    continue;
                }
                let p = &mm.pages[pfn as usize];
                if p.state() != PageState::Allocated || p.order != 0 || p.flags != 0 {
                    return Err(format!("{what}: {level} page {i} is pfn {pfn}, which is {:?} of order {} with flags {:#x}", p.state(), p.order, p.flags));
                }
                if !seen.insert(pfn) {
                    return Err(format!("{what}: {level} page {i} is pfn {pfn}, which another table slot also holds"));
                }
                if counted {
                    per_zone[mm.page_zone(pfn)] += 1;
                }
            }
        }
        Ok(())
    };
    for (v, vma) in mm.anon_vmas.iter().enumerate() {
        visit(format!("anon region {v}"), &vma.tables)?;
        for (i, pte) in vma.ptes.iter().enumerate() {
            let (pmd_i, pte_i) = (i / PMD_SPAN_PAGES as usize, i / PTRS_PER_PTE as usize);
            let has = |v: &Vec<u32>, j: usize| v.get(j).is_some_and(|&p| p != NIL);
            if *pte != crate::mm::memory::Pte::None && !(has(&vma.tables.pte, pte_i) && has(&vma.tables.pmd, pmd_i)) {
                return Err(format!("anon region {v} has an entry for page {i} but no page table holding it"));
            }
        }
    }
    for (ino, t) in &mm.file_tables {
        visit(format!("the mapping of inode {ino}"), t)?;
    }
    for (zid, z) in mm.zones.iter().enumerate() {
        let counted = z.vm_stat[ZoneStat::NrPageTable as usize];
        if counted != per_zone[zid] {
            return Err(format!("zone {zid}: NR_PAGETABLE is {counted} but the mappings hold {} counted page-table pages there", per_zone[zid]));
        }
    }
    Ok(())
}
