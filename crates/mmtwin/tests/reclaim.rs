//! Mechanism tests of reclaim, the page cache, writeback and slab shrinking: one kernel
//! behaviour each.

mod common;

use common::*;
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::memory::TableOwner;
use mmtwin::mm::mm_types::*;
use mmtwin::mm::mmzone::{LruList, ZoneStat, ZoneType};
use mmtwin::mm::vmscan::{Reclaimer, ScanControl, ZoneReclaim};
use mmtwin::mm::vmstat::VmStat;
use mmtwin::mm::{Mm, Pfn};

/// Puts `n` clean file pages of a new file into the page cache from `cpu`.
fn cache_pages(mm: &mut Mm, n: u32, cpu: usize) -> (u32, Vec<Pfn>) {
    let ino = mm.create_file(0, cpu).unwrap();
    let mapping = mm.inode(ino).mapping;
    let mut pfns = Vec::new();
    for i in 0..n {
        let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, cpu).unwrap();
        mm.add_to_page_cache_lru(pfn, mapping, i, Gfp::GFP_KERNEL, 0);
        mm.pages[pfn as usize].flags |= PG_UPTODATE;
        pfns.push(pfn);
    }
    mm.inode_mut(ino).size_pages = u64::from(n);
    (ino, pfns)
}

/// A one-node, one-CPU machine filled with clean page cache until an allocation wakes kswapd.
fn filled_until_kswapd_is_woken(profile: &str, mem: &str) -> Mm {
    let mut mm = boot(profile, 1, 1, mem, "");
    let ino = mm.create_file(0, 0).unwrap();
    let mapping = mm.inode(ino).mapping;
    let mut i = 0;
    while mm.kswapd_wakeups.is_empty() {
        let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
        mm.add_to_page_cache_lru(pfn, mapping, i, Gfp::GFP_KERNEL, 0);
        mm.pages[pfn as usize].flags |= PG_UPTODATE;
        i += 1;
    }
    mm
}

fn kswapd_sc(mm: &Mm) -> ScanControl {
    let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
    sc.priority = 0;
    sc
}

#[test]
fn a_mapped_file_page_gets_a_second_trip_round_the_inactive_list_then_activates() {
    let mut mm = boot("linux-3.0", 1, 1, "64M", "");
    let (_, pfns) = cache_pages(&mut mm, 1, 0);
    let p = pfns[0];
    let zid = mm.page_zone(p);
    mm.pages[p as usize].flags |= PG_MAPPED | PG_YOUNG;
    // A direct reclaimer: kswapd's force-scan would also age the one-page active list at once.
    let direct = |mm: &Mm| {
        let mut sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, mm.sysctl.swappiness);
        sc.priority = 0;
        sc
    };
    mm.in_reclaim = true;
    let mut sc = direct(&mm);
    mm.shrink_zone(zid, &mut sc);
    // First scan: referenced by its PTE only → PG_referenced set, kept inactive.
    assert_eq!(mm.page_lru(p), LruList::InactiveFile);
    assert_ne!(mm.pages[p as usize].flags & PG_REFERENCED, 0);
    mm.pages[p as usize].flags |= PG_YOUNG;
    let mut sc = direct(&mm);
    mm.shrink_zone(zid, &mut sc);
    // Second referenced scan → activated.
    assert_eq!(mm.page_lru(p), LruList::ActiveFile, "flags {:#x} scanned {}", mm.pages[p as usize].flags, sc.nr_scanned);
    assert_eq!(mm.events.get(VmStat::Pgactivate), 1);
}

#[test]
fn slab_pressure_counts_a_locked_page_not_at_all_and_a_mapped_page_zone_reclaim_may_not_unmap_once() {
    // 3.0 shrink_page_list: a page whose trylock fails is kept before it is counted; a mapped
    // page is counted, then kept when the reclaimer may not unmap, before the doubling for
    // mapped and swap cache pages. sc->nr_scanned is what shrink_slab is given.
    let mut mm = boot("linux-3.0", 1, 1, "64M", "");
    let (_, pfns) = cache_pages(&mut mm, 8, 0);
    let zid = mm.page_zone(pfns[0]);
    for &p in &pfns[..3] {
        mm.pages[p as usize].flags |= PG_MAPPED;
    }
    for &p in &pfns[3..5] {
        mm.pages[p as usize].flags |= PG_LOCKED;
    }
    mm.in_reclaim = true;
    let mut sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
    (sc.priority, sc.may_unmap, sc.may_writepage) = (0, false, false);
    mm.shrink_zone(zid, &mut sc);
    // Three mapped pages once each, three clean ones (freed) once each, the locked two never.
    assert_eq!(sc.nr_scanned, 6);
    assert_eq!(sc.nr_reclaimed, 3);
    for &p in &pfns[..5] {
        assert_eq!(mm.page_lru(p), LruList::InactiveFile, "pfn {p} kept on the inactive list");
    }
}

#[test]
fn an_unmapped_clean_page_is_reclaimed_whatever_its_referenced_bit() {
    let mut mm = boot("linux-3.0", 1, 1, "64M", "");
    let (_, pfns) = cache_pages(&mut mm, 64, 0);
    for &p in &pfns {
        mm.mark_page_accessed(p); // PG_referenced once
    }
    let zid = mm.page_zone(pfns[0]);
    mm.in_reclaim = true;
    mm.reclaimer = Reclaimer::Kswapd;
    let mut sc = kswapd_sc(&mm);
    mm.shrink_zone(zid, &mut sc);
    assert_eq!(sc.nr_reclaimed, 64);
    assert_eq!(mm.events.get(VmStat::KswapdSteal), 64);
    assert_eq!(mm.events.get(VmStat::for_zone(VmStat::PgscanKswapdDma, mm.zones[zid].zone_type)), 64);
    assert_eq!(mm.global_page_state(ZoneStat::NrFilePages), 0);
}

/// A linux-3.0 machine of two 64M nodes at distance 30 (so boot turns zone_reclaim_mode on),
/// and node 0's DMA32 zone.
fn distant_nodes_3x() -> (Mm, usize) {
    let mut cfg = config("linux-3.0", 2, 1, "64M", "");
    cfg.machine.distance = vec![vec![10, 30], vec![30, 10]];
    (Mm::boot(&cfg), zid(0, ZoneType::Dma32))
}

#[test]
fn zone_reclaim_return_codes_follow_what_the_zone_holds() {
    let (mut mm, node0) = distant_nodes_3x();
    // Nothing cached: FULL without scanning.
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Full);
    let (_, pfns) = cache_pages(&mut mm, 2000, 0);
    assert!(pfns.iter().all(|&p| mm.page_to_nid(p) == 0));
    // A caller on node 1's CPU does not scan node 0 (it has CPUs of its own).
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 1), ZoneReclaim::NoScan);
    // An atomic caller cannot scan.
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_ATOMIC, 0, 0), ZoneReclaim::NoScan);
    // Clean unmapped cache: reclaimed.
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Success);
    assert!(mm.events.get(VmStat::PgstealDma32) >= 32);
    // All dirty: mode 1 may not write, so the scan frees nothing → SOME, counted as failed.
    for &p in &pfns {
        if mm.pages[p as usize].mapping != 0 {
            mm.pages[p as usize].flags |= PG_DIRTY;
        }
    }
    // The dirty pages are not counted as reclaimable, so there is nothing worth scanning.
    mm.mod_zone_page_state(node0, ZoneStat::NrFileDirty, 1900);
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Full);
    mm.mod_zone_page_state(node0, ZoneStat::NrFileDirty, -1900);
    let failed = mm.events.get(VmStat::ZoneReclaimFailed);
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Some);
    assert_eq!(mm.events.get(VmStat::ZoneReclaimFailed), failed + 1);
}

#[test]
fn active_metadata_buffers_open_zone_reclaims_gate_over_mapped_pages_it_cannot_reclaim() {
    let (mut mm, node0) = distant_nodes_3x();
    // The zone's page cache is all mapped (a writer's shared mapping): nothing mode 1 may
    // reclaim, and the gate says so without scanning.
    let (_, pfns) = cache_pages(&mut mm, 2000, 0);
    for &p in &pfns {
        mm.pages[p as usize].flags |= PG_MAPPED;
    }
    mm.mod_zone_page_state(node0, ZoneStat::NrFileMapped, 2000);
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Full);
    // Metadata blocks looked up twice each (indirect blocks): active, unmapped, clean page
    // cache of the block device, more than min_unmapped_ratio (1%) of the zone.
    let min_unmapped = mm.zones[node0].present_pages / 100;
    for b in 0..min_unmapped + 50 {
        mm.touch_metadata_block(0, 1000 + b, 0);
        mm.touch_metadata_block(0, 1000 + b, 0);
    }
    assert_eq!(mm.nr_bdev_pages(0), min_unmapped + 50);
    assert!(mm.zone_pagecache_reclaimable(node0) > min_unmapped);
    // The gate opens, but the scan meets only the inactive mapped pages (the active list is
    // left alone while it is smaller than the inactive one): nothing reclaimed, and the pages
    // scanned count as direct scans. This is the seed's 0%-efficiency zone_reclaim.
    let failed = mm.events.get(VmStat::ZoneReclaimFailed);
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Some);
    assert_eq!(mm.events.get(VmStat::ZoneReclaimFailed), failed + 1);
    assert!(mm.events.get(VmStat::PgscanDirectDma32) >= 2000, "every priority down to 0 scans the list");
    assert_eq!(mm.events.get(VmStat::PgstealDma32), 0);
}

#[test]
fn a_mapped_page_still_dirty_at_its_second_look_is_left_unmapped_and_then_opens_zone_reclaims_gate() {
    let (mut mm, node0) = distant_nodes_3x();
    // A shared-mapping writer's pages: mapped, young and dirty. zone_reclaim's gate sees
    // nothing it may take.
    let (ino, pfns) = cache_pages(&mut mm, 2000, 0);
    for &p in &pfns {
        mm.pages[p as usize].flags |= PG_MAPPED | PG_YOUNG;
        mm.mod_page_state(p, ZoneStat::NrFileMapped, 1);
        mm.set_page_dirty(p);
    }
    assert_eq!(mm.zone_pagecache_reclaimable(node0), 0);
    let look = |mm: &mut Mm| {
        let mut sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, mm.sysctl.swappiness);
        sc.priority = 0;
        mm.in_reclaim = true;
        mm.shrink_zone(node0, &mut sc);
        mm.in_reclaim = false;
        sc.nr_reclaimed
    };
    // First look: the young PTE keeps every page, mapped (PAGEREF_KEEP).
    assert_eq!(look(&mut mm), 0);
    assert_eq!(mm.zones[node0].page_state(ZoneStat::NrFileMapped), 2000);
    // Second look (PAGEREF_RECLAIM_CLEAN): 3.0 unmaps before it tests PG_dirty, then keeps
    // the dirty page for the flusher, unwritten. The pages stay cached, unmapped and dirty.
    assert_eq!(look(&mut mm), 0);
    assert_eq!(mm.zones[node0].page_state(ZoneStat::NrFileMapped), 0);
    assert_eq!(mm.zones[node0].page_state(ZoneStat::NrFileDirty), 2000);
    assert_eq!(mm.lru_size(node0, LruList::InactiveFile), 2000, "3.0 lruvecs are per zone");
    assert_eq!(mm.zones[node0].page_state(ZoneStat::NrVmscanWrite), 0);
    // Dirty pages do not count for mode 1, which may not write: the gate is still shut.
    assert_eq!(mm.zone_pagecache_reclaimable(node0), 0);
    // Once the flusher has written them they are unmapped clean cache, and the gate opens.
    mm.writeback_single_inode(ino, u64::MAX, false, false);
    run_io(&mut mm);
    assert_eq!(mm.zones[node0].page_state(ZoneStat::NrFileDirty), 0);
    assert_eq!(mm.zone_pagecache_reclaimable(node0), 2000);
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Success);
}

#[test]
fn the_systems_page_cache_is_active_clean_and_unmapped_on_its_cpus_node() {
    let (mut mm, node0) = distant_nodes_3x();
    let node1 = zid(1, ZoneType::Dma32);
    let min_unmapped = mm.zones[node0].present_pages / 100;
    // CPU 1 is node 1's: its files are read there.
    mm.system_page_cache(300, 1);
    assert_eq!(mm.lru_size(node1, LruList::ActiveFile), 300);
    mm.system_page_cache(min_unmapped + 50, 0);
    assert_eq!(mm.lru_size(node0, LruList::ActiveFile), min_unmapped + 50);
    assert_eq!(mm.lru_size(node0, LruList::InactiveFile), 0);
    assert_eq!(mm.global_page_state(ZoneStat::NrFileDirty) + mm.global_page_state(ZoneStat::NrFileMapped), 0);
    assert_eq!(mm.events.get(VmStat::Pgpgin), 0, "machine state at the start: no reads");
    // More than min_unmapped_ratio of node 0's zone: zone_reclaim's gate is open there.
    assert!(mm.zone_pagecache_reclaimable(node0) > min_unmapped);
}

#[test]
fn the_systems_page_cache_keeps_zone_reclaim_scanning_a_mapped_writers_pages() {
    use mmtwin::config::scenario::Scenario;
    // Two 32M nodes at distance 30 (zone_reclaim_mode 1), a mapped writer on node 0's CPU.
    let text = |page_cache: &str| {
        scenario("linux-3.0", 2, 1, "32M", "", "")
            .replace("boot_reserved = \"1M\"\n", &format!("boot_reserved = \"1M\"\ndistance = [[10, 30], [30, 10]]\nsystem = {{ page_cache = \"{page_cache}\" }}\n"))
            .replace("type = \"anon-churn\"\n", "type = \"mapped-writer\"\ntotal_ratio = 0.75\ncpus = [0]\n")
    };
    let direct = |page_cache: &str| {
        let cfg = Scenario::parse(&text(page_cache)).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0);
        let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap();
        let get = |n: &str| r.vmstat_delta.iter().filter(|(k, _)| k.starts_with(n)).map(|(_, v)| *v).sum::<i64>();
        (get("pgscan_direct_"), get("zone_reclaim_failed"))
    };
    let (scanned_without, _) = direct("0");
    // 2M of active, unmapped cache is over 1% of node 0's zone: the gate stays open, and each
    // zone_reclaim walks the writer's mapped pages, which mode 1 may not unmap.
    let (scanned_with, failed_with) = direct("2M");
    assert!(scanned_with > 2 * scanned_without.max(1), "direct scans {scanned_with} with the cache, {scanned_without} without");
    assert!(failed_with > 0);
}

/// A one-CPU 64M machine given more page cache than it has memory, so the allocator must
/// reclaim the oldest pages itself.
fn cached_past_memory(profile: &str) -> Mm {
    let mut mm = boot(profile, 1, 1, "64M", "");
    let managed: u64 = mm.zones.iter().map(|z| z.managed_pages).sum();
    cache_pages(&mut mm, managed as u32 + 1000, 0);
    mm
}

#[test]
fn direct_reclaim_runs_when_the_min_watermark_is_reached() {
    let mm = cached_past_memory("linux-3.0");
    assert!(mm.events.get(VmStat::Allocstall) > 0);
    let direct: u64 = [VmStat::PgscanDirectDma, VmStat::PgscanDirectDma32].iter().map(|&v| mm.events.get(v)).sum();
    assert!(direct > 0);
    assert!(mm.kswapd_wakeups.contains(&0) || mm.nodes[0].kswapd_wait_pending);
}

#[test]
fn direct_reclaim_6x_counts_its_stall_under_the_gfp_zone_of_the_request() {
    // A DMA32-only machine: page cache requests are GFP_HIGHUSER_MOVABLE, whose gfp_zone is
    // ZONE_MOVABLE, so 6.x counts allocstall_movable there (sc->reclaim_idx), not the zone
    // that was scanned.
    let mm = cached_past_memory("linux-6.1");
    assert!(mm.events.get(VmStat::AllocstallMovable) > 0);
    assert_eq!(mm.events.get(VmStat::AllocstallDma32) + mm.events.get(VmStat::AllocstallNormal), 0);
}

/// A 64M machine with `n` closed one-page files: `n` unused dentries on the dentry LRU.
fn unused_files(profile: &str, n: usize) -> Mm {
    let mut mm = boot(profile, 1, 1, "64M", "");
    for _ in 0..n {
        let (ino, _) = cache_pages(&mut mm, 1, 0);
        mm.close_file(ino);
    }
    assert_eq!(mm.sbs[0].dentry_lru.len(), n);
    mm.in_reclaim = true;
    mm
}

#[test]
fn up_to_3_0_the_global_cache_shrinkers_work_in_batches_of_128_and_wind_up() {
    // 3,000 unused dentries: shrink_dcache_memory counts 3,000 (and the icache shrinker the
    // unused inodes). 32 pages scanned of 1,000 give each a share of 64 × 3,000 / 1,001 = 191:
    // one SHRINK_BATCH of 128 now, 63 kept. The per-superblock shrinker of 3.1+ counts
    // dentries and inodes together (6,000: a share of 383) and scans nothing below its batch
    // of 1,024.
    let fs = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, 60);
    let mut old = unused_files("linux-3.0", 3000);
    old.shrink_slab(32, 1000, &fs);
    assert_eq!(old.events.get(VmStat::SlabsScanned), 128, "one batch, of the dentry shrinker (the inodes are not unused yet)");
    assert_eq!(old.shrinker_deferred, vec![63, 0]);
    let mut new = unused_files("linux-6.x", 3000);
    new.shrink_slab(32, 1000, &fs);
    assert_eq!(new.events.get(VmStat::SlabsScanned), 0);
    assert_eq!(new.shrinker_deferred, vec![3000 * 64 / 1001]);
    // Work that GFP_NOFS callers could not do piles up (up to twice the cache) and 3.0 lets
    // the next __GFP_FS call do all of it; 3.1+ lets a small share scan at most half the cache.
    let nofs = ScanControl::new(Reclaimer::Direct, Gfp::GFP_NOFS, 0, 32, 60);
    for mm in [&mut old, &mut new] {
        for _ in 0..200 {
            mm.shrink_slab(32, 1000, &nofs);
        }
    }
    assert_eq!(old.shrinker_deferred[0], 6000, "capped at twice the cache");
    let before = (old.events.get(VmStat::SlabsScanned), new.events.get(VmStat::SlabsScanned));
    old.shrink_slab(32, 1000, &fs);
    new.shrink_slab(32, 1000, &fs);
    let (o, n) = (old.events.get(VmStat::SlabsScanned) - before.0, new.events.get(VmStat::SlabsScanned) - before.1);
    assert!(o > 5000, "3.0 scans the piled-up work, nearly twice the dentry cache: {o}");
    assert!(n <= 3000, "3.1+ at most half its cache: {n}");
}

#[test]
fn up_to_3_0_a_cache_of_fewer_than_100_unused_objects_is_never_scanned() {
    // shrink_dcache_memory and shrink_icache_memory count (nr_unused / 100) ×
    // vfs_cache_pressure: 99 unused dentries count 0, so no pressure scans them. A dd writing
    // one file leaves the shrinkers nothing; the booted system's files are what they find.
    let sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, 32, 60);
    let mut few = unused_files("linux-3.0", 99);
    for _ in 0..100 {
        few.shrink_slab(100_000, 1000, &sc);
    }
    assert_eq!(few.events.get(VmStat::SlabsScanned), 0);
    assert_eq!(few.sbs[0].dentry_lru.len(), 99);
}

#[test]
fn a_booted_systems_closed_files_are_unused_dentries_whose_pruning_steals_their_pages() {
    // `[machine.system] files`: each file the system looked up, read and closed leaves an
    // unused, referenced dentry pinning its inode, and its page cache on the active list. 3.0's
    // dcache shrinker frees the dentries (second pass), which puts the inodes on the inode LRU;
    // the icache shrinker invalidates their pages (inode steals) and frees them.
    let mut mm = boot("linux-3.0", 1, 1, "64M", "");
    let slab0 = mm.global_page_state(ZoneStat::NrSlabReclaimable);
    mm.system_files(300, 2, 0);
    assert_eq!(mm.sbs[0].dentry_lru.len(), 300);
    assert!(mm.sbs[0].inode_lru.is_empty(), "every inode is pinned by its dentry");
    assert_eq!(mm.nr_lru_pages(LruList::ActiveFile), 600, "read twice: active");
    let slab1 = mm.global_page_state(ZoneStat::NrSlabReclaimable);
    assert!(slab1 > slab0 + 100, "inode, dentry and radix-tree objects: {slab0} -> {slab1} pages");
    let sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, 60);
    mm.in_reclaim = true;
    mm.shrink_slab(100_000, 1000, &sc);
    assert!(mm.sbs[0].dentry_lru.len() < 300, "the second pass freed dentries");
    assert!(!mm.sbs[0].inode_lru.is_empty(), "and their inodes became unused");
    for _ in 0..8 {
        mm.shrink_slab(100_000, 1000, &sc);
    }
    assert!(mm.sbs[0].dentry_lru.len() < 100 && mm.sbs[0].inode_lru.len() < 100, "pruned down to the shrinkers' floor");
    let stolen = mm.events.get(VmStat::Pginodesteal);
    assert!(stolen >= 400, "the pages of the pruned inodes: {stolen}");
    assert_eq!(mm.nr_lru_pages(LruList::ActiveFile), 600 - stolen);
    assert!(mm.global_page_state(ZoneStat::NrSlabReclaimable) < slab1 / 2, "most of the slab pages are free again");
    mmtwin::testing::checkers::check_all(&mm).unwrap();
}

#[test]
fn drop_caches_prunes_unused_dentries_and_inodes_until_the_shrinkers_count_none() {
    // echo 2 > /proc/sys/vm/drop_caches (drop_slab): shrink_slab(1000, GFP_KERNEL, 1000) until
    // a pass frees 10 objects or fewer. The closed files' inodes are evicted (they stay on
    // disk) until fewer than 100 are left, which the 3.0 shrinkers count as 0.
    let mut mm = unused_files("linux-3.0", 500);
    mm.in_reclaim = false;
    mm.drop_slab(0);
    let (d, i) = (mm.sbs[0].dentry_lru.len(), mm.sbs[0].inode_lru.len());
    assert!(d < 100 && i < 100, "{d} dentries and {i} inodes left");
    assert!(mm.evicted_inodes.len() > 300, "{} inodes evicted", mm.evicted_inodes.len());
    assert!(mm.events.get(VmStat::SlabsScanned) >= 1000);
    mmtwin::testing::checkers::check_all(&mm).unwrap();
}

#[test]
fn the_superblock_shrinker_prunes_dentries_then_inodes_and_counts_inode_steals() {
    // 3.1–5.15: the per-superblock shrinker, and inodes with page cache on the inode LRU.
    let mut mm = boot("linux-6.x", 1, 1, "64M", "policy = { inode_lru = \"invalidate-cached\" }");
    // Enough unused objects for the superblock shrinker's batch of 1024.
    for _ in 0..3000 {
        let (ino, _) = cache_pages(&mut mm, 1, 0);
        mm.close_file(ino);
    }
    assert_eq!(mm.sbs[0].dentry_lru.len(), 3000);
    let slab0 = mm.global_page_state(ZoneStat::NrSlabReclaimable);
    let sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, 60);
    mm.in_reclaim = true;
    // Heavy pressure, several rounds: referenced dentries first lose their flag, then go.
    for _ in 0..8 {
        mm.shrink_slab(100_000, 1000, &sc);
    }
    assert!(mm.events.get(VmStat::SlabsScanned) > 0);
    assert!(mm.events.get(VmStat::Pginodesteal) > 0, "pages freed by pruning inodes are inode steals");
    assert!(mm.global_page_state(ZoneStat::NrSlabReclaimable) < slab0);
    assert!(mm.reclaimed_slab > 0);
}

#[test]
fn writeback_cleans_what_a_writer_dirtied_and_counts_pgpgout() {
    use mmtwin::config::scenario::Scenario;
    let text = scenario("linux-3.0", 1, 2, "48M", "", "")
        .replace("type = \"anon-churn\"\n", "type = \"fsmark\"\nthreads = 2\nfiles = 20\nloops = 2\nsize = 1048576\n");
    let cfg = Scenario::parse(&text).unwrap().resolve().remove(0);
    let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap();
    let get = |n: &str| r.vmstat_delta.iter().find(|(k, _)| *k == n).unwrap().1;
    // Twice the memory is written: the writers are throttled and the flusher cleans pages.
    assert_eq!(get("nr_dirtied"), 2 * 20 * 2 * 256);
    assert!(get("nr_written") > get("nr_dirtied") / 2, "{} written", get("nr_written"));
    // pgpgout is in KiB: 4 per page written.
    assert!(get("pgpgout") >= get("nr_written") * 4);
    let files: Vec<_> = r.metrics.iter().filter(|m| m.op == "Files/s").collect();
    assert_eq!(files.len(), 2, "one Files/s sample per loop");
    // The benchmark's CPU time is its own (as `time fs_mark` reports it): kswapd's and the
    // flusher's are counted apart.
    assert!(get("kswapd_steal") > 0 && r.kswapd_ns > 0, "kswapd ran for {} ns", r.kswapd_ns);
    assert!(r.others_ns > 0, "the flusher's writeback takes CPU time");
    let mut slow = cfg.clone();
    slow.machine.cpu_slowdown = 3.0;
    let s = mmtwin::run::run_iteration(&slow, 0, &mut |_| {}).unwrap();
    assert!(s.system_ns > 2 * r.system_ns, "a CPU three times slower: system time {} vs {}", s.system_ns, r.system_ns);
}

#[test]
fn kswapd_balances_a_zone_to_its_high_watermark_naps_then_sleeps() {
    use mmtwin::mm::vmscan::Kswapd;
    use mmtwin::sim::rng::Rng;
    use mmtwin::sim::{After, Task, TaskCx};
    let mut mm = filled_until_kswapd_is_woken("linux-3.0", "64M");
    let z = zid(0, ZoneType::Dma32);
    // Woken at the low watermark (pcp refills take a batch at a time).
    assert!(mm.zones[z].nr_free_pages <= mm.zones[z].low_wmark_pages() as i64 + 64);
    let mut k = Kswapd::new(0, usize::MAX);
    let mut rng = Rng::new(1);
    let mut afters = Vec::new();
    let mut timed_out = false;
    for _ in 0..100 {
        let mut cx = TaskCx { now: 0, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out };
        let s = k.step(&mut cx);
        afters.push(s.after);
        // The nap runs out without a wakeup.
        timed_out = matches!(s.after, After::WaitTimeout(..));
        if s.after == After::Block {
            break;
        }
    }
    assert_eq!(afters.last(), Some(&After::Block), "kswapd went to sleep: {afters:?}");
    assert!(afters.iter().any(|a| matches!(a, After::WaitTimeout(_, _))), "it napped HZ/10 first");
    let free = mm.zones[z].nr_free_pages;
    assert!(free >= mm.zones[z].high_wmark_pages() as i64, "balanced: {free} free");
    assert!(mm.events.get(VmStat::KswapdSteal) > 0);
    assert!(mm.events.get(VmStat::Pageoutrun) >= 1);
}

#[test]
fn kswapd_woken_during_its_nap_balances_for_the_new_requests_order_not_its_last() {
    // 3.0 kswapd(): after kswapd_try_to_sleep returns without a full sleep, the order is read
    // anew from pgdat->kswapd_max_order (then reset to 0); an order-0 wakeup during the nap
    // after an order-3 run makes the next run an order-0 one.
    use mmtwin::mm::vmscan::Kswapd;
    use mmtwin::sim::rng::Rng;
    use mmtwin::sim::{After, Task, TaskCx};
    let mut mm = filled_until_kswapd_is_woken("linux-3.0", "64M");
    let top = ZoneType::Dma32 as usize;
    mm.wakeup_kswapd(0, 3, top);
    let mut k = Kswapd::new(0, usize::MAX);
    let mut rng = Rng::new(1);
    let mut napping = false;
    for _ in 0..200 {
        let mut cx = TaskCx { now: 0, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out: false };
        if matches!(k.step(&mut cx).after, After::WaitTimeout(..)) {
            napping = true;
            break;
        }
    }
    assert!(napping, "kswapd balanced and napped");
    assert_eq!(k.order(), 3, "the run was an order-3 one");
    mm.wakeup_kswapd(0, 0, top);
    let mut cx = TaskCx { now: 0, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out: false };
    k.step(&mut cx);
    assert_eq!(k.order(), 0);
}

#[test]
fn kswapd_of_2632_sleeps_as_soon_as_its_node_is_balanced() {
    // Until 2.6.33 kswapd() went back to sleep on kswapd_wait straight after balance_pgdat:
    // no HZ/10 nap, no second look at the high watermark, no hit-quickly counters.
    use mmtwin::mm::vmscan::Kswapd;
    use mmtwin::sim::rng::Rng;
    use mmtwin::sim::{After, Task, TaskCx};
    let mut mm = filled_until_kswapd_is_woken("linux-2.6.32", "64M");
    let z = zid(0, ZoneType::Dma32);
    let mut k = Kswapd::new(0, usize::MAX);
    let mut rng = Rng::new(1);
    let mut afters = Vec::new();
    for _ in 0..100 {
        let mut cx = TaskCx { now: 0, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out: false };
        let s = k.step(&mut cx);
        afters.push(s.after);
        if s.after == After::Block {
            break;
        }
    }
    assert_eq!(afters.last(), Some(&After::Block), "kswapd went to sleep: {afters:?}");
    assert!(!afters.iter().any(|a| matches!(a, After::WaitTimeout(..))), "no nap: {afters:?}");
    assert!(mm.zones[z].nr_free_pages >= mm.zones[z].high_wmark_pages() as i64, "balanced first");
    assert_eq!(mm.events.get(VmStat::KswapdLowWmarkHitQuickly) + mm.events.get(VmStat::KswapdHighWmarkHitQuickly), 0);
    // The same machine under 3.0 naps (kswapd_balances_a_zone_to_its_high_watermark_naps_then_sleeps).
}

#[test]
fn kswapd_6x_marks_its_zones_reclaim_active_while_it_balances() {
    use mmtwin::mm::mmzone::ZONE_RECLAIM_ACTIVE;
    use mmtwin::mm::vmscan::Kswapd;
    use mmtwin::sim::rng::Rng;
    use mmtwin::sim::{After, Task, TaskCx};
    for profile in ["linux-6.1", "linux-6.x"] {
        let mut mm = filled_until_kswapd_is_woken(profile, "64M");
        let z = zid(0, ZoneType::Dma32);
        assert_eq!(mm.zones[z].flags & ZONE_RECLAIM_ACTIVE, 0, "{profile}: not before kswapd runs");
        let mut k = Kswapd::new(0, usize::MAX);
        let mut rng = Rng::new(1);
        let mut cx = TaskCx { now: 0, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out: false };
        k.step(&mut cx);
        assert_ne!(mm.zones[z].flags & ZONE_RECLAIM_ACTIVE, 0, "{profile}: set when balance_pgdat starts");
        let mut timed_out = false;
        for _ in 0..100 {
            let mut cx = TaskCx { now: 0, cpu: 0, tid: 0, mm: &mut mm, rng: &mut rng, timed_out };
            let s = k.step(&mut cx);
            timed_out = matches!(s.after, After::WaitTimeout(..));
            if timed_out || s.after == After::Block {
                break;
            }
        }
        assert!(timed_out, "{profile}: kswapd balanced the zone and napped");
        assert_eq!(mm.zones[z].flags & ZONE_RECLAIM_ACTIVE, 0, "{profile}: cleared when balanced");
    }
}

/// A 256M node whose page cache has pushed free memory below the low watermark.
fn node_below_low(profile: &str) -> Mm {
    filled_until_kswapd_is_woken(profile, "256M")
}

#[test]
fn kswapd_6x_lowers_its_priority_only_when_a_pass_scans_less_than_it_must_reclaim() {
    use mmtwin::mm::vmscan::PassOutcome;
    let hz = ZoneType::Dma32 as usize;
    let mut mm = node_below_low("linux-6.1");
    let mut sc = kswapd_sc(&mm);
    // DEF_PRIORITY scans lru >> 12 pages: far fewer than the high watermarks' sum.
    let out = mm.balance_pgdat_pass_6x(0, hz, 12, &mut sc, &mut 0);
    assert!(sc.nr_scanned < sc.nr_to_reclaim);
    assert_eq!(out, PassOutcome::Continue { priority: 11 });
    // Priority 2 scans a quarter of the LRU, more than the target: the priority stays.
    let mut mm = node_below_low("linux-6.1");
    let mut sc = kswapd_sc(&mm);
    let out = mm.balance_pgdat_pass_6x(0, hz, 2, &mut sc, &mut 0);
    assert!(sc.nr_scanned >= sc.nr_to_reclaim, "scanned {} of {}", sc.nr_scanned, sc.nr_to_reclaim);
    assert_eq!(out, PassOutcome::Continue { priority: 2 });
}

#[test]
fn kswapd_6x_works_off_a_boost_without_writeback_and_drops_it_when_the_node_is_unbalanced() {
    use mmtwin::mm::vmscan::PassOutcome;
    let hz = ZoneType::Dma32 as usize;
    // Balanced node, boosted watermark: reclaim the boost, with neither writeback nor swap.
    let mut mm = boot("linux-6.1", 1, 1, "256M", "");
    cache_pages(&mut mm, 20_000, 0);
    assert!(mm.pgdat_balanced(0, 0, hz));
    let mut sc = kswapd_sc(&mm);
    let mut boost = 500;
    let out = mm.balance_pgdat_pass_6x(0, hz, 12, &mut sc, &mut boost);
    assert!(!sc.may_writepage && !sc.may_swap, "boosted reclaim does no I/O");
    assert!(sc.nr_reclaimed > 0 && boost == 500 - sc.nr_reclaimed.min(500), "the boost shrinks by what was reclaimed");
    assert!(matches!(out, PassOutcome::Continue { .. }));
    // Unbalanced node: the boost is dropped and the run restarts at DEF_PRIORITY.
    let mut mm = node_below_low("linux-6.1");
    assert!(!mm.pgdat_balanced(0, 0, hz));
    let mut sc = kswapd_sc(&mm);
    let mut boost = 500;
    let out = mm.balance_pgdat_pass_6x(0, hz, 5, &mut sc, &mut boost);
    assert_eq!(boost, 0);
    assert_eq!(sc.priority, 12, "restarted at DEF_PRIORITY");
    assert!(sc.may_writepage);
    assert_eq!(out, PassOutcome::Continue { priority: 11 });
}

#[test]
fn kswapd_6x_flags_a_node_whose_tail_is_under_writeback_and_then_waits_for_it() {
    let hz = ZoneType::Dma32 as usize;
    let mut mm = node_below_low("linux-6.1");
    // Every page of the node's inactive file list is under writeback.
    let lv = 0;
    let mut pfn = mm.lruvecs[lv].lists[LruList::InactiveFile as usize].head;
    while pfn != u32::MAX {
        mm.pages[pfn as usize].flags |= PG_WRITEBACK;
        pfn = mm.pages[pfn as usize].next;
    }
    let mut sc = kswapd_sc(&mm);
    mm.balance_pgdat_pass_6x(0, hz, 10, &mut sc, &mut 0);
    // First meeting: marked for immediate reclaim and activated; the node is PGDAT_WRITEBACK.
    assert!(sc.nr_writeback > 0 && sc.nr_writeback == sc.nr_taken, "{} of {}", sc.nr_writeback, sc.nr_taken);
    assert!(mm.nodes[0].pgdat_writeback);
    assert!(!sc.throttle_writeback && sc.nr_immediate == 0);
    assert!(mm.events.get(VmStat::Pgactivate) >= sc.nr_writeback);
    // Pages met again with PG_reclaim while the node is PGDAT_WRITEBACK: kswapd must wait.
    let mut pfn = mm.lruvecs[lv].lists[LruList::InactiveFile as usize].head;
    while pfn != u32::MAX {
        mm.pages[pfn as usize].flags |= PG_WRITEBACK | PG_RECLAIM;
        pfn = mm.pages[pfn as usize].next;
    }
    let mut sc = kswapd_sc(&mm);
    mm.balance_pgdat_pass_6x(0, hz, 10, &mut sc, &mut 0);
    assert!(sc.nr_immediate > 0 && sc.throttle_writeback);
    assert_eq!(mm.nodes[0].nr_writeback_throttled, 1);
    assert!(mm.nodes[0].lruvec_congested, "every page it met was congested");
}

#[test]
fn zone_reclaim_is_locked_for_others_while_its_cpu_time_runs() {
    let (mut mm, node0) = distant_nodes_3x();
    cache_pages(&mut mm, 2000, 0);
    mm.now_ns = 1_000_000;
    mm.cost_ns = 0;
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Success);
    let took = mm.take_cost();
    assert!(took > 0, "scanning and freeing cost CPU time");
    // ZONE_RECLAIM_LOCKED: another task's step that begins before that time has passed finds
    // the zone being reclaimed and moves on.
    mm.now_ns = 1_000_000 + took - 1;
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::NoScan);
    mm.now_ns = 1_000_000 + took;
    assert_eq!(mm.zone_reclaim(node0, Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Success);
}

/// The fields of one zone's section of /proc/zoneinfo (name → first number on the line).
fn zoneinfo_zone(text: &str, node: usize, zone: &str) -> Option<std::collections::HashMap<String, u64>> {
    let head = format!("Node {}, zone {:>8}", node, zone);
    let body = text.split("\nNode ").map(|s| if s.starts_with("Node ") { s.to_string() } else { format!("Node {s}") }).find(|s| s.lines().next() == Some(head.as_str()))?;
    let mut fields = std::collections::HashMap::new();
    for line in body.lines().skip(1) {
        let mut w = line.split_whitespace();
        if let (Some(k), Some(v)) = (w.next(), w.next()) {
            if let Ok(v) = v.parse() {
                fields.entry(k.to_string()).or_insert(v);
            }
        }
    }
    Some(fields)
}

#[test]
fn zoneinfo_3x_prints_every_zone_counter_of_populated_zones() {
    let (mut mm, node0) = distant_nodes_3x();
    let (_, pfns) = cache_pages(&mut mm, 2000, 0);
    for &p in pfns.iter().take(300) {
        mm.set_page_dirty(p);
    }
    let text = mm.proc_zoneinfo();
    // 3.x walks populated zones only: the two 64M nodes have DMA32 (and node 0 DMA), no Normal.
    assert!(zoneinfo_zone(&text, 0, "Normal").is_none() && zoneinfo_zone(&text, 1, "Movable").is_none());
    let z = zoneinfo_zone(&text, 0, "DMA32").expect("node 0 DMA32");
    let lv = &mm.lruvecs[node0];
    assert_eq!(z["nr_inactive_file"], lv.size(LruList::InactiveFile));
    assert_eq!(z["nr_inactive_file"] + z["nr_active_file"], z["nr_file_pages"]);
    assert!(z["nr_file_pages"] >= 2000);
    assert_eq!(z["nr_dirty"], mm.zones[node0].page_state(ZoneStat::NrFileDirty));
    assert!(z["nr_dirty"] >= 300);
    assert_eq!(z["scanned"], mm.zones[node0].pages_scanned);
    // zone_statistics: each zone's numa_hit, summed, is /proc/vmstat's numa_hit.
    let hits: u64 = [(0, "DMA"), (0, "DMA32"), (1, "DMA32")]
        .iter()
        .filter_map(|&(n, name)| zoneinfo_zone(&text, n, name))
        .map(|z| z["numa_hit"])
        .sum();
    assert_eq!(hits as i64, mm.vmstat_snapshot()[VmStat::NumaHit as usize]);
    assert!(z["numa_hit"] >= 2000 && z["numa_miss"] == 0);
    // The per-CPU stat threshold: 2 × fls(2 CPUs) × (1 + fls(zone size in 128M units)).
    assert!(text.contains("  vm stats threshold: "));
}

#[test]
fn reclaim_2632_saves_small_scan_shares_until_they_make_a_batch() {
    // 10,000 inactive file pages: a pass's share is 2, 4, 9 and 19 pages at priorities 12 to 9.
    let zid = ZoneType::Dma32 as usize;
    let share = |p: i32| 10_000u64 >> p;
    let sc_at = |mm: &Mm, who: Reclaimer, priority: i32| {
        let mut sc = ScanControl::new(who, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
        sc.priority = priority;
        sc
    };
    // 2.6.32 (nr_scan_try_batch): nothing is scanned until the deposits reach
    // SWAP_CLUSTER_MAX; then all of them are, and the count starts again.
    let mut mm = boot("linux-2.6.32", 1, 1, "256M", "");
    cache_pages(&mut mm, 10_000, 0);
    assert_eq!(mm.lru_size(zid, LruList::InactiveFile), 10_000);
    for p in [12, 11, 10] {
        let mut sc = sc_at(&mm, Reclaimer::Kswapd, p);
        mm.shrink_zone(zid, &mut sc);
        assert_eq!(sc.nr_scanned, 0, "priority {p} scanned before the deposits made a batch");
    }
    assert_eq!(mm.lruvecs[zid].reclaim_stat.nr_saved_scan[LruList::InactiveFile as usize], share(12) + share(11) + share(10));
    let mut sc = sc_at(&mm, Reclaimer::Kswapd, 9);
    mm.shrink_zone(zid, &mut sc);
    assert_eq!(sc.nr_scanned, share(12) + share(11) + share(10) + share(9));
    assert_eq!(mm.lruvecs[zid].reclaim_stat.nr_saved_scan[LruList::InactiveFile as usize], 0);
    // The deposits are the zone's: a direct reclaimer's share at DEF_PRIORITY is added to what
    // kswapd left and may be the one that scans it.
    for p in [12, 11] {
        let mut sc = sc_at(&mm, Reclaimer::Kswapd, p);
        mm.shrink_zone(zid, &mut sc);
    }
    let mut sc = sc_at(&mm, Reclaimer::Direct, 10);
    mm.shrink_zone(zid, &mut sc);
    assert_eq!(sc.nr_scanned, 0);
    let mut sc = sc_at(&mm, Reclaimer::Direct, 9);
    mm.shrink_zone(zid, &mut sc);
    assert_eq!(sc.nr_scanned, share(12) + share(11) + share(10) + share(9));

    // 3.0: nothing is saved. Direct reclaim scans its share as it
    // is, and kswapd scans a batch of a list whose share rounds to nothing (3,000 >> 12 = 0).
    let mut mm = boot("linux-3.0", 1, 1, "256M", "");
    cache_pages(&mut mm, 10_000, 0);
    let mut sc = sc_at(&mm, Reclaimer::Direct, 12);
    mm.shrink_zone(zid, &mut sc);
    assert_eq!(sc.nr_scanned, share(12));
    let mut mm = boot("linux-3.0", 1, 1, "256M", "");
    cache_pages(&mut mm, 3_000, 0);
    let mut sc = sc_at(&mm, Reclaimer::Direct, 12);
    mm.shrink_zone(zid, &mut sc);
    assert_eq!(sc.nr_scanned, 0);
    let mut sc = sc_at(&mm, Reclaimer::Kswapd, 12);
    mm.shrink_zone(zid, &mut sc);
    assert_eq!(sc.nr_scanned, 32);
}

#[test]
fn kswapd_of_3_0_force_scans_a_list_whose_share_is_nothing_only_in_a_small_zone_and_of_6_x_never() {
    // 3,000 anonymous pages (no swap: anon is not scanned, but 3.0 counts it in the zone's
    // size) and 30 inactive file pages, whose share rounds to nothing at priorities 6 and 12.
    // 3.0 forces kswapd's batch only where the zone's lists together are small at the
    // priority ((anon + file) >> priority < SWAP_CLUSTER_MAX): at 12 (3,030 >> 12 = 0), not
    // at 6 (47). 3.1 (a4d3e9e76337) forces it at every priority.
    let zid = ZoneType::Dma32 as usize;
    for (policy, at_6) in [("", 0), ("policy = { scan_batch = \"force-scan\" }", 30)] {
        let scanned = |priority: i32| {
            let mut mm = boot("linux-3.0", 1, 1, "256M", policy);
            let vma = mm.anon_vma_new(3_000);
            for i in 0..3_000 {
                mm.handle_anon_fault(vma, i, true, 0);
            }
            cache_pages(&mut mm, 30, 0);
            assert_eq!(mm.lru_size(zid, LruList::InactiveFile), 30);
            assert!(mm.lru_size(zid, LruList::ActiveAnon) + mm.lru_size(zid, LruList::InactiveAnon) >= 2_900);
            let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
            sc.priority = priority;
            mm.shrink_zone(zid, &mut sc);
            sc.nr_scanned
        };
        assert_eq!(scanned(12), 30, "{policy:?}: a small zone at priority 12");
        assert_eq!(scanned(6), at_6, "{policy:?}: the zone is not small at priority 6");
    }
    // 6.x (get_scan_count read from 6.12) has no force-scan: kswapd scans the share as it is.
    let mut mm = boot("linux-6.x", 1, 1, "256M", "");
    cache_pages(&mut mm, 30, 0);
    let lv = 0; // node 0's lruvec
    assert_eq!(mm.lru_size(lv, LruList::InactiveFile), 30);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
    sc.priority = 12;
    mm.shrink_lruvec(lv, &mut sc);
    assert_eq!(sc.nr_scanned, 0, "30 >> 12 rounds to nothing");
}

#[test]
fn program_text_mapped_executable_is_activated_and_counted_rotated_at_its_first_look() {
    // 64 pages of a file laid out on disk, read in through faults: mapped once, young. A
    // mapped file page referenced once is kept on the inactive list at reclaim's first look;
    // one mapped by a VM_EXEC mapping is activated, and put back as rotated (3.x
    // page_check_references, putback_lru_pages), which is what moves get_scan_count's balance.
    let zid = ZoneType::Dma32 as usize;
    for exec in [false, true] {
        let mut mm = boot("linux-3.0", 1, 1, "256M", "");
        let ino = mm.create_file(0, 0).unwrap();
        mm.lay_out_file(ino, 64);
        let mut t = Default::default();
        for i in 0..64 {
            loop {
                match mm.filemap_fault(ino, i, false, exec, 0, &mut t) {
                    mmtwin::mm::filemap::PageIo::Done => break,
                    mmtwin::mm::filemap::PageIo::Wait(_) => run_io(&mut mm),
                    other => panic!("{other:?}"),
                }
            }
        }
        let mapping = mm.inode(ino).mapping;
        let pfns: Vec<Pfn> = (0..64).map(|i| mm.find_get_page(mapping, i).unwrap()).collect();
        assert!(pfns.iter().all(|&p| (mm.pages[p as usize].flags & PG_EXEC_MAPPED != 0) == exec));
        assert_eq!(mm.lru_size(zid, LruList::InactiveFile), 64);
        let rotated = mm.lruvecs[zid].reclaim_stat.recent_rotated[1];
        let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
        sc.priority = 0;
        mm.shrink_zone(zid, &mut sc);
        let active = mm.lru_size(zid, LruList::ActiveFile);
        let rotated = mm.lruvecs[zid].reclaim_stat.recent_rotated[1] - rotated;
        if exec {
            assert_eq!((active, rotated), (64, 64), "text is activated and counted rotated");
        } else {
            assert_eq!((active, rotated, mm.lru_size(zid, LruList::InactiveFile)), (0, 0, 64), "kept inactive, referenced");
        }
        // Unmapped, a page is no longer executable-mapped.
        mm.try_to_unmap(pfns[0]);
        assert_eq!(mm.pages[pfns[0] as usize].flags & (PG_MAPPED | PG_EXEC_MAPPED), 0);
    }
}

#[test]
fn faults_allocate_a_zeroed_page_table_page_per_2m_on_the_faulting_node_counted_until_the_mapping_goes() {
    // A shared mapping of a sparse file, written one page at a time from a CPU of node 1: the
    // first fault allocates the PMD page of the first GiB and the PTE page of the first 2 MiB,
    // the 513th fault the second PTE page; all on node 1, unmovable. NR_PAGETABLE counts the
    // PTE pages in 3.x and the PMD page too in 6.x; exit (unmap_file) frees them all.
    for (profile, pmd_counted) in [("linux-3.0", false), ("linux-6.x", true)] {
        let mut mm = boot(profile, 2, 1, "256M", "");
        let cpu = 1; // node 1's CPU
        let ino = mm.create_file(0, cpu).unwrap();
        mm.inode_mut(ino).size_pages = 513; // a sparse file: all holes
        let mut t = Default::default();
        for i in 0..513 {
            loop {
                match mm.filemap_fault(ino, i, true, false, cpu, &mut t) {
                    mmtwin::mm::filemap::PageIo::Done => break,
                    mmtwin::mm::filemap::PageIo::Wait(_) => run_io(&mut mm),
                    other => panic!("{profile}: {other:?}"),
                }
            }
            let tables = &mm.page_tables[&TableOwner::File(ino)];
            let ptes = tables.pte.len();
            assert_eq!(ptes, if i < 512 { 1 } else { 2 }, "{profile}: PTE pages after the fault of page {i}");
        }
        let tables: Vec<Pfn> = mm.page_tables[&TableOwner::File(ino)].pages().collect();
        assert_eq!(tables.len(), 3, "{profile}: one PMD page and two PTE pages");
        for &pfn in &tables {
            assert_eq!(mm.zones[mm.page_zone(pfn)].node, 1, "{profile}: pfn {pfn} is on the faulting CPU's node");
            assert_eq!(mm.get_pageblock_migratetype(pfn), mmtwin::mm::mmzone::MigrateType::Unmovable, "{profile}: pfn {pfn}");
        }
        let counted = mm.global_page_state(ZoneStat::NrPageTable);
        assert_eq!(counted, if pmd_counted { 3 } else { 2 }, "{profile}: NR_PAGETABLE");
        assert!(mm.proc_vmstat().contains(&format!("nr_page_table_pages {counted}\n")));
        mmtwin::testing::checkers::check_all(&mm).unwrap();
        mm.unmap_file(ino, cpu);
        assert!(!mm.page_tables.contains_key(&TableOwner::File(ino)));
        assert_eq!(mm.global_page_state(ZoneStat::NrPageTable), 0, "{profile}: all freed at exit");
        for &pfn in &tables {
            assert_ne!(mm.pages[pfn as usize].state(), PageState::Allocated, "{profile}: pfn {pfn} freed");
        }
        mmtwin::testing::checkers::check_all(&mm).unwrap();
    }
}

#[test]
fn the_systems_program_text_is_read_in_through_faults_at_boot() {
    use mmtwin::config::scenario::Scenario;
    // A 64M machine whose system maps 4M of program text; the run is a small anon-churn.
    let text = scenario("linux-3.0", 1, 1, "64M", "", "")
        .replace("boot_reserved = \"1M\"\n", "boot_reserved = \"1M\"\nsystem = { text = \"4M\", period = \"100ms\" }\n");
    let cfg = Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0);
    let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap();
    let get = |n: &str| r.vmstat_delta.iter().filter(|(k, _)| *k == n).map(|(_, v)| *v).sum::<i64>();
    assert!(get("pgpgin") >= 4096, "the text was read: {} KiB", get("pgpgin"));
    assert!(get("pgmajfault") > 0);
}

#[test]
fn zone_reclaims_pages_wait_on_the_per_cpu_list_so_the_zone_is_marked_full_and_zlcfirst_then_skips_it() {
    // Two distant 1G nodes (zone_reclaim_mode 1), clean page cache read from CPU 0 until node
    // 0's DMA32 falls below its low mark. The allocation that finds it there runs zone_reclaim,
    // which frees a batch of clean pages cold onto CPU 0's per-cpu list (free_page_list →
    // free_hot_cold_page): below `high`, so NR_FREE_PAGES does not see them, the watermark
    // check after the reclaim fails, and the walk marks the zone full ("did we reclaim
    // enough") and takes its page from another zone. The next allocation: 3.0-rc6 sets the
    // cache up only after the first zone, so it reclaims again; cd38b115d5ad (zlcfirst)
    // checks the cache first and skips the zone without scanning.
    let dma32 = zid(0, ZoneType::Dma32);
    for (zlc, rescans) in [("vanilla", true), ("zlcfirst", false)] {
        let mut cfg = config("linux-3.0", 2, 1, "1G", &format!("policy = {{ zonelist_cache = \"{zlc}\" }}"));
        cfg.machine.distance = vec![vec![10, 30], vec![30, 10]];
        let mut mm = Mm::boot(&cfg);
        assert_eq!(mm.sysctl.zone_reclaim_mode, Some(1));
        // The cache was zapped just now, so the marks below last.
        mm.now_ns = 5_000_000_000;
        mm.nodes[0].zlc.last_full_zap_ns = mm.now_ns;
        let ino = mm.create_file(0, 0).unwrap();
        let mapping = mm.inode(ino).mapping;
        let read = |mm: &mut Mm, i: u32| {
            let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
            mm.add_to_page_cache_lru(pfn, mapping, i, Gfp::GFP_KERNEL, 0);
            mm.pages[pfn as usize].flags |= PG_UPTODATE;
            pfn
        };
        let mut i = 0;
        let (free0, pcp0) = loop {
            let before = (mm.zones[dma32].nr_free_pages_vmstat(), mm.zones[dma32].pcp[0].count);
            let pfn = read(&mut mm, i);
            i += 1;
            if mm.events.get(VmStat::PgscanDirectDma32) > 0 {
                assert_ne!(mm.page_zone(pfn), dma32, "{zlc}: the page came from another zone");
                break before;
            }
            assert_eq!(mm.page_zone(pfn), dma32);
        };
        let stolen = mm.events.get(VmStat::PgstealDma32);
        assert!(stolen >= 32, "{zlc}: zone_reclaim freed a batch ({stolen})");
        let pcp = &mm.zones[dma32].pcp[0];
        assert!(pcp.count >= pcp0 + stolen as u32 && pcp.count <= pcp.high, "{zlc}: the batch waits on CPU 0's list, below high");
        assert_eq!(mm.zones[dma32].nr_free_pages_vmstat(), free0, "{zlc}: NR_FREE_PAGES did not see it");
        assert!(mm.nodes[0].zlc.fullzones[0], "{zlc}: DMA32 marked full after the reclaim");
        let scanned = mm.events.get(VmStat::PgscanDirectDma32);
        let pfn = read(&mut mm, i);
        assert_ne!(mm.page_zone(pfn), dma32);
        assert_eq!(mm.events.get(VmStat::PgscanDirectDma32) > scanned, rescans, "{zlc}: the next allocation reclaims again");
        mmtwin::testing::checkers::check_all(&mm).unwrap();
    }
}

#[test]
fn up_to_3_1_an_inode_pruned_of_its_page_cache_takes_a_second_count_as_it_is_met_again_referenced() {
    // 3.0's prune_icache invalidates the clean pages of an unused inode at the LRU tail; the
    // iput after it sets I_REFERENCED and leaves the inode where it is (it is on the LRU
    // already), so the next count meets the same inode, referenced, and moves it to the head.
    // Asked for two, the prune empties one inode and leaves the next one alone.
    let mut mm = unused_files("linux-3.0", 0);
    let files: Vec<_> = (0..3).map(|_| cache_pages(&mut mm, 4, 0).0).collect();
    for &ino in &files {
        mm.close_file(ino);
    }
    let sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, 60);
    // The dentries go first (each a second chance, then freed), which puts the inodes on the
    // inode LRU, referenced; one pass over them clears the flags.
    while !mm.sbs[0].dentry_lru.is_empty() {
        mm.shrinker_scan(0, 3, &sc);
    }
    mm.shrinker_scan(1, 3, &sc);
    assert_eq!(mm.sbs[0].inode_lru.len(), 3);
    assert_eq!(mm.events.get(VmStat::Pginodesteal), 0);
    let tail = *mm.sbs[0].inode_lru.values().next().unwrap();
    mm.shrinker_scan(1, 2, &sc);
    assert_eq!(mm.events.get(VmStat::Pginodesteal), 4, "one inode's pages, not two");
    let cached: Vec<u64> = files.iter().map(|&i| mm.mapping(mm.inode(i).mapping).nrpages()).collect();
    assert_eq!(cached.iter().filter(|&&n| n == 0).count(), 1);
    assert_eq!(mm.mapping(mm.inode(tail).mapping).nrpages(), 0, "the tail inode was the one emptied");
    assert_eq!(*mm.sbs[0].inode_lru.values().last().unwrap(), tail, "and it went to the head");
    assert_eq!(mm.inode(tail).state & mmtwin::fs::I_REFERENCED, 0, "its second meeting cleared the flag");
    // The next pass empties the other two (two counts each) and then frees it.
    mm.shrinker_scan(1, 5, &sc);
    assert!(!mm.sbs[0].inode_lru.values().any(|&i| i == tail));
}

#[test]
fn from_5_16_an_unused_inode_with_page_cache_stays_off_the_inode_lru_until_its_last_page_goes() {
    // 6.x: the last iput of an inode that still has page cache does not put it on the LRU
    // (mapping_shrinkable); reclaim takes its pages through the page LRUs, and the deletion of
    // the last one puts the inode on the LRU, not referenced, where the next prune frees it.
    // No page is ever an inode steal.
    let mut mm = unused_files("linux-6.x", 0);
    let files: Vec<_> = (0..3).map(|_| cache_pages(&mut mm, 4, 0)).collect();
    for (ino, _) in &files {
        mm.close_file(*ino);
    }
    let sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, 60);
    for _ in 0..4 {
        mm.shrinker_scan(0, 100, &sc);
    }
    assert!(mm.sbs[0].dentry_lru.is_empty(), "the dentries are gone");
    assert!(mm.sbs[0].inode_lru.is_empty(), "inodes with page cache stay off the LRU");
    // Reclaim frees one file's pages (__remove_mapping).
    let (ino, pfns) = &files[0];
    for &pfn in pfns {
        mm.del_page_from_lru_list(pfn);
        mm.delete_from_page_cache(pfn, 0);
        mm.free_pages(pfn, 0, 0);
    }
    assert_eq!(mm.sbs[0].inode_lru.values().copied().collect::<Vec<_>>(), vec![*ino], "its last page put it on the LRU");
    assert_eq!(mm.inode(*ino).state & mmtwin::fs::I_REFERENCED, 0, "not referenced");
    mm.shrinker_scan(0, 100, &sc);
    assert!(mm.sbs[0].inode_lru.is_empty(), "the next prune frees it");
    assert!(mm.inodes.get(*ino as usize).and_then(|i| i.as_ref()).is_none());
    assert_eq!(mm.events.get(VmStat::Pginodesteal), 0);
    // The 3.x form for comparison: the same files sit on the LRU and their pages are stolen.
    let mut old = unused_files("linux-3.0", 0);
    let files: Vec<_> = (0..3).map(|_| cache_pages(&mut old, 4, 0).0).collect();
    for &ino in &files {
        old.close_file(ino);
    }
    for _ in 0..4 {
        old.shrinker_scan(0, 100, &sc);
        old.shrinker_scan(1, 100, &sc);
    }
    assert_eq!(old.events.get(VmStat::Pginodesteal), 12);
}

#[test]
fn pages_invalidation_cannot_free_are_deactivated_from_2_6_39_and_left_alone_before() {
    // invalidate_mapping_pages → deactivate_page (lru_deactivate_fn, 2.6.39): a dirty page
    // and one under writeback go to the head of the inactive list with PG_reclaim; a clean
    // one is freed. 2.6.32 leaves the pages it cannot free as they are.
    for (profile, deactivates) in [("linux-3.0", true), ("linux-2.6.32", false)] {
        let mut mm = boot(profile, 1, 1, "64M", "");
        let (ino, pfns) = cache_pages(&mut mm, 3, 0);
        let mapping = mm.inode(ino).mapping;
        mm.mark_page_accessed(pfns[0]);
        mm.mark_page_accessed(pfns[0]);
        assert_ne!(mm.pages[pfns[0] as usize].flags & PG_ACTIVE, 0);
        mm.pages[pfns[0] as usize].flags |= PG_DIRTY;
        mm.pages[pfns[1] as usize].flags |= PG_WRITEBACK;
        let deactivated = mm.events.get(VmStat::Pgdeactivate);
        assert_eq!(mm.invalidate_mapping_pages(mapping, 0), 1, "{profile}: the clean page is freed");
        for &p in &pfns[..2] {
            let f = mm.pages[p as usize].flags;
            assert_eq!(f & PG_RECLAIM != 0, deactivates, "{profile}: PG_reclaim");
            assert_eq!(f & PG_LRU != 0, true, "{profile}: still on an LRU list");
        }
        let f0 = mm.pages[pfns[0] as usize].flags;
        assert_eq!(f0 & PG_ACTIVE == 0, deactivates, "{profile}: the active dirty page goes inactive");
        assert_eq!(mm.events.get(VmStat::Pgdeactivate) - deactivated, u64::from(deactivates), "{profile}: pgdeactivate");
    }
}

#[test]
fn evict_once_leaves_the_active_file_list_alone_while_the_inactive_one_is_larger() {
    // 56e49d21 (2.6.31, "vmscan: evict use-once pages first"): shrink_list ages the active
    // file list only while inactive_file_is_low, so a pass over a zone whose inactive file
    // list is the larger reclaims from it alone. Before it (and with it reverted, as Mel
    // Gorman's 2010 bisection tried on 2.6.32) the active list is aged by its share of the
    // pass too.
    for (policy, deactivated) in [("", false), ("policy = { active_file_aging = \"proportional\" }", true)] {
        let mut mm = boot("linux-2.6.32", 1, 1, "64M", policy);
        let (_, active) = cache_pages(&mut mm, 1024, 0);
        for &p in &active {
            mm.activate_page(p);
        }
        let (_, inactive) = cache_pages(&mut mm, 4096, 0);
        let zid = mm.page_zone(inactive[0]);
        assert!(mm.lru_size(zid, LruList::ActiveFile) >= 1024);
        assert!(mm.lru_size(zid, LruList::InactiveFile) > mm.lru_size(zid, LruList::ActiveFile));
        let before = mm.vmstat_snapshot()[VmStat::Pgdeactivate as usize];
        let mut sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, mm.sysctl.swappiness);
        sc.priority = 4;
        mm.in_reclaim = true;
        mm.shrink_zone(zid, &mut sc);
        mm.in_reclaim = false;
        let moved = mm.vmstat_snapshot()[VmStat::Pgdeactivate as usize] - before;
        assert_eq!(moved > 0, deactivated, "policy {policy:?}: {moved} pages deactivated");
        assert!(sc.nr_reclaimed > 0);
    }
}
