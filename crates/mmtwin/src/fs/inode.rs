//! The inode and dentry caches and their reclaim (fs/inode.c, fs/dcache.c, fs/super.c of 3.1):
//! one shrinker per superblock (prune_super) that prunes unused dentries, then unused inodes.
//!
//! Pruning an inode that still has page cache invalidates its clean, unmapped pages first; those
//! pages are what /proc/vmstat counts as inode steals (pginodesteal from direct reclaim,
//! kswapd_inodesteal from kswapd). They are freed, but not counted as reclaimed by the caller.

use super::{Ino, I_DIRTY_PAGES, I_REFERENCED, I_SYNC};
use crate::mm::mm_types::*;
use crate::mm::page_alloc::Mm;
use crate::mm::vmscan::ScanControl;
use crate::mm::vmstat::VmStat;
use crate::mm::Pfn;

/// DEFAULT_SEEKS: how expensive a cache object is to recreate, relative to a page.
pub const DEFAULT_SEEKS: u64 = 2;
/// The superblock shrinker's batch (s_shrink.batch in 3.1).
pub const SB_SHRINK_BATCH: u64 = 1024;

impl Mm {
    /// iput_final: an inode nobody references goes on its superblock's LRU with I_REFERENCED,
    /// unless it is dirty or being written (the flusher's own iput adds it later); an unlinked
    /// one is evicted.
    pub fn iput_final_check(&mut self, ino: Ino) {
        let i = self.inode(ino);
        if i.i_count > 0 || i.lru_key.is_some() {
            return;
        }
        if i.nlink == 0 {
            let cpu = self.reclaim_cpu;
            self.evict_inode(ino, cpu);
            return;
        }
        if i.state & (I_DIRTY_PAGES | I_SYNC) != 0 {
            return;
        }
        let sb = i.sb;
        let key = self.sbs[sb].next_key();
        let i = self.inode_mut(ino);
        i.state |= I_REFERENCED;
        i.lru_key = Some(key);
        self.sbs[sb].inode_lru.insert(key, ino);
    }

    /// Number of shrinkers (one per superblock).
    pub fn nr_shrinkers(&self) -> usize {
        self.sbs.len()
    }

    /// The shrinker's seeks.
    pub fn shrinker_seeks(&self, _s: usize) -> u64 {
        DEFAULT_SEEKS
    }

    /// The shrinker's batch.
    pub fn shrinker_batch(&self, _s: usize) -> u64 {
        SB_SHRINK_BATCH
    }

    /// prune_super(nr_to_scan = 0): the freeable objects, scaled by vfs_cache_pressure.
    pub fn shrinker_count(&self, s: usize) -> u64 {
        let sb = &self.sbs[s];
        let total = sb.dentry_lru.len() as u64 + sb.inode_lru.len() as u64 + 1;
        total / 100 * self.sysctl.vfs_cache_pressure
    }

    /// prune_super(nr_to_scan): splits the scan between unused dentries and inodes in
    /// proportion to their numbers and prunes both. None if the caller may not enter the file
    /// system (no __GFP_FS). Returns the count after scanning.
    pub fn shrinker_scan(&mut self, s: usize, nr_to_scan: u64, sc: &ScanControl) -> Option<u64> {
        if !sc.gfp.has(crate::mm::gfp::Gfp::FS) {
            return None;
        }
        let d = self.sbs[s].dentry_lru.len() as u64;
        let i = self.sbs[s].inode_lru.len() as u64;
        let total = d + i + 1;
        let dentries = nr_to_scan * d / total;
        let inodes = nr_to_scan * i / total;
        self.prune_dcache_sb(s, dentries);
        self.prune_icache_sb(s, inodes);
        let sb = &self.sbs[s];
        Some((sb.dentry_lru.len() as u64 + sb.inode_lru.len() as u64) / 100 * self.sysctl.vfs_cache_pressure)
    }

    /// prune_dcache_sb: frees up to `count` unused dentries from the LRU tail; referenced ones
    /// lose the flag and go back to the head without using up the count. Freeing a dentry drops
    /// its inode reference (which may put the inode on the inode LRU).
    fn prune_dcache_sb(&mut self, s: usize, mut count: u64) {
        let cpu = self.reclaim_cpu;
        let mut spared = Vec::new();
        let mut cursor = 0u64;
        while count > 0 {
            let Some((&key, &ino)) = self.sbs[s].dentry_lru.range(cursor..).next() else { break };
            cursor = key + 1;
            self.cost_ns += self.costs.slab_object_scan_ns;
            let d = self.inode_mut(ino).dentry.as_mut().expect("a dentry on the LRU");
            if d.referenced {
                d.referenced = false;
                spared.push((key, ino));
                continue;
            }
            self.sbs[s].dentry_lru.remove(&key);
            let d = self.inode_mut(ino).dentry.take().expect("a dentry on the LRU");
            let dc = self.sbs[s].dentry_cache;
            self.kmem_cache_free(dc, d.slab, cpu);
            self.inode_mut(ino).i_count -= 1;
            self.iput_final_check(ino);
            count -= 1;
        }
        for (key, ino) in spared {
            self.sbs[s].dentry_lru.remove(&key);
            let nk = self.sbs[s].next_key();
            self.sbs[s].dentry_lru.insert(nk, ino);
            self.inode_mut(ino).dentry.as_mut().unwrap().lru_key = Some(nk);
        }
    }

    /// prune_icache_sb: looks at `count` + 1 inodes from the LRU tail. In-use or dirty inodes
    /// leave the LRU; referenced ones get a second chance; ones with page cache have their
    /// clean pages invalidated (counted as inode steals) and stay until a later pass finds them
    /// empty; empty ones are evicted.
    fn prune_icache_sb(&mut self, s: usize, count: u64) {
        let cpu = self.reclaim_cpu;
        let mut reap = 0u64;
        let mut cursor = 0u64;
        for _ in 0..=count {
            let Some((&key, &ino)) = self.sbs[s].inode_lru.range(cursor..).next() else { break };
            cursor = key + 1;
            self.cost_ns += self.costs.slab_object_scan_ns;
            let i = self.inode(ino);
            if i.i_count > 0 || i.state & !I_REFERENCED != 0 {
                self.sbs[s].inode_lru.remove(&key);
                self.inode_mut(ino).lru_key = None;
                continue;
            }
            if i.state & I_REFERENCED != 0 {
                self.inode_mut(ino).state &= !I_REFERENCED;
                self.rotate_inode_lru(s, key, ino);
                continue;
            }
            let mapping = i.mapping;
            if self.mapping(mapping).nrpages() > 0 {
                reap += self.invalidate_mapping_pages(mapping, cpu);
                // The iput after invalidating marks it referenced again and leaves it on the
                // LRU; only an inode left with no pages is freed by a later pass.
                self.inode_mut(ino).state |= I_REFERENCED;
                self.rotate_inode_lru(s, key, ino);
                continue;
            }
            self.sbs[s].inode_lru.remove(&key);
            self.inode_mut(ino).lru_key = None;
            self.evict_inode(ino, cpu);
        }
        let item = if self.current_is_kswapd() { VmStat::KswapdInodesteal } else { VmStat::Pginodesteal };
        self.events.count(item, reap);
    }

    fn rotate_inode_lru(&mut self, s: usize, key: u64, ino: Ino) {
        self.sbs[s].inode_lru.remove(&key);
        let nk = self.sbs[s].next_key();
        self.sbs[s].inode_lru.insert(nk, ino);
        self.inode_mut(ino).lru_key = Some(nk);
    }

    /// invalidate_mapping_pages: frees the clean, unmapped, unlocked pages of a file not under
    /// writeback; returns how many. Pages it cannot free are deactivated (dirty or writeback
    /// ones get PG_reclaim).
    pub fn invalidate_mapping_pages(&mut self, mapping: u32, cpu: usize) -> u64 {
        let pages: Vec<Pfn> = self.mapping(mapping).i_pages.values().copied().collect();
        let mut freed = 0;
        for pfn in pages {
            self.cost_ns += self.costs.page_cache_op_ns;
            let f = self.pages[pfn as usize].flags;
            if f & (PG_LOCKED | PG_MAPPED) != 0 {
                continue;
            }
            if f & (PG_DIRTY | PG_WRITEBACK) != 0 {
                self.pages[pfn as usize].flags |= PG_RECLAIM;
                continue;
            }
            if f & PG_LRU != 0 {
                self.del_page_from_lru_list(pfn);
            } else {
                // Isolated by a reclaimer right now: leave it to them.
                continue;
            }
            self.delete_from_page_cache(pfn);
            self.free_pages(pfn, 0, cpu);
            freed += 1;
        }
        freed
    }
}
