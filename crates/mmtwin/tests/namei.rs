//! Mechanism tests of creating files in a directory: the parent's i_mutex, the directory
//! blocks an indexed ext4 directory's lookup reads, and the journal's hold on their buffers.

mod common;
use common::{boot_fs, run_io};
use mmtwin::fs::ialloc::{mix64, DirId, ROOT_DIR};
use mmtwin::mm::mm_types::*;
use mmtwin::mm::mmzone::LruList;
use mmtwin::mm::vmscan::{Reclaimer, ScanControl};
use mmtwin::mm::{gfp::Gfp, Mm};

/// `common::boot_fs`, and the directory mutexes' wait queues the engine would set up.
fn boot(fs: &str) -> Mm {
    let mut mm = boot_fs(fs);
    mm.mutex_wq_base = 100;
    mm
}

/// A directory with `n` files created in it by named creates (each looked up first).
fn dir_with_files(mm: &mut Mm, n: u64) -> DirId {
    let dir = mm.mkdir(0, ROOT_DIR, 1).unwrap();
    for i in 0..n {
        let h = mix64(i);
        assert_eq!(mm.dx_lookup(0, dir, h, 0), None, "a directory being filled has its blocks in memory");
        mm.create_file_named(0, dir, Some(h), 0).unwrap();
    }
    dir
}

/// The journal lets go of everything (as once every block is committed and written home).
fn journal_empty(mm: &mut Mm) {
    let j = &mut mm.journals[0];
    j.running = Default::default();
    j.committing.clear();
    j.checkpoint.clear();
}

#[test]
fn creators_in_one_directory_take_its_i_mutex_in_turn_and_unlock_wakes_the_first_waiter() {
    let mut mm = boot("ext4");
    let dir = mm.mkdir(0, ROOT_DIR, 1).unwrap();
    let wq = mm.dir_mutex_waitqueue(0, dir);
    assert_eq!(mm.dir_mutex_lock(0, dir, 1), Ok(()));
    assert_eq!(mm.dir_mutex_lock(0, dir, 2), Err(wq));
    assert_eq!(mm.dir_mutex_lock(0, dir, 3), Err(wq));
    assert_eq!(mm.bdevs[0].stats.i_mutex_waits, 2);
    mm.dir_mutex_unlock(0, dir, 1);
    // Only the first waiter is woken; the second, if it runs first, must wait on.
    assert_eq!(mm.task_wakeups, vec![(wq, 2)]);
    assert_eq!(mm.dir_mutex_lock(0, dir, 3), Err(wq));
    mm.now_ns = 5_000;
    assert_eq!(mm.dir_mutex_lock(0, dir, 2), Ok(()));
    assert_eq!(mm.bdevs[0].stats.i_mutex_wait_ns, 5_000);
    // Another directory's mutex is another lock.
    let other = mm.mkdir(0, ROOT_DIR, 1).unwrap();
    assert_eq!(mm.dir_mutex_lock(0, other, 3), Ok(()));
    mm.dir_mutex_unlock(0, dir, 2);
    assert_eq!(mm.task_wakeups.last(), Some(&(wq, 3)));
}

#[test]
fn a_lookup_reads_the_dx_root_then_the_leaf_its_name_hashes_to_once_they_were_dropped() {
    let mut mm = boot("ext4");
    let dir = dir_with_files(&mut mm, 600);
    let leaves = mm.sbs[0].dirs[dir as usize].blocks.len() - 1;
    assert!(leaves >= 8, "600 names of 48 bytes fill {leaves} leaves three quarters full");
    journal_empty(&mut mm);
    let bdev = mm.bdev_mapping(0);
    mm.invalidate_mapping_pages(bdev, 0);
    let h = mix64(1_000_000);
    let root = mm.dx_lookup(0, dir, h, 0).expect("the dx_root is read first");
    assert_eq!(mm.pages[root as usize].index as u64, mm.sbs[0].dirs[dir as usize].blocks[0]);
    // A second lookup while the read is in flight waits for the same page.
    assert_eq!(mm.dx_lookup(0, dir, h, 0), Some(root));
    assert_eq!(mm.bdevs[0].stats.dir_reads, 1);
    run_io(&mut mm);
    let leaf = mm.dx_lookup(0, dir, h, 0).expect("then the leaf");
    assert_eq!(Some(mm.pages[leaf as usize].index as u64), mm.dir_leaf_of(0, dir, h));
    run_io(&mut mm);
    assert_eq!(mm.dx_lookup(0, dir, h, 0), None);
    assert_eq!((mm.bdevs[0].stats.dir_reads, mm.bdevs[0].stats.metadata_reads), (2, 2));
    // The create that follows finds the leaf cached.
    mm.create_file_named(0, dir, Some(h), 0).unwrap();
    assert_eq!(mm.dx_lookup(0, dir, h, 0), None);
    assert_eq!(mm.bdevs[0].stats.metadata_reads, 2);
}

#[test]
fn a_directory_block_the_journal_holds_stays_in_memory() {
    let mut mm = boot("ext4");
    let dir = dir_with_files(&mut mm, 600);
    let bdev = mm.bdev_mapping(0);
    let before = mm.mapping(bdev).nrpages();
    // drop_caches: the journal holds every block of the new directory, so none is released.
    mm.invalidate_mapping_pages(bdev, 0);
    assert_eq!(mm.mapping(bdev).nrpages(), before);
    // Reclaim does not free them either: try_to_release_page fails and they are activated.
    let blocks = mm.sbs[0].dirs[dir as usize].blocks.clone();
    let pfns: Vec<_> = blocks.iter().map(|&b| mm.find_get_page(bdev, b as u32).unwrap()).collect();
    // Enough clean page cache besides them for 3.0 to scan the lists (batches of 32).
    let ino = mm.create_file(0, 0).unwrap();
    let mapping = mm.inode(ino).mapping;
    for i in 0..64 {
        let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
        mm.add_to_page_cache_lru(pfn, mapping, i, Gfp::GFP_KERNEL, 0);
        mm.pages[pfn as usize].flags |= PG_UPTODATE;
    }
    let mut zones: Vec<usize> = pfns.iter().map(|&p| mm.page_zone(p)).collect();
    zones.sort();
    zones.dedup();
    mm.in_reclaim = true;
    mm.reclaimer = Reclaimer::Kswapd;
    for zid in zones {
        let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
        sc.priority = 0;
        mm.shrink_zone(zid, &mut sc);
    }
    for &p in &pfns {
        assert_eq!(mm.pages[p as usize].mapping, bdev, "pfn {p} was freed");
    }
    for &p in &pfns {
        assert_eq!(mm.page_lru(p), LruList::ActiveFile, "pfn {p} flags {:#x}", mm.pages[p as usize].flags);
    }
    // Written home and let go, the blocks are clean page cache like any other.
    journal_empty(&mut mm);
    assert_eq!(mm.invalidate_mapping_pages(bdev, 0), before);
    for h in [mix64(7), mix64(8)] {
        assert_eq!(mm.dx_lookup(0, dir, h, 0).is_some(), true);
        run_io(&mut mm);
    }
}

#[test]
fn ext2_directories_are_not_read_through_the_block_device() {
    let mut mm = boot("ext2");
    let dir = dir_with_files(&mut mm, 300);
    assert_eq!(mm.nr_bdev_pages(0), 0);
    assert_eq!(mm.dx_lookup(0, dir, 5, 0), None);
}

#[test]
fn a_contender_spins_while_the_owner_runs_and_takes_the_mutex_as_it_is_released() {
    // 3.0's optimistic spinning (CONFIG_MUTEX_SPIN_ON_OWNER): task 2 finds the mutex held by a
    // running owner and spins; at the release it is 2's, so the owner coming straight back
    // (its next create) must wait. While an owner sleeps holding the mutex, contenders sleep
    // in the wait list instead, and the first of them is woken at the release.
    let mut mm = boot("ext4");
    let dir = mm.mkdir(0, ROOT_DIR, 1).unwrap();
    let wq = mm.dir_mutex_waitqueue(0, dir);
    assert_eq!(mm.dir_mutex_lock(0, dir, 1), Ok(()));
    assert_eq!(mm.dir_mutex_lock(0, dir, 2), Err(wq));
    assert_eq!(mm.sbs[0].dirs[dir as usize].i_mutex.spinners.len(), 1);
    mm.dir_mutex_unlock(0, dir, 1);
    assert_eq!(mm.task_wakeups, vec![(wq, 2)]);
    assert_eq!(mm.dir_mutex_lock(0, dir, 1), Err(wq), "the spinner has it");
    mm.now_ns = 2_000;
    assert_eq!(mm.dir_mutex_lock(0, dir, 2), Ok(()));
    assert_eq!(mm.bdevs[0].stats.i_mutex_wait_ns, 2_000);
    // Task 1 spins behind 2; then 2 sleeps holding the mutex (its lookup reads a block): 1
    // gives up spinning, and 3 arriving now sleeps too, behind it.
    mm.dir_mutex_owner_asleep(0, dir, true);
    assert_eq!(mm.dir_mutex_lock(0, dir, 3), Err(wq));
    let m = &mm.sbs[0].dirs[dir as usize].i_mutex;
    assert!(m.spinners.is_empty());
    assert_eq!(m.wait_list.iter().map(|&(t, _)| t).collect::<Vec<_>>(), vec![1, 3]);
    mm.dir_mutex_unlock(0, dir, 2);
    assert_eq!(mm.task_wakeups.last(), Some(&(wq, 1)), "the first sleeper is woken");
    assert_eq!(mm.dir_mutex_lock(0, dir, 1), Ok(()));
}
