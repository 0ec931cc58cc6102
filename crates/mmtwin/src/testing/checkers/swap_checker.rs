//! Anonymous page tables, the swap cache and the swap map against each other.

use crate::mm::memory::{Pte, PAGE_MAPPING_ANON};
use crate::mm::mm_types::{PageState, PG_MAPPED, PG_SWAPBACKED, PG_SWAPCACHE};
use crate::mm::swapfile::SWAP_HAS_CACHE;
use crate::mm::Mm;

/// Checks that every present anonymous entry maps an allocated, mapped, swap-backed page that
/// points back at it; that each slot's map count equals the swap entries holding it and its
/// SWAP_HAS_CACHE bit the presence of a swap cache page; that the cache and the pages'
/// PG_swapcache agree; and that `inuse_pages` counts the slots in use.
pub fn check(mm: &Mm) -> Result<(), String> {
    let mut refs = vec![0u32; mm.swap.as_ref().map_or(0, |s| s.swap_map.len())];
    for (v, vma) in mm.anon_vmas.iter().enumerate() {
        for (i, pte) in vma.ptes.iter().enumerate() {
            match *pte {
                Pte::None => {}
                Pte::Present(pfn) => {
                    let p = &mm.pages[pfn as usize];
                    if p.state() != PageState::Allocated || p.flags & (PG_MAPPED | PG_SWAPBACKED) != PG_MAPPED | PG_SWAPBACKED {
                        return Err(format!("anon region {v} page {i} maps pfn {pfn}, which is {:?} with flags {:#x}", p.state(), p.flags));
                    }
                    if p.mapping != PAGE_MAPPING_ANON | v as u32 || p.index != i as u32 {
                        return Err(format!("anon region {v} page {i} maps pfn {pfn}, whose rmap says {:#x}/{}", p.mapping, p.index));
                    }
                }
                Pte::Swap(slot) => match refs.get_mut(slot as usize) {
                    Some(r) => *r += 1,
                    None => return Err(format!("anon region {v} page {i} holds swap slot {slot}, beyond the swap area")),
                },
            }
        }
    }
    let Some(si) = &mm.swap else { return Ok(()) };
    let mut inuse = 0;
    for (slot, &e) in si.swap_map.iter().enumerate().skip(1) {
        if e != 0 {
            inuse += 1;
        }
        if u32::from(e & !SWAP_HAS_CACHE) != refs[slot] {
            return Err(format!("swap slot {slot} counts {} references but {} entries hold it", e & !SWAP_HAS_CACHE, refs[slot]));
        }
        let cached = si.cache.get(&(slot as u32));
        if (e & SWAP_HAS_CACHE != 0) != cached.is_some() {
            return Err(format!("swap slot {slot}: SWAP_HAS_CACHE is {} but the cache {} a page", e & SWAP_HAS_CACHE != 0, if cached.is_some() { "has" } else { "has no" }));
        }
        if let Some(&pfn) = cached {
            let p = &mm.pages[pfn as usize];
            if p.state() != PageState::Allocated || p.flags & PG_SWAPCACHE == 0 || si.slot_of.get(&pfn) != Some(&(slot as u32)) {
                return Err(format!("swap slot {slot}'s cache page {pfn} is {:?} with flags {:#x}, slot_of {:?}", p.state(), p.flags, si.slot_of.get(&pfn)));
            }
        }
    }
    if inuse != si.inuse_pages {
        return Err(format!("{inuse} swap slots are in use but inuse_pages says {}", si.inuse_pages));
    }
    if si.slot_of.len() != si.cache.len() {
        return Err(format!("the swap cache holds {} slots but {} pages claim one", si.cache.len(), si.slot_of.len()));
    }
    Ok(())
}
