//! The buddy and per-cpu lists against the page frames.

use super::walk;
use crate::mm::mm_types::PageState;
use crate::mm::mmzone::{pindex_to_order, MigrateType, NR_PCP_LISTS};
use crate::mm::policy::PcpPolicy;
use crate::mm::vmstat::Era;
use crate::mm::{Mm, Pfn};

const ON_BUDDY: u8 = 1;
const ON_PCP: u8 = 2;

/// Checks, for every zone: each list is well linked and its length is right; each free list
/// holds only free heads of its order and type; nr_free and NR_FREE_PAGES match the lists (and
/// the CPUs' unfolded NR_FREE_PAGES diffs add up to what the zone counts as unfolded); the
/// pcp counts match their lists; every present frame is covered by exactly one free block, pcp
/// block or allocated block (or is reserved); and no two free buddies of one order are unmerged.
pub fn check(mm: &Mm) -> Result<(), String> {
    let mut mark = vec![0u8; mm.pages.len()];
    for z in &mm.zones {
        let name = format!("node {} zone {}", z.node, z.zone_type.name());
        let mut free_pages = 0i64;
        for (order, area) in z.free_area.iter().enumerate() {
            let mut blocks = 0u64;
            for mt in MigrateType::ALL {
                let list = &area.free_list[mt as usize];
                let pfns = walk(mm, list.head, list.tail, list.len, &format!("{name} free_list[{order}][{}]", mt.name()))?;
                for pfn in pfns {
                    let p = &mm.pages[pfn as usize];
                    if p.state() != PageState::Buddy || p.order as usize != order || p.private != mt as u8 {
                        return Err(format!("{name}: pfn {pfn} on free_list[{order}][{}] has state {:?} order {} type {}", mt.name(), p.state(), p.order, p.private));
                    }
                    if pfn & ((1 << order) - 1) != 0 || !z.spans(pfn) || !z.spans(pfn + (1 << order) - 1) {
                        return Err(format!("{name}: free block {pfn} order {order} is misaligned or outside the zone"));
                    }
                    if mark[pfn as usize] != 0 {
                        return Err(format!("{name}: pfn {pfn} is on two lists"));
                    }
                    mark[pfn as usize] = ON_BUDDY;
                    blocks += 1;
                    free_pages += 1 << order;
                }
            }
            if blocks != area.nr_free {
                return Err(format!("{name}: nr_free[{order}] is {} but the lists hold {blocks}", area.nr_free));
            }
        }
        if free_pages != z.nr_free_pages {
            return Err(format!("{name}: NR_FREE_PAGES is {} but the free lists hold {free_pages}", z.nr_free_pages));
        }
        let diffs: i64 = z.free_diff.iter().map(|&d| i64::from(d)).sum();
        if diffs != z.free_diff_sum {
            return Err(format!("{name}: the CPUs' NR_FREE_PAGES diffs add up to {diffs}, but the zone counts {} unfolded", z.free_diff_sum));
        }
        for (cpu, pcp) in z.pcp.iter().enumerate() {
            let mut count = 0u32;
            for (pi, list) in pcp.lists.iter().enumerate().take(NR_PCP_LISTS) {
                let order = if matches!(mm.policy.pcp, PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList) { 0 } else { pindex_to_order(pi, mm.pageblock_order) };
                for pfn in walk(mm, list.head, list.tail, list.len, &format!("{name} cpu {cpu} pcp list {pi}"))? {
                    let p = &mm.pages[pfn as usize];
                    if p.state() != PageState::Pcp || p.order as usize != order || !z.spans(pfn) {
                        return Err(format!("{name} cpu {cpu}: pfn {pfn} on pcp list {pi} has state {:?} order {}", p.state(), p.order));
                    }
                    if mark[pfn as usize] != 0 {
                        return Err(format!("{name}: pfn {pfn} is on two lists"));
                    }
                    mark[pfn as usize] = ON_PCP;
                    count += 1 << order;
                }
            }
            if count != pcp.count {
                return Err(format!("{name} cpu {cpu}: pcp count is {} but its lists hold {count}", pcp.count));
            }
        }
        // Linear walk: each present frame belongs to exactly one block.
        let (start, end) = (z.zone_start_pfn, z.zone_end_pfn());
        let mut pfn = start;
        while pfn < end {
            let p = &mm.pages[pfn as usize];
            let span: Pfn = match p.state() {
                PageState::Hole | PageState::Reserved => {
                    if mark[pfn as usize] != 0 {
                        return Err(format!("{name}: reserved pfn {pfn} is on a list"));
                    }
                    1
                }
                PageState::Buddy | PageState::Pcp => {
                    let want = if p.state() == PageState::Buddy { ON_BUDDY } else { ON_PCP };
                    if mark[pfn as usize] != want {
                        return Err(format!("{name}: pfn {pfn} says {:?} but is not on such a list", p.state()));
                    }
                    1 << p.order
                }
                PageState::Allocated => 1 << p.order,
            };
            if pfn + span > end {
                return Err(format!("{name}: block at {pfn} of {span} pages runs past the zone end {end}"));
            }
            if p.state() == PageState::Buddy {
                let order = p.order as usize;
                if order < mm.max_order {
                    let buddy = pfn ^ (1 << order);
                    if z.spans(buddy) {
                        let b = &mm.pages[buddy as usize];
                        let (pm, bm) = (mm.get_pageblock_migratetype(pfn), mm.get_pageblock_migratetype(buddy));
                        let barrier = mm.era == Era::Linux6 && order >= mm.pageblock_order && pm != bm && (!pm.is_pcptype() || !bm.is_pcptype());
                        if b.state() == PageState::Buddy && b.order as usize == order && mark[buddy as usize] == ON_BUDDY && !barrier {
                            return Err(format!("{name}: free buddies {pfn} and {buddy} of order {order} were not merged"));
                        }
                    }
                }
            }
            // Nothing inside a block may be on a list.
            for q in pfn + 1..pfn + span {
                if mark[q as usize] != 0 {
                    return Err(format!("{name}: pfn {q} is on a list but lies inside the block at {pfn}"));
                }
            }
            pfn += span;
        }
    }
    Ok(())
}
