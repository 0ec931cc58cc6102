//! Slab caches (mm/slub.c, reduced to what the page allocator and reclaim see): objects packed
//! into slabs of 2^order pages taken from the page allocator, NR_SLAB_RECLAIMABLE /
//! NR_SLAB_UNRECLAIMABLE per zone, and slabs returned when they empty.
//!
//! * Slab order (calculate_order). SLUB sizes a cache's slabs so that each holds at least
//!   `4 × (fls(nr_cpus) + 1)` objects with little waste, up to order 3
//!   (PAGE_ALLOC_COSTLY_ORDER): a 768-byte ext3 inode on 24 CPUs gets order-3 slabs of 42
//!   objects, a 104-byte buffer_head order 0. 3.x backs off by accepting more waste (1/16,
//!   1/8, 1/4) and then fewer objects; 6.x starts from the order the minimum objects need and
//!   only accepts more waste (1/16 down to 1/2).
//! * allocate_slab. A new slab is first tried at its order with __GFP_NORETRY | __GFP_NOWARN,
//!   and on failure at the smallest order one object fits in (s->min, ORDER_FALLBACK). Whether
//!   that first try may reclaim is the policy `slab_high_order`: 2.6.x–3.x let it wake kswapd
//!   and enter direct reclaim (once: __GFP_NORETRY); 6.x strips __GFP_RECLAIM from it, so a
//!   fragmented zone just yields smaller slabs. The slab's pages carry the caller's reclaim
//!   and constraint bits (GFP_RECLAIM_MASK, GFP_CONSTRAINT_MASK) plus the cache's own
//!   (__GFP_RECLAIMABLE for SLAB_RECLAIM_ACCOUNT caches), never the caller's zone or
//!   mobility bits.
//! * Partial slabs (get_partial). An object comes from a slab with a free object on the
//!   allocating CPU's node, else on another node, nearest first (get_any_partial, which the
//!   kernel takes for all but 24 of 1,024 attempts), else from a new slab. SLUB's per-cpu
//!   active slab is not modelled: the lowest-numbered partial slab is used.
//! * Emptied slabs (__slab_free, discard_slab). A slab whose last object is freed stays on its
//!   node's partial list while the node has no more than min_partial of them (3.x
//!   `ilog2(size)`, 6.x `ilog2(size) / 2`, within 5..10); otherwise its pages go back to the
//!   allocator, and a slab freed during reclaim counts toward `reclaim_state->reclaimed_slab`.
//!
//! A slab's first page is `PG_SLAB` with `mapping` = cache id + 1 and `index` = objects in use;
//! its order is the block's buddy order.

use std::collections::BTreeSet;

use super::gfp::Gfp;
use super::mm_types::PG_SLAB;
use super::mmzone::ZoneStat;
use super::page_alloc::Mm;
use super::vmstat::Era;
use super::{Pfn, PAGE_ALLOC_COSTLY_ORDER, PAGE_SIZE};

/// A cache id (index into `Mm::slab_caches`).
pub type CacheId = usize;

/// The caches made at boot (`Mm::mount_root`), by id: the root file system's inodes, dentries,
/// buffer heads, page-cache tree nodes.
pub const INODE_CACHE: CacheId = 0;
pub const DENTRY_CACHE: CacheId = 1;
pub const BH_CACHE: CacheId = 2;
pub const RADIX_CACHE: CacheId = 3;

/// sizeof(struct dentry), x86_64, 2.6.32–6.x.
pub const DENTRY_SIZE: u32 = 192;
/// sizeof(struct buffer_head), x86_64 (104 bytes from 2.6.2x to 6.x).
pub const BUFFER_HEAD_SIZE: u32 = 104;
/// sizeof(struct radix_tree_node) with 64 slots and three tags (3.x); 6.x's xa_node is 576.
pub const RADIX_TREE_NODE_SIZE_3X: u32 = 560;
pub const RADIX_TREE_NODE_SIZE_6X: u32 = 576;

/// Which bits of an allocation's mask reach the pages of a new slab (3.x GFP_RECLAIM_MASK |
/// GFP_CONSTRAINT_MASK; the 6.x masks keep the same bits of this model's set).
const SLAB_GFP_PASSED: Gfp = Gfp(Gfp::RECLAIM.0
    | Gfp::HIGH.0
    | Gfp::IO.0
    | Gfp::FS.0
    | Gfp::NOWARN.0
    | Gfp::RETRY_MAYFAIL.0
    | Gfp::NOFAIL.0
    | Gfp::NORETRY.0
    | Gfp::MEMALLOC.0
    | Gfp::HARDWALL.0
    | Gfp::THISNODE.0);

/// One slab cache (struct kmem_cache).
#[derive(Clone, Debug)]
pub struct KmemCache {
    pub name: &'static str,
    /// Object size (s->size).
    pub size: u32,
    /// The order slabs are made at (s->oo) and the fallback (s->min).
    pub order: usize,
    pub min_order: usize,
    /// SLAB_RECLAIM_ACCOUNT: slabs are __GFP_RECLAIMABLE and counted as reclaimable.
    pub reclaimable: bool,
    /// The mask its usual caller allocates objects with (GFP_KERNEL, or GFP_NOFS inside a
    /// file system).
    pub gfp: Gfp,
    /// Empty slabs a node keeps on its partial list (s->min_partial).
    pub min_partial: usize,
    /// Slabs with a free object (empty ones included), per node (the partial lists).
    partial: Vec<BTreeSet<Pfn>>,
    pub nr_slabs: u64,
    pub active_objs: u64,
    /// Slabs made at the fallback order because the first try failed (ORDER_FALLBACK).
    pub order_fallback: u64,
}

impl KmemCache {
    /// A cache of `size`-byte objects on a machine of `nr_cpus` CPUs and `nr_nodes` nodes,
    /// shaped as the era's SLUB shapes it (kmem_cache_open).
    pub fn new(name: &'static str, size: u32, reclaimable: bool, gfp: Gfp, era: Era, nr_cpus: usize, nr_nodes: usize) -> KmemCache {
        let order = calculate_order(size, nr_cpus, era);
        let min_order = get_order(u64::from(size));
        let log = u32::BITS - 1 - size.leading_zeros();
        let min_partial = match era {
            Era::Linux3 => log,
            Era::Linux6 => log / 2,
        }
        .clamp(5, 10) as usize;
        KmemCache {
            name,
            size,
            order,
            min_order,
            reclaimable,
            gfp,
            min_partial,
            partial: vec![BTreeSet::new(); nr_nodes],
            nr_slabs: 0,
            active_objs: 0,
            order_fallback: 0,
        }
    }

    /// Objects in a slab of `order` (order_objects).
    pub fn objects(&self, order: usize) -> u32 {
        ((PAGE_SIZE << order) / u64::from(self.size)) as u32
    }

    /// The partial slabs of `node`, in the order they are used.
    pub fn partial_slabs(&self, node: usize) -> impl Iterator<Item = Pfn> + '_ {
        self.partial[node].iter().copied()
    }

    /// Whether `slab` is on `node`'s partial list.
    pub fn is_partial(&self, node: usize, slab: Pfn) -> bool {
        self.partial[node].contains(&slab)
    }
}

/// get_order: the smallest order whose block holds `bytes`.
fn get_order(bytes: u64) -> usize {
    let pages = bytes.div_ceil(PAGE_SIZE).max(1);
    (u64::BITS - (pages - 1).leading_zeros()) as usize
}

/// fls: the 1-based index of the highest set bit, 0 for 0.
fn fls(x: u64) -> u32 {
    u64::BITS - x.leading_zeros()
}

/// calculate_order for `size`-byte objects with `nr_cpus` CPUs (slub_min_objects and
/// slub_min_order unset, slub_max_order = PAGE_ALLOC_COSTLY_ORDER).
pub fn calculate_order(size: u32, nr_cpus: usize, era: Era) -> usize {
    let size = u64::from(size);
    let max_order = PAGE_ALLOC_COSTLY_ORDER;
    let objs = |order: usize| (PAGE_SIZE << order) / size;
    let max_objects = objs(max_order).max(1);
    let min_objects = (4 * (u64::from(fls(nr_cpus as u64)) + 1)).min(max_objects);
    // The first order from `from` up to max_order that wastes at most 1/fract of the slab.
    let fit = |from: usize, fract: u64| (from..=max_order).find(|&o| (PAGE_SIZE << o) % size <= (PAGE_SIZE << o) / fract);
    match era {
        Era::Linux3 => {
            // slab_order: start at the order min_objects need; back off waste, then objects.
            for min_objs in (2..=min_objects).rev() {
                let from = (fls(min_objs * size - 1) as usize).saturating_sub(12);
                for fract in [16, 8, 4] {
                    if let Some(o) = (from..=max_order).find(|&o| (PAGE_SIZE << o) >= min_objs * size && (PAGE_SIZE << o) % size <= (PAGE_SIZE << o) / fract) {
                        return o;
                    }
                }
            }
            fit(0, 1).unwrap_or_else(|| get_order(size))
        }
        Era::Linux6 => {
            let from = get_order(min_objects * size);
            [16, 8, 4, 2].into_iter().find_map(|fract| fit(from, fract)).unwrap_or_else(|| get_order(size))
        }
    }
}

impl Mm {
    fn slab_item(&self, cache: CacheId) -> ZoneStat {
        if self.slab_caches[cache].reclaimable {
            ZoneStat::NrSlabReclaimable
        } else {
            ZoneStat::NrSlabUnreclaimable
        }
    }

    /// Objects a slab holds (page->objects: set by the order it was made at).
    pub fn slab_objects(&self, cache: CacheId, slab: Pfn) -> u32 {
        self.slab_caches[cache].objects(self.pages[slab as usize].order as usize)
    }

    /// Allocates an object from `cache` for `cpu` with the cache's usual mask.
    pub fn kmem_cache_alloc(&mut self, cache: CacheId, cpu: usize) -> Option<Pfn> {
        let gfp = self.slab_caches[cache].gfp;
        self.kmem_cache_alloc_gfp(cache, gfp, cpu)
    }

    /// Allocates an object from `cache` for `cpu` (kmem_cache_alloc): from a partial slab of
    /// the CPU's node, else of the nearest other node, else from a new slab (which may
    /// reclaim as `gfp` allows). Returns the slab holding the object, or None.
    pub fn kmem_cache_alloc_gfp(&mut self, cache: CacheId, gfp: Gfp, cpu: usize) -> Option<Pfn> {
        self.cost_ns += self.costs.slab_alloc_ns;
        let slab = match self.get_partial(cache, cpu) {
            Some(pfn) => pfn,
            None => self.new_slab(cache, gfp, cpu)?,
        };
        let per = self.slab_objects(cache, slab);
        let p = &mut self.pages[slab as usize];
        p.index += 1;
        let full = p.index >= per;
        self.slab_caches[cache].active_objs += 1;
        if full {
            let nid = self.page_to_nid(slab);
            self.slab_caches[cache].partial[nid].remove(&slab);
        }
        Some(slab)
    }

    /// get_partial: a slab with a free object on the CPU's node, else on the other nodes by
    /// distance (get_any_partial).
    fn get_partial(&self, cache: CacheId, cpu: usize) -> Option<Pfn> {
        let c = &self.slab_caches[cache];
        let nid = self.cpu_to_node[cpu];
        if let Some(&pfn) = c.partial[nid].first() {
            return Some(pfn);
        }
        if c.partial.len() == 1 {
            return None;
        }
        let mut others: Vec<usize> = (0..c.partial.len()).filter(|&n| n != nid && !c.partial[n].is_empty()).collect();
        others.sort_by_key(|&n| (self.node_distance(nid, n), n));
        others.first().and_then(|&n| c.partial[n].first().copied())
    }

    /// new_slab / allocate_slab: the pages of a new, empty slab, at the cache's order if the
    /// allocator has them at once, else at the fallback order; put on its node's partial list.
    fn new_slab(&mut self, cache: CacheId, gfp: Gfp, cpu: usize) -> Option<Pfn> {
        let c = &self.slab_caches[cache];
        let (order, min_order) = (c.order, c.min_order);
        let mut flags = Gfp(gfp.0 & SLAB_GFP_PASSED.0);
        if c.reclaimable {
            flags = flags.with(Gfp::RECLAIMABLE);
        }
        let mut page = None;
        if order > min_order {
            let mut first = flags.with(Gfp::NOWARN).with(Gfp::NORETRY).without(Gfp::NOFAIL);
            if self.policy.slab_high_order == super::policy::SlabHighOrder::NoReclaim && first.has(Gfp::DIRECT_RECLAIM) {
                first = first.without(Gfp::RECLAIM);
            }
            page = self.alloc_pages(first, order, cpu);
            if page.is_none() {
                self.slab_caches[cache].order_fallback += 1;
            }
        }
        let pfn = match page {
            Some(p) => p,
            None => self.alloc_pages(flags, min_order, cpu)?,
        };
        let p = &mut self.pages[pfn as usize];
        p.flags |= PG_SLAB;
        p.mapping = cache as u32 + 1;
        p.index = 0;
        let pages = 1i64 << p.order;
        let item = self.slab_item(cache);
        self.mod_page_state(pfn, item, pages);
        let nid = self.page_to_nid(pfn);
        let c = &mut self.slab_caches[cache];
        c.nr_slabs += 1;
        c.partial[nid].insert(pfn);
        Some(pfn)
    }

    /// Frees an object living in slab `slab` (kmem_cache_free). An emptied slab stays on its
    /// node's partial list unless the node already holds more than min_partial partial slabs;
    /// then its pages go back to the allocator (discard_slab).
    pub fn kmem_cache_free(&mut self, cache: CacheId, slab: Pfn, cpu: usize) {
        self.cost_ns += self.costs.slab_free_ns;
        debug_assert_eq!(self.pages[slab as usize].mapping, cache as u32 + 1, "pfn {slab} is not a slab of cache {cache}");
        let per = self.slab_objects(cache, slab);
        let nid = self.page_to_nid(slab);
        let p = &mut self.pages[slab as usize];
        let was_full = p.index >= per;
        p.index -= 1;
        let empty = p.index == 0;
        let c = &mut self.slab_caches[cache];
        c.active_objs -= 1;
        if was_full {
            c.partial[nid].insert(slab);
        }
        if empty && c.partial[nid].len() > c.min_partial {
            self.discard_slab(cache, slab, cpu);
        }
    }

    /// discard_slab: an empty slab's pages go back to the page allocator.
    fn discard_slab(&mut self, cache: CacheId, slab: Pfn, cpu: usize) {
        let nid = self.page_to_nid(slab);
        let c = &mut self.slab_caches[cache];
        c.partial[nid].remove(&slab);
        c.nr_slabs -= 1;
        let order = self.pages[slab as usize].order as usize;
        let item = self.slab_item(cache);
        self.mod_page_state(slab, item, -(1i64 << order));
        let p = &mut self.pages[slab as usize];
        p.flags &= !PG_SLAB;
        p.mapping = 0;
        p.index = 0;
        if self.in_reclaim {
            self.reclaimed_slab += 1 << order;
        }
        self.free_pages(slab, order, cpu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slub_orders_match_the_kernels_for_common_caches() {
        // (size, cpus) -> (3.x order, 6.x order); figures from slabinfo of such machines.
        for (size, cpus, o3, o6) in [
            (BUFFER_HEAD_SIZE, 4, 0, 0),
            (BUFFER_HEAD_SIZE, 24, 0, 0),
            (DENTRY_SIZE, 4, 0, 0),
            (DENTRY_SIZE, 24, 1, 1),
            (768, 24, 3, 3), // ext3_inode_cache, 42 objects per order-3 slab
            (RADIX_TREE_NODE_SIZE_3X, 8, 2, 2),
            (RADIX_TREE_NODE_SIZE_3X, 2, 1, 1),
            (1088, 2, 2, 2), // ext4_inode_cache: 15 objects per order-2 slab with 2 CPUs
            (1088, 4, 3, 3),
        ] {
            assert_eq!(calculate_order(size, cpus, Era::Linux3), o3, "3.x order of {size} bytes on {cpus} CPUs");
            assert_eq!(calculate_order(size, cpus, Era::Linux6), o6, "6.x order of {size} bytes on {cpus} CPUs");
        }
        let c = KmemCache::new("ext3_inode_cache", 768, true, Gfp::GFP_NOFS, Era::Linux3, 24, 1);
        assert_eq!((c.order, c.objects(c.order), c.min_order, c.objects(0)), (3, 42, 0, 5));
        assert_eq!(c.min_partial, 9);
        let b = KmemCache::new("buffer_head", BUFFER_HEAD_SIZE, true, Gfp::GFP_NOFS, Era::Linux6, 4, 1);
        assert_eq!((b.order, b.objects(0), b.min_partial), (0, 39, 5));
    }
}
