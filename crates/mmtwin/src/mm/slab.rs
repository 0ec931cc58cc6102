//! Slab caches (mm/slub.c, reduced to what reclaim sees): objects packed into order-0 slab
//! pages taken from the page allocator, NR_SLAB_RECLAIMABLE / NR_SLAB_UNRECLAIMABLE per zone,
//! and slab pages returned when their last object is freed. A slab page freed during reclaim
//! counts towards `reclaim_state->reclaimed_slab`.
//!
//! A slab page is `PG_SLAB` with `mapping` = cache id + 1 and `index` = objects in use. Real
//! SLUB uses higher-order slabs for large objects (ext4_inode_cache: order 3); order 0 is used
//! here for every cache, which changes fragmentation but not the page counts reclaim sees.

use std::collections::BTreeSet;

use super::gfp::Gfp;
use super::mm_types::PG_SLAB;
use super::mmzone::ZoneStat;
use super::page_alloc::Mm;
use super::Pfn;

/// A cache id (index into `Mm::slab_caches`).
pub type CacheId = usize;

/// One slab cache (struct kmem_cache).
#[derive(Clone, Debug)]
pub struct KmemCache {
    pub name: &'static str,
    pub objs_per_slab: u32,
    /// SLAB_RECLAIM_ACCOUNT: pages are __GFP_RECLAIMABLE and counted as reclaimable.
    pub reclaimable: bool,
    /// Slabs with free objects, per node (the partial lists).
    partial: Vec<BTreeSet<Pfn>>,
    pub nr_slabs: u64,
    pub active_objs: u64,
}

impl KmemCache {
    pub fn new(name: &'static str, objs_per_slab: u32, reclaimable: bool, nr_nodes: usize) -> KmemCache {
        KmemCache { name, objs_per_slab, reclaimable, partial: vec![BTreeSet::new(); nr_nodes], nr_slabs: 0, active_objs: 0 }
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

    /// Allocates an object from `cache` for `cpu` (kmem_cache_alloc): from a partial slab of the
    /// CPU's node, else from a new slab page (which may reclaim). Returns the slab page holding
    /// the object, or None if no page could be had.
    pub fn kmem_cache_alloc(&mut self, cache: CacheId, cpu: usize) -> Option<Pfn> {
        self.cost_ns += self.costs.slab_alloc_ns;
        let nid = self.cpu_to_node[cpu];
        let slab = match self.slab_caches[cache].partial[nid].first() {
            Some(&pfn) => pfn,
            None => {
                let gfp = if self.slab_caches[cache].reclaimable { Gfp::GFP_KERNEL.with(Gfp::RECLAIMABLE) } else { Gfp::GFP_KERNEL };
                let pfn = self.alloc_pages(gfp, 0, cpu)?;
                let p = &mut self.pages[pfn as usize];
                p.flags |= PG_SLAB;
                p.mapping = cache as u32 + 1;
                p.index = 0;
                let item = self.slab_item(cache);
                self.mod_page_state(pfn, item, 1);
                let pnid = self.page_to_nid(pfn);
                let c = &mut self.slab_caches[cache];
                c.nr_slabs += 1;
                c.partial[pnid].insert(pfn);
                pfn
            }
        };
        let per = self.slab_caches[cache].objs_per_slab;
        let p = &mut self.pages[slab as usize];
        p.index += 1;
        let full = p.index >= per;
        let c = &mut self.slab_caches[cache];
        c.active_objs += 1;
        if full {
            let pnid = self.pages[slab as usize].zone as usize / super::mmzone::MAX_NR_ZONES;
            self.slab_caches[cache].partial[pnid].remove(&slab);
        }
        Some(slab)
    }

    /// Frees an object living in slab page `slab` (kmem_cache_free); the page goes back to the
    /// allocator when it empties.
    pub fn kmem_cache_free(&mut self, cache: CacheId, slab: Pfn, cpu: usize) {
        self.cost_ns += self.costs.slab_free_ns;
        debug_assert_eq!(self.pages[slab as usize].mapping, cache as u32 + 1, "pfn {slab} is not a slab of cache {cache}");
        let per = self.slab_caches[cache].objs_per_slab;
        let nid = self.page_to_nid(slab);
        let p = &mut self.pages[slab as usize];
        let was_full = p.index >= per;
        p.index -= 1;
        let empty = p.index == 0;
        self.slab_caches[cache].active_objs -= 1;
        if empty {
            self.slab_caches[cache].partial[nid].remove(&slab);
            self.slab_caches[cache].nr_slabs -= 1;
            let item = self.slab_item(cache);
            self.mod_page_state(slab, item, -1);
            let p = &mut self.pages[slab as usize];
            p.flags &= !PG_SLAB;
            p.mapping = 0;
            p.index = 0;
            if self.in_reclaim {
                self.reclaimed_slab += 1;
            }
            self.free_pages(slab, 0, cpu);
        } else if was_full {
            self.slab_caches[cache].partial[nid].insert(slab);
        }
    }
}
