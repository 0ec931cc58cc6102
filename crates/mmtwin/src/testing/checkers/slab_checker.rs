//! Slab caches against the objects the model holds in them (inodes, dentries, buffer heads,
//! page-cache tree nodes).

use crate::mm::mm_types::{PageState, PG_PRIVATE, PG_SLAB};
use crate::mm::mmzone::ZoneStat;
use crate::mm::slab::{BH_CACHE, RADIX_CACHE};
use crate::mm::{Mm, Pfn, NIL};

/// Checks that every slab's objects in use are exactly the objects that point at it (inodes,
/// dentries, buffer heads, tree nodes, preloaded nodes), that a cache's partial lists hold its
/// slabs with a free object and nothing else, and that its counts and the zones' NR_SLAB_*
/// agree with its slabs, and that the pages with buffers are the pages whose tree slot holds
/// a buffer head.
pub fn check(mm: &Mm) -> Result<(), String> {
    let mut refs = vec![0u32; mm.pages.len()];
    let mut add = |cache: usize, slab: Pfn, what: &str| -> Result<(), String> {
        let p = &mm.pages[slab as usize];
        if p.flags & PG_SLAB == 0 || p.mapping as usize != cache + 1 || p.state() != PageState::Allocated {
            return Err(format!("{what} of cache {cache} lives in pfn {slab}, which is no slab of it (mapping {}, flags {:#x})", p.mapping, p.flags));
        }
        refs[slab as usize] += 1;
        Ok(())
    };
    let bdev_inos: Vec<u32> = mm.sbs.iter().filter_map(|sb| sb.bdev_ino).collect();
    for (ino, inode) in mm.inodes.iter().enumerate() {
        let Some(i) = inode else { continue };
        if !bdev_inos.contains(&(ino as u32)) {
            add(mm.sbs[i.sb].inode_cache, i.slab, "an inode")?;
        }
        if let Some(d) = &i.dentry {
            add(mm.sbs[i.sb].dentry_cache, d.slab, "a dentry")?;
        }
    }
    // Buffer heads and tree nodes, from the trees (radix_tree_checker checks their shape).
    let mut buffer_heads = 0u64;
    for space in &mm.mappings {
        let mut held: Vec<(usize, Pfn, &str)> = Vec::new();
        mm.radix_nodes.for_each_node(&space.i_pages, &mut |id, level, _| {
            let n = mm.radix_nodes.node(id);
            if n.slab != NIL {
                held.push((RADIX_CACHE, n.slab, "a tree node"));
            }
            if level == 1 {
                let mut bits = n.present;
                while bits != 0 {
                    let o = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if n.private[o] != NIL {
                        held.push((BH_CACHE, n.private[o], "a buffer head"));
                        buffer_heads += 1;
                    }
                }
            }
        });
        for (cache, slab, what) in held {
            add(cache, slab, what)?;
        }
    }
    for (cpu, pool) in mm.radix_preload.iter().enumerate() {
        for &slab in pool {
            add(RADIX_CACHE, slab, &format!("a node preloaded on CPU {cpu}"))?;
        }
    }
    // Only the zones' spans hold frames (holes and the gap below a node's start do not).
    let spans: Vec<std::ops::Range<usize>> = mm.zones.iter().filter(|z| z.spanned_pages > 0).map(|z| z.zone_start_pfn as usize..z.zone_end_pfn() as usize).collect();
    let mut slab_pages = vec![[0i64; 2]; mm.zones.len()];
    let mut per_cache = vec![(0u64, 0u64); mm.slab_caches.len()];
    let mut with_buffers = 0u64;
    for pfn in spans.iter().cloned().flatten() {
        let p = &mm.pages[pfn];
        if p.flags & PG_SLAB == 0 || p.state() != PageState::Allocated {
            with_buffers += u64::from(p.flags & PG_PRIVATE != 0 && p.state() == PageState::Allocated);
            continue;
        }
        let pfn = pfn as Pfn;
        let cache = p.mapping as usize - 1;
        let c = &mm.slab_caches[cache];
        let (inuse, cap, held) = (p.index, mm.slab_objects(cache, pfn), refs[pfn as usize]);
        if held != inuse || inuse > cap {
            return Err(format!("slab {pfn} of {} counts {inuse} of {cap} objects in use, {held} are held", c.name));
        }
        let nid = mm.page_to_nid(pfn);
        if c.is_partial(nid, pfn) != (inuse < cap) {
            return Err(format!("slab {pfn} of {} with {inuse} of {cap} objects is{} on node {nid}'s partial list", c.name, if inuse < cap { " not" } else { "" }));
        }
        slab_pages[p.zone as usize][usize::from(c.reclaimable)] += 1 << p.order;
        per_cache[cache].0 += 1;
        per_cache[cache].1 += u64::from(inuse);
    }
    for (id, c) in mm.slab_caches.iter().enumerate() {
        if (c.nr_slabs, c.active_objs) != per_cache[id] {
            return Err(format!("{} counts {} slabs and {} objects, its pages {:?}", c.name, c.nr_slabs, c.active_objs, per_cache[id]));
        }
        for nid in 0..mm.nodes.len() {
            if let Some(s) = c.partial_slabs(nid).find(|&s| mm.pages[s as usize].flags & PG_SLAB == 0 || mm.pages[s as usize].mapping as usize != id + 1) {
                return Err(format!("{}'s partial list of node {nid} holds pfn {s}, which is not its slab", c.name));
            }
        }
    }
    for (zid, z) in mm.zones.iter().enumerate() {
        let (un, re) = (z.page_state(ZoneStat::NrSlabUnreclaimable) as i64, z.page_state(ZoneStat::NrSlabReclaimable) as i64);
        if [un, re] != slab_pages[zid] {
            return Err(format!("zone {zid} counts {re} reclaimable and {un} unreclaimable slab pages, its slabs {:?}", slab_pages[zid]));
        }
    }
    if with_buffers != buffer_heads {
        return Err(format!("{with_buffers} pages have PG_private (buffers) but the page-cache trees hold {buffer_heads} buffer heads"));
    }
    Ok(())
}
