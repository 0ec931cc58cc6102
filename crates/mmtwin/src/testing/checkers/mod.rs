//! Invariant checkers over the whole memory manager, run after every event in debug builds.
//!
//! * `buddy_checker`     — every frame is in exactly one place; free counts equal list lengths;
//!                         no two free buddies are left unmerged; lists are well linked.
//! * `lru_checker`       — every LRU page is allocated, flagged PG_lru and on the list and
//!                         lruvec its flags and zone name; no PG_lru page is off the lists.
//! * `watermark_checker` — watermarks are ordered and fit within the zone's managed pages.
//! * `swap_checker`      — anon page tables, the swap cache and the swap map agree.
//! * `pgtable_checker`   — page-table pages are allocated, owned once, under every anonymous
//!                         entry, and counted in NR_PAGETABLE.
//! * `slab_checker`      — slab objects in use are the objects held (inodes, dentries, buffer
//!                         heads, tree nodes); partial lists, slab counts and NR_SLAB_* agree;
//!                         page-cache trees count their pages.
//! * `fs_checker`        — a directory's i_mutex owner is not on its wait list, nor any
//!                         waiter twice.

pub mod buddy_checker;
pub mod fs_checker;
pub mod lru_checker;
pub mod pgtable_checker;
pub mod radix_tree_checker;
pub mod slab_checker;
pub mod swap_checker;
pub mod watermark_checker;

use crate::mm::mm_types::NIL;
use crate::mm::{Mm, Pfn};

/// Runs every checker; the first violation is returned as a message.
pub fn check_all(mm: &Mm) -> Result<(), String> {
    buddy_checker::check(mm)?;
    lru_checker::check(mm)?;
    watermark_checker::check(mm)?;
    swap_checker::check(mm)?;
    pgtable_checker::check(mm)?;
    slab_checker::check(mm)?;
    radix_tree_checker::check(mm)?;
    fs_checker::check(mm)?;
    Ok(())
}

/// Walks a list from head to tail checking the back links and the length.
pub(crate) fn walk(mm: &Mm, head: Pfn, tail: Pfn, len: u32, what: &str) -> Result<Vec<Pfn>, String> {
    let mut out = Vec::new();
    let mut prev = NIL;
    let mut cur = head;
    while cur != NIL {
        if out.len() > len as usize {
            return Err(format!("{what}: longer than its length {len} (a cycle?)"));
        }
        if mm.pages[cur as usize].prev != prev {
            return Err(format!("{what}: pfn {cur}'s prev link is {} not {prev}", mm.pages[cur as usize].prev));
        }
        out.push(cur);
        prev = cur;
        cur = mm.pages[cur as usize].next;
    }
    if prev != tail || out.len() != len as usize {
        return Err(format!("{what}: walked {} pages ending at {prev}, but the head says {len} ending at {tail}", out.len()));
    }
    Ok(out)
}
