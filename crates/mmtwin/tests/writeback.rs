//! Mechanism tests of writeback from reclaim, per file system and per policy, and of dirty
//! placement: one kernel behaviour each.

mod common;
use common::{run_io, woken_for_request};
use mmtwin::config::scenario::Scenario;
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::mm_types::*;
use mmtwin::mm::mmzone::{ZoneStat, ZoneType};
use mmtwin::mm::vmscan::{Reclaimer, ScanControl};
use mmtwin::mm::{Mm, Pfn};

/// A one-node 3.0 machine of `mem` with file system `fs` and the policies in `policy`.
fn boot(mem: &str, fs: &str, policy: &str) -> Mm {
    boot_disk(mem, fs, policy, "")
}

/// As `boot`, with the `[machine]` line `disk` (a `disk = { ... }` table, or nothing).
fn boot_disk(mem: &str, fs: &str, policy: &str, disk: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 1, memory = \"{mem}\" }}]\nboot_reserved = \"1M\"\nfs = \"{fs}\"\n{disk}\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\npolicy = {{ {policy} }}\nsysctl = {{ dirty_ratio = 40 }}\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}

/// 16 requests of at most 4 pages (16 KiB) on the device.
const SMALL_QUEUE: &str = "disk = { max_sectors_kb = 16, nr_requests = 16 }";

/// `n` dirty pages of a new file, written from `cpu` the way write() does (blocks mapped at
/// write time on ext2/ext3, not on ext4/xfs); the zone of the first page.
fn dirty_file(mm: &mut Mm, n: u32) -> (u32, Vec<Pfn>) {
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = Default::default();
    for i in 0..n {
        assert_eq!(mm.file_write_page(ino, i, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Done);
    }
    let mapping = mm.inode(ino).mapping;
    let pfns = (0..n).map(|i| mm.find_get_page(mapping, i).unwrap()).collect();
    (ino, pfns)
}

/// One reclaim pass by `who` at `priority` over the zone of `pfn`, every page unreferenced.
fn reclaim(mm: &mut Mm, pfn: Pfn, who: Reclaimer, priority: i32) -> ScanControl {
    for p in mm.pages.iter_mut() {
        p.flags &= !(PG_REFERENCED | PG_YOUNG);
    }
    let zid = mm.page_zone(pfn);
    mm.in_reclaim = true;
    mm.reclaimer = who;
    let mut sc = ScanControl::new(who, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
    sc.priority = priority;
    sc.may_writepage = true;
    mm.shrink_zone(zid, &mut sc);
    mm.in_reclaim = false;
    sc
}

fn writes(mm: &Mm) -> u64 {
    mm.global_page_state(ZoneStat::NrVmscanWrite)
}

#[test]
fn ext3_writes_a_dirty_page_reclaim_meets_as_a_single_page_io() {
    let mut mm = boot("64M", "ext3", "");
    let (_, pfns) = dirty_file(&mut mm, 8);
    let sc = reclaim(&mut mm, pfns[0], Reclaimer::Direct, 0);
    assert_eq!(writes(&mm), 8, "nr_vmscan_write");
    assert!(sc.nr_dirty >= 8);
    assert_eq!(mm.global_page_state(ZoneStat::NrWriteback), 8, "all under writeback");
    assert!(mm.bdevs[0].stats.requests[1] >= 1);
}

#[test]
fn direct_reclaim_writes_to_a_congested_queue_only_if_it_is_the_writers_own_files() {
    // 3.0 may_write_to_queue: a task without PF_SWAPWRITE leaves a dirty page alone when its
    // queue is congested, unless that queue is the one of the file its buffered write() is
    // writing (current->backing_dev_info, set by __generic_file_aio_write for the call).
    let run = |own: bool| {
        let mut mm = boot("64M", "ext3", "");
        let (_, pfns) = dirty_file(&mut mm, 8);
        mm.bdevs[0].congested[1] = true;
        mm.current_bdi = own.then_some(0);
        let sc = reclaim(&mut mm, pfns[0], Reclaimer::Direct, 0);
        (writes(&mm), sc.nr_congested)
    };
    assert_eq!(run(false), (0, 8), "another task's reclaim keeps them");
    assert_eq!(run(true), (8, 0), "the writer's own reclaim writes them");
}

#[test]
fn ext4_redirties_a_delalloc_page_from_reclaim_counted_but_no_io() {
    let mut mm = boot("64M", "ext4", "");
    let (_, pfns) = dirty_file(&mut mm, 8);
    reclaim(&mut mm, pfns[0], Reclaimer::Kswapd, 0);
    assert_eq!(writes(&mm), 8, "every writepage call counts");
    assert_eq!(mm.global_page_state(ZoneStat::NrWriteback), 0, "no I/O");
    assert_eq!(mm.global_page_state(ZoneStat::NrFileDirty), 8, "still dirty");
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & PG_RECLAIM == 0), "PG_reclaim cleared");
}

#[test]
fn xfs_refuses_direct_reclaim_but_kswapd_writes_the_page_with_its_cluster() {
    let mut mm = boot("64M", "xfs", "");
    let (ino, pfns) = dirty_file(&mut mm, 64);
    reclaim(&mut mm, pfns[0], Reclaimer::Direct, 0);
    assert_eq!(mm.global_page_state(ZoneStat::NrWriteback), 0, "direct reclaim: redirtied");
    assert!(writes(&mm) > 0, "but counted");
    let before = writes(&mm);
    // kswapd, one page at a time off the tail: the first one it writes allocates the whole
    // delalloc extent and takes up to 32 following pages along.
    reclaim(&mut mm, pfns[0], Reclaimer::Kswapd, 0);
    let wb = mm.global_page_state(ZoneStat::NrWriteback);
    assert!(wb > writes(&mm) - before, "{wb} pages under writeback for {} writepage calls", writes(&mm) - before);
    assert!((0..64).all(|i| mm.bmap(ino, i).is_some()), "the extent is allocated");
    // Allocated in file order: contiguous sectors.
    let s0 = mm.bmap(ino, 0).unwrap();
    assert!((0..64).all(|i| mm.bmap(ino, i) == Some(s0 + 8 * u64::from(i))));
}

#[test]
fn lesskswapd_direct_reclaim_leaves_dirty_file_pages_to_the_flusher_with_pg_reclaim() {
    let mut mm = boot("64M", "ext3", "reclaim_writeback = \"lesskswapd\"");
    let (_, pfns) = dirty_file(&mut mm, 8);
    reclaim(&mut mm, pfns[0], Reclaimer::Direct, 0);
    assert_eq!(writes(&mm), 0);
    assert_eq!(mm.global_page_state(ZoneStat::NrVmscanImmediate), 8);
    assert!(pfns.iter().all(|&p| mm.pages[p as usize].flags & PG_RECLAIM != 0));
}

#[test]
fn lesskswapd_kswapd_writes_only_once_its_priority_is_high() {
    let mut mm = boot("64M", "ext3", "reclaim_writeback = \"lesskswapd\"");
    let (_, pfns) = dirty_file(&mut mm, 8);
    reclaim(&mut mm, pfns[0], Reclaimer::Kswapd, 10); // DEF_PRIORITY - 2: still skipped
    assert_eq!(writes(&mm), 0);
    reclaim(&mut mm, pfns[0], Reclaimer::Kswapd, 9);
    assert_eq!(writes(&mm), 8);
}

#[test]
fn perzonedirty_write_allocations_skip_a_zone_over_its_dirty_limit() {
    for (policy, expect) in [("", ZoneType::Dma32), ("dirty_placement = \"perzonedirty\"", ZoneType::Dma)] {
        let mut mm = boot("256M", "ext4", policy);
        // Dirty DMA32 past 40% of its dirtyable memory.
        let dma32 = mm.zones.iter().position(|z| z.zone_type == ZoneType::Dma32).unwrap();
        let limit = mm.zone_dirty_limits(dma32).1;
        let (_, pfns) = dirty_file(&mut mm, (limit + 64) as u32);
        assert!(pfns.iter().all(|&p| mm.zones[mm.page_zone(p)].zone_type == ZoneType::Dma32) || !policy.is_empty());
        let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE.with(Gfp::WRITE), 0, 0).unwrap();
        assert_eq!(mm.zones[mm.page_zone(pfn)].zone_type, expect, "policy {policy:?}");
        // Allocations that will not be dirtied are not steered.
        let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
        assert_eq!(mm.zones[mm.page_zone(pfn)].zone_type, ZoneType::Dma32);
    }
}

#[test]
fn a_writer_that_fills_the_queue_sleeps_holding_a_whole_bio() {
    // 16 requests of at most 4 pages. ext4 builds a bio before it asks for its request, so a
    // writer that finds the pool used up sleeps holding a whole bio, its pages under
    // writeback, and queues it when woken: every request is whole.
    let mut mm = boot_disk("64M", "ext4", "", SMALL_QUEUE);
    let (ino, _) = dirty_file(&mut mm, 200);
    let mut total = 0;
    loop {
        let (written, blocked) = mm.writeback_single_inode(ino, 1024, true, false);
        total += written;
        assert_eq!(written % 4, 0, "a stop inside a bio would leave a short request: {written}");
        if !blocked {
            break;
        }
        assert_eq!(mm.rq_wait_owed, Some(mm.bdevs[0].rq_wait[mmtwin::block::Pool::Async as usize]), "asleep in get_request_wait");
        let held = mm.held_bio[mm.sched.current_pid as usize].as_ref().expect("a held bio");
        assert_eq!(held.bio.pages.len(), 4, "it holds a whole bio");
        assert!(held.bio.pages.iter().all(|&p| mm.pages[p as usize].flags & PG_WRITEBACK != 0));
        run_io(&mut mm);
        woken_for_request(&mut mm);
    }
    run_io(&mut mm);
    assert_eq!(total, 200);
    let s = &mm.bdevs[0].stats;
    assert_eq!(s.rq_size_hist[1][0], 0, "no single-page requests");
    assert_eq!((s.requests[1], s.sectors[1]), (50, 200 * 8));
}

#[test]
fn an_ext3_writer_sleeps_holding_the_first_page_of_a_request_and_woken_fills_that_request() {
    // ext3 writes page by page and its plug merges the pages into requests, so the writer asks
    // for a request at a request's first page: finding the pool used up, it sleeps holding
    // that page alone, under writeback. Woken, it adds its next pages to the same request:
    // every request is whole, as without the sleeps.
    let mut mm = boot_disk("64M", "ext3", "", SMALL_QUEUE);
    let (ino, _) = dirty_file(&mut mm, 400);
    let (mut total, mut sleeps) = (0, 0);
    loop {
        let (written, blocked) = mm.writeback_single_inode(ino, 1024, true, false);
        total += written;
        if mm.holds_granted_bio() {
            mm.submit_held_bio();
        }
        if !blocked {
            break;
        }
        sleeps += 1;
        let held = mm.held_bio[mm.sched.current_pid as usize].as_ref().expect("a held bio");
        assert_eq!(held.bio.pages.len(), 1, "it holds one page");
        assert_ne!(mm.pages[held.bio.pages[0] as usize].flags & PG_WRITEBACK, 0, "under writeback");
        run_io(&mut mm);
        woken_for_request(&mut mm);
    }
    run_io(&mut mm);
    assert!(sleeps >= 2, "{sleeps} sleeps for a request");
    assert_eq!(total, 400);
    let s = &mm.bdevs[0].stats;
    assert_eq!((s.requests[1], s.sectors[1]), (100, 400 * 8), "whole requests of 4 pages");
}

#[test]
fn unlink_drops_dirty_pages_unwritten_and_waits_only_for_those_under_writeback() {
    let mut mm = boot("64M", "ext4", "");
    let (ino, pfns) = dirty_file(&mut mm, 64);
    mm.close_file(ino);
    // The flusher has started on the first 8 pages; the other 56 are still dirty.
    let (written, _) = mm.writeback_single_inode(ino, 8, true, false);
    assert_eq!(written, 8);
    let out_before = mm.bdevs[0].stats.sectors[1];
    let wait = mm.unlink_file(ino, 0).unwrap_err().expect("a page under writeback to wait for");
    assert!(pfns[..8].contains(&wait));
    assert_eq!(mm.global_page_state(ZoneStat::NrFileDirty), 0, "dirty pages cancelled at once");
    assert_eq!(mm.global_page_state(ZoneStat::NrWriteback), 8);
    run_io(&mut mm);
    assert_eq!(mm.unlink_file(ino, 0), Ok(()), "evicted once the writeback ended");
    assert_eq!(mm.bdevs[0].stats.sectors[1], out_before, "nothing more was written");
    assert_eq!(mm.global_page_state(ZoneStat::NrFilePages), 0);
}

#[test]
fn a_freed_async_write_request_ends_congestion_wait_and_reads_and_direct_writes_do_not() {
    // __freed_request calls clear_bdi_congested for every request freed below the
    // congestion-off mark, congested or not, and that wakes the waiters of the request's
    // class: writeback (WRITE) wakes congestion_wait(BLK_RW_ASYNC); reads and O_DIRECT writes
    // (WRITE_ODIRECT, a sync write) wake the sync class instead.
    let mut mm = boot("64M", "ext3", "");
    let wqh = mm.congestion_wqh;
    mm.congestion_wait(20_000_000);
    let (ns, _) = mm.congestion_sleep.expect("the step owes a congestion wait");
    assert!(ns > 16_000_000 && ns <= 20_000_000, "HZ/50 ended at a tick: {ns}");
    assert!(!mm.bdevs[0].is_congested(mmtwin::block::Pool::Async), "no queue is congested");
    let id = mm.new_dio(usize::MAX);
    for (dir, sector) in [(mmtwin::block::Dir::Read, 0), (mmtwin::block::Dir::Write, 1 << 20)] {
        mm.dios[id as usize - 1].remaining += 1;
        let mut b = mmtwin::block::Bio::new(dir, sector, 10_000);
        b.dio = id;
        b.sync = dir == mmtwin::block::Dir::Write; // WRITE_ODIRECT
        mm.submit_bio(0, b);
        mm.wakeups.clear();
        run_io(&mut mm);
        assert!(!mm.wakeups.contains(&wqh), "a {dir:?} of direct I/O does not end it");
    }
    let (_, pfns) = dirty_file(&mut mm, 8);
    reclaim(&mut mm, pfns[0], Reclaimer::Kswapd, 0);
    assert!(mm.bdevs[0].in_flight.is_some(), "pageout wrote");
    mm.wakeups.clear();
    run_io(&mut mm);
    assert!(mm.wakeups.contains(&wqh), "a completed writeback request ends it");
}

#[test]
fn reclaim_run_by_write_begins_block_allocation_cannot_take_the_page_being_written() {
    // ext3 maps a written page's block in write_begin, with the page locked; the block (and
    // its indirect block) may need memory, and the reclaim that frees it must pass over the
    // page (trylock_page fails) rather than free it under the writer.
    let mut mm = boot("64M", "ext3", "");
    let (clean, old) = dirty_file(&mut mm, 10);
    mm.writeback_single_inode(clean, u64::MAX, false, false);
    run_io(&mut mm);
    assert_eq!(mm.global_page_state(ZoneStat::NrFileDirty), 0);
    // Free memory: none in the DMA zone, five pages over min in DMA32: enough for one refill
    // of the per-cpu list (a batch of 3), not for a second.
    let (dma, dma32) = (common::zid(0, ZoneType::Dma), common::zid(0, ZoneType::Dma32));
    common::drain_zone(&mut mm, dma);
    let blocks = common::drain_zone(&mut mm, dma32);
    let keep = mm.zones[dma32].min_wmark_pages() + 5;
    let singles = blocks.iter().flat_map(|&(pfn, order)| (0..1u32 << order).map(move |i| pfn + i));
    for pfn in singles.take(keep as usize) {
        let mt = mm.get_pageblock_migratetype(pfn);
        mm.__free_one_page(dma32, pfn, 0, mt);
    }
    let steals0 = mm.vmstat_snapshot()[mmtwin::mm::vmstat::VmStat::PgstealDma32 as usize];
    // Page 12 is the first behind ext3's indirect block: its data page comes from that one
    // refill, the indirect block's page finds the zone at min and reclaims.
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = Default::default();
    assert_eq!(mm.file_write_page(ino, 12, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Done);
    let steals = mm.vmstat_snapshot()[mmtwin::mm::vmstat::VmStat::PgstealDma32 as usize] - steals0;
    assert!(steals > 0, "direct reclaim ran inside write_begin");
    let mapping = mm.inode(clean).mapping;
    assert!((0..10).any(|i| mm.find_get_page(mapping, i).is_none()), "the clean pages {old:?} were reclaimed");
    let pfn = mm.find_get_page(mm.inode(ino).mapping, 12).expect("the page being written stays in the cache");
    let f = mm.pages[pfn as usize].flags;
    assert!(f & PG_DIRTY != 0 && f & PG_LOCKED == 0, "dirty and unlocked after write_end: {f:#x}");
    mmtwin::testing::checkers::check_all(&mm).unwrap();
}

/// Writes a new file from CPU 0 until the writer is caught in balance_dirty_pages' loop;
/// returns the file, the writer's throttle state and the page it would write next.
fn write_until_throttled(mm: &mut Mm) -> (u32, mmtwin::mm::page_writeback::DirtyThrottle, u32) {
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = mmtwin::mm::page_writeback::DirtyThrottle::default();
    let mut i = 0;
    while t.throttled_since.is_none() {
        assert_eq!(mm.file_write_page(ino, i, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Done);
        i += 1;
        assert!(i < 16_384, "the writer was never throttled");
    }
    (ino, t, i)
}

#[test]
fn a_throttled_writer_dirties_nothing_more_until_balance_dirty_pages_lets_it_go() {
    let mut mm = boot("64M", "ext2", "");
    // Nothing completes I/O here, so dirty plus writeback pages stay over the limit.
    let (ino, mut t, i) = write_until_throttled(&mut mm);
    let dirtied = |mm: &Mm| mm.global_page_state(ZoneStat::NrFileDirty) + mm.global_page_state(ZoneStat::NrWriteback);
    let before = dirtied(&mm);
    let mapping = mm.inode(ino).mapping;
    for _ in 0..5 {
        assert_eq!(mm.file_write_page(ino, i, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Retry, "the next page waits for the loop");
        assert!(t.throttled_since.is_some());
    }
    assert_eq!(dirtied(&mm), before, "no page dirtied while throttled");
    assert!(mm.find_get_page(mapping, i).is_none(), "the next page was not even allocated");
}

#[test]
fn until_3_0_a_throttled_writer_waits_for_its_limit_and_from_3_1_leaves_after_200ms_in_the_max_pause_area() {
    use mmtwin::mm::filemap::PageIo;
    for (policy, leaves) in [("", false), ("balance_dirty_pages = \"io-full-max-pause\"", true)] {
        let mut mm = boot("64M", "ext2", policy);
        let (ino, mut t, i) = write_until_throttled(&mut mm);
        let since = t.throttled_since.unwrap();
        // Complete writes one request at a time until the device's dirty + writeback pages are
        // under the midpoint of the writer's and the device's limits, still over the writer's.
        let (_, dirty) = mm.global_dirty_limits();
        let bdi_thresh = mm.bdi_dirty_limit(0, dirty);
        let task_limit = mm.task_dirty_limit(&mut t, bdi_thresh);
        let bdi_dirty = |mm: &Mm| (mm.bdi_stat[0].reclaimable + mm.bdi_stat[0].writeback) as u64;
        while bdi_dirty(&mm) >= (task_limit + bdi_thresh) / 2 {
            let k = (0..mm.io_timers.len()).min_by_key(|&k| mm.io_timers[k]).expect("writes in flight");
            let (at, dev) = mm.io_timers.swap_remove(k);
            mm.now_ns = mm.now_ns.max(at);
            mm.blk_complete(dev);
        }
        assert!(bdi_dirty(&mm) > task_limit && mm.bdi_stat[0].reclaimable as u64 <= task_limit, "in the max-pause area, nothing for the writer to write");
        // Nothing else completes; the writer retries every 20 ms.
        let mut left_after = None;
        for _ in 0..100 {
            mm.now_ns += 20_000_000;
            match mm.file_write_page(ino, i, 4096, 0, &mut t) {
                PageIo::Done => {
                    left_after = Some(mm.now_ns - since);
                    break;
                }
                PageIo::Retry => {}
                other => panic!("{other:?}"),
            }
        }
        if leaves {
            let ns = left_after.expect("3.1 lets the writer go");
            assert!(ns > 200_000_000 && ns <= 220_000_000, "after {ns} ns");
        } else {
            assert_eq!(left_after, None, "3.0 keeps the writer until its device is under its limit");
        }
    }
}

#[test]
fn until_3_0_writeback_gives_each_inode_1024_pages_a_turn_and_from_3_1_half_a_second_of_bandwidth() {
    // Two files of 8192 dirty pages on a 1G machine (100 MB/s disk, dirty limit 40%); a
    // writeback of 2048 pages from the older file on.
    for (policy, first, second) in [("", 1024, 1024), ("writeback_chunk = \"bandwidth\"", 2048, 0)] {
        let mut mm = boot("1G", "ext2", policy);
        let (a, _) = dirty_file(&mut mm, 8192);
        mm.now_ns += 1_000_000;
        let (b, _) = dirty_file(&mut mm, 8192);
        assert_eq!(mm.writeback_inodes_wb(0, 2048, &mut None), (2048, false));
        let under_writeback = |mm: &Mm, ino| {
            let mapping = mm.inode(ino).mapping;
            (0..8192).filter(|&i| mm.find_get_page(mapping, i).is_some_and(|p| mm.pages[p as usize].flags & PG_WRITEBACK != 0)).count()
        };
        assert_eq!((under_writeback(&mm, a), under_writeback(&mm, b)), (first, second), "{policy}");
    }
}

/// A 1G ext2 machine with `SMALL_QUEUE` and two files of 2048 dirty pages, the first dirtied
/// 1 ms before the second.
fn two_dirty_files_small_queue() -> (Mm, u32, u32) {
    let mut mm = boot_disk("1G", "ext2", "", SMALL_QUEUE);
    let (a, _) = dirty_file(&mut mm, 2048);
    mm.now_ns += 1_000_000;
    let (b, _) = dirty_file(&mut mm, 2048);
    (mm, a, b)
}

/// Pages of the first 2048 of file `ino` that are no longer dirty.
fn written(mm: &Mm, ino: u32) -> usize {
    let mapping = mm.inode(ino).mapping;
    (0..2048).filter(|&i| mm.find_get_page(mapping, i).is_some_and(|p| mm.pages[p as usize].flags & PG_DIRTY == 0)).count()
}

/// The device's flusher, woken for background writeback, and a random source for its steps.
fn woken_flusher(mm: &mut Mm) -> (mmtwin::fs::fs_writeback::Flusher, mmtwin::sim::rng::Rng) {
    mm.wakeup_flusher_threads(0);
    (mmtwin::fs::fs_writeback::Flusher::new(0, 500), mmtwin::sim::rng::Rng::new(1))
}

/// One step of flusher `f` as task 0 on CPU 0, with the engine's part around it (a bio it
/// held asleep is queued first; a wait for a request it owes ends the step): what it does
/// next.
fn flusher_step(mm: &mut Mm, f: &mut mmtwin::fs::fs_writeback::Flusher, rng: &mut mmtwin::sim::rng::Rng) -> mmtwin::sim::After {
    use mmtwin::sim::{After, Task, TaskCx};
    mm.sched.current_pid = 0;
    mm.woken_for_request();
    let mut cx = TaskCx { now: mm.now_ns, cpu: 0, tid: 0, mm, rng, timed_out: false };
    let after = f.step(&mut cx).after;
    if mm.holds_granted_bio() {
        mm.submit_held_bio();
    }
    match mm.rq_wait_owed.take() {
        Some(wq) if after == After::Continue => After::Wait(wq),
        _ => after,
    }
}

#[test]
fn a_flusher_stopped_by_a_full_queue_goes_on_with_the_same_inode() {
    // Two files of 2048 dirty pages, the older first; a queue of 16 requests of 4 pages, so
    // the flusher stops every 64 pages or so and waits for a request. The kernel's flusher
    // sleeps in get_request_wait inside the inode's turn: the first 1024 pages written are
    // all the older file's, then the turn passes to the other. (Until session 36 each stop
    // sent the inode to the back of the list, and the two files took 64-page turns.)
    let (mut mm, a, b) = two_dirty_files_small_queue();
    let (mut f, mut rng) = woken_flusher(&mut mm);
    let mut stops = 0;
    while written(&mm, a) + written(&mm, b) < 1024 {
        if matches!(flusher_step(&mut mm, &mut f, &mut rng), mmtwin::sim::After::Wait(_)) {
            stops += 1;
        }
        run_io(&mut mm);
    }
    assert!(stops >= 10, "the queue stopped the flusher {stops} times");
    assert_eq!((written(&mm, a), written(&mm, b)), (1024, 0));
    while written(&mm, b) == 0 {
        flusher_step(&mut mm, &mut f, &mut rng);
        run_io(&mut mm);
    }
    assert_eq!(written(&mm, a), 1024, "the next turn is the other file's");
}

#[test]
fn a_flusher_whose_dirty_inodes_are_all_in_another_writers_hands_sleeps_until_io_completes() {
    // 3.0 writeback_single_inode requeues an inode under I_SYNC to b_more_io, and wb_writeback,
    // having written nothing, sleeps in inode_wait_for_writeback until that writer is done with
    // it, instead of looking again at once.
    let (mut mm, a, b) = two_dirty_files_small_queue();
    // Both taken off the dirty list by writers asleep in their writeback (`hold`).
    for ino in [a, b] {
        let k = mm.inode_mut(ino).dirty_key.take().expect("on the dirty list");
        mm.sbs[0].b_dirty.remove(&k);
        mm.inode_mut(ino).state |= mmtwin::fs::I_SYNC;
    }
    let (mut f, mut rng) = woken_flusher(&mut mm);
    let io_wait = mm.bdevs[0].io_wait;
    match flusher_step(&mut mm, &mut f, &mut rng) {
        mmtwin::sim::After::WaitTimeout(wq, t) => assert_eq!((wq, t), (io_wait, mm.sched.jiffy_ns)),
        a => panic!("{a:?}"),
    }
    assert_eq!((written(&mm, a), written(&mm, b)), (0, 0));
}

#[test]
fn a_throttled_3_0_dirtier_sleeps_for_a_request_inside_its_writeback_and_goes_on_with_the_same_inode() {
    // Two files of 2048 dirty pages, the older first; then limits far below them, so a
    // dirtier in balance_dirty_pages writes back a chunk of 1536 pages itself. The queue
    // holds 16 requests of 4 pages: the dirtier fills it, queues a batch past it (it is the
    // task that filled it) and then sleeps in get_request_wait — not a throttling pause —
    // holding a bio of the older file, with which it goes on when requests are freed: its
    // turn's 1024 pages, then 512 of the other file. (Until session 43 it stopped at the full queue,
    // wrote nothing more and paused, its inode going to the back of the list.)
    use mmtwin::mm::page_writeback::DirtyThrottle;
    let (mut mm, a, b) = two_dirty_files_small_queue();
    mm.sysctl.dirty_background_bytes = 1 << 20;
    mm.sysctl.dirty_bytes = 2 << 20;
    mm.sched.current_pid = 5;
    let mut t = DirtyThrottle { write_chunk: 1536, ..Default::default() };
    mm.balance_dirty_pages(&mut t, 0);
    assert_eq!((mm.rq_wait_owed, mm.sleep_ns), (Some(mm.bdevs[0].rq_wait[mmtwin::block::Pool::Async as usize]), 0), "asleep for a request, no pause");
    assert_eq!(t.wb_held.map(|h| h.0), Some(a));
    // 24 requests queued (3/2 × 16, as the batcher that filled the pool), one in flight, and
    // the bio it sleeps holding (ext2 builds a bio before it asks for a request).
    assert_eq!(t.pages_written, 26 * 4);
    assert_eq!(mm.bdevs[0].allocated(mmtwin::block::Pool::Async), 24);
    let mut sleeps = 1;
    while t.wb_want > 0 {
        run_io(&mut mm);
        woken_for_request(&mut mm);
        mm.balance_dirty_pages(&mut t, 0);
        sleeps += u32::from(mm.rq_wait_owed.is_some());
        if written(&mm, b) == 0 {
            assert!(written(&mm, a) <= 1024);
        }
    }
    assert!(sleeps >= 10, "{sleeps} sleeps for a request");
    assert_eq!((written(&mm, a), written(&mm, b)), (1024, 512));
    assert!(t.throttled_since.is_none(), "its chunk written, it leaves the loop");
    assert_eq!(mm.sleep_ns, 0);
}

#[test]
fn kswapd_writing_into_a_used_up_request_pool_sleeps_for_a_request_and_writes_nothing_more_until_then() {
    // The flusher (task 0) fills a pool of 16 requests of 4 pages with the older file and, as
    // the task that filled it, queues a batch past it (24). kswapd (task 1) then scans the
    // list: its first write (ext2 maps blocks at write time, so ->writepage writes each dirty
    // page it meets) asks for a request, finds the pool used up and sleeps in
    // get_request_wait. Asleep, it writes nothing more in that pass: the other dirty pages it
    // meets wait for its next look. Woken once the pool is below 16 again, it is a batcher
    // and writes up to 3/2 of the pool. (Until session 44 reclaim queued its writes past a
    // full pool without ever sleeping.)
    let (mut mm, a, _) = two_dirty_files_small_queue();
    let (mut f, mut rng) = woken_flusher(&mut mm);
    assert!(matches!(flusher_step(&mut mm, &mut f, &mut rng), mmtwin::sim::After::Wait(_)), "the flusher waits for a request");
    assert_eq!(mm.bdevs[0].allocated(mmtwin::block::Pool::Async), 24, "the flusher's batch: 3/2 of the pool");
    mm.sched.current_pid = 1;
    let first = mm.find_get_page(mm.inode(a).mapping, 0).unwrap();
    let sc = reclaim(&mut mm, first, Reclaimer::Kswapd, 0);
    assert_eq!(mm.rq_wait_owed, Some(mm.bdevs[0].rq_wait[mmtwin::block::Pool::Async as usize]), "asleep in get_request_wait");
    assert_eq!(writes(&mm), 1, "one write: the one it sleeps for");
    assert_eq!(mm.bdevs[0].allocated(mmtwin::block::Pool::Async), 24, "it holds the page's bio, not queued");
    assert!(sc.nr_dirty > 1000, "it met {} dirty pages", sc.nr_dirty);
    // Requests complete until the pool is below nr_requests, which wakes it (the engine's
    // part); its next pass writes a batch.
    while mm.bdevs[0].allocated(mmtwin::block::Pool::Async) >= 16 {
        let i = (0..mm.io_timers.len()).min_by_key(|&i| mm.io_timers[i]).unwrap();
        let (t, dev) = mm.io_timers.swap_remove(i);
        mm.now_ns = t;
        mm.blk_complete(dev);
    }
    woken_for_request(&mut mm);
    assert_eq!(mm.bdevs[0].allocated(mmtwin::block::Pool::Async), 16, "the page it held is queued when it wakes");
    let before = writes(&mm);
    reclaim(&mut mm, first, Reclaimer::Kswapd, 0);
    let batch = writes(&mm) - before;
    assert!(batch > 8, "woken, it writes {batch} pages");
    assert_eq!(mm.rq_wait_owed, Some(mm.bdevs[0].rq_wait[mmtwin::block::Pool::Async as usize]), "then sleeps again");
    assert!(mm.bdevs[0].allocated(mmtwin::block::Pool::Async) <= 25, "{} requests", mm.bdevs[0].allocated(mmtwin::block::Pool::Async));
}

/// A one-node 3.0 machine of 64M with two CPUs, ext2, and the policies in `policy`.
fn boot_2cpu(policy: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 2, memory = \"64M\" }}]\nboot_reserved = \"1M\"\nfs = \"ext2\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\npolicy = {{ {policy} }}\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}

/// Pages `t` dirties in a new file from `cpu` until it is sent into balance_dirty_pages (its
/// write chunk is set there), at most `max`.
fn dirty_until_checked(mm: &mut Mm, t: &mut mmtwin::mm::page_writeback::DirtyThrottle, cpu: usize, max: u32) -> u32 {
    let ino = mm.create_file(0, 0).unwrap();
    for i in 0..max {
        assert_eq!(mm.file_write_page(ino, i, 4096, cpu, t), mmtwin::mm::filemap::PageIo::Done);
        if t.write_chunk != 0 {
            return i + 1;
        }
    }
    max
}

#[test]
fn before_3_2_the_task_that_fills_its_cpus_dirty_count_is_the_one_balance_dirty_pages_checks() {
    use mmtwin::mm::page_writeback::DirtyThrottle;
    // ratelimit_pages: total pages / (CPUs × 32).
    let ratelimit = |mm: &Mm| (mm.zones.iter().map(|z| z.present_pages).sum::<u64>() / 64).clamp(16, 1024) as u32;

    // 3.0 (bdp_ratelimits): A dirties 100 pages on CPU 0, a task on CPU 1 dirties 100 that do
    // not count there, and B, on CPU 0 after A, is checked once the CPU's count is full.
    let mut mm = boot_2cpu("");
    let rl = ratelimit(&mm);
    let (mut a, mut b, mut c) = (DirtyThrottle::default(), DirtyThrottle::default(), DirtyThrottle::default());
    assert_eq!(dirty_until_checked(&mut mm, &mut a, 0, 100), 100);
    assert_eq!(dirty_until_checked(&mut mm, &mut c, 1, 100), 100);
    assert_eq!(mm.bdp_ratelimits, vec![100, 100]);
    assert_eq!(dirty_until_checked(&mut mm, &mut b, 0, rl), rl - 100, "B is checked after the CPU's count reaches {rl}");
    assert_eq!(b.write_chunk, (rl * 3 / 2) as u64, "write chunk: the ratelimit and a half");
    assert_eq!((a.write_chunk, c.write_chunk), (0, 0), "A and the other CPU's task were not checked");
    assert_eq!(mm.bdp_ratelimits, vec![0, 100], "the check zeroes the CPU's count");

    // 3.2+ (current->nr_dirtied): each task counts its own pages.
    let mut mm = boot_2cpu("dirty_ratelimit = \"per-task\"");
    let (mut a, mut b) = (DirtyThrottle::default(), DirtyThrottle::default());
    assert_eq!(dirty_until_checked(&mut mm, &mut a, 0, 100), 100);
    assert_eq!(dirty_until_checked(&mut mm, &mut b, 0, rl - 1), rl - 1);
    assert_eq!((a.ratelimit, b.ratelimit, a.write_chunk, b.write_chunk), (100, (rl - 1) as u64, 0, 0));
    assert_eq!(dirty_until_checked(&mut mm, &mut b, 0, 1), 1, "B is checked at its own {rl}th page");
    assert_eq!(mm.bdp_ratelimits, vec![0, 0]);
}

/// A one-node machine of 64M with one CPU, ext2, on `profile`.
fn boot_profile(profile: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 1, memory = \"64M\" }}]\nboot_reserved = \"1M\"\nfs = \"ext2\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}

#[test]
fn io_less_balance_dirty_pages_sleeps_the_writer_without_it_writing_anything() {
    use mmtwin::mm::filemap::PageIo;
    use mmtwin::mm::page_writeback::DirtyThrottle;
    let writeback = |mm: &Mm| mm.global_page_state(ZoneStat::NrWriteback);
    // Write until the writer is first made to sleep (no I/O completes here).
    let throttle = |mm: &mut Mm| -> (DirtyThrottle, u32) {
        let ino = mm.create_file(0, 0).unwrap();
        let mut t = DirtyThrottle::default();
        for i in 0..16_384 {
            assert_eq!(mm.file_write_page(ino, i, 4096, 0, &mut t), PageIo::Done);
            if t.throttled_since.is_some() {
                return (t, i + 1);
            }
        }
        panic!("the writer was never throttled");
    };

    // 3.1 and before: the throttled writer has written back a chunk of dirty pages itself.
    let mut mm = boot_profile("linux-3.0");
    throttle(&mut mm);
    assert!(writeback(&mm) > 0, "the 3.0 writer submitted writeback");

    // 3.2+: it only sleeps, not before dirty pages pass (background + dirty threshold) / 2,
    // for at least a jiffy and at most HZ/5; then its next page goes through.
    let mut mm = boot_profile("linux-6.x");
    let (bg, thresh) = mm.global_dirty_limits();
    let (mut t, n) = throttle(&mut mm);
    assert_eq!(writeback(&mm), 0, "the IO-less writer wrote nothing");
    let dirty = mm.global_page_state(ZoneStat::NrFileDirty);
    assert!(dirty > (bg + thresh) / 2, "throttled at {dirty} dirty pages, the freerun ceiling is {}", (bg + thresh) / 2);
    assert_eq!(u64::from(n), dirty);
    let jiffy = mm.sched.jiffy_ns;
    assert!(mm.sleep_ns > 0 && mm.sleep_ns <= jiffy * (1_000_000_000 / jiffy / 5), "pause {} ns", mm.sleep_ns);
    assert_eq!(t.ratelimit, 0, "the pause settles the pages dirtied");
    let ino = mm.create_file(0, 0).unwrap();
    assert_eq!(mm.file_write_page(ino, 0, 4096, 0, &mut t), PageIo::Done, "after the pause the loop ends");
    assert!(t.throttled_since.is_none());
}

#[test]
fn io_less_below_the_freerun_ceiling_a_writer_is_checked_every_sqrt_of_the_headroom_pages() {
    use mmtwin::mm::page_writeback::{DirtyThrottle, DIRTY_POLL_THRESH};
    let mut mm = boot_profile("linux-6.x");
    let (_, thresh) = mm.global_dirty_limits();
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = DirtyThrottle::default();
    // A new task is first checked after 32 pages (nr_dirtied_pause at fork).
    for i in 0..DIRTY_POLL_THRESH as u32 - 1 {
        mm.file_write_page(ino, i, 4096, 0, &mut t);
    }
    assert_eq!((t.nr_dirtied_pause, t.ratelimit), (None, DIRTY_POLL_THRESH - 1));
    mm.file_write_page(ino, DIRTY_POLL_THRESH as u32 - 1, 4096, 0, &mut t);
    // dirty_poll_interval: 2^(ilog2(thresh − dirty) / 2), and no sleep.
    let headroom = thresh - DIRTY_POLL_THRESH;
    let ilog2 = 63 - headroom.leading_zeros() as u64;
    assert_eq!(t.nr_dirtied_pause, Some(1 << (ilog2 / 2)));
    assert_eq!((t.ratelimit, mm.sleep_ns), (0, 0));
}

#[test]
fn io_less_pos_ratio_is_one_at_the_setpoint_two_at_the_freerun_ceiling_and_zero_at_the_limit() {
    use mmtwin::mm::page_writeback::pos_ratio_polynom;
    // freerun 999, limit 3001: setpoint 2000 (the kernel divides by (limit − setpoint) | 1).
    assert_eq!(pos_ratio_polynom(2000, 2000, 3001), 1024);
    assert_eq!(pos_ratio_polynom(2000, 999, 3001), 2048);
    assert_eq!(pos_ratio_polynom(2000, 3001, 3001), 0);
    // A cubic: a quarter of the way past the setpoint, 1 − 1/64.
    assert_eq!(pos_ratio_polynom(2000, 2250, 3000), 1024 - 16);
}

#[test]
fn io_less_pages_dirtied_by_an_exited_task_are_charged_to_the_next_dirtier_on_its_cpu() {
    use mmtwin::mm::page_writeback::DirtyThrottle;
    // Pages `t` writes to a new file until it is first checked (its nr_dirtied_pause set).
    let until_checked = |mm: &mut Mm, t: &mut DirtyThrottle, max: u32| -> u32 {
        let ino = mm.create_file(0, 0).unwrap();
        for i in 0..max {
            mm.file_write_page(ino, i, 4096, 0, t);
            if t.nr_dirtied_pause.is_some() {
                return i + 1;
            }
        }
        max
    };
    let mut mm = boot_profile("linux-6.x");
    // A dirties 20 pages, fewer than the 32 before a new task's first check, and exits.
    let mut a = DirtyThrottle::default();
    assert_eq!(until_checked(&mut mm, &mut a, 20), 20);
    mm.dirty_throttle_exit(&mut a, 0);
    assert_eq!(mm.dirty_throttle_leaks, vec![20]);
    // B, next on the CPU, takes them over and is checked after 12 of its own.
    let mut b = DirtyThrottle::default();
    assert_eq!(until_checked(&mut mm, &mut b, 64), 12);
    assert_eq!(mm.dirty_throttle_leaks, vec![0]);
}

#[test]
fn io_less_a_bandwidth_update_is_queued_once_200ms_after_an_inodes_writeback_ends() {
    use mmtwin::mm::page_writeback::{DirtyThrottle, INIT_BW};
    let mut mm = boot_profile("linux-6.x");
    let mut t = DirtyThrottle::default();
    let files: Vec<_> = (0..2).map(|_| mm.create_file(0, 0).unwrap()).collect();
    for &ino in &files {
        for i in 0..64 {
            mm.file_write_page(ino, i, 4096, 0, &mut t);
        }
    }
    mm.now_ns = 2_000_000_000;
    for &ino in &files {
        mm.writeback_single_inode(ino, 1024, true, false);
    }
    run_io(&mut mm);
    // Both inodes' writeback ended; one update is queued, 200 ms (50 jiffies) after the first.
    assert_eq!(mm.bw_timers.len(), 1);
    let (at, dev) = mm.bw_timers[0];
    assert!(at >= mm.now_ns && at <= mm.now_ns + 200_000_000, "queued for {at}, I/O ended at {}", mm.now_ns);
    assert!(mm.bdi_stat[dev].bw_dwork_queued);
    mm.now_ns = at;
    mm.wb_update_bandwidth_workfn(dev);
    let b = &mm.bdi_stat[dev];
    assert!(!b.bw_dwork_queued);
    assert_eq!(b.written_stamp, 128, "the 128 pages written are taken into the estimate");
    assert_ne!(b.write_bandwidth, INIT_BW);
    // 3.0 has no bandwidth estimate.
    let mut mm = boot_profile("linux-3.0");
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = DirtyThrottle::default();
    for i in 0..64 {
        mm.file_write_page(ino, i, 4096, 0, &mut t);
    }
    mm.writeback_single_inode(ino, 1024, true, false);
    run_io(&mut mm);
    assert!(mm.bw_timers.is_empty());
}

/// A one-node 64M machine with one CPU and two disks (ext2) on `profile`.
fn boot_two_disks(profile: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 1, memory = \"64M\" }}]\nboot_reserved = \"1M\"\nfs = \"ext2\"\ndisks = 2\n\
         [[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}

#[test]
fn before_3_5_a_devices_share_of_the_dirty_threshold_follows_its_completions_in_half_periods_of_events() {
    let mut mm = boot_two_disks("linux-3.0");
    let (_, thresh) = mm.global_dirty_limits();
    // calc_period_shift at boot: a half period of 2^(1 + ilog2(threshold − 1)) completions.
    let half = 1u64 << (1 + (mm.sysctl.dirty_ratio * mm.dirtyable_memory() / 100 - 1).ilog2());
    assert!(half > thresh / 2 && half <= 2 * thresh, "half period {half}, threshold {thresh}");
    // The model boots the devices with equal shares (as after writing alike): half each.
    assert_eq!((mm.bdi_dirty_limit(0, thresh), mm.bdi_dirty_limit(1, thresh)), (thresh / 2, thresh / 2));
    // Disk 0 writes for three half periods: each boundary halves every history, so its share
    // climbs 3/4, 7/8, 15/16 of the whole while disk 1's falls to 1/16.
    for _ in 0..3 * half {
        mm.bdi_writeout_inc(0);
    }
    assert_eq!(mm.bdi_dirty_limit(0, thresh), thresh * (15 * half / 16) / half);
    assert_eq!(mm.bdi_dirty_limit(1, thresh), thresh * (half / 16) / half);
    // Then disk 1 writes for one half period: disk 0's history is halved again, and disk 1
    // has its half period's worth on top of its 1/16, halved at the boundary.
    for _ in 0..half {
        mm.bdi_writeout_inc(1);
    }
    assert_eq!(mm.bdi_dirty_limit(0, thresh), thresh * (15 * half / 32) / half);
    assert_eq!(mm.bdi_dirty_limit(1, thresh), thresh * (17 * half / 32) / half);
}

#[test]
fn from_3_5_a_devices_share_is_of_the_completions_of_the_last_periods_of_3_s() {
    let mut mm = boot_two_disks("linux-6.x");
    let (_, thresh) = mm.global_dirty_limits();
    // The only device that completed anything has the whole threshold at once.
    for _ in 0..600 {
        mm.bdi_writeout_inc(0);
    }
    assert_eq!((mm.bdi_dirty_limit(0, thresh), mm.bdi_dirty_limit(1, thresh)), (thresh, 0));
    // 3 s later (one period: everything before counts half) disk 1 completes as many.
    mm.now_ns += 3_000_000_000;
    for _ in 0..600 {
        mm.bdi_writeout_inc(1);
    }
    assert_eq!(mm.bdi_dirty_limit(0, thresh), thresh * 300 / 900);
    assert_eq!(mm.bdi_dirty_limit(1, thresh), thresh * 600 / 900);
    // Two periods on, with nothing completed meanwhile, the shares stay as they were.
    mm.now_ns += 6_000_000_000;
    assert_eq!(mm.bdi_dirty_limit(0, thresh), thresh * 75 / 225);
}

#[test]
fn before_3_2_a_heavy_dirtier_loses_up_to_an_eighth_of_the_devices_limit() {
    use mmtwin::mm::filemap::PageIo;
    use mmtwin::mm::page_writeback::DirtyThrottle;
    // dirty_ratio 40 keeps the writers below the free-running ceiling: they are not throttled.
    let mut mm = boot("64M", "ext2", "");
    let ino = mm.create_file(0, 0).unwrap();
    let (mut heavy, mut light) = (DirtyThrottle::default(), DirtyThrottle::default());
    for i in 0..2000 {
        assert_eq!(mm.file_write_page(ino, i, 4096, 0, &mut heavy), PageIo::Done);
    }
    let half = 1u64 << (mm.dirty_props.vm_dirties.shift - 1);
    assert!(2000 < half, "all in the first half period ({half})");
    // task_dirties_fraction: 2000 of a half period plus the 2000 of this one.
    let bdi_thresh = 8000;
    assert_eq!(mm.task_dirty_limit(&mut heavy, bdi_thresh), bdi_thresh - bdi_thresh / 8 * 2000 / (half + 2000));
    assert_eq!(mm.task_dirty_limit(&mut light, bdi_thresh), bdi_thresh, "a task that dirtied nothing keeps the whole");
}

/// One simple-writeback dd of 64 MiB on a 128M ext3 machine, with dd's `conv` line.
fn dd_run(conv: &str) -> mmtwin::run::IterationResult {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 1, memory = \"128M\" }}]\nboot_reserved = \"1M\"\nfs = \"ext3\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\nsysctl = {{ dirty_ratio = 40 }}\n\
         [workload]\ntype = \"simple-writeback\"\nsize = \"64M\"\n{conv}\n"
    );
    let cfg = mmtwin::config::scenario::Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0);
    mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap()
}

#[test]
fn dd_conv_fdatasync_writes_its_whole_file_within_its_time_and_without_it_rm_discards_the_rest() {
    // MMTests simple-writeback runs `dd ... $CONV` and then `rm`. Without conv= dd exits with
    // its last pages dirty (under 40% of a 128M machine's dirtyable memory), and rm's
    // truncate cancels them: they are never written. With conv=fdatasync dd writes and waits
    // for all of them (and the journal's commit) before it exits.
    let file_kib = 64 * 1024;
    let data = |r: &mmtwin::run::IterationResult| r.vmstat_delta.iter().find(|(n, _)| *n == "pgpgout").unwrap().1;
    let time = |r: &mmtwin::run::IterationResult| r.metrics.iter().find(|m| m.table == "simple-writeback").unwrap().value;
    let plain = dd_run("");
    let synced = dd_run("conv = \"fdatasync\"");
    assert!(data(&plain) + 8 * 1024 < file_kib, "pgpgout {} KiB", data(&plain));
    assert!(data(&synced) >= file_kib, "pgpgout {} KiB", data(&synced));
    assert!(time(&synced) > 2.0 * time(&plain), "{} s against {} s", time(&synced), time(&plain));
    // fsync is the same work here.
    let fsync = dd_run("conv = \"fsync\"");
    assert_eq!(data(&fsync), data(&synced));
}

#[test]
fn perzonedirty_reclaims_directly_without_waking_kswapd_when_dma32_sits_between_its_low_mark_and_min_plus_reserve() {
    // 3.0 with per-zone dirty limits v1, on a machine whose small Normal zone sits on top of
    // DMA32 (4608M): a __GFP_WRITE allocation passes over Normal while it is over its dirty
    // limit, on every pass. DMA32, just above its low mark but under its min mark plus its
    // lowmem reserve against Normal allocations, fails the fast path and the slow path's min
    // pass; 3.0's wakeup_kswapd checks the low mark without the reserve (classzone 0), so
    // kswapd is not woken, and the allocation reclaims directly. Without per-zone limits the
    // page comes from Normal.
    use mmtwin::mm::vmstat::VmStat;
    for pzd in [false, true] {
        let policy = if pzd { "dirty_placement = \"perzonedirty\"" } else { "" };
        let mut mm = boot("4608M", "ext4", policy);
        let zone = |mm: &Mm, t: ZoneType| mm.zones.iter().position(|z| z.zone_type == t && z.present_pages > 0).unwrap();
        let (normal, dma32) = (zone(&mm, ZoneType::Normal), zone(&mm, ZoneType::Dma32));
        // Normal just over its dirty limit (a write's first pages land there).
        let limit = mm.zone_dirty_limits(normal).1;
        dirty_file(&mut mm, limit as u32 + 1);
        // Clean page cache in DMA32 for reclaim to take: a file written and written back while
        // per-zone limits steer it there (without them it is cleaned in Normal all the same).
        let (clean, _) = dirty_file(&mut mm, 2048);
        mm.writeback_single_inode(clean, u64::MAX, false, false);
        run_io(&mut mm);
        // DMA32's free pages between its low mark and its min mark plus the reserve.
        let z = &mm.zones[dma32];
        let (low, top) = (z.low_wmark_pages(), z.min_wmark_pages() + z.lowmem_reserve[ZoneType::Normal as usize]);
        assert!(low + 20 < top, "a window: low {low}, min + reserve {top}");
        let mut blocks = common::drain_zone(&mut mm, dma32);
        blocks.sort_by_key(|&(_, order)| std::cmp::Reverse(order));
        let mut free = 0;
        let mut spare = Vec::new();
        for (pfn, order) in blocks {
            if free + (1u64 << order) <= low + 16 {
                mm.free_pages(pfn, order, 0);
                free += 1 << order;
            } else {
                spare.push(pfn);
            }
        }
        // The rest a page at a time, out of a block kept (split_page).
        for pfn in spare[0]..spare[0] + (low + 16 - free) as Pfn {
            mm.pages[pfn as usize].order = 0;
            mm.free_pages(pfn, 0, 0);
        }
        mm.drain_all_pages();
        assert_eq!(mm.zones[dma32].nr_free_pages as u64, low + 16);
        mm.kswapd_wakeups.clear();
        let stalls = mm.vmstat_snapshot()[VmStat::Allocstall as usize];
        let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE.with(Gfp::WRITE), 0, 0).unwrap();
        let stalled = mm.vmstat_snapshot()[VmStat::Allocstall as usize] - stalls;
        let got = mm.zones[mm.page_zone(pfn)].zone_type;
        if pzd {
            assert_eq!((got, stalled), (ZoneType::Dma32, 1), "direct reclaim, then DMA32");
            assert!(mm.kswapd_wakeups.is_empty(), "no zone under its low mark without the reserve");
        } else {
            assert_eq!((got, stalled), (ZoneType::Normal, 0));
        }
    }
}

/// What one buffered write of page `index` of `ino` charges the writer (its CPU time).
fn write_cost(mm: &mut Mm, ino: u32, index: u32) -> u64 {
    let mut t = Default::default();
    let before = mm.cost_ns;
    assert_eq!(mm.file_write_page(ino, index, 4096, 0, &mut t), mmtwin::mm::filemap::PageIo::Done);
    mm.cost_ns - before
}

#[test]
fn ext3_write_begin_pays_for_mapping_a_new_block_and_delayed_allocation_does_not() {
    let cost = |fs: &str| {
        let mut mm = boot("64M", fs, "");
        mm.costs.get_block_ns = 50_000;
        let ino = mm.create_file(0, 0).unwrap();
        let new = write_cost(&mut mm, ino, 0);
        let rewrite = write_cost(&mut mm, ino, 0);
        (new, rewrite)
    };
    let (ext3_new, ext3_rewrite) = cost("ext3");
    let (xfs_new, xfs_rewrite) = cost("xfs");
    // ext3 maps the block in ->write_begin of the page's first write, and only then.
    assert!(ext3_new >= ext3_rewrite + 50_000, "{ext3_new} {ext3_rewrite}");
    // xfs maps it at writeback: its writer pays no more for a new page than for a rewrite,
    // beyond the page's allocation and page cache insertion.
    assert!(xfs_new < xfs_rewrite + 50_000, "{xfs_new} {xfs_rewrite}");
    assert!(ext3_new >= xfs_new + 50_000, "{ext3_new} {xfs_new}");
}
