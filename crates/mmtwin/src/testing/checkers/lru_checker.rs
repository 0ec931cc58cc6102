//! The LRU lists against the page frames.

use super::walk;
use crate::mm::mm_types::{PageState, PG_LRU};
use crate::mm::mmzone::LruList;
use crate::mm::Mm;

/// Checks every lruvec list is well linked, holds only allocated PG_lru pages whose flags name
/// that list and whose zone or node owns that lruvec, and that no page claims PG_lru off-list.
pub fn check(mm: &Mm) -> Result<(), String> {
    let mut on_lru = std::collections::BTreeSet::new();
    for (v, vec) in mm.lruvecs.iter().enumerate() {
        for lru in LruList::ALL {
            let l = &vec.lists[lru as usize];
            for pfn in walk(mm, l.head, l.tail, l.len, &format!("lruvec {v} {lru:?}"))? {
                let p = &mm.pages[pfn as usize];
                if p.state() != PageState::Allocated || p.flags & PG_LRU == 0 {
                    return Err(format!("lruvec {v} {lru:?}: pfn {pfn} is {:?} with flags {:#x}", p.state(), p.flags));
                }
                if mm.page_lru(pfn) != lru || mm.page_lruvec(pfn) != v {
                    return Err(format!("pfn {pfn} is on lruvec {v} {lru:?} but belongs on lruvec {} {:?}", mm.page_lruvec(pfn), mm.page_lru(pfn)));
                }
                if !on_lru.insert(pfn) {
                    return Err(format!("pfn {pfn} is on two LRU lists"));
                }
            }
        }
    }
    // Visit every block head of every zone (the other frames of a block carry no state).
    for z in &mm.zones {
        let mut pfn = z.zone_start_pfn;
        while pfn < z.zone_end_pfn() {
            let p = &mm.pages[pfn as usize];
            let span = match p.state() {
                PageState::Hole | PageState::Reserved => 1,
                _ => 1u32 << p.order,
            };
            if p.state() == PageState::Allocated && p.flags & PG_LRU != 0 && !on_lru.contains(&pfn) {
                return Err(format!("pfn {pfn} has PG_lru but is on no LRU list"));
            }
            pfn += span;
        }
    }
    Ok(())
}
