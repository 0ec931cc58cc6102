//! Mechanism tests of the block layer (segments, merging limits, schedulers, the shared host
//! path, plugging), direct I/O, the s390x zone layout, ext2's file layout and the order in which cold
//! per-cpu pages come back after reclaim: one kernel behaviour each.

mod common;
use common::run_io;
use mmtwin::block::{Bio, BlockDevice, DeviceModel, DevicePreset, Dir, PlugSite, Scheduler, SECTORS_PER_PAGE};
use mmtwin::config::scenario::Scenario;
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::mmzone::ZoneType;
use mmtwin::mm::{Mm, Pfn};

fn boot_with(machine: &str, profile: &str, policy: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\n{machine}\n\
         [[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\npolicy = {{ {policy} }}\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}


fn bio_of(q: &DeviceModel, sector: u64, pages: &[Pfn]) -> (Bio, usize) {
    let mut b = Bio::new(Dir::Read, sector, pages[0]);
    let mut taken = 1;
    for (i, &p) in pages.iter().enumerate().skip(1) {
        if !b.add_page(q, sector + i as u64 * SECTORS_PER_PAGE, p) {
            break;
        }
        taken += 1;
    }
    (b, taken)
}

#[test]
fn two_physically_adjacent_pages_form_one_segment_and_reversed_pages_two() {
    let q = DeviceModel::default();
    assert_eq!(bio_of(&q, 0, &[100, 101]).0.segments, 1);
    assert_eq!(bio_of(&q, 0, &[101, 100]).0.segments, 2, "only forward adjacency merges (BIOVEC_PHYS_MERGEABLE)");
    // A segment stops at max_segment_size (64 KiB = 16 pages).
    let run: Vec<Pfn> = (1000..1020).collect();
    assert_eq!(bio_of(&q, 0, &run).0.segments, 2);
    assert_eq!(q.phys_segments(&run), 2);
    // Without clustering every page is a segment.
    let noclust = DeviceModel { clustering: false, ..DeviceModel::default() };
    assert_eq!(noclust.phys_segments(&[100, 101, 102]), 3);
}

#[test]
fn bio_add_page_refuses_a_page_past_max_segments_and_a_back_merge_past_it_is_refused() {
    let q = DeviceModel { max_segments: 4, ..DeviceModel::default() };
    let descending: Vec<Pfn> = (0..8).rev().map(|i| 500 + i).collect();
    let (b, taken) = bio_of(&q, 0, &descending);
    assert_eq!((taken, b.segments), (4, 4), "bio_add_page stops at 4 segments");
    let mut d = BlockDevice::new("sda", q.clone());
    d.submit_bio(b, 0);
    let (b2, _) = bio_of(&q, 4 * SECTORS_PER_PAGE, &descending[4..]);
    d.submit_bio(b2, 0);
    assert_eq!(d.nr_queued(Dir::Read), 2, "4 + 4 segments exceed max_segments: no merge");
    assert_eq!(d.stats.merge_refused_segments, 1);
    // Ascending pages: 8 pages in one segment, and the next bio merges.
    let mut d = BlockDevice::new("sda", q.clone());
    let (a1, _) = bio_of(&q, 0, &(600..604).collect::<Vec<_>>());
    let (a2, _) = bio_of(&q, 4 * SECTORS_PER_PAGE, &(604..608).collect::<Vec<_>>());
    d.submit_bio(a1, 0);
    d.submit_bio(a2, 0);
    assert_eq!(d.nr_queued(Dir::Read), 1);
    d.dispatch(0, &mut 0);
    assert_eq!(d.stats.segments[0], 1, "blk_rq_map_sg joins the pages across the bio boundary");
    assert_eq!(d.stats.rq_size_hist[0][3], 1, "one 32 KiB request");
}

#[test]
fn noop_dispatches_in_arrival_order_and_deadline_prefers_reads() {
    for (sched, want) in [(Scheduler::Noop, vec![Dir::Write, Dir::Read, Dir::Write]), (Scheduler::Deadline, vec![Dir::Read, Dir::Write, Dir::Write])] {
        let mut d = BlockDevice::new("sda", DeviceModel { scheduler: sched, ..DeviceModel::default() });
        d.submit_bio(Bio::new(Dir::Write, 0, 1), 0);
        d.submit_bio(Bio::new(Dir::Read, 1000, 2), 0);
        d.submit_bio(Bio::new(Dir::Write, 5000, 3), 0);
        let mut order = Vec::new();
        while d.dispatch(0, &mut 0).is_some() {
            order.push(d.complete(0).dir);
        }
        assert_eq!(order, want, "{sched:?}");
    }
}

#[test]
fn disks_sharing_a_host_path_take_turns_on_it() {
    let m = DeviceModel { host_bandwidth: 100_000_000, request_overhead_ns: 0, ..DeviceModel::default() };
    let mut a = BlockDevice::new("sda", m.clone());
    let mut b = BlockDevice::new("sdb", m);
    let pages: Vec<Pfn> = (0..32).collect();
    let (ba, _) = bio_of(&a.model, 0, &pages);
    let (bb, _) = bio_of(&b.model, 0, &pages);
    a.submit_bio(ba, 0);
    b.submit_bio(bb, 0);
    let mut host = 0;
    let ta = a.dispatch(0, &mut host).unwrap();
    let tb = b.dispatch(0, &mut host).unwrap();
    // 128 KiB at 100 MB/s: 1.31 ms each, one after the other on the shared path.
    assert_eq!(ta, 1_310_720);
    assert_eq!(tb, 2 * ta);
}

#[test]
fn presets_are_chosen_by_name_and_parameters_override_them() {
    let fcp = DevicePreset::S390Fcp.model();
    assert_eq!((fcp.max_segments, fcp.max_segment_size, fcp.max_sectors_kb, fcp.segment_ns), (128, 65536, 512, 0));
    let m = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\ndisk = { model = \"ssd\", max_segments = 32 }", "linux-3.0", "");
    assert_eq!(m.bdevs[0].model.max_segments, 32);
    assert_eq!(m.bdevs[0].model.seek_ns, DevicePreset::Ssd.model().seek_ns);
    let bad = "[scenario]\nname = \"t\"\n[machine]\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\ndisk = { model = \"floppy\" }\n[[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\n[workload]\ntype = \"anon-churn\"\n";
    let e = Scenario::parse(bad).unwrap_err().to_string();
    assert!(e.contains("sata-2011") && e.contains("s390-fcp") && e.contains("virtio-tcg"), "{e}");
    // The oracle's guest disk: the queue limits 6.1 reports for QEMU's virtio-blk, no seek.
    let v = DevicePreset::VirtioTcg.model();
    assert_eq!((v.nr_requests, v.max_sectors_kb, v.max_segments, v.max_segment_size, v.seek_ns), (256, 1280, 254, u32::MAX, 0));
}

#[test]
fn a_slower_cpu_multiplies_every_cost() {
    let m = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\ncpu_slowdown = 12.0", "linux-6.x", "");
    let base = mmtwin::sim::cost::CostTable::default();
    assert_eq!(m.costs.copy_page_ns, base.copy_page_ns * 12);
    assert_eq!(m.costs.shrink_page_ns, base.shrink_page_ns * 12);
    assert_eq!(base.scaled(1.0), base);
    let bad = "[scenario]\nname = \"t\"\n[machine]\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\ncpu_slowdown = 0.0\n[[kernel]]\nname = \"k\"\nprofile = \"linux-6.x\"\n[workload]\ntype = \"anon-churn\"\n";
    let e = Scenario::parse(bad).unwrap_err().to_string();
    assert!(e.contains("machine.cpu_slowdown") && e.contains("between 0.01 and 1000"), "{e}");
}

#[test]
fn s390x_puts_all_memory_below_2g_in_zone_dma_and_each_disk_gets_a_file_system() {
    let mm = boot_with("arch = \"s390x\"\nnodes = [{ id = 0, cpus = 8, memory = \"256M\" }]\ndisks = 3", "linux-2.6.32", "");
    let dma = &mm.zones[ZoneType::Dma as usize];
    assert_eq!(dma.present_pages, 65536);
    assert_eq!(mm.zones[ZoneType::Dma32 as usize].present_pages + mm.zones[ZoneType::Normal as usize].present_pages, 0);
    // 256M: batch 15, high 90 per CPU (zone_batchsize).
    assert_eq!((dma.pcp[0].batch, dma.pcp[0].high), (15, 90));
    let names: Vec<&str> = mm.bdevs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["sda", "sdb", "sdc"]);
    assert_eq!(mm.sbs.iter().map(|s| s.dev).collect::<Vec<_>>(), [0, 1, 2]);
}

#[test]
fn s390x_buddy_orders_stop_at_1m_with_1m_pageblocks_until_6x() {
    // 2.6.25-3.x s390 forces MAX_ORDER 9 (orders 0-8); its pageblocks are 1M (HPAGE_SHIFT 20).
    let mut mm = boot_with("arch = \"s390x\"\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", "");
    assert_eq!((mm.max_order, mm.pageblock_order), (8, 8));
    let dma = &mm.zones[ZoneType::Dma as usize];
    assert!(dma.free_area[8].nr_free > 0, "free memory sits in 1M blocks");
    assert_eq!(dma.free_area[9].nr_free + dma.free_area[10].nr_free, 0);
    assert!(mm.alloc_pages(Gfp::GFP_KERNEL, 9, 0).is_none(), "order 9 is above MAX_ORDER - 1");
    assert!(mm.alloc_pages(Gfp::GFP_KERNEL, 8, 0).is_some());
    let pti = mm.proc_pagetypeinfo();
    assert!(pti.contains("Page block order: 8\nPages per block:  256"), "{pti}");
    let columns = mm.proc_buddyinfo().lines().next().unwrap().split_whitespace().count() - 4;
    assert_eq!(columns, 9, "{}", mm.proc_buddyinfo());
    // MIGRATE_RESERVE: ceil(min watermark / 256) blocks, at most two (2.6.32's cap).
    let min = mm.zones[ZoneType::Dma as usize].watermark[0];
    let reserve = mm.blocks_by_type()[mmtwin::mm::mmzone::MigrateType::Reserve as usize];
    assert_eq!(reserve, min.div_ceil(256).min(2), "min watermark {min}");
    // 6.12's s390 Kconfig no longer forces it: orders 0-10, blocks still 1M.
    let mm = boot_with("arch = \"s390x\"\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-6.x", "");
    assert_eq!((mm.max_order, mm.pageblock_order), (10, 8));
    let mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", "");
    assert_eq!((mm.max_order, mm.pageblock_order), (10, 9));
}

#[test]
fn migrate_reserve_keeps_every_block_the_min_watermark_needs_until_2632_caps_it_at_two() {
    // The pcp study's 320M s390 machine: a min watermark of 572 pages asks for three 1M blocks.
    let machine = "arch = \"s390x\"\nnodes = [{ id = 0, cpus = 1, memory = \"320M\" }]\nboot_reserved = \"96M\"";
    let reserve = |mm: &Mm| mm.blocks_by_type()[mmtwin::mm::mmzone::MigrateType::Reserve as usize];
    let capped = boot_with(machine, "linux-2.6.32", "");
    let min = capped.zones[ZoneType::Dma as usize].watermark[0];
    assert_eq!(min.div_ceil(256), 3, "min watermark {min}");
    assert_eq!(reserve(&capped), 2, "78986a678f6 (2.6.32-rc1): at most two");
    let uncapped = boot_with(machine, "linux-2.6.32", "atomic_reserve = \"migrate-reserve-uncapped\"");
    assert_eq!(reserve(&uncapped), 3, "2.6.31: no cap");
    // The reserve's free pages sit on the RESERVE free lists.
    let z = &uncapped.zones[ZoneType::Dma as usize];
    let on_reserve: u64 = (0..=8).map(|o| (z.free_area[o].free_list[mmtwin::mm::mmzone::MigrateType::Reserve as usize].len as u64) << o).sum();
    assert_eq!(on_reserve, 3 * 256);
}

#[test]
fn ext2_interleaves_indirect_blocks_with_the_data_and_ext4_does_not() {
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\nfs = \"ext2\"", "linux-3.0", "");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 3000);
    let lens: Vec<u32> = mm.inode(ino).extents.iter().map(|e| e.2).collect();
    assert_eq!(lens, [12, 1024, 1024, 940]);
    let ext = &mm.inode(ino).extents;
    assert_eq!(ext[1].1, ext[0].1 + 13 * SECTORS_PER_PAGE, "one indirect block after the 12 direct ones");
    assert_eq!(ext[2].1, ext[1].1 + 1026 * SECTORS_PER_PAGE, "double-indirect plus indirect block");
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\nfs = \"ext4\"", "linux-3.0", "");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 3000);
    assert_eq!(mm.inode(ino).extents.len(), 1);
}

#[test]
fn direct_io_reads_into_the_user_pages_without_the_page_cache() {
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-3.0", "");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 64);
    let buf: Vec<Pfn> = (0..16).map(|_| mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap()).collect();
    let id = mm.new_dio(usize::MAX);
    assert_eq!(mm.direct_io_read(id, ino, 0, &buf), 16);
    assert_eq!(mm.dio_remaining(id), 16);
    run_io(&mut mm);
    assert_eq!(mm.dio_remaining(id), 0);
    assert_eq!(mm.mapping(mm.inode(ino).mapping).nrpages(), 0, "no page cache");
    assert_eq!(mm.bdevs[0].stats.requests[0], 1);
    assert_eq!(mm.bdevs[0].stats.sectors[0], 16 * SECTORS_PER_PAGE);
}

/// Cold allocations of one refill, freed cold in the order they were allocated (as reclaim
/// frees pages in LRU order, oldest file page first), then allocated cold again.
fn cold_realloc(cold_refill: &str) -> (Vec<i64>, Vec<i64>) {
    let mut mm = boot_with("arch = \"s390x\"\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", &format!("cold_refill = \"{cold_refill}\""));
    let gfp = Gfp::GFP_HIGHUSER_MOVABLE.with(Gfp::COLD);
    let first: Vec<Pfn> = (0..15).map(|_| mm.alloc_pages(gfp, 0, 0).unwrap()).collect();
    for &p in &first {
        mm.free_pages_hint(p, 0, 0, true);
    }
    let again: Vec<Pfn> = (0..15).map(|_| mm.alloc_pages(gfp, 0, 0).unwrap()).collect();
    let steps = |v: &[Pfn]| v.windows(2).map(|w| i64::from(w[1]) - i64::from(w[0])).collect::<Vec<i64>>();
    (steps(&first), steps(&again))
}

#[test]
fn cold_pages_freed_by_reclaim_come_back_in_the_opposite_order() {
    // With e084b2d95e48 a refill is handed out ascending; freed cold to the tail in that order,
    // the same pages come back descending (LIFO at the tail) — and the other way round before it.
    let (first, again) = cold_realloc("pfn-order");
    assert!(first.iter().all(|&d| d == 1), "{first:?}");
    assert!(again.iter().all(|&d| d == -1), "{again:?}");
    let (first, again) = cold_realloc("reverse-pfn");
    assert!(first.iter().all(|&d| d == -1), "{first:?}");
    assert!(again.iter().all(|&d| d == 1), "{again:?}");
}

#[test]
fn linux_2_6_32_readahead_may_retry_and_3_0_readahead_may_not() {
    use mmtwin::mm::policy::ReadaheadGfp;
    let old = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", "");
    let new = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-3.0", "");
    assert_eq!(old.policy.readahead_gfp, ReadaheadGfp::Cold);
    assert_eq!(new.policy.readahead_gfp, ReadaheadGfp::ColdNoretry);
}

/// Reads page `index` of `ino` with read(), completing the I/O it waits for.
fn read_page(mm: &mut Mm, ino: mmtwin::fs::Ino, index: u32) {
    use mmtwin::mm::filemap::PageIo;
    loop {
        match mm.file_read_page(ino, index, 4096, 0) {
            PageIo::Done => return,
            PageIo::Wait(_) => run_io(mm),
            PageIo::NoMem => panic!("no memory for readahead"),
            PageIo::Retry => panic!("the readahead slept in the allocator"),
        }
    }
}

#[test]
fn a_readahead_that_sleeps_in_the_allocator_finishes_its_window_after_the_sleep() {
    // 2.6.32 on a 256M s390 zone (pcp batch 15, high 90), one CPU, no kswapd running: a reader
    // of a file larger than memory soon finds NR_FREE_PAGES under min, and direct reclaim's 32
    // cold frees stay on its per-cpu list, so the allocation after it fails and the task
    // waits in congestion_wait. The kernel's reader sleeps there, in the middle of its
    // window, and retries at `rebalance` when it wakes: with nothing freed meanwhile the try
    // at the min mark fails again and direct reclaim follows; the window is read when it is
    // whole.
    use mmtwin::mm::filemap::PageIo;
    use mmtwin::mm::mm_types::PG_LOCKED;
    use mmtwin::mm::vmstat::VmStat;
    let machine = "arch = \"s390x\"\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\nboot_reserved = \"96M\"\nfs = \"ext2\"\ndisk = { read_ahead_kb = 512 }";
    let mut mm = boot_with(machine, "linux-2.6.32", "");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 60_000);
    let mut stalls = 0;
    for index in 0..60_000 {
        loop {
            let mut waits = mm.congestion_waits[0];
            let r = mm.file_read_page(ino, index, 4096, 0);
            // The engine's part: the task sleeps, then finishes what the sleep interrupted.
            while mm.congestion_sleep.take().is_some() {
                stalls += 1;
                assert_eq!(mm.congestion_waits[0], waits + 1, "one wait, then the sleep: no second reclaim at the same instant");
                assert_eq!(mm.pending_readahead.len(), 1, "the window is parked");
                let (_, ra) = mm.pending_readahead[0].clone();
                assert!(ra.next < ra.nr, "{ra:?}");
                // Its pages so far are locked in the cache, and not one has gone to the disk.
                assert!(ra.to_read.iter().all(|&(_, p)| mm.pages[p as usize].flags & PG_LOCKED != 0));
                let pgpgin = mm.events.get(VmStat::Pgpgin);
                let allocstall = mm.events.get(VmStat::Allocstall);
                waits = mm.congestion_waits[0];
                let pid = mm.sched.current_pid;
                mm.arm_alloc_rebalance(pid);
                let again = mm.resume_kernel_work(0);
                mm.disarm_alloc_rebalance();
                assert!(mm.events.get(VmStat::Allocstall) > allocstall, "nothing freed during the sleep: the retry reclaims");
                if !again {
                    assert!(mm.pending_readahead.is_empty());
                    let window = u64::from(ra.nr - ra.next) + ra.to_read.len() as u64;
                    assert!(mm.events.get(VmStat::Pgpgin) - pgpgin >= 4 * window, "the whole window is read when it is whole");
                }
            }
            match r {
                PageIo::Done => break,
                PageIo::Wait(_) => run_io(&mut mm),
                PageIo::Retry => {}
                PageIo::NoMem => panic!("no memory for readahead"),
            }
        }
        if stalls >= 3 {
            return;
        }
    }
    panic!("the reader never slept in the allocator ({stalls} sleeps)");
}

#[test]
fn only_the_step_after_the_allocators_wait_resumes_at_rebalance() {
    // A task back from the wait in the slow path continues the interrupted allocation at
    // `rebalance` (2.6.32-3.x: congestion_wait or wait_iff_congested, then `goto rebalance`):
    // the try at the min watermark, without the fast path's low watermark and without waking
    // kswapd again. If that step needs no allocation after all, the resume lapses with it; a
    // later step allocates from the fast path as usual.
    use mmtwin::mm::vmstat::VmStat;
    let machine = "arch = \"s390x\"\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\nfs = \"ext2\"";
    let mut mm = boot_with(machine, "linux-2.6.32", "");
    let pid = mm.sched.current_pid;
    let gfp = Gfp::GFP_HIGHUSER_MOVABLE.with(Gfp::COLD);
    // Allocate until an allocation finds the zone under its low mark and wakes kswapd: free
    // memory is now between the min and the low marks.
    while mm.kswapd_wakeups.is_empty() {
        assert!(mm.alloc_pages_or_sleep(gfp, 0, 0).is_ok());
    }
    // kswapd has run and gone back to sleep (the engine's part).
    mm.kswapd_wakeups.clear();
    mm.nodes[0].kswapd_wait_pending = false;
    let stalls = mm.events.get(VmStat::Allocstall);
    // The step that uses it: served at the min mark, kswapd not woken, nothing reclaimed.
    mm.alloc_rebalance.push(pid);
    mm.arm_alloc_rebalance(pid);
    assert!(mm.alloc_pages_or_sleep(gfp, 0, 0).is_ok());
    mm.disarm_alloc_rebalance();
    assert!(mm.kswapd_wakeups.is_empty(), "rebalance does not wake kswapd");
    assert_eq!(mm.events.get(VmStat::Allocstall), stalls, "the try at the min mark comes before direct reclaim");
    // The step that does not: the next step's allocation takes the fast path, which fails at
    // the low mark and wakes kswapd on its way to the slow path.
    mm.alloc_rebalance.push(pid);
    mm.arm_alloc_rebalance(pid);
    mm.disarm_alloc_rebalance();
    assert!(mm.alloc_rebalance.is_empty());
    assert!(mm.alloc_pages_or_sleep(gfp, 0, 0).is_ok());
    assert_eq!(mm.kswapd_wakeups, vec![0], "no stale resume");
    assert_eq!(mm.events.get(VmStat::Allocstall), stalls);
}

/// The largest readahead window a sequential reader of a 2,048-page ext4 file reaches.
fn largest_readahead_window(disk: &str) -> u32 {
    let machine = format!("nodes = [{{ id = 0, cpus = 1, memory = \"256M\" }}]\nfs = \"ext4\"\n{disk}");
    let mut mm = boot_with(&machine, "linux-3.0", "");
    let ino = mm.create_file(0, 0).unwrap();
    mm.lay_out_file(ino, 2048);
    let mut largest = 0;
    for index in 0..2048 {
        read_page(&mut mm, ino, index);
        largest = largest.max(mm.inode(ino).ra.size);
    }
    largest
}

#[test]
fn readahead_windows_grow_to_the_devices_read_ahead_kb() {
    assert_eq!(largest_readahead_window(""), 32, "VM_MAX_READAHEAD: 128 KiB");
    assert_eq!(largest_readahead_window("disk = { read_ahead_kb = 512 }"), 128);
}

#[test]
fn a_disk_counts_its_seeks_by_distance_and_the_time_spent_reaching_requests() {
    let sata = DevicePreset::Sata2011.model();
    let mut d = BlockDevice::new("sda", sata.clone());
    let mut host = 0;
    let mut read = |d: &mut BlockDevice, sector: u64| {
        d.submit_bio(Bio::new(Dir::Read, sector, 7), 0);
        let done = d.dispatch(0, &mut host).unwrap();
        d.complete(0);
        done
    };
    let one_page = read(&mut d, 0);
    // 64 KiB ahead of the head: within skip_sectors, passed under the head at the media rate.
    assert_eq!(read(&mut d, 8 + 128), one_page + 128 * 512 * 1_000_000_000 / sata.bandwidth);
    // 768 KiB ahead, 1 GiB ahead, 20 MiB back: three seeks of the model's one seek time.
    let (a, b) = (144 + 1536, 144 + 1536 + 8 + (1 << 21));
    for sector in [a, b, b + 8 - 40960] {
        assert_eq!(read(&mut d, sector), one_page + sata.seek_ns);
    }
    assert_eq!(d.stats.seeks, 3);
    assert_eq!(d.stats.seek_dist_hist, [1, 0, 1, 1]);
    assert_eq!(d.stats.seek_ns, 128 * 512 * 1_000_000_000 / sata.bandwidth + 3 * sata.seek_ns);
}

#[test]
fn a_flash_key_writes_without_seeks_but_copies_an_erase_block_to_open_a_third() {
    let key = DevicePreset::UsbKey2011.model();
    assert_eq!((key.max_sectors_kb, key.erase_block_kb, key.open_erase_blocks), (120, 4096, 2));
    let mut d = BlockDevice::new("sdb", key.clone());
    let block = 4096 * 2; // sectors per 4 MiB erase block
    let mut host = 0;
    let mut write = |d: &mut BlockDevice, sector: u64, now: u64| {
        let pages: Vec<Pfn> = (0..8).map(|i| 1000 + i).collect();
        let mut b = Bio::new(Dir::Write, sector, pages[0]);
        for (i, &p) in pages.iter().enumerate().skip(1) {
            assert!(b.add_page(&key, sector + i as u64 * SECTORS_PER_PAGE, p));
        }
        d.submit_bio(b, now);
        let done = d.dispatch(now, &mut host).unwrap();
        d.complete(0);
        done - now
    };
    let plain = write(&mut d, 0, 0);
    // A jump into the second erase block: no seek, no copy.
    assert_eq!(write(&mut d, block + 5000, 0), plain);
    assert_eq!(d.stats.seeks, 0);
    // A third erase block: the least recently written (the first) is closed by copying the
    // 1016 pages the host did not write, at the device's rate.
    let t = write(&mut d, 7 * block, 0);
    assert_eq!(t - plain, 1016 * 4096 * 1_000_000_000 / key.bandwidth);
    assert_eq!((d.stats.ftl.gc_copies, d.stats.ftl.gc_copied_pages), (1, 1016));
    // A scenario cannot give both a fixed write penalty and an FTL.
    let bad = "[scenario]\nname = \"t\"\n[machine]\nnodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\ndisk = { model = \"usb-key-2011\", write_seek_ns = 1000 }\n[[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\n[workload]\ntype = \"anon-churn\"\n";
    let e = Scenario::parse(bad).unwrap_err().to_string();
    assert!(e.contains("write_seek_ns and erase_block_kb"), "{e}");
}

/// Submits a write of direct I/O `dio` (its completion only counts the dio down) of `pages`
/// pages at page `at` of the disk.
fn submit_dio_write(mm: &mut Mm, dio: u32, at: u64, pages: u32) {
    mm.dios[dio as usize - 1].remaining += pages;
    mm.submit_bio(0, dio_write(dio, at, pages));
}

/// A write bio of direct I/O `dio` of `pages` pages at page `at` of the disk.
fn dio_write(dio: u32, at: u64, pages: u32) -> Bio {
    let mut b = Bio::new(Dir::Write, at * SECTORS_PER_PAGE, 10_000 + at as Pfn);
    for i in 1..pages {
        let q = DeviceModel::default();
        assert!(b.add_page(&q, (at + u64::from(i)) * SECTORS_PER_PAGE, 10_000 + (at + u64::from(i)) as Pfn));
    }
    b.dio = dio;
    b
}

#[test]
fn a_task_plug_lets_a_writers_bios_reach_an_idle_disk_as_one_request() {
    // Pages 0, 2 and 1 of a run, in that order (a later bio fills a gap).
    let order = [0u64, 2, 1];
    // Without a plug (a 3.x writer outside write(), e.g. ext4's own writepages) the first bio
    // goes straight to the idle disk, and scsi_request_fn takes the second from the
    // scheduler at once while the disk is busy (blk_peek_request): the third can join
    // neither.
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-3.0", "");
    let id = mm.new_dio(usize::MAX);
    for &p in &order {
        submit_dio_write(&mut mm, id, p, 1);
    }
    assert_eq!(mm.bdevs[0].in_flight.as_ref().map(|(r, _)| r.nr_sectors), Some(SECTORS_PER_PAGE), "a one-page request went out alone");
    assert_eq!(mm.bdevs[0].peeked.as_ref().map(|r| r.sector), Some(2 * SECTORS_PER_PAGE), "the next one is peeked");
    run_io(&mut mm);
    assert_eq!(mm.bdevs[0].stats.requests[1], 3);
    // Under the plug of write() (blk_start_plug in generic_file_aio_write) they are held
    // back: page 2 cannot join page 0, page 1 joins page 0's request in the plug, and when the
    // plug is flushed page 2's request joins the back of the queued one.
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-3.0", "");
    let id = mm.new_dio(usize::MAX);
    let plugged = mm.blk_start_plug(PlugSite::Write);
    assert!(plugged);
    assert!(!mm.blk_start_plug(PlugSite::Readahead), "a nested plug is not installed");
    for &p in &order {
        submit_dio_write(&mut mm, id, p, 1);
    }
    assert!(mm.bdevs[0].in_flight.is_none(), "nothing reaches the disk while the plug holds it");
    assert_eq!(mm.bdevs[0].plugged[1], 2, "two plugged requests, taken from the queue's pool");
    mm.blk_finish_plug(plugged);
    assert_eq!(mm.bdevs[0].plugged[1], 0);
    assert_eq!(mm.bdevs[0].in_flight.as_ref().map(|(r, _)| r.nr_sectors), Some(3 * SECTORS_PER_PAGE), "one three-page request");
    run_io(&mut mm);
    assert_eq!((mm.bdevs[0].stats.requests[1], mm.bdevs[0].stats.merges[1]), (1, 2));
    assert_eq!(mm.dio_remaining(id), 0);
}

#[test]
fn a_3x_queue_takes_the_next_request_from_the_scheduler_while_the_disk_is_busy_and_6x_does_not() {
    // scsi_request_fn calls blk_peek_request before scsi_dev_queue_ready: the request after
    // the one in flight leaves the elevator at once (no bio merges into it any more), and the
    // disk starts it when it completes the first. blk-mq asks the scheduler only when the
    // device has room.
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-3.0", "");
    let id = mm.new_dio(usize::MAX);
    for at in [0, 100, 101] {
        submit_dio_write(&mut mm, id, at, 1);
    }
    let d = &mm.bdevs[0];
    assert_eq!(d.peeked.as_ref().map(|r| r.sector), Some(100 * SECTORS_PER_PAGE));
    assert_eq!(d.nr_queued(Dir::Write), 1, "page 101 could not join the peeked request");
    assert_eq!(d.allocated(mmtwin::block::Pool::Async), 2, "the peeked request still holds its place in the pool");
    run_io(&mut mm);
    assert_eq!(mm.bdevs[0].stats.requests[1], 3);
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-6.1", "");
    let id = mm.new_dio(usize::MAX);
    for at in [0, 100, 101] {
        submit_dio_write(&mut mm, id, at, 1);
    }
    assert!(mm.bdevs[0].peeked.is_none());
    assert_eq!(mm.bdevs[0].nr_queued(Dir::Write), 1, "pages 100 and 101 in one request");
    run_io(&mut mm);
    assert_eq!(mm.bdevs[0].stats.requests[1], 2);
}

#[test]
fn a_3x_plug_is_flushed_before_its_17th_request_and_6x_before_one_after_128k() {
    // 3.x: BLK_MAX_REQUEST_COUNT 16.
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-3.0", "");
    let id = mm.new_dio(usize::MAX);
    let plugged = mm.blk_start_plug(PlugSite::Journal);
    for i in 0..16 {
        submit_dio_write(&mut mm, id, 100 * i, 1);
    }
    assert!(mm.bdevs[0].in_flight.is_none());
    submit_dio_write(&mut mm, id, 1600, 1);
    assert!(mm.bdevs[0].in_flight.is_some(), "the 17th request flushed the first 16");
    assert!(mm.bdevs[0].peeked.is_some(), "the second is peeked");
    assert_eq!((mm.bdevs[0].nr_queued(Dir::Write), mm.bdevs[0].plugged[1]), (14, 1));
    mm.blk_finish_plug(plugged);
    run_io(&mut mm);
    // 6.x: a plug whose last request reached 128 KiB is flushed before it takes another.
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-6.1", "");
    let id = mm.new_dio(usize::MAX);
    let plugged = mm.blk_start_plug(PlugSite::Writepages { own_writepages: true });
    assert!(plugged, "6.x plugs the flusher's whole writeback, ext4 included");
    submit_dio_write(&mut mm, id, 0, 31);
    submit_dio_write(&mut mm, id, 100, 1);
    assert!(mm.bdevs[0].in_flight.is_none(), "31 pages (124 KiB): still below BLK_PLUG_FLUSH_SIZE");
    submit_dio_write(&mut mm, id, 101, 32);
    submit_dio_write(&mut mm, id, 300, 1);
    assert!(mm.bdevs[0].in_flight.is_some(), "a 132 KiB last request flushed the plug");
    mm.blk_finish_plug(plugged);
    run_io(&mut mm);
    assert_eq!(mm.dio_remaining(id), 0);
    // 3.x does not plug ext4's own writepages, 6.x's write() (generic_perform_write) or 3.x
    // reclaim.
    let mm3 = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-3.0", "");
    assert!(!mm3.plugs_at(PlugSite::Writepages { own_writepages: true }) && !mm3.plugs_at(PlugSite::Reclaim));
    assert!(mm3.plugs_at(PlugSite::Writepages { own_writepages: false }));
    assert!(!mm.plugs_at(PlugSite::Write) && mm.plugs_at(PlugSite::Reclaim));
}

#[test]
fn a_2632_queue_plug_holds_writeback_until_four_requests_or_3ms_and_a_read_goes_at_once() {
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", "");
    assert!(!mm.blk_start_plug(PlugSite::Write), "2.6.32 has no task plugs");
    // Page cache writeback (no one waits for it): the first request plugs the empty queue.
    for i in 0..3u64 {
        let mut b = dio_write(0, 100 * i, 1);
        b.dio = 0;
        mm.submit_bio(0, b);
    }
    assert!(mm.bdevs[0].queue_plugged && mm.bdevs[0].in_flight.is_none());
    assert_eq!(mm.unplug_timers, vec![(3_000_000, 0)], "unplug_delay: 3 ms");
    let mut b = dio_write(0, 300, 1);
    b.dio = 0;
    mm.submit_bio(0, b);
    assert!(!mm.bdevs[0].queue_plugged && mm.bdevs[0].in_flight.is_some(), "unplug_thresh: the 4th request unplugs");
    // The timer alone unplugs too.
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", "");
    let mut b = dio_write(0, 0, 1);
    b.dio = 0;
    mm.submit_bio(0, b);
    assert!(mm.bdevs[0].in_flight.is_none());
    mm.now_ns = 3_000_000;
    mm.blk_unplug_timeout(0);
    assert!(mm.bdevs[0].in_flight.is_some());
    // A timer of an earlier plugging does not unplug a later one (mod_timer re-arms it).
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", "");
    let mut b = dio_write(0, 0, 1);
    b.dio = 0;
    mm.submit_bio(0, b);
    mm.blk_unplug(0);
    mm.bdevs[0].complete(0);
    mm.now_ns = 2_000_000;
    let mut b = dio_write(0, 100, 1);
    b.dio = 0;
    mm.submit_bio(0, b);
    assert!(mm.bdevs[0].queue_plugged);
    mm.now_ns = 3_000_000;
    mm.blk_unplug_timeout(0);
    assert!(mm.bdevs[0].queue_plugged && mm.bdevs[0].in_flight.is_none(), "the 3 ms timer was the first plugging's");
    mm.now_ns = 5_000_000;
    mm.blk_unplug_timeout(0);
    assert!(mm.bdevs[0].in_flight.is_some());
    // A read's submitter waits for it (sync_page unplugs): it goes at once.
    let mut mm = boot_with("nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]", "linux-2.6.32", "");
    let id = mm.new_dio(usize::MAX);
    let mut b = Bio::new(Dir::Read, 0, 5);
    b.dio = id;
    mm.submit_bio(0, b);
    assert!(mm.bdevs[0].in_flight.is_some());
}

#[test]
fn an_ext2_reader_reads_each_indirect_block_once_before_the_data_it_maps() {
    use mmtwin::mm::mm_types::{PG_ACTIVE, PG_UPTODATE};
    let read_all = |fs: &str| {
        let mut mm = boot_with(&format!("nodes = [{{ id = 0, cpus = 1, memory = \"256M\" }}]\nfs = \"{fs}\""), "linux-3.0", "");
        let ino = mm.create_file(0, 0).unwrap();
        mm.lay_out_file(ino, 3000);
        for index in 0..3000 {
            read_page(&mut mm, ino, index);
        }
        (mm, ino)
    };
    let (ext2, file) = read_all("ext2");
    let (ext4, _) = read_all("ext4");
    // The file predates the run (nothing cached): its single-, double- and two second-level
    // indirect blocks are read from disk, one small read each, and stay cached (Buffers).
    assert_eq!(ext2.nr_bdev_pages(0), 4);
    assert_eq!(ext4.nr_bdev_pages(0), 0);
    let (r2, r4) = (ext2.bdevs[0].stats.requests[0], ext4.bdevs[0].stats.requests[0]);
    assert!(r2 >= r4 + 4, "ext2 {r2} read requests, ext4 {r4}");
    assert_eq!(ext2.bdevs[0].stats.sectors[0], ext4.bdevs[0].stats.sectors[0] + 4 * SECTORS_PER_PAGE);
    let bdev = ext2.inode(ext2.sbs[0].bdev_ino.unwrap()).mapping;
    let ind = ext2.inode(file).meta_blocks[&0];
    let p = ext2.find_get_page(bdev, ind as u32).unwrap();
    assert_ne!(ext2.pages[p as usize].flags & PG_UPTODATE, 0);
    assert_ne!(ext2.pages[p as usize].flags & PG_ACTIVE, 0, "looked up for each of the 1,024 blocks it maps");
}

/// One iozone run of `tests` on a 64M ext2 machine, two rounds of one child with 16 MiB files.
fn iozone_run(tests: &str, direct: bool) -> mmtwin::run::IterationResult {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 1, memory = \"64M\" }}]\nboot_reserved = \"1M\"\nfs = \"ext2\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-2.6.32\"\n\
         [workload]\ntype = \"iozone\"\nreaders = [1, 1]\nfile_size = \"16M\"\ntests = {tests}\ndirect = {direct}\n"
    );
    let cfg = Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0);
    mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap()
}

#[test]
fn iozones_write_test_leaves_its_indirect_blocks_cached_for_the_reads_and_after_the_delete() {
    // iozone -i 0 -i 1: write, rewrite, read, re-read, then the files are deleted. The indirect
    // blocks the writes allocated are looked up by every later pass, so the reads find them
    // cached (no 4 KiB metadata read reaches the disk), and ext2 forgets their buffers on
    // delete but leaves the pages in the block device's cache (Buffers).
    let w = iozone_run("[0, 1]", false);
    let tables: Vec<&str> = w.metrics.iter().map(|m| m.table.as_str()).collect();
    assert_eq!(tables, ["iozone Write Throughput", "iozone Rewrite Throughput", "iozone Read Throughput", "iozone Re-read Throughput"]);
    assert!(w.metrics.iter().all(|m| m.op == "1" && m.value > 0.0));
    let disk = &w.disks[0].1;
    assert_eq!(disk.metadata_reads, 0, "the reads found every indirect block cached");
    assert!(disk.buffers_pages >= 4, "16 MiB needs 4 indirect blocks and a double-indirect one; {} cached", disk.buffers_pages);
    // iozone -i 1 on files laid out beforehand, caches dropped between rounds: each round's
    // reader reads the indirect blocks itself.
    let r = iozone_run("[1]", false);
    let tables: Vec<&str> = r.metrics.iter().map(|m| m.table.as_str()).collect();
    assert_eq!(tables, ["iozone Read Throughput", "iozone Re-read Throughput"]);
    assert_eq!(r.disks[0].1.metadata_reads, 2 * 5, "each round's read reads the 5 indirect blocks, the re-read finds them");
    // O_DIRECT writes map their blocks with the same get_block: the indirect blocks are cached
    // for the O_DIRECT reads too, while the data never enters the page cache.
    let d = iozone_run("[0, 1]", true);
    assert_eq!(d.metrics.len(), 4);
    assert_eq!(d.disks[0].1.metadata_reads, 0);
    assert!(d.disks[0].1.buffers_pages >= 4);
    let pages = 2 * 2 * 4096 * 8;
    assert_eq!(d.disks[0].1.sectors, [pages, pages], "every pass of both rounds went to the disk whole");
}

/// An iozone -i 1 round of three CPU-bound readers (100 µs of copying a page): two share CPU 0
/// and the third has CPU 1 to itself, so it finishes each pass in about half their time.
fn iozone_unequal_readers(stonewall: bool) -> mmtwin::run::IterationResult {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 2, memory = \"128M\" }}]\nboot_reserved = \"1M\"\ndisks = 3\nfs = \"ext2\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-2.6.32\"\n\
         [workload]\ntype = \"iozone\"\nreaders = [3]\nfile_size = \"4M\"\ntests = [1]\ncpus = [0, 0, 1]\nstonewall = {stonewall}\n\
         [costs]\ncopy_page_ns = 100000\n"
    );
    let cfg = Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0);
    mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap()
}

#[test]
fn iozones_first_child_to_finish_a_pass_stops_the_others() {
    // Stonewalling, iozone's default: when the reader on CPU 1 has read its whole file, the two
    // sharing CPU 0 have read about half of theirs, and stop there. The 128M machine keeps what
    // the read pass read, so the re-read reads almost nothing more from disk.
    let pgpgin = |r: &mmtwin::run::IterationResult| r.vmstat_delta.iter().find(|(k, _)| *k == "pgpgin").map_or(0, |(_, v)| *v);
    let files_kib = 3 * 4 * 1024;
    let (on, off) = (iozone_unequal_readers(true), iozone_unequal_readers(false));
    assert!(pgpgin(&off) >= files_kib, "without stonewalling every file is read whole: {} KiB", pgpgin(&off));
    assert!(pgpgin(&on) < files_kib * 4 / 5, "the two slower readers stopped early: {} KiB of {files_kib}", pgpgin(&on));
    assert!(on.elapsed_ns < off.elapsed_ns * 4 / 5, "{} against {} ns", on.elapsed_ns, off.elapsed_ns);
    // Each child's throughput is what it read over its own time: while all three read, the
    // rates hold steady, so the sum is about the same either way.
    let read = |r: &mmtwin::run::IterationResult| r.metrics.iter().find(|m| m.table == "iozone Read Throughput").unwrap().value;
    assert!((read(&on) / read(&off) - 1.0).abs() < 0.1, "{} against {} KB/s", read(&on), read(&off));
}

/// Queues one-page direct writes far apart (no merging) on disk 0 as task `pid` while it may
/// have a request; returns how many it queued.
fn queue_while_allowed(mm: &mut Mm, pid: u32, dio: u32, first_page: &mut u64) -> u32 {
    mm.sched.current_pid = pid;
    let mut n = 0;
    while mm.may_get_request(0, mmtwin::block::Pool::Async) {
        submit_dio_write(mm, dio, *first_page, 1);
        *first_page += 1000;
        n += 1;
    }
    n
}

#[test]
fn the_task_that_fills_the_request_pool_and_a_task_woken_from_it_queue_batches_past_it() {
    let machine = "nodes = [{ id = 0, cpus = 1, memory = \"256M\" }]\ndisk = { nr_requests = 16 }";
    let mut mm = boot_with(machine, "linux-3.0", "");
    let dio = mm.new_dio(usize::MAX);
    let mut page = 0;
    // Task 1's sixteenth request fills the pool (one more goes to the device at once): the
    // queue is marked full and task 1 is a batcher, allowed up to 24 (3/2 × 16).
    assert_eq!(queue_while_allowed(&mut mm, 1, dio, &mut page), 25);
    assert_eq!(mm.bdevs[0].allocated(mmtwin::block::Pool::Async), 24);
    // Task 2 is no batcher: it sleeps in get_request_wait.
    mm.sched.current_pid = 2;
    assert!(!mm.may_get_request(0, mmtwin::block::Pool::Async));
    mm.sleep_for_request(0, mmtwin::block::Pool::Async);
    // The full mark (and with it the wakeup of a waiter) goes only once the pool is below
    // nr_requests again: 9 completions.
    let mut completions = 0;
    while mm.bdevs[0].queue_full(mmtwin::block::Pool::Async) {
        let (t, dev) = mm.io_timers.pop().expect("a request in flight");
        mm.now_ns = t;
        mm.blk_complete(dev);
        completions += 1;
    }
    assert_eq!(completions, 9);
    // Woken, task 2 is a batcher: past the full mark again, up to 24.
    let woken_at = mm.now_ns;
    assert_eq!(queue_while_allowed(&mut mm, 2, dio, &mut page), 9);
    // Two completions later the pool is below 3/2 × nr_requests but still marked full: task 2,
    // within HZ/50 of its wakeup, may go on; task 1, whose batch began earlier, may not.
    for _ in 0..2 {
        let (t, dev) = mm.io_timers.pop().expect("a request in flight");
        mm.now_ns = t;
        mm.blk_complete(dev);
    }
    assert!(mm.now_ns < woken_at + 20_000_000, "within HZ/50 of the wakeup");
    assert_eq!(queue_while_allowed(&mut mm, 1, dio, &mut page), 0);
    assert_eq!(queue_while_allowed(&mut mm, 2, dio, &mut page), 2);
    // Past HZ/50 its batch is spent too.
    mm.now_ns += 20_000_000;
    for _ in 0..2 {
        let (t, dev) = mm.io_timers.pop().expect("a request in flight");
        mm.now_ns = mm.now_ns.max(t);
        mm.blk_complete(dev);
    }
    assert_eq!(queue_while_allowed(&mut mm, 2, dio, &mut page), 0);

    // With blk-mq's tags (6.x) nobody gets past nr_requests.
    let mut mm = boot_with(machine, "linux-3.0", "request_alloc = \"tags\"");
    let dio = mm.new_dio(usize::MAX);
    let mut page = 0;
    assert_eq!(queue_while_allowed(&mut mm, 1, dio, &mut page), 17);
    assert_eq!(mm.bdevs[0].allocated(mmtwin::block::Pool::Async), 16);
}
