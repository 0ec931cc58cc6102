//! Mechanism tests of the slab caches the page cache and the file systems allocate from: one
//! kernel behaviour each.

mod common;
use mmtwin::config::scenario::Scenario;
use mmtwin::mm::filemap::PageIo;
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::mmzone::{ZoneStat, ZoneType};
use mmtwin::mm::slab::{BH_CACHE, INODE_CACHE, RADIX_CACHE};
use mmtwin::mm::Mm;
use mmtwin::testing::checkers::check_all;

/// A one-node machine of `mem` and `cpus` CPUs with file system `fs` and kernel `profile`.
fn boot(profile: &str, cpus: usize, mem: &str, fs: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = {cpus}, memory = \"{mem}\" }}]\nboot_reserved = \"1M\"\nfs = \"{fs}\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}

/// Takes every free block of node 0's zones and gives back every other page (up to half the
/// way from min to low watermark if `below_low`): free memory with no block above order 0.
fn fragment(mm: &mut Mm, below_low: bool) {
    for zt in [ZoneType::Dma, ZoneType::Dma32] {
        let z = common::zid(0, zt);
        let blocks = common::drain_zone(mm, z);
        let limit = if below_low { (mm.zones[z].min_wmark_pages() + mm.zones[z].low_wmark_pages()) / 2 + 1 } else { u64::MAX };
        let singles = blocks.iter().flat_map(|&(pfn, order)| (0..1u32 << order).step_by(2).map(move |i| pfn + i));
        for pfn in singles.take(limit.min(usize::MAX as u64) as usize) {
            let mt = mm.get_pageblock_migratetype(pfn);
            mm.__free_one_page(z, pfn, 0, mt);
        }
    }
}

fn write_file(mm: &mut Mm, pages: u32) -> u32 {
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = Default::default();
    for i in 0..pages {
        assert_eq!(mm.file_write_page(ino, i, 4096, 0, &mut t), PageIo::Done);
    }
    ino
}

#[test]
fn a_buffered_write_gives_each_page_a_buffer_head_until_the_page_leaves_the_cache() {
    let mut mm = boot("linux-3.0", 1, "64M", "ext3");
    let slab0 = mm.global_page_state(ZoneStat::NrSlabReclaimable);
    let ino = write_file(&mut mm, 100);
    let bh = &mm.slab_caches[BH_CACHE];
    // 104-byte heads, 39 to an order-0 slab: the 100 data pages and the file's indirect block
    // (a block-device page, which always has buffers) fill three slabs.
    assert_eq!((bh.order, bh.objects(0), bh.active_objs, bh.nr_slabs), (0, 39, 101, 3));
    let mapping = mm.inode(ino).mapping;
    let pfn = mm.find_get_page(mapping, 5).unwrap();
    assert!(mm.page_has_buffers(pfn));
    assert!(mm.global_page_state(ZoneStat::NrSlabReclaimable) >= slab0 + 3);
    // Buffer heads come GFP_NOFS, reclaimable, from the highest zone the mask allows.
    let slab = mm.page_buffers_slab(pfn);
    assert_eq!(mm.get_pageblock_migratetype(slab), mmtwin::mm::MigrateType::Reclaimable);
    check_all(&mm).unwrap();
    mm.close_file(ino);
    assert_eq!(mm.unlink_file(ino, 0), Ok(()));
    assert!(!mm.page_has_buffers(pfn));
    let bh = &mm.slab_caches[BH_CACHE];
    // Emptied slabs stay on the node's partial list up to min_partial (ilog2(104) = 6); the
    // indirect block's page stays cached.
    assert_eq!((bh.active_objs, bh.nr_slabs, bh.min_partial), (1, 3, 6));
    check_all(&mm).unwrap();
}

#[test]
fn xfs_data_pages_have_buffer_heads_in_3x_and_none_in_6x() {
    for (profile, expect) in [("linux-3.0", 10), ("linux-6.x", 0)] {
        let mut mm = boot(profile, 1, "64M", "xfs");
        write_file(&mut mm, 10);
        assert_eq!(mm.slab_caches[BH_CACHE].active_objs, expect, "{profile}");
        check_all(&mm).unwrap();
    }
}

#[test]
fn page_cache_tree_nodes_are_allocated_per_64_pages_and_freed_when_empty() {
    let mut mm = boot("linux-3.0", 2, "64M", "ext4");
    let ino = write_file(&mut mm, 130);
    let preloaded: usize = mm.radix_preload.iter().map(Vec::len).sum();
    // Pages 0..130 need three leaves (0-63, 64-127, 128-129) under one level-2 node; the CPU's
    // pool is topped up to RADIX_TREE_MAX_PATH (11) after each insertion.
    assert_eq!(preloaded, 11);
    assert_eq!(mm.slab_caches[RADIX_CACHE].active_objs, 4 + 11);
    assert_eq!(mm.mapping(mm.inode(ino).mapping).i_pages.height, 2);
    check_all(&mm).unwrap();
    mm.close_file(ino);
    assert_eq!(mm.unlink_file(ino, 0), Ok(()));
    assert_eq!(mm.slab_caches[RADIX_CACHE].active_objs, 11, "only the preloaded nodes are left");
    check_all(&mm).unwrap();
}

#[test]
fn an_inode_cache_slab_is_order_3_on_24_cpus_and_falls_back_to_order_0_when_the_zone_is_fragmented() {
    let mut mm = boot("linux-3.0", 24, "64M", "ext3");
    let c = &mm.slab_caches[INODE_CACHE];
    assert_eq!((c.name, c.order, c.objects(3), c.min_order), ("ext3_inode_cache", 3, 42, 0));
    let ino = mm.create_file(0, 0).unwrap();
    let slab = mm.inode(ino).slab;
    assert_eq!(mm.pages[slab as usize].order, 3);
    fragment(&mut mm, false);
    // Fill the first slab so the next inode needs a new one.
    for _ in 1..42 {
        mm.create_file(0, 0).unwrap();
    }
    let before = mm.slab_caches[INODE_CACHE].order_fallback;
    let ino = mm.create_file(0, 0).unwrap();
    let slab = mm.inode(ino).slab;
    assert_eq!(mm.pages[slab as usize].order, 0, "ORDER_FALLBACK to s->min");
    assert_eq!(mm.slab_caches[INODE_CACHE].order_fallback, before + 1);
    assert_eq!(mm.slab_objects(INODE_CACHE, slab), 5);
}

#[test]
fn a_3x_high_order_slab_try_asks_kswapd_for_its_order_and_a_6x_one_does_not() {
    for (profile, wakes) in [("linux-3.0", true), ("linux-6.x", false)] {
        let mut mm = boot(profile, 24, "64M", "ext3");
        // Every zone under its low watermark with no free block above order 0.
        fragment(&mut mm, true);
        mm.nodes[0].kswapd_wait_pending = false;
        mm.nodes[0].kswapd_order = 0;
        let slab = mm.kmem_cache_alloc_gfp(INODE_CACHE, Gfp::GFP_NOFS, 0).unwrap();
        assert_eq!(mm.pages[slab as usize].order, 0, "{profile}: fell back to order 0");
        // The order-0 fallback, below the low watermark, wakes kswapd in both eras; only the
        // 3.x high-order try asks it for order 3.
        assert!(mm.nodes[0].kswapd_wait_pending, "{profile}");
        assert_eq!(mm.nodes[0].kswapd_order == 3, wakes, "{profile}: kswapd asked for order {}", mm.nodes[0].kswapd_order);
    }
}

#[test]
fn the_checkers_catch_a_lost_buffer_head_a_miscounted_tree_and_a_lost_dirty_tag() {
    let mut mm = boot("linux-3.0", 1, "64M", "ext4");
    let ino = write_file(&mut mm, 70);
    check_all(&mm).unwrap();
    let pfn = mm.find_get_page(mm.inode(ino).mapping, 3).unwrap();
    let mapping = mm.inode(ino).mapping;
    let mut lost = mm.clone();
    let root = lost.mapping(mapping).i_pages;
    lost.radix_nodes.set_private(&root, 3, mmtwin::mm::NIL);
    lost.pages[pfn as usize].flags &= !mmtwin::mm::mm_types::PG_PRIVATE;
    assert!(check_all(&lost).unwrap_err().contains("objects in use"));
    let mut bad = mm.clone();
    bad.mapping_mut(mapping).nrpages += 1;
    assert!(check_all(&bad).unwrap_err().contains("leaves count"));
    let mut untagged = mm.clone();
    untagged.radix_nodes.tag_clear(&root, 3, mmtwin::mm::radix_tree::PAGECACHE_TAG_DIRTY);
    assert!(check_all(&untagged).unwrap_err().contains("dirty tag"), "a dirty page lost its tag");
}

#[test]
fn a_3x_ext4_write_allocates_without_gfp_fs_so_its_direct_reclaim_leaves_the_inode_cache_alone() {
    use mmtwin::mm::vmstat::VmStat;
    // AOP_FLAG_NOFS: ext4_da_write_begin asks for it in 3.x, ext3_write_begin does not.
    for (fs, prunes) in [("ext3", true), ("ext4", false)] {
        let mut mm = boot("linux-3.0", 1, "64M", fs);
        // Unused inodes for the shrinker: files written once and closed.
        for _ in 0..200 {
            let ino = write_file(&mut mm, 1);
            mm.close_file(ino);
        }
        let ino = mm.create_file(0, 0).unwrap();
        // Take free memory under the min watermark with unmovable pages.
        let zones: Vec<usize> = (0..mm.zones.len()).filter(|&z| mm.zones[z].managed_pages > 0).collect();
        while zones.iter().any(|&z| mm.zones[z].nr_free_pages as u64 > mm.zones[z].min_wmark_pages() / 2) {
            if mm.alloc_pages(Gfp::GFP_ATOMIC, 0, 0).is_none() {
                break;
            }
        }
        let before = mm.events.get(VmStat::SlabsScanned);
        let mut t = Default::default();
        let _ = mm.file_write_page(ino, 0, 4096, 0, &mut t);
        let scanned = mm.events.get(VmStat::SlabsScanned) - before;
        assert_eq!(scanned > 0, prunes, "{fs}: slabs scanned by the write's direct reclaim: {scanned}");
    }
}

#[test]
fn an_inode_the_shrinkers_evicted_is_read_back_from_its_inode_table_and_keeps_its_blocks() {
    // A closed file on ext2: 3.0's prune_dcache frees its dentry, prune_icache then its inode.
    // The file is still on disk: the next open's lookup (ext2_iget) reads the inode table
    // block, a synchronous read, and allocates new objects; its data blocks are where they were
    // and its page cache starts empty. Its number is not given to the file created meanwhile.
    use mmtwin::mm::vmscan::{Reclaimer, ScanControl};
    let mut mm = boot("linux-3.0", 1, "64M", "ext2");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 40);
    let sectors: Vec<_> = (0..40).map(|i| mm.bmap(ino, i)).collect();
    mm.close_file(ino);
    let sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, 32, 60);
    mm.in_reclaim = true;
    mm.shrinker_scan(0, 10, &sc);
    mm.shrinker_scan(0, 10, &sc);
    mm.shrinker_scan(1, 10, &sc);
    mm.shrinker_scan(1, 10, &sc);
    mm.in_reclaim = false;
    assert!(mm.inodes[ino as usize].is_none(), "evicted");
    assert!(mm.evicted_inodes.contains_key(&ino), "but still on disk");
    let other = mm.create_file(0, 0).unwrap();
    assert!(other > ino, "a new file gets a new number");
    let ic = mm.sbs[0].inode_cache;
    let (objs, reads) = (mm.slab_caches[ic].active_objs, mm.bdevs[0].stats.metadata_reads);
    let Err(Some(pfn)) = mm.iget(ino, 0) else { panic!("the inode table block is read") };
    assert_eq!(mm.bdevs[0].stats.metadata_reads, reads + 1);
    common::run_io(&mut mm);
    assert_eq!(mm.pages[pfn as usize].flags & mmtwin::mm::mm_types::PG_LOCKED, 0);
    assert_eq!(mm.iget(ino, 0), Ok(()));
    assert!(mm.open_file(ino));
    assert_eq!(mm.slab_caches[ic].active_objs, objs + 1);
    assert_eq!((0..40).map(|i| mm.bmap(ino, i)).collect::<Vec<_>>(), sectors);
    assert_eq!(mm.mapping(mm.inode(ino).mapping).nrpages(), 0);
    check_all(&mm).unwrap();
    // Closed, pruned again and unlinked: the lookup finds the inode table block cached; the
    // truncate reads the file's one indirect block (laid out without being cached), then
    // frees the file for good.
    mm.close_file(ino);
    mm.in_reclaim = true;
    for s in [0, 0, 1, 1] {
        mm.shrinker_scan(s, 10, &sc);
    }
    mm.in_reclaim = false;
    assert!(mm.inodes[ino as usize].is_none());
    let Err(Some(_)) = mm.unlink_file(ino, 0) else { panic!("the indirect block is read") };
    assert_eq!(mm.bdevs[0].stats.metadata_reads, reads + 2, "the inode table block was still cached");
    common::run_io(&mut mm);
    assert_eq!(mm.unlink_file(ino, 0), Ok(()));
    assert!(mm.inodes[ino as usize].is_none() && !mm.evicted_inodes.contains_key(&ino));
    check_all(&mm).unwrap();
}
