//! Mechanism tests of block and inode placement (fs/balloc.rs, fs/ialloc.rs): one kernel
//! behaviour each.

mod common;
use mmtwin::block::SECTORS_PER_PAGE;
use mmtwin::config::scenario::Scenario;
use mmtwin::fs::ialloc::ROOT_DIR;
use mmtwin::fs::jbd::BLOCKS_PER_GROUP;
use mmtwin::fs::Ino;
use mmtwin::mm::Mm;

fn boot(fs: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 2, memory = \"256M\" }}]\nfs = \"{fs}\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}

/// The file system block of page `index` of `ino`.
fn block(mm: &Mm, ino: Ino, index: u32) -> u64 {
    mm.sbs[0].block_of(mm.bmap(ino, index).expect("mapped"))
}

/// Writes pages `pages` of `ino` as task `pid` (get_block at write(), as ext2/ext3 do).
fn write_as(mm: &mut Mm, ino: Ino, pid: u32, pages: std::ops::Range<u32>) {
    mm.sched.current_pid = pid;
    for i in pages {
        mm.get_block(ino, i);
    }
}

#[test]
fn ext3_starts_each_writers_first_block_at_its_pid_colour_in_the_inode_group() {
    let mut mm = boot("ext3");
    let dir = mm.mkdir(0, ROOT_DIR, 1).unwrap();
    let (a, b) = (mm.create_file_in(0, dir, 0).unwrap(), mm.create_file_in(0, dir, 0).unwrap());
    let g = u64::from(mm.inode(a).i_block_group);
    assert_eq!(g, u64::from(mm.sbs[0].dirs[dir as usize].group), "a file's inode goes to its directory's group");
    write_as(&mut mm, a, 3, 0..1);
    write_as(&mut mm, b, 20, 0..1);
    // ext3_find_near: group start + (pid % 16) × blocks_per_group / 16.
    assert_eq!(block(&mm, a, 0), g * BLOCKS_PER_GROUP + 3 * BLOCKS_PER_GROUP / 16);
    assert_eq!(block(&mm, b, 0), g * BLOCKS_PER_GROUP + 4 * BLOCKS_PER_GROUP / 16);
    // ext4 (delayed allocation) has no colour: the flex group's second group, first fit.
    let mut mm = boot("ext4");
    let f = mm.create_file(0, 0).unwrap();
    write_as(&mut mm, f, 3, 0..1);
    assert_eq!(block(&mm, f, 0) / BLOCKS_PER_GROUP, 1);
}

#[test]
fn ext3_reservation_windows_keep_two_interleaved_writers_apart_and_grow() {
    let mut mm = boot("ext3");
    let (a, b) = (mm.create_file(0, 0).unwrap(), mm.create_file(0, 0).unwrap());
    // Same colour: without windows the two files would alternate block by block.
    for i in 0..40 {
        write_as(&mut mm, a, 5, i..i + 1);
        write_as(&mut mm, b, 21, i..i + 1);
    }
    let runs = |ino| mm.inode(ino).extents.iter().map(|e| e.2).collect::<Vec<_>>();
    // Windows of 8, then 16, then 32 blocks (doubled while more than half used); the second
    // window holds data blocks 8-11, the indirect block that block 12 needs, and 12-22.
    assert_eq!(runs(a), [8, 4, 11, 17]);
    let e = &mm.inode(a).extents;
    assert_eq!(e[2].1, e[1].1 + 5 * SECTORS_PER_PAGE);
    assert_eq!(mm.inode(a).meta_blocks.values().copied().collect::<Vec<_>>(), [mm.sbs[0].block_of(e[1].1) + 4]);
    assert_eq!(mm.inode(a).alloc.rsv_goal_size, 32);
    assert_eq!(runs(b), [8, 4, 11, 17], "b's windows alternate with a's");
    // Closing the file discards its window; the goal size stays.
    mm.close_file(a);
    assert!(mm.inode(a).alloc.window.is_none());
    assert_eq!(mm.sbs[0].rsv.len(), 1);
}

#[test]
fn a_deleted_files_blocks_are_free_again_and_ext4_reuses_them() {
    let mut mm = boot("ext4");
    let free0 = mm.sbs[0].free.total_free;
    let a = mm.create_file(0, 0).unwrap();
    write_as(&mut mm, a, 1, 0..100);
    let first = block(&mm, a, 0);
    assert_eq!(mm.sbs[0].free.total_free, free0 - 100);
    mm.close_file(a);
    assert_eq!(mm.unlink_file(a, 0), Ok(()));
    assert_eq!(mm.sbs[0].free.total_free, free0);
    let b = mm.create_file(0, 0).unwrap();
    write_as(&mut mm, b, 1, 0..1);
    assert_eq!(block(&mm, b, 0), first, "first fit from the same goal");
}

#[test]
fn orlov_spreads_top_level_directories_and_keeps_subdirectories_near_their_parent() {
    let mut mm = boot("ext3");
    let ids: Vec<u32> = (0..4).map(|i| mm.mkdir(0, ROOT_DIR, i).unwrap()).collect();
    let tops: Vec<u32> = ids.iter().map(|&d| mm.sbs[0].dirs[d as usize].group).collect();
    let distinct: std::collections::BTreeSet<_> = tops.iter().collect();
    assert_eq!(distinct.len(), 4, "each top-level directory in the emptiest group: {tops:?}");
    let parent = mm.mkdir(0, ROOT_DIR, 9).unwrap();
    let sub = mm.mkdir(0, parent, 9).unwrap();
    assert_eq!(mm.sbs[0].dirs[sub as usize].group, mm.sbs[0].dirs[parent as usize].group);
}

#[test]
fn a_directory_grows_a_leaf_block_when_its_leaves_are_three_quarters_full() {
    let mut mm = boot("ext3");
    let dir = mm.mkdir(0, ROOT_DIR, 1).unwrap();
    assert_eq!(mm.sbs[0].dirs[dir as usize].blocks.len(), 1);
    for _ in 0..63 {
        mm.create_file_in(0, dir, 0).unwrap();
    }
    assert_eq!(mm.sbs[0].dirs[dir as usize].blocks.len(), 1, "63 of 85 entries: still one leaf");
    mm.create_file_in(0, dir, 0).unwrap();
    assert_eq!(mm.sbs[0].dirs[dir as usize].blocks.len(), 2);
    let j = mm.sbs[0].journal.unwrap();
    let blocks = mm.sbs[0].dirs[dir as usize].blocks.clone();
    assert!(blocks.iter().all(|b| mm.journals[j].running.meta.contains(b)), "the leaves are logged");
}

#[test]
fn ext3_indirect_blocks_are_cached_in_the_block_devices_page_cache_and_activate() {
    use mmtwin::mm::mm_types::{PG_ACTIVE, PG_MAPPED};
    use mmtwin::mm::mmzone::ZoneStat;
    let mut mm = boot("ext3");
    let f = mm.create_file_in(0, ROOT_DIR, 0).unwrap();
    let files0 = mm.global_page_state(ZoneStat::NrFilePages);
    // 12 direct blocks, 1,024 under the single-indirect block, then the double-indirect block
    // and its first two children: four indirect blocks for 3,000 blocks.
    write_as(&mut mm, f, 5, 0..3000);
    assert_eq!(mm.inode(f).meta_blocks.len(), 4);
    assert_eq!(mm.nr_bdev_pages(0), 4, "one page of the block device per indirect block");
    assert_eq!(mm.global_page_state(ZoneStat::NrFilePages), files0 + 4, "counted as page cache (Buffers)");
    let bdev = mm.bdev_mapping(0);
    let ind = *mm.inode(f).meta_blocks.get(&0).unwrap();
    let page = mm.find_get_page(bdev, ind as u32).expect("the single-indirect block is cached at its block number");
    let flags = mm.pages[page as usize].flags;
    assert_ne!(flags & PG_ACTIVE, 0, "looked up for each of its 1,024 blocks: active");
    assert_eq!(flags & PG_MAPPED, 0, "unmapped page cache, which zone_reclaim's gate counts");
    // ext4 maps its blocks with extents: no indirect blocks, no Buffers.
    let mut e = boot("ext4");
    let g = e.create_file_in(0, ROOT_DIR, 0).unwrap();
    write_as(&mut e, g, 5, 0..3000);
    assert_eq!(e.nr_bdev_pages(0), 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// The free-extent map (keyed by extent end) against a set of free blocks: any sequence of
    /// frees and takes leaves the same free blocks, merged into maximal extents, with the same
    /// per-group and total counts, and first_free answers as the set does.
    #[test]
    fn free_space_agrees_with_a_set_of_free_blocks(ops in proptest::collection::vec((0u64..3 * BLOCKS_PER_GROUP, 1u64..40, proptest::bool::ANY), 1..200), probes in proptest::collection::vec((0u64..3 * BLOCKS_PER_GROUP, 0u64..5000), 16)) {
        use std::collections::BTreeSet;
        let mut fs = mmtwin::fs::balloc::FreeSpace { group_free: vec![0; 4], ..Default::default() };
        let mut set = BTreeSet::new();
        for (at, len, give) in ops {
            if give {
                // Free the blocks of [at, at + len) that are in use, run by run.
                let mut b = at;
                while b < at + len {
                    let e = (b..at + len).find(|x| set.contains(x)).unwrap_or(at + len);
                    fs.give(b, e - b);
                    set.extend(b..e);
                    b = (e..at + len).find(|x| !set.contains(x)).unwrap_or(at + len);
                }
            } else if let Some(b) = fs.first_free(at, at + len) {
                proptest::prop_assert_eq!(Some(b), set.range(at..at + len).next().copied());
                fs.take(b);
                set.remove(&b);
            } else {
                proptest::prop_assert!(set.range(at..at + len).next().is_none());
            }
        }
        for (from, len) in probes {
            proptest::prop_assert_eq!(fs.first_free(from, from + len), set.range(from..from + len).next().copied());
        }
        // Maximal extents: consecutive free blocks make one extent.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for &b in &set {
            match runs.last_mut() {
                Some((_, e)) if *e == b => *e += 1,
                _ => runs.push((b, b + 1)),
            }
        }
        proptest::prop_assert_eq!(fs.extents.iter().map(|(&e, &s)| (s, e)).collect::<Vec<_>>(), runs);
        proptest::prop_assert_eq!(fs.total_free, set.len() as u64);
        for g in 0..4u64 {
            proptest::prop_assert_eq!(u64::from(fs.group_free[g as usize]), set.range(g * BLOCKS_PER_GROUP..(g + 1) * BLOCKS_PER_GROUP).count() as u64);
        }
    }
}

#[test]
fn at_delete_ext3_reads_the_indirect_blocks_not_cached_their_children_last_to_first_and_ext2_first_to_last() {
    // A file of 4,108 blocks maps blocks 12-1035 through its single-indirect block and the
    // rest through the double-indirect block's first three children (slots 3-5). Laid out on
    // disk with none of them cached, its delete (ext3_truncate / ext2_truncate_blocks) reads
    // each before it frees the blocks under it, one read at a time: the single-indirect block,
    // the double-indirect block, then its children, ext3 from the last, ext2 from the first.
    for (fs, children) in [("ext3", [5, 4, 3]), ("ext2", [3, 4, 5])] {
        let mut mm = boot(fs);
        let ino = mm.create_file(0, 0).unwrap();
        mm.lay_out_file(ino, 12 + 1024 + 3 * 1024);
        let meta = mm.inode(ino).meta_blocks.clone();
        assert_eq!(meta.keys().copied().collect::<Vec<_>>(), [0, 1, 3, 4, 5]);
        mm.close_file(ino);
        let reads0 = mm.bdevs[0].stats.metadata_reads;
        let mut read = Vec::new();
        loop {
            match mm.unlink_file(ino, 0) {
                Ok(()) => break,
                Err(Some(pfn)) => {
                    read.push(u64::from(mm.pages[pfn as usize].index));
                    mmtwin::testing::checkers::check_all(&mm).unwrap();
                    if read.len() == 1 {
                        // The checker catches a delete that would read a block not the file's.
                        mm.truncating.get_mut(&ino).unwrap().push((1, 0));
                        assert!(mmtwin::testing::checkers::check_all(&mm).is_err());
                        mm.truncating.get_mut(&ino).unwrap().pop();
                    }
                    common::run_io(&mut mm);
                }
                Err(None) => panic!("{fs}: no memory"),
            }
        }
        let want: Vec<u64> = [0, 1].into_iter().chain(children).map(|slot| meta[&slot]).collect();
        assert_eq!(read, want, "{fs}: blocks read, in order");
        assert_eq!(mm.bdevs[0].stats.metadata_reads - reads0, 5, "{fs}");
        assert!(mm.inodes[ino as usize].is_none());
    }
    // Blocks still cached are not read again, and ext4's extents need none.
    for fs in ["ext3", "ext4"] {
        let mut mm = boot(fs);
        let ino = mm.create_file(0, 0).unwrap();
        write_as(&mut mm, ino, 1, 0..2000);
        mm.close_file(ino);
        let reads0 = mm.bdevs[0].stats.metadata_reads;
        assert_eq!(mm.unlink_file(ino, 0), Ok(()), "{fs}");
        assert_eq!(mm.bdevs[0].stats.metadata_reads, reads0, "{fs}");
    }
}
