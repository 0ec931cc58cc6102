//! The inode and dentry caches and their reclaim (fs/inode.c, fs/dcache.c, fs/super.c): up to
//! 3.0 a global dentry shrinker and a global inode shrinker, from 3.1 one shrinker per
//! superblock (prune_super) that prunes unused dentries, then unused inodes (policy
//! `shrinker`).
//!
//! Pruning an inode that still has page cache invalidates its clean, unmapped pages first; those
//! pages are what /proc/vmstat counts as inode steals (pginodesteal from direct reclaim,
//! kswapd_inodesteal from kswapd). They are freed, but not counted as reclaimed by the caller.

use super::{Ino, I_DIRTY_PAGES, I_REFERENCED, I_SYNC};
use crate::mm::mm_types::*;
use crate::mm::page_alloc::Mm;
use crate::mm::PREFETCH_AHEAD;
use crate::mm::policy::{InodeLru, ShrinkerPolicy};
use crate::mm::vmscan::ScanControl;
use crate::mm::vmstat::VmStat;

/// DEFAULT_SEEKS: how expensive a cache object is to recreate, relative to a page.
pub const DEFAULT_SEEKS: u64 = 2;
/// The superblock shrinker's batch (s_shrink.batch in 3.1).
pub const SB_SHRINK_BATCH: u64 = 1024;
/// shrink_slab's batch for a shrinker without one of its own (SHRINK_BATCH).
pub const SHRINK_BATCH: u64 = 128;

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
        let referenced = match self.policy.inode_lru {
            InodeLru::InvalidateCached => true,
            // __inode_add_lru: not while the inode has page cache (mapping_shrinkable).
            InodeLru::CachedOffLru if self.mapping(i.mapping).nrpages() > 0 => return,
            InodeLru::CachedOffLru => false,
        };
        let sb = i.sb;
        let key = self.sbs[sb].next_key();
        let i = self.inode_mut(ino);
        if referenced {
            i.state |= I_REFERENCED;
        }
        i.lru_key = Some(key);
        self.sbs[sb].inode_lru.insert(key, ino);
    }

    /// inode_add_lru (5.16+, `InodeLru::CachedOffLru`): the last page of a file left the page
    /// cache (filemap_remove_folio, __remove_mapping, delete_from_page_cache_batch); an unused,
    /// clean inode now goes on its superblock's LRU, not referenced. Shadow entries, which in
    /// the kernel keep the mapping from counting as empty until the shadow shrinker frees
    /// them, are not modelled.
    pub fn inode_add_lru(&mut self, ino: Ino) {
        if self.policy.inode_lru != InodeLru::CachedOffLru {
            return;
        }
        // iput_final_check leaves in-use (the block device's too), listed, dirty and cached
        // inodes alone; an unlinked one is being evicted already, which is what removed its
        // pages.
        match self.inodes.get(ino as usize).and_then(|i| i.as_ref()) {
            Some(i) if i.nlink > 0 => self.iput_final_check(ino),
            _ => {}
        }
    }

    /// Number of shrinkers: 3.1+ one per superblock (prune_super); up to 3.0 the two global
    /// ones, dcache (0) then icache (1).
    pub fn nr_shrinkers(&self) -> usize {
        match self.policy.shrinker {
            ShrinkerPolicy::PerSuperblock => self.sbs.len(),
            ShrinkerPolicy::GlobalCaches => 2,
        }
    }

    /// The shrinker's seeks (DEFAULT_SEEKS for the dentry, inode and superblock shrinkers).
    pub fn shrinker_seeks(&self, _s: usize) -> u64 {
        DEFAULT_SEEKS
    }

    /// The shrinker's batch: s_shrink.batch (1024) from 3.1, SHRINK_BATCH (128) before.
    pub fn shrinker_batch(&self, _s: usize) -> u64 {
        match self.policy.shrinker {
            ShrinkerPolicy::PerSuperblock => SB_SHRINK_BATCH,
            ShrinkerPolicy::GlobalCaches => SHRINK_BATCH,
        }
    }

    /// Unused dentries and unused inodes on the machine (dentry_stat.nr_unused,
    /// inodes_stat.nr_unused).
    fn nr_unused(&self) -> (u64, u64) {
        self.sbs.iter().fold((0, 0), |(d, i), sb| (d + sb.dentry_lru.len() as u64, i + sb.inode_lru.len() as u64))
    }

    /// The shrinker's count when asked with nr_to_scan = 0, scaled by vfs_cache_pressure:
    /// prune_super's (the superblock's unused dentries and inodes), or up to 3.0
    /// shrink_dcache_memory's and shrink_icache_memory's (all unused dentries, all unused
    /// inodes).
    pub fn shrinker_count(&self, s: usize) -> u64 {
        let objects = match self.policy.shrinker {
            ShrinkerPolicy::PerSuperblock => {
                let sb = &self.sbs[s];
                sb.dentry_lru.len() as u64 + sb.inode_lru.len() as u64 + 1
            }
            ShrinkerPolicy::GlobalCaches => {
                let (d, i) = self.nr_unused();
                if s == 0 { d } else { i }
            }
        };
        objects / 100 * self.sysctl.vfs_cache_pressure
    }

    /// The shrinker called with nr_to_scan: prune_super splits the scan between the
    /// superblock's unused dentries and inodes in proportion to their numbers and prunes both;
    /// up to 3.0 shrink_dcache_memory prunes dentries (prune_dcache) and shrink_icache_memory
    /// inodes (prune_icache). None (-1) if the caller may not enter the file system (no
    /// __GFP_FS). Returns the count after scanning.
    pub fn shrinker_scan(&mut self, s: usize, nr_to_scan: u64, sc: &ScanControl) -> Option<u64> {
        if !sc.gfp.has(crate::mm::gfp::Gfp::FS) {
            return None;
        }
        match self.policy.shrinker {
            ShrinkerPolicy::PerSuperblock => {
                let d = self.sbs[s].dentry_lru.len() as u64;
                let i = self.sbs[s].inode_lru.len() as u64;
                let total = d + i + 1;
                let dentries = nr_to_scan * d / total;
                let inodes = nr_to_scan * i / total;
                self.prune_dcache_sb(s, dentries);
                self.prune_icache_sb(s, inodes + 1);
            }
            ShrinkerPolicy::GlobalCaches if s == 0 => self.prune_dcache(nr_to_scan),
            ShrinkerPolicy::GlobalCaches => self.prune_icache(nr_to_scan),
        }
        Some(self.shrinker_count(s))
    }

    /// prune_dcache (up to 3.0): takes `count` unused dentries from the superblocks in
    /// proportion to their unused ones (each at least one more than its share).
    fn prune_dcache(&mut self, count: u64) {
        let (unused, _) = self.nr_unused();
        if unused == 0 || count == 0 {
            return;
        }
        let prune_ratio = if count >= unused { 1 } else { unused / count };
        for s in 0..self.sbs.len() {
            let n = self.sbs[s].dentry_lru.len() as u64;
            if n == 0 {
                continue;
            }
            let w = if prune_ratio != 1 { n / prune_ratio + 1 } else { n };
            self.prune_dcache_sb(s, w);
        }
    }

    /// prune_icache (up to 3.0): looks at `count` inodes from the tail of the global unused
    /// inode list. The model keeps one list per superblock, so with several file systems the
    /// count is shared out in proportion to their unused inodes (with one it is the list).
    fn prune_icache(&mut self, count: u64) {
        let (_, unused) = self.nr_unused();
        if unused == 0 || count == 0 {
            return;
        }
        for s in 0..self.sbs.len() {
            let n = self.sbs[s].inode_lru.len() as u64;
            if n == 0 {
                continue;
            }
            // With one file system its share is the whole count: the kernel's loop may meet an
            // inode it rotated again, and one it invalidated twice in a row.
            let share = (count * n).div_ceil(unused);
            self.prune_icache_sb(s, share);
        }
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

    /// prune_icache_sb: looks at `count` inodes from the LRU tail (3.1's prune_icache_sb is
    /// asked for one more than its share, 3.0's prune_icache for its count). In-use or dirty inodes
    /// leave the LRU; referenced ones get a second chance; ones with page cache have their
    /// clean pages invalidated (counted as inode steals), are met again at once as referenced
    /// (a second count) and stay until a later pass finds them empty; empty ones are evicted.
    fn prune_icache_sb(&mut self, s: usize, count: u64) {
        let cpu = self.reclaim_cpu;
        let mut reap = 0u64;
        let mut cursor = 0u64;
        for _ in 0..count {
            let Some((&key, &ino)) = self.sbs[s].inode_lru.range(cursor..).next() else { break };
            cursor = key + 1;
            self.cost_ns += self.costs.slab_object_scan_ns;
            let i = self.inode(ino);
            // 5.16+ takes an inode that has page cache off the LRU here too (mapping_shrinkable);
            // the deletion of its last page puts it back (inode_add_lru).
            let cached_off = self.policy.inode_lru == InodeLru::CachedOffLru && self.mapping(i.mapping).nrpages() > 0;
            if i.i_count > 0 || i.state & !I_REFERENCED != 0 || cached_off {
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
                // The iput after invalidating marks it referenced again and leaves it where it
                // is, at the tail (inode_lru_list_add adds only an inode that is off the LRU).
                // The prune then goes on only if it is also the head, i.e. alone on the LRU,
                // and frees it if nothing is left in it (can_unuse). Otherwise the next count
                // meets it again at the tail, referenced, and moves it to the head: an inode
                // with page cache uses two counts of the scan (3.0 prune_icache, 3.1
                // prune_icache_sb).
                self.inode_mut(ino).state |= I_REFERENCED;
                let alone = self.sbs[s].inode_lru.len() == 1;
                if !(alone && self.mapping(mapping).nrpages() == 0) {
                    cursor = key;
                    continue;
                }
                self.inode_mut(ino).state &= !I_REFERENCED;
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
    /// writeback; returns how many. Since 2.6.39 the unlocked pages it cannot free are
    /// deactivated (`Mm::deactivate_page`; policy `deactivate_invalidated`).
    pub fn invalidate_mapping_pages(&mut self, mapping: u32, cpu: usize) -> u64 {
        let pages = self.mapping_pages(mapping);
        let mut freed = 0;
        for (i, &pfn) in pages.iter().enumerate() {
            if let Some(&ahead) = pages.get(i + PREFETCH_AHEAD) {
                self.prefetch_page(ahead);
            }
            self.cost_ns += self.costs.page_cache_op_ns;
            let f = self.pages[pfn as usize].flags;
            if f & PG_LOCKED != 0 {
                continue; // trylock_page failed: passed over
            }
            // invalidate_inode_page refuses a dirty, writeback or mapped page, and
            // invalidate_complete_page one whose buffers the journal holds.
            if f & (PG_MAPPED | PG_DIRTY | PG_WRITEBACK) != 0 || (f & PG_PRIVATE != 0 && self.bdev_page_pinned(pfn)) {
                if self.policy.deactivate_invalidated {
                    self.deactivate_page(pfn);
                }
                continue;
            }
            if f & PG_LRU != 0 {
                self.del_page_from_lru_list(pfn);
            } else {
                // Isolated by a reclaimer right now: leave it to them.
                continue;
            }
            self.delete_from_page_cache(pfn, cpu);
            self.free_pages(pfn, 0, cpu);
            freed += 1;
        }
        freed
    }
}
