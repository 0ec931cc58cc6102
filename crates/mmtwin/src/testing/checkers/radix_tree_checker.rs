//! The page-cache trees against the pages they hold: structure, counts, tags and the private
//! word of each page.

use crate::mm::mm_types::{PageState, PG_BUF_CLEAN, PG_BUF_LOCKED, PG_DIRTY, PG_PRIVATE, PG_SLAB, PG_WRITEBACK};
use crate::mm::radix_tree::{PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_WRITEBACK, RADIX_TREE_MAX_TAGS};
use crate::mm::{Mm, NIL};

/// Checks every file's tree: each node holds something and tags no empty slot; a node's
/// tag bit for a child is set exactly when the child carries the tag; each leaf slot holds a
/// page of that file at that offset whose dirty and writeback tags match PG_dirty and
/// PG_writeback and whose private word is set exactly when it has PG_private; the leaves count
/// the file's nrpages, the height is 0 exactly when the file is empty, and the trees use every
/// node of the arena that is not free. (The slab checker matches the private words, buffer
/// heads, with the pages that have PG_private.)
pub fn check(mm: &Mm) -> Result<(), String> {
    let nodes = &mm.radix_nodes;
    let mut reached = 0usize;
    for (m, space) in mm.mappings.iter().enumerate() {
        let mapping = m as u32 + 1;
        let root = &space.i_pages;
        let mut leaves = 0u64;
        let mut err: Option<String> = None;
        nodes.for_each_node(root, &mut |id, level, base| {
            if err.is_some() {
                return;
            }
            reached += 1;
            let n = nodes.node(id);
            if n.present == 0 {
                err = Some(format!("mapping {mapping}: tree node {id} (level {level}, offset {base}) holds nothing"));
                return;
            }
            for t in n.tags {
                if t & !n.present != 0 {
                    err = Some(format!("mapping {mapping}: node {id} tags empty slots ({t:#x}, present {:#x})", n.present));
                    return;
                }
            }
            let mut bits = n.present;
            while bits != 0 {
                let o = bits.trailing_zeros();
                bits &= bits - 1;
                let bit = 1u64 << o;
                let slot = n.slots[o as usize];
                if level > 1 {
                    let c = nodes.node(slot);
                    for t in 0..RADIX_TREE_MAX_TAGS {
                        if (n.tags[t] & bit != 0) != (c.tags[t] != 0) {
                            err = Some(format!("mapping {mapping}: node {id} slot {o}: tag {t} is {} but its child's tags are {:#x}", n.tags[t] & bit != 0, c.tags[t]));
                        }
                    }
                    continue;
                }
                leaves += 1;
                let index = base | u64::from(o);
                let p = &mm.pages[slot as usize];
                if p.state() != PageState::Allocated || p.mapping != mapping || u64::from(p.index) != index || p.flags & PG_SLAB != 0 {
                    err = Some(format!("mapping {mapping} offset {index} holds pfn {slot}: {:?}, mapping {} offset {}, flags {:#x}", p.state(), p.mapping, p.index, p.flags));
                    continue;
                }
                for (tag, flag, name) in [(PAGECACHE_TAG_DIRTY, PG_DIRTY, "dirty"), (PAGECACHE_TAG_WRITEBACK, PG_WRITEBACK, "writeback")] {
                    if (n.tags[tag] & bit != 0) != (p.flags & flag != 0) {
                        err = Some(format!("mapping {mapping} offset {index} (pfn {slot}): the {name} tag is {} but the page's flags are {:#x}", n.tags[tag] & bit != 0, p.flags));
                    }
                }
                // Buffers the journal's commit wrote or is writing belong to a dirty page that
                // is not under page writeback.
                if p.flags & (PG_BUF_CLEAN | PG_BUF_LOCKED) != 0 && (p.flags & PG_DIRTY == 0 || p.flags & PG_WRITEBACK != 0) {
                    err = Some(format!("mapping {mapping} offset {index} (pfn {slot}): buffers written by the journal on a page with flags {:#x}", p.flags));
                }
                if (n.private[o as usize] != NIL) != (p.flags & PG_PRIVATE != 0) {
                    err = Some(format!("mapping {mapping} offset {index} (pfn {slot}): private word {} but flags {:#x}", n.private[o as usize], p.flags));
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if leaves != space.nrpages() || (space.nrpages() > 0) != (root.height > 0) {
            return Err(format!("mapping {mapping}: {} pages, height {}, but its leaves count {leaves}", space.nrpages(), root.height));
        }
    }
    if reached != nodes.in_use() {
        return Err(format!("the trees reach {reached} nodes but {} are in use", nodes.in_use()));
    }
    Ok(())
}
