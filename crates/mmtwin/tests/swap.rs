//! Mechanism tests of anonymous memory and swap: one kernel behaviour each.

use mmtwin::config::scenario::Scenario;
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::memory::{Fault, Pte, TableOwner};
use mmtwin::mm::mm_types::*;
use mmtwin::mm::mmzone::{LruList, ZoneStat};
use mmtwin::mm::vmscan::{Reclaimer, ScanControl};
use mmtwin::mm::vmstat::VmStat;
use mmtwin::mm::Mm;
use mmtwin::testing::checkers::check_all;

/// A one-node 3.0 machine of 64M with `swap` of swap space.
fn boot(swap: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 1, memory = \"64M\" }}]\nboot_reserved = \"1M\"\nswap = \"{swap}\"\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\n[workload]\ntype = \"anon-churn\"\n"
    );
    Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0))
}

/// Faults in `n` pages of a new anonymous region; returns the region.
fn populate(mm: &mut Mm, n: u32) -> u32 {
    let vma = mm.anon_vma_new(n);
    for i in 0..n {
        assert_eq!(mm.handle_anon_fault(vma, i, true, 0), Fault::Done { major: false });
    }
    vma
}

/// Runs kswapd-style reclaim at priority 0 over zone `zid`, with the accessed bits of every
/// anon page cleared first (nobody touched them).
fn reclaim_pass(mm: &mut Mm, zid: usize) -> u64 {
    reclaim_at(mm, zid, 0)
}

/// The same at `priority`.
fn reclaim_at(mm: &mut Mm, zid: usize, priority: i32) -> u64 {
    for p in mm.pages.iter_mut() {
        p.flags &= !PG_YOUNG;
    }
    mm.in_reclaim = true;
    mm.reclaimer = Reclaimer::Kswapd;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, u64::MAX, mm.sysctl.swappiness);
    sc.priority = priority;
    mm.shrink_zone(zid, &mut sc);
    mm.in_reclaim = false;
    sc.nr_reclaimed
}

/// Completes every request queued on the disk.
fn complete_io(mm: &mut Mm) {
    while mm.bdevs[0].in_flight.is_some() {
        mm.blk_complete(0);
    }
    mm.io_timers.clear();
}

/// Reclaims with I/O completing between passes until every page of the region is swapped out
/// and freed (at most 10 passes); returns the number of passes.
fn swap_out_all(mm: &mut Mm, vma: u32, zid: usize) -> usize {
    for pass in 1..=10 {
        reclaim_pass(mm, zid);
        check_all(mm).unwrap();
        complete_io(mm);
        let swapped = mm.anon_vmas[vma as usize].ptes.iter().all(|p| matches!(p, Pte::Swap(_)));
        if swapped && mm.global_page_state(ZoneStat::NrFilePages) == 0 {
            return pass;
        }
    }
    panic!("not swapped out after 10 passes");
}

#[test]
fn new_anon_pages_are_mapped_counted_and_start_on_the_active_list_in_3x() {
    let mut mm = boot("32M");
    let vma = populate(&mut mm, 16);
    let Pte::Present(pfn) = mm.anon_vmas[vma as usize].ptes[3] else { panic!("page 3 not present") };
    assert_eq!(mm.page_lru(pfn), LruList::ActiveAnon);
    assert_eq!(mm.global_page_state(ZoneStat::NrAnonPages), 16);
    check_all(&mm).unwrap();
}

#[test]
fn anonymous_faults_allocate_a_page_table_page_per_2m_and_reclaim_leaves_the_tables() {
    // 1,025 pages span three 2 MiB PTE pages under one PMD page; 3.0 counts the PTE pages.
    let mut mm = boot("32M");
    let vma = populate(&mut mm, 1025);
    let t = &mm.page_tables[&TableOwner::Anon(vma)];
    assert_eq!((t.pmd.len(), t.pte.len(), t.pages().count()), (1, 3, 4));
    assert_eq!(mm.global_page_state(ZoneStat::NrPageTable), 3);
    // Swapping pages out leaves their entries (now swap entries) in the same tables.
    let Pte::Present(pfn) = mm.anon_vmas[vma as usize].ptes[0] else { panic!() };
    let zid = mm.page_zone(pfn);
    let tables = mm.page_tables[&TableOwner::Anon(vma)].clone();
    for _ in 0..4 {
        reclaim_pass(&mut mm, zid);
        complete_io(&mut mm);
    }
    assert!(mm.events.get(VmStat::Pswpout) > 0, "some pages were swapped out");
    assert_eq!(mm.page_tables[&TableOwner::Anon(vma)], tables, "reclaim does not free page tables");
    check_all(&mm).unwrap();
}

#[test]
fn an_unmap_frees_only_the_tables_no_other_mapping_touches_and_a_huge_page_deposits_one() {
    // One address space: a THP at 0 (its PMD page and a deposited PTE page), base-page
    // regions at [512, 528) and [600, 616), which share the PTE page of span 1.
    let mut mm = boot("32M");
    let owner = TableOwner::Task(1);
    mm.pmd_alloc(owner, 0, 0, false).unwrap();
    let huge = mm.alloc_pages(Gfp::GFP_TRANSHUGE, 9, 0).expect("a free order-9 block");
    mm.mod_page_state(huge, ZoneStat::NrAnonThps, 1);
    mm.thp_deposit(owner, 0, 0).unwrap();
    for va in [512, 600] {
        mm.pte_alloc(owner, va, 0, false).unwrap();
    }
    let t = &mm.page_tables[&owner];
    assert_eq!((t.pmd.len(), t.pte.len(), t.deposit.len()), (1, 1, 1));
    assert_eq!(mm.global_page_state(ZoneStat::NrPageTable), 2, "3.0 counts the PTE pages and the deposit");
    // Unmapping [512, 528) while [600, 616) still maps through span 1 keeps its PTE page.
    let others = |a: u64, b: u64| (a < 616 && b > 600) || (a < 512 && b > 0);
    mm.free_pgtables_range(owner, 512, 528, 0, others);
    assert_eq!(mm.page_tables[&owner].pte.len(), 1);
    // Then [600, 616) goes: span 1's table with it; the PMD page stays for the THP.
    mm.free_pgtables_range(owner, 600, 616, 0, |a, b| a < 512 && b > 0);
    let t = &mm.page_tables[&owner];
    assert_eq!((t.pmd.len(), t.pte.len(), t.deposit.len()), (1, 0, 1));
    check_all(&mm).unwrap();
    // The THP's unmap takes its deposit and, with nothing left in the GiB, the PMD page.
    mm.mod_page_state(huge, ZoneStat::NrAnonThps, -1);
    mm.free_pages(huge, 9, 0);
    mm.free_pgtables_range(owner, 0, 512, 0, |_, _| false);
    assert!(!mm.page_tables.contains_key(&owner));
    assert_eq!(mm.global_page_state(ZoneStat::NrPageTable), 0);
    check_all(&mm).unwrap();
}

#[test]
fn without_swap_reclaim_leaves_anon_pages_alone() {
    let mut mm = boot("0");
    let vma = populate(&mut mm, 64);
    let Pte::Present(pfn) = mm.anon_vmas[vma as usize].ptes[0] else { panic!() };
    let zid = mm.page_zone(pfn);
    assert_eq!(reclaim_pass(&mut mm, zid), 0);
    assert_eq!(mm.events.get(VmStat::Pswpout), 0);
    assert_eq!(mm.global_page_state(ZoneStat::NrAnonPages), 64);
}

#[test]
fn reclaim_swaps_anon_pages_out_and_frees_them_once_written() {
    let mut mm = boot("32M");
    let vma = populate(&mut mm, 64);
    let Pte::Present(pfn) = mm.anon_vmas[vma as usize].ptes[0] else { panic!() };
    let zid = mm.page_zone(pfn);
    let free_slots = mm.nr_swap_pages();
    // First pass: the inactive anon list is empty; at the end the active list is aged by
    // SWAP_CLUSTER_MAX pages, since the inactive list is smaller than the active one.
    reclaim_pass(&mut mm, zid);
    assert_eq!(mm.events.get(VmStat::Pswpout), 0);
    assert_eq!(mm.lruvecs[zid].lists[LruList::InactiveAnon as usize].len, 32);
    // Second pass: the inactive pages are added to the swap cache, unmapped and written; they
    // stay until the write completes.
    reclaim_pass(&mut mm, zid);
    assert_eq!(mm.events.get(VmStat::Pswpout), 32);
    assert_eq!(mm.global_page_state(ZoneStat::NrAnonPages), 32, "32 unmapped");
    assert_eq!(mm.global_page_state(ZoneStat::NrWriteback), 32);
    check_all(&mm).unwrap();
    complete_io(&mut mm);
    // Written back-to-back to one cluster of slots: 3.1's reclaim does not plug, so the first
    // write goes straight to the idle disk, the second is taken from the scheduler while the
    // disk is busy (scsi_request_fn's peek), and the third starts a request the other 29
    // join.
    assert_eq!(mm.bdevs[0].stats.requests[1], 3);
    // Written and rotated to the tail of the inactive list.
    assert_eq!(mm.events.get(VmStat::Pgrotated), 32);
    let passes = swap_out_all(&mut mm, vma, zid);
    assert!(passes <= 3, "{passes} passes");
    assert_eq!(mm.events.get(VmStat::Pswpout), 64, "every page written once");
    assert_eq!(mm.global_page_state(ZoneStat::NrAnonPages), 0);
    assert_eq!(mm.nr_swap_pages(), free_slots - 64);
}

#[test]
fn a_touch_of_a_swapped_page_reads_its_cluster_back_and_a_store_frees_the_slot() {
    let mut mm = boot("32M");
    let vma = populate(&mut mm, 64);
    let Pte::Present(pfn) = mm.anon_vmas[vma as usize].ptes[0] else { panic!() };
    let zid = mm.page_zone(pfn);
    swap_out_all(&mut mm, vma, zid);
    let reads0 = mm.bdevs[0].stats.requests[0];
    assert_eq!(mm.total_swap_pages() - mm.nr_swap_pages(), 64);
    // A load of page 13: a major fault reading the aligned cluster of 2^page_cluster = 8 slots.
    let Fault::Wait(_) = mm.handle_anon_fault(vma, 13, false, 0) else { panic!("no read started") };
    assert_eq!(mm.events.get(VmStat::Pgmajfault), 1);
    assert_eq!(mm.events.get(VmStat::Pswpin), 8);
    check_all(&mm).unwrap();
    complete_io(&mut mm);
    // 3.x submits each read at once: the first goes straight to the idle disk, the second is
    // peeked while the disk is busy, and the third starts a request the other five join.
    assert_eq!(mm.bdevs[0].stats.requests[0] - reads0, 3);
    assert_eq!(mm.handle_anon_fault(vma, 13, false, 0), Fault::Done { major: true });
    // Mapped again; its slot stays allocated for the clean swap cache copy.
    assert_eq!(mm.global_page_state(ZoneStat::NrAnonPages), 1);
    assert_eq!(mm.total_swap_pages() - mm.nr_swap_pages(), 64);
    // A store to page 13 makes its swap copy stale: the slot is freed.
    assert_eq!(mm.handle_anon_fault(vma, 13, true, 0), Fault::Done { major: false });
    assert_eq!(mm.total_swap_pages() - mm.nr_swap_pages(), 63);
    check_all(&mm).unwrap();
}

#[test]
fn a_clean_swap_cache_page_is_reclaimed_without_another_write() {
    let mut mm = boot("32M");
    let vma = populate(&mut mm, 8);
    let Pte::Present(pfn) = mm.anon_vmas[vma as usize].ptes[0] else { panic!() };
    let zid = mm.page_zone(pfn);
    swap_out_all(&mut mm, vma, zid);
    let Fault::Wait(_) = mm.handle_anon_fault(vma, 0, false, 0) else { panic!() };
    complete_io(&mut mm);
    for i in 0..8 {
        while let Fault::Wait(_) = mm.handle_anon_fault(vma, i, false, 0) {
            complete_io(&mut mm);
        }
    }
    assert_eq!(mm.events.get(VmStat::Pswpin), 8, "each slot read once");
    assert_eq!(mm.global_page_state(ZoneStat::NrAnonPages), 8);
    let writes = mm.events.get(VmStat::Pswpout);
    swap_out_all(&mut mm, vma, zid);
    assert_eq!(mm.events.get(VmStat::Pswpout), writes, "unchanged pages are not written again");
}


#[test]
fn a_3x_zone_with_almost_no_page_cache_has_only_its_anon_lists_scanned() {
    // get_scan_count: file + free at or below the high watermark forces anon-only scanning.
    for starved in [true, false] {
        let mut mm = boot("64M");
        let zid = mm.zones.iter().position(|z| z.zone_type == mmtwin::mm::ZoneType::Dma32).unwrap();
        populate(&mut mm, 512);
        let f = mm.new_mapping(1);
        for i in 0..64 {
            let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
            assert!(mm.add_to_page_cache_lru(p, f, i, Gfp::GFP_KERNEL, 0));
        }
        if starved {
            // Hold free memory so that file + free stays under the high watermark.
            let high = mm.zones[zid].high_wmark_pages();
            while mm.zones[zid].nr_free_pages as u64 + 64 > high {
                mm.alloc_pages(Gfp::GFP_ATOMIC.with(Gfp::DMA32), 0, 0).unwrap();
            }
        }
        let lv = mm.page_lruvec(mm.find_get_page(f, 0).unwrap());
        // The pages just added count as recently scanned (and the anon ones, added active,
        // as rotated); start the history afresh so that the reclaim's own scans show.
        mm.lruvecs[lv].reclaim_stat.recent_scanned = [0, 0];
        mm.lruvecs[lv].reclaim_stat.recent_rotated = [0, 0];
        let before = mm.lruvecs[lv].reclaim_stat.recent_scanned;
        reclaim_at(&mut mm, zid, 1);
        let after = mm.lruvecs[lv].reclaim_stat.recent_scanned;
        let (anon, file) = (after[0] - before[0], after[1] - before[1]);
        assert!(anon > 0, "starved {starved}: anon scanned {anon}");
        assert_eq!(file == 0, starved, "starved {starved}: file scanned {file}");
    }
}

#[test]
fn a_3x_page_added_to_the_lru_counts_as_recently_scanned_and_an_activation_as_rotated() {
    // ____pagevec_lru_add_fn and __activate_page call update_page_reclaim_stat (2.6.28-5.8).
    let mut mm = boot("64M");
    let vma = populate(&mut mm, 1);
    let Pte::Present(anon) = mm.anon_vmas[vma as usize].ptes[0] else { panic!("page 0 not present") };
    let lv = mm.page_lruvec(anon);
    let rs = mm.lruvecs[lv].reclaim_stat;
    assert_eq!((rs.recent_scanned[0], rs.recent_rotated[0]), (1, 1), "a new anon page starts active: scanned and rotated");
    let f = mm.new_mapping(1);
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert!(mm.add_to_page_cache_lru(p, f, 0, Gfp::GFP_KERNEL, 0));
    let rs = mm.lruvecs[mm.page_lruvec(p)].reclaim_stat;
    assert_eq!((rs.recent_scanned[1], rs.recent_rotated[1]), (1, 0), "a page cache page starts inactive: scanned only");
    // Two accesses activate it: one rotation more.
    mm.mark_page_accessed(p);
    mm.mark_page_accessed(p);
    assert_ne!(mm.pages[p as usize].flags & PG_ACTIVE, 0);
    let rs = mm.lruvecs[mm.page_lruvec(p)].reclaim_stat;
    assert_eq!((rs.recent_scanned[1], rs.recent_rotated[1]), (2, 1), "an activation is a rotation");
}
