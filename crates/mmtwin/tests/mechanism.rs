//! Mechanism tests: one kernel behaviour each, probed directly on the allocator.

mod common;

use common::*;
use mmtwin::mm::gfp::*;
use mmtwin::mm::mmzone::*;
use mmtwin::mm::vmstat::VmStat;
use mmtwin::mm::{Mm, MAX_PAGE_ORDER, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use mmtwin::testing::checkers::check_all;

/// A zone holding exactly one free block of order 10 (the rest allocated).
fn one_block_zone(profile: &str) -> (mmtwin::mm::Mm, usize, u32) {
    let mut mm = boot(profile, 1, 2, "64M", "sysctl = { min_free_kbytes = 128 }");
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    let (pfn, order) = *blocks.iter().find(|b| b.1 == MAX_PAGE_ORDER).unwrap();
    mm.__free_one_page(z, pfn, order, MigrateType::Movable);
    (mm, z, pfn)
}

#[test]
fn split_leaves_one_free_block_per_order_and_returns_the_lowest_piece() {
    for profile in ["linux-3.0", "linux-6.x"] {
        let (mut mm, z, block) = one_block_zone(profile);
        let pfn = mm.__rmqueue_smallest(z, 0, MigrateType::Movable).unwrap();
        assert_eq!(pfn, block, "{profile}: expand keeps the lowest piece");
        for o in 0..MAX_PAGE_ORDER {
            assert_eq!(mm.zones[z].free_area[o].nr_free, 1, "{profile}: order {o}");
            // The upper half of each split is the free block of that order.
            assert_eq!(mm.zones[z].free_area[o].free_list[MigrateType::Movable as usize].head, block + (1 << o));
        }
        assert_eq!(mm.zones[z].free_area[MAX_PAGE_ORDER].nr_free, 0);
        assert_eq!(mm.zones[z].nr_free_pages, 1023);
    }
}

#[test]
fn freeing_merges_buddies_back_into_the_largest_block() {
    for profile in ["linux-3.0", "linux-6.x"] {
        let (mut mm, z, block) = one_block_zone(profile);
        let a = mm.__rmqueue_smallest(z, 0, MigrateType::Movable).unwrap();
        let b = mm.__rmqueue_smallest(z, 0, MigrateType::Movable).unwrap();
        assert_eq!(b, block + 1, "the order-0 buddy is handed out next");
        mm.__free_one_page(z, a, 0, MigrateType::Movable);
        assert_eq!(mm.zones[z].free_area[0].nr_free, 1, "a's buddy b is in use: no merge yet");
        mm.__free_one_page(z, b, 0, MigrateType::Movable);
        assert_eq!(mm.zones[z].free_area[MAX_PAGE_ORDER].nr_free, 1, "{profile}: everything merged");
        for o in 0..MAX_PAGE_ORDER {
            assert_eq!(mm.zones[z].free_area[o].nr_free, 0);
        }
    }
}

fn tail_placement(heuristic: bool) -> (u32, u32, u32) {
    let extra = format!("sysctl = {{ min_free_kbytes = 128 }}\npolicy = {{ merge_tail_heuristic = {heuristic} }}");
    let mut mm = boot("linux-6.x", 1, 1, "64M", &extra);
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    let big: Vec<u32> = blocks.iter().filter(|b| b.1 == MAX_PAGE_ORDER).map(|b| b.0).collect();
    mm.__free_one_page(z, big[0], MAX_PAGE_ORDER, MigrateType::Movable);
    let _a = mm.__rmqueue_smallest(z, 0, MigrateType::Movable).unwrap();
    let b = mm.__rmqueue_smallest(z, 0, MigrateType::Movable).unwrap();
    // An unrelated lone order-0 page goes on the list first.
    let x = big[1];
    mm.__free_one_page(z, x, 0, MigrateType::Movable);
    // b's buddy (a) is in use, but b's order-1 parent has a free buddy: merging is likely.
    mm.__free_one_page(z, b, 0, MigrateType::Movable);
    let list = &mm.zones[z].free_area[0].free_list[MigrateType::Movable as usize];
    (b, list.head, list.tail)
}

#[test]
fn merge_heuristic_puts_a_block_at_the_tail_when_its_next_buddy_is_free() {
    let (b, _head, tail) = tail_placement(true);
    assert_eq!(tail, b, "likely to merge: tail");
    let (b, head, _tail) = tail_placement(false);
    assert_eq!(head, b, "without the heuristic a free goes to the head");
}

#[test]
fn fallback_3x_steals_the_whole_pageblock_for_a_large_block() {
    let (mut mm, z, block) = one_block_zone("linux-3.0");
    let pfn = mm.alloc_pages(Gfp::GFP_KERNEL, 0, 0).expect("allocation");
    assert!(pfn >= block && pfn < block + 1024);
    assert_eq!(mm.get_pageblock_migratetype(block), MigrateType::Unmovable);
    assert_eq!(mm.get_pageblock_migratetype(block + PAGEBLOCK_NR_PAGES as u32), MigrateType::Unmovable);
    for o in 0..=MAX_PAGE_ORDER {
        assert_eq!(nr_free(&mm, z, o, MigrateType::Movable), 0, "order {o}: nothing left on movable lists");
    }
    check_all(&mm).unwrap();
}

#[test]
fn fallback_3x_small_blocks_are_taken_without_relabelling() {
    let mut mm = boot("linux-3.0", 1, 1, "64M", "sysctl = { min_free_kbytes = 128 }");
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    // Sixteen order-2 movable blocks that cannot merge; an unmovable order-0 request takes from
    // them (order 2 < pageblock_order/2) but leaves the pageblock movable.
    let p = blocks.iter().copied().find(|&(_, o)| o == MAX_PAGE_ORDER).unwrap().0;
    for i in 0..16 {
        mm.__free_one_page(z, p + 8 * i, 2, MigrateType::Movable);
    }
    let got = mm.alloc_pages(Gfp::GFP_KERNEL, 0, 0).unwrap();
    assert!(got >= p && got < p + 128 && (got - p) % 8 < 4, "from one of the small blocks: {got}");
    assert_eq!(mm.get_pageblock_migratetype(p), MigrateType::Movable);
}

#[test]
fn fallback_6x_movable_request_takes_the_smallest_block_it_cannot_claim() {
    let mut mm = boot("linux-6.x", 1, 1, "64M", "sysctl = { min_free_kbytes = 128 }");
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    let big: Vec<u32> = blocks.iter().filter(|b| b.1 == MAX_PAGE_ORDER).map(|b| b.0).collect();
    // Two unmovable pageblocks with an order-3 and an order-2 free block.
    let (b1, b2) = (big[0], big[1]);
    mm.set_pageblock_migratetype(b1, MigrateType::Unmovable);
    mm.set_pageblock_migratetype(b2, MigrateType::Unmovable);
    mm.__free_one_page(z, b1, 3, MigrateType::Unmovable);
    mm.__free_one_page(z, b2, 2, MigrateType::Unmovable);
    // Order 3 cannot be claimed by a movable request (3 < pageblock_order/2): find_smallest.
    let got = mm.__rmqueue(z, 0, MigrateType::Movable, 0).unwrap();
    assert!(got >= b2 && got < b2 + 4, "smallest suitable block (order 2) used, got {got}");
    assert_eq!(mm.get_pageblock_migratetype(b2), MigrateType::Unmovable, "not claimed");
    assert!(mm.zones[z].watermark_boost > 0 || mm.zones[z].managed_pages / PAGEBLOCK_NR_PAGES < 4);
}

#[test]
fn fallback_6x_unmovable_request_claims_a_mostly_free_block_and_boosts() {
    let mut mm = boot("linux-6.x", 1, 1, "64M", "sysctl = { min_free_kbytes = 128 }");
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    let p = blocks.iter().find(|b| b.1 == MAX_PAGE_ORDER).unwrap().0;
    // Free one whole pageblock (order 9) as movable: an unmovable request claims it.
    mm.__free_one_page(z, p, PAGEBLOCK_ORDER, MigrateType::Movable);
    let got = mm.__rmqueue(z, 0, MigrateType::Unmovable, ALLOC_KSWAPD).unwrap();
    assert_eq!(got, p);
    assert_eq!(mm.get_pageblock_migratetype(p), MigrateType::Unmovable);
    assert_eq!(nr_free(&mm, z, 8, MigrateType::Unmovable), 1);
}

#[test]
fn fallback_6x_partial_claim_boosts_the_watermark() {
    let mut mm = boot("linux-6.x", 1, 1, "64M", "sysctl = { min_free_kbytes = 128 }");
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    let p = blocks.iter().find(|b| b.1 == MAX_PAGE_ORDER).unwrap().0;
    // The rest of the pageblock is in use by movable pages.
    for q in p + 64..p + 1024 {
        let pg = &mut mm.pages[q as usize];
        pg.set_state(mmtwin::mm::PageState::Allocated);
        pg.order = 0;
        pg.flags |= mmtwin::mm::page_alloc::PG_MOVABLE_ALLOC;
    }
    mm.__free_one_page(z, p, 6, MigrateType::Movable);
    assert_eq!(mm.zones[z].watermark_boost, 0);
    let got = mm.__rmqueue(z, 0, MigrateType::Unmovable, ALLOC_KSWAPD).unwrap();
    assert!(got >= p && got < p + 64);
    // 64 free of 512: not enough to claim; the block keeps its label, the zone is boosted.
    assert_eq!(mm.get_pageblock_migratetype(p), MigrateType::Movable);
    assert_eq!(mm.zones[z].watermark_boost, PAGEBLOCK_NR_PAGES);
    assert!(mm.zones[z].flags & ZONE_BOOSTED_WATERMARK != 0);
}

#[test]
fn watermark_refuses_at_the_mark_and_reserves_lower_it() {
    let mm3 = boot("linux-3.0", 1, 1, "64M", "");
    let mm6 = boot("linux-6.x", 1, 1, "64M", "");
    let z = zid(0, ZoneType::Dma32);
    let hi = ZoneType::Dma32 as usize;
    // 3.1: free − (1 + 1) must exceed the mark.
    assert!(!mm3.__zone_watermark_ok(z, 0, 100, hi, 0, 102));
    assert!(mm3.__zone_watermark_ok(z, 0, 100, hi, 0, 103));
    // __GFP_HIGH halves the mark; atomic (HARDER) takes a further quarter.
    assert!(mm3.__zone_watermark_ok(z, 0, 100, hi, ALLOC_HIGH, 53));
    assert!(!mm3.__zone_watermark_ok(z, 0, 100, hi, ALLOC_HIGH, 52));
    // 100 − 50 − 12 = 38: free − 2 must exceed 38.
    assert!(mm3.__zone_watermark_ok(z, 0, 100, hi, ALLOC_HIGH | ALLOC_HARDER, 41));
    assert!(!mm3.__zone_watermark_ok(z, 0, 100, hi, ALLOC_HIGH | ALLOC_HARDER, 40));
    // 6.x: free − 0 must exceed the mark for order 0.
    assert!(!mm6.__zone_watermark_ok(z, 0, 100, hi, 0, 100));
    assert!(mm6.__zone_watermark_ok(z, 0, 100, hi, 0, 101));
}

#[test]
fn order_above_zero_needs_big_enough_free_blocks() {
    for profile in ["linux-3.0", "linux-6.x"] {
        let mut mm = boot(profile, 1, 1, "64M", "");
        let z = zid(0, ZoneType::Dma32);
        let blocks = drain_zone(&mut mm, z);
        // 2048 free order-0 pages only.
        let mut n = 0;
        'out: for &(p, o) in &blocks {
            for i in 0..(1u32 << o) {
                if (p + i) % 2 == 0 {
                    mm.__free_one_page(z, p + i, 0, MigrateType::Movable);
                    n += 1;
                    if n == 2048 {
                        break 'out;
                    }
                }
            }
        }
        assert!(mm.zone_watermark_ok(z, 0, 100, 1, 0), "{profile}: order 0 fine");
        assert!(!mm.zone_watermark_ok(z, 1, 100, 1, 0), "{profile}: no order-1 block anywhere");
    }
}

#[test]
fn lowmem_reserve_keeps_normal_allocations_out_of_dma() {
    // 6G: DMA, DMA32 to 4G, Normal 2G; no ZONE_MOVABLE.
    for profile in ["linux-3.0", "linux-6.x", "linux-6.1"] {
        let mm = boot(profile, 1, 1, "6G", "");
        let dma = zid(0, ZoneType::Dma);
        let count = |z: usize| match profile {
            "linux-3.0" => mm.zones[z].present_pages,
            _ => mm.zones[z].managed_pages,
        };
        let upper = count(zid(0, ZoneType::Dma32)) + count(zid(0, ZoneType::Normal));
        let normal = ZoneType::Normal as usize;
        assert_eq!(mm.zones[dma].lowmem_reserve[normal], upper / 256, "{profile}: DMA protects itself by (DMA32+Normal)/256");
        let min = mm.zones[dma].min_wmark_pages();
        assert!(!mm.zone_watermark_ok(dma, 0, min, normal, 0), "{profile}: GFP_KERNEL refused in DMA");
        assert!(mm.zone_watermark_ok(dma, 0, min, ZoneType::Dma as usize, 0), "{profile}: GFP_DMA allowed");
        let movable = ZoneType::Movable as usize;
        match profile {
            // 3.x and 6.1 (lowmem_reserve = keep-empty): an empty Movable zone still carries
            // the cumulative reserve.
            "linux-3.0" | "linux-6.1" => assert_eq!(mm.zones[dma].lowmem_reserve[movable], upper / 256),
            // 6.12 setup_per_zone_lowmem_reserve clears the entry of an empty upper zone, so a
            // __GFP_MOVABLE|__GFP_HIGHMEM request (highest_zoneidx = MOVABLE) sees no reserve.
            _ => assert_eq!(mm.zones[dma].lowmem_reserve[movable], 0),
        }
    }
}

#[test]
fn kswapd_balancing_one_zone_skips_higher_zones_pages_and_counts_them_as_scanned() {
    use mmtwin::mm::vmscan::{Reclaimer, ScanControl};
    // 6.x (node LRU): reclaim limited to ZONE_DMA meets DMA32 pages first on the list; they go
    // back, count in pgskip_dma32 and in the scan count (isolate_lru_folios' total_scan).
    let mut mm = boot("linux-6.1", 1, 1, "256M", "");
    let ino = mm.create_file(0, 0).unwrap();
    let mut t = Default::default();
    for index in 0..2048 {
        mm.file_write_page(ino, index, 4096, 0, &mut t);
    }
    let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, 0, 32, 60);
    sc.reclaim_idx = ZoneType::Dma as usize;
    sc.priority = 0;
    mm.shrink_lruvec(0, &mut sc);
    let skipped = mm.events.get(VmStat::PgskipDma32);
    assert!(skipped > 0, "the file pages sit in DMA32 and are skipped");
    let scanned = mm.events.get(VmStat::PgscanKswapd) + mm.events.get(VmStat::PgscanDirect);
    let stolen = mm.events.get(VmStat::PgstealKswapd) + mm.events.get(VmStat::PgstealDirect);
    assert!(scanned >= skipped + stolen, "skips count as scanned: {scanned} < {skipped} + {stolen}");
}

#[test]
fn min_free_kbytes_is_four_root_lowmem_and_watermarks_follow_each_era() {
    // 1 GiB of lowmem gives 4096 kB; our machine has a little less after boot reservations.
    let mm3 = boot("linux-3.0", 1, 1, "1G", "");
    let mm6 = boot("linux-6.x", 1, 1, "1G", "");
    assert!(mm3.min_free_kbytes > 4000 && mm3.min_free_kbytes <= 4096, "{}", mm3.min_free_kbytes);
    let z = zid(0, ZoneType::Dma32);
    let w3 = mm3.zones[z].watermark;
    assert_eq!(w3[WMARK_LOW] - w3[WMARK_MIN], w3[WMARK_MIN] / 4);
    assert_eq!(w3[WMARK_HIGH] - w3[WMARK_MIN], w3[WMARK_MIN] / 2);
    let w6 = mm6.zones[z].watermark;
    let gap = (w6[WMARK_MIN] / 4).max(mm6.zones[z].managed_pages * 10 / 10000);
    assert_eq!(w6[WMARK_LOW], w6[WMARK_MIN] + gap);
    assert_eq!(w6[WMARK_HIGH], w6[WMARK_MIN] + 2 * gap);
    // A 6.x scale factor of 100 widens the gaps to 1% of the zone.
    let mm = boot("linux-6.x", 1, 1, "1G", "sysctl = { watermark_scale_factor = 100 }");
    let w = mm.zones[z].watermark;
    assert_eq!(w[WMARK_LOW] - w[WMARK_MIN], mm.zones[z].managed_pages / 100);
}

#[test]
fn pcp_refill_is_in_pfn_order_and_hot_pages_come_from_the_head() {
    let (mut mm, _z, block) = one_block_zone("linux-3.0");
    let a = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    let b = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!((a, b), (block, block + 1));
    // A hot free goes to the head and is the next page handed out (LIFO).
    mm.free_pages(a, 0, 0);
    assert_eq!(mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap(), a);
}

fn cold_sequence(cold_refill: &str) -> Vec<u32> {
    let extra = format!("sysctl = {{ min_free_kbytes = 128 }}\npolicy = {{ cold_refill = \"{cold_refill}\" }}");
    let mut mm = boot("linux-3.0", 1, 2, "64M", &extra);
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    let (p, o) = *blocks.iter().find(|b| b.1 == MAX_PAGE_ORDER).unwrap();
    mm.__free_one_page(z, p, o, MigrateType::Movable);
    let gfp = Gfp::GFP_HIGHUSER_MOVABLE.with(Gfp::COLD);
    (0..4).map(|_| mm.alloc_pages(gfp, 0, 0).unwrap() - p).collect()
}

#[test]
fn cold_allocations_get_ascending_pfns_after_e084b2d95e48_and_descending_before() {
    // A 64M zone has batch 3: each refill hands out three pages.
    assert_eq!(cold_sequence("pfn-order"), vec![0, 1, 2, 3]);
    assert_eq!(cold_sequence("reverse-pfn"), vec![2, 1, 0, 5], "each refill comes out descending");
    assert_eq!(cold_sequence("no-cold-hint"), vec![0, 1, 2, 3]);
}

#[test]
fn pcp_drains_a_batch_from_the_tail_when_over_high() {
    let mut mm = boot("linux-3.0", 1, 1, "64M", "sysctl = { min_free_kbytes = 128 }");
    let z = zid(0, ZoneType::Dma32);
    let (high, batch) = (mm.zones[z].pcp[0].high, mm.zones[z].pcp[0].batch);
    assert_eq!((high, batch), (6 * batch, 3), "a 64M zone: batch 3, high 18");
    let pages: Vec<u32> = (0..high + 5).map(|_| mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap()).collect();
    mm.drain_all_pages();
    let free_before = mm.zones[z].nr_free_pages;
    for (i, &p) in pages.iter().enumerate().take(high as usize - 1) {
        mm.free_pages(p, 0, 0);
        assert_eq!(mm.zones[z].pcp[0].count, i as u32 + 1);
    }
    let tail = mm.zones[z].pcp[0].lists[MigrateType::Movable as usize].tail;
    assert_eq!(tail, pages[0], "the first freed (coldest) page is at the tail");
    mm.free_pages(pages[high as usize - 1], 0, 0);
    assert_eq!(mm.zones[z].pcp[0].count, high - batch, "reaching high drains one batch");
    assert_eq!(mm.zones[z].nr_free_pages, free_before + batch as i64);
    assert_ne!(mm.pages[pages[0] as usize].state(), mmtwin::mm::PageState::Pcp, "the tail went first");
    check_all(&mm).unwrap();
}

#[test]
fn pcp_6x_batch_and_high_come_from_the_zone_and_the_low_watermark() {
    let mm = boot("linux-6.x", 1, 4, "8G", "");
    let z = zid(0, ZoneType::Normal);
    let p = &mm.zones[z].pcp[0];
    assert_eq!(p.batch, 63, "large zones: batch 63");
    assert_eq!(p.high_min, (mm.zones[z].low_wmark_pages() as u32 / 4).max(63 * 4));
    assert!(p.high_max >= p.high_min);
    let mm3 = boot("linux-3.0", 1, 4, "8G", "");
    assert_eq!((mm3.zones[z].pcp[0].batch, mm3.zones[z].pcp[0].high), (31, 186));
}

/// A one-node 1G linux-6.1 machine with `cpus` CPUs: (mm, its DMA32 zone, CPU 0's pcp high
/// and batch there).
fn linux_6_1_dma32(cpus: usize) -> (Mm, usize, u32, u32) {
    let mm = boot("linux-6.1", 1, cpus, "1G", "");
    let z = zid(0, ZoneType::Dma32);
    let (high, batch) = (mm.zones[z].pcp[0].high, mm.zones[z].pcp[0].batch);
    (mm, z, high, batch)
}

/// Allocates `n` movable order-0 pages from CPU 0.
fn alloc_movable(mm: &mut Mm, n: u32) -> Vec<u32> {
    (0..n).map(|_| mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap()).collect()
}

#[test]
fn pcp_6_1_high_is_the_low_watermark_split_over_the_nodes_cpus_and_stays_fixed() {
    let (mut mm, z, high, batch) = linux_6_1_dma32(2);
    assert_eq!(high, (mm.zones[z].low_wmark_pages() as u32 / 2).max(batch * 4));
    assert_eq!((mm.zones[z].pcp[0].high_min, mm.zones[z].pcp[0].high_max), (high, high), "no auto-tuning range");
    let pages = alloc_movable(&mut mm, 4 * high);
    for &p in &pages {
        mm.free_pages(p, 0, 0);
        assert!(mm.zones[z].pcp[0].count < high, "never holds high pages after a free");
    }
    assert_eq!(mm.zones[z].pcp[0].high, high, "a run of frees does not raise high (6.7 would)");
    mm.refresh_cpu_vm_stats(0);
    assert_eq!(mm.zones[z].pcp[0].high, high, "nor does the vmstat refresh decay it");
    check_all(&mm).unwrap();
}

#[test]
fn pcp_6_1_drains_double_while_frees_run_without_an_allocation() {
    let (mut mm, z, high, batch) = linux_6_1_dma32(1);
    let pages = alloc_movable(&mut mm, 4 * high);
    mm.drain_all_pages();
    let mut drains = Vec::new();
    let mut before = 0;
    for &p in &pages[..2 * high as usize] {
        mm.free_pages(p, 0, 0);
        let count = mm.zones[z].pcp[0].count;
        if count < before + 1 {
            drains.push(before + 1 - count);
        }
        before = count;
    }
    assert!(drains.len() >= 3, "several drains: {drains:?}");
    let expect: Vec<u32> = (0..drains.len() as u32).map(|i| (batch << i).min(high - batch)).collect();
    assert_eq!(drains, expect, "batch, 2 × batch, 4 × batch, ... up to high - batch");
    // An allocation halves the factor: the next drain is half the last.
    let factor = mm.zones[z].pcp[0].free_factor;
    mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.zones[z].pcp[0].free_factor, factor / 2);
    check_all(&mm).unwrap();
}

#[test]
fn pcp_6_1_keeps_four_batches_while_the_zone_is_reclaim_active() {
    let (mut mm, z, high, batch) = linux_6_1_dma32(1);
    assert!(high > 4 * batch, "a 1G zone's high ({high}) is above 4 batches ({batch})");
    let pages = alloc_movable(&mut mm, high);
    mm.drain_all_pages();
    mm.zones[z].flags |= ZONE_RECLAIM_ACTIVE;
    let mut peak = 0;
    for &p in &pages {
        mm.free_pages(p, 0, 0);
        peak = peak.max(mm.zones[z].pcp[0].count);
    }
    assert!(peak < 4 * batch, "kswapd at work: at most 4 batches stay on the list (peak {peak})");
    mm.zones[z].flags &= !ZONE_RECLAIM_ACTIVE;
    check_all(&mm).unwrap();
}

#[test]
fn zonelists_follow_node_or_zone_order() {
    let node = boot("linux-3.0", 2, 1, "6G", "sysctl = { numa_zonelist_order = \"node\" }");
    let zone = boot("linux-3.0", 2, 1, "6G", "sysctl = { numa_zonelist_order = \"zone\" }");
    let n = |nid, zt| zid(nid, zt);
    use ZoneType::*;
    // Node 0 has DMA, DMA32 (to 4G) and Normal; node 1 only Normal.
    assert_eq!(node.nodes[0].zonelist, vec![n(0, Normal), n(0, Dma32), n(0, Dma), n(1, Normal)]);
    assert_eq!(zone.nodes[0].zonelist, vec![n(0, Normal), n(1, Normal), n(0, Dma32), n(0, Dma)]);
    assert_eq!(zone.nodes[1].zonelist, vec![n(1, Normal), n(0, Normal), n(0, Dma32), n(0, Dma)]);
    let modern = boot("linux-6.x", 2, 1, "6G", "");
    assert_eq!(modern.nodes[1].zonelist, vec![n(1, Normal), n(0, Normal), n(0, Dma32), n(0, Dma)]);
}

#[test]
fn boot_3x_turns_zone_reclaim_on_for_distant_nodes() {
    let far = config("linux-3.0", 2, 1, "1G", "");
    let mut far = far;
    far.machine.distance = vec![vec![10, 21], vec![21, 10]];
    assert_eq!(mmtwin::mm::Mm::boot(&far).sysctl.zone_reclaim_mode, Some(1));
    let near = boot("linux-3.0", 2, 1, "1G", "");
    assert_eq!(near.sysctl.zone_reclaim_mode, Some(0));
    let modern = config("linux-6.x", 2, 1, "1G", "");
    let mut modern = modern;
    modern.machine.distance = vec![vec![10, 40], vec![40, 10]];
    assert_eq!(mmtwin::mm::Mm::boot(&modern).sysctl.zone_reclaim_mode, Some(0));
}

#[test]
fn migrate_reserve_3x_labels_up_to_two_blocks_per_zone() {
    let mm = boot("linux-3.0", 1, 1, "1G", "");
    let z = &mm.zones[zid(0, ZoneType::Dma32)];
    let mut reserve = 0;
    let mut pfn = z.zone_start_pfn;
    while pfn < z.zone_end_pfn() {
        if mm.get_pageblock_migratetype(pfn) == MigrateType::Reserve {
            reserve += 1;
        }
        pfn += PAGEBLOCK_NR_PAGES as u32;
    }
    assert_eq!(reserve, 2);
    assert!(mm.zones[zid(0, ZoneType::Dma32)].free_area[MAX_PAGE_ORDER].free_list[MigrateType::Reserve as usize].len >= 1);
}

#[test]
fn allocations_count_pgalloc_per_zone_and_pgfree() {
    let mut mm = boot("linux-6.x", 1, 1, "64M", "");
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 3, 0).unwrap();
    assert_eq!(mm.events.get(VmStat::PgallocDma32), 8);
    mm.free_pages(p, 3, 0);
    assert_eq!(mm.events.get(VmStat::Pgfree), 8);
    check_all(&mm).unwrap();
}

#[test]
fn kswapd_is_woken_only_once_the_low_watermark_is_crossed() {
    for profile in ["linux-3.0", "linux-6.x"] {
        let mut mm = boot(profile, 1, 1, "64M", "");
        let z = zid(0, ZoneType::Dma32);
        let low = mm.zones[z].low_wmark_pages() as i64;
        let mut woken_at = None;
        for _ in 0..20_000 {
            let before = mm.zones[z].nr_free_pages;
            if mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).is_none() {
                break;
            }
            if !mm.kswapd_wakeups.is_empty() {
                woken_at = Some(before);
                break;
            }
        }
        let at = woken_at.unwrap_or_else(|| panic!("{profile}: kswapd never woken"));
        // The fast path allocates at the low watermark; the wakeup comes from the slow path
        // when a zone can no longer pass it (pcp refills take a batch at a time).
        assert!(at <= low + 64, "{profile}: woken with {at} free, low watermark {low}");
        assert_eq!(mm.kswapd_wakeups, vec![0]);
        assert!(mm.nodes[0].kswapd_wait_pending);
    }
}

#[test]
fn vmstat_refresh_decays_an_autotuned_pcp_high_by_an_eighth_and_drains_above_it() {
    let mut mm = boot("linux-6.x", 1, 1, "1G", "");
    let z = zid(0, ZoneType::Dma32);
    let pages: Vec<u32> = (0..600).map(|_| mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap()).collect();
    for &p in &pages {
        mm.free_pages(p, 0, 0);
    }
    let (high, min, count) = { let p = &mm.zones[z].pcp[0]; (p.high, p.high_min, p.count) };
    assert!(high > min, "freeing grew pcp->high above high_min ({high} > {min})");
    mm.refresh_cpu_vm_stats(0);
    let p = &mm.zones[z].pcp[0];
    let expect = (high - high / 8).max(min).max(count.saturating_sub(p.batch << 5));
    assert_eq!(p.high, expect);
    assert!(p.count <= p.high);
    check_all(&mm).unwrap();
}

#[test]
fn vmstat_refresh_drains_remote_pcp_lists_after_three_idle_rounds() {
    for profile in ["linux-3.0", "linux-6.x"] {
        let mut mm = boot(profile, 2, 1, "64M", "");
        // CPU 0 (node 0) frees a page of node 1 onto its own pcp list for node 1's zone.
        let remote = zid(1, ZoneType::Dma32);
        let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 1).unwrap();
        assert_eq!(mm.page_zone(p), remote);
        mm.drain_all_pages();
        mm.free_pages(p, 0, 0);
        assert_eq!(mm.zones[remote].pcp[0].count, 1);
        // The free touched no zone counter (it went to the pcp list): mark activity by hand as a
        // refill would, then let three refreshes pass.
        mm.zones[remote].pcp[0].stat_diff = true;
        mm.refresh_cpu_vm_stats(0);
        mm.refresh_cpu_vm_stats(0);
        assert_eq!(mm.zones[remote].pcp[0].count, 1, "{profile}: still within the 3-round grace");
        mm.refresh_cpu_vm_stats(0);
        mm.refresh_cpu_vm_stats(0);
        assert_eq!(mm.zones[remote].pcp[0].count, 0, "{profile}: drained after going idle");
        check_all(&mm).unwrap();
    }
}

/// Two 64M nodes; node 0's zones drained; returns the machine and node 0's DMA block to free.
fn zlc_machine(zlc: &str) -> (mmtwin::mm::Mm, u32) {
    let extra = format!("policy = {{ zonelist_cache = \"{zlc}\" }}");
    let mut mm = boot("linux-3.0", 2, 1, "64M", &extra);
    let dma = drain_zone(&mut mm, zid(0, ZoneType::Dma));
    drain_zone(&mut mm, zid(0, ZoneType::Dma32));
    let (p, _) = *dma.iter().find(|b| b.1 == MAX_PAGE_ORDER).unwrap();
    (mm, p)
}

#[test]
fn zlc_skips_zones_found_full_for_a_second() {
    use mmtwin::mm::mmzone::MigrateType;
    let (mut mm, dma_block) = zlc_machine("vanilla");
    let dma = zid(0, ZoneType::Dma);
    mm.now_ns = 5_000_000_000;
    mm.nodes[0].zlc.last_full_zap_ns = mm.now_ns;
    // Both node-0 zones fail their watermarks: the page comes from node 1 and they are marked.
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.page_to_nid(p), 1);
    assert!(mm.nodes[0].zlc.fullzones[..2].iter().all(|&f| f));
    // DMA gets memory back, but the cache still says full: skipped for up to a second.
    mm.__free_one_page(dma, dma_block, MAX_PAGE_ORDER, MigrateType::Movable);
    mm.now_ns += 500_000_000;
    let q = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.page_to_nid(q), 1, "node 0 DMA skipped while marked full");
    // More than a second after the last zap, zlc_setup clears the cache and DMA is used again.
    mm.now_ns += 1_000_000_000;
    mm.drain_all_pages();
    let r = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.page_zone(r), dma);
    check_all(&mm).unwrap();
}

#[test]
fn without_zlc_a_refilled_zone_is_used_at_once() {
    use mmtwin::mm::mmzone::MigrateType;
    let (mut mm, dma_block) = zlc_machine("none");
    let dma = zid(0, ZoneType::Dma);
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.page_to_nid(p), 1);
    mm.__free_one_page(dma, dma_block, MAX_PAGE_ORDER, MigrateType::Movable);
    mm.drain_all_pages();
    let q = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.page_zone(q), dma);
}

#[test]
fn zlc_rescans_without_the_cache_when_everything_looks_full() {
    // Every zone marked full and node 0's DMA32 empty: the second scan without the cache finds
    // node 0's DMA zone, which has memory.
    let mut mm = boot("linux-3.0", 2, 1, "64M", "");
    mm.now_ns = 100;
    mm.nodes[0].zlc.fullzones.iter_mut().for_each(|f| *f = true);
    mm.nodes[0].zlc.last_full_zap_ns = 50;
    let dma32 = drain_zone(&mut mm, zid(0, ZoneType::Dma32));
    assert!(!dma32.is_empty());
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.page_zone(p), zid(0, ZoneType::Dma));
}

#[test]
fn zone_reclaim_answers_full_when_there_is_nothing_worth_scanning() {
    use mmtwin::mm::vmscan::ZoneReclaim;
    let mut far = config("linux-3.0", 2, 1, "64M", "");
    far.machine.distance = vec![vec![10, 30], vec![30, 10]];
    let mut mm = mmtwin::mm::Mm::boot(&far);
    assert_eq!(mm.sysctl.zone_reclaim_mode, Some(1));
    assert_eq!(mm.zone_reclaim(zid(0, ZoneType::Dma32), Gfp::GFP_KERNEL, 0, 0), ZoneReclaim::Full);
    // With zone_reclaim on and FULL answers, allocation still falls back to node 1.
    drain_zone(&mut mm, zid(0, ZoneType::Dma32));
    drain_zone(&mut mm, zid(0, ZoneType::Dma));
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert_eq!(mm.page_to_nid(p), 1);
    // 3.0-rc6 marks FULL zones in the cache.
    assert!(mm.nodes[0].zlc.fullzones[0]);
}

#[test]
fn lru_lists_live_per_zone_in_3x_and_per_node_in_6x() {
    use mmtwin::mm::mmzone::LruList;
    for (profile, per_node) in [("linux-3.0", false), ("linux-6.x", true)] {
        let mut mm = boot(profile, 2, 1, "64M", "");
        assert_eq!(mm.lruvecs.len(), if per_node { 2 } else { 8 });
        let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
        mm.pages[p as usize].flags |= mmtwin::mm::mm_types::PG_SWAPBACKED;
        mm.lru_cache_add(p, true);
        let v = mm.page_lruvec(p);
        assert_eq!(v, if per_node { 0 } else { mm.page_zone(p) });
        assert_eq!(mm.lruvecs[v].size(LruList::ActiveAnon), 1);
        check_all(&mm).unwrap();
        mm.del_page_from_lru_list(p);
        mm.free_pages(p, 0, 0);
        check_all(&mm).unwrap();
    }
}

#[test]
fn a_second_access_activates_an_inactive_file_page() {
    use mmtwin::mm::mmzone::LruList;
    let mut mm = boot("linux-3.0", 1, 1, "64M", "");
    let f = mm.new_mapping(1);
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    assert!(mm.add_to_page_cache_lru(p, f, 7, Gfp::GFP_KERNEL, 0));
    assert!(!mm.add_to_page_cache_lru(p, f, 7, Gfp::GFP_KERNEL, 0), "an offset is cached once");
    assert_eq!(mm.find_get_page(f, 7), Some(p));
    assert_eq!(mm.nr_lru_pages(LruList::InactiveFile), 1);
    mm.mark_page_accessed(p); // first access: PG_referenced
    assert_eq!(mm.nr_lru_pages(LruList::InactiveFile), 1);
    mm.mark_page_accessed(p); // second access: activated
    assert_eq!(mm.nr_lru_pages(LruList::ActiveFile), 1);
    assert_eq!(mm.events.get(VmStat::Pgactivate), 1);
    let snap = mm.vmstat_snapshot();
    assert_eq!(snap[VmStat::NrActiveFile as usize], 1);
    assert_eq!(snap[VmStat::NrFilePages as usize], 1);
    check_all(&mm).unwrap();
    mm.del_page_from_lru_list(p);
    mm.delete_from_page_cache(p, 0);
    mm.free_pages(p, 0, 0);
    assert_eq!(mm.find_get_page(f, 7), None);
    assert_eq!(mm.mapping(f).nrpages(), 0);
    check_all(&mm).unwrap();
}

#[test]
fn the_lru_checker_catches_a_page_on_the_wrong_list() {
    let mut mm = boot("linux-6.x", 1, 1, "64M", "");
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    mm.lru_cache_add(p, false);
    check_all(&mm).unwrap();
    // Flip PG_active without moving the page.
    mm.pages[p as usize].flags |= mmtwin::mm::mm_types::PG_ACTIVE;
    assert!(check_all(&mm).unwrap_err().contains("belongs on"));
}

#[test]
fn default_zonelist_order_3x_picks_zone_order_only_when_low_memory_is_small() {
    use ZoneType::*;
    // 2 × 8G: node 0 has 4G below 4G and 4G of Normal, node 1 only Normal: zone order.
    let mm = boot("linux-3.0", 2, 1, "8G", "");
    assert_eq!(mm.nodes[0].zonelist[..2], [zid(0, Normal), zid(1, Normal)]);
    // 2 × 2G: node 0 has no Normal zone at all: node order.
    let mm = boot("linux-3.0", 2, 1, "2G", "");
    assert_eq!(mm.nodes[0].zonelist, vec![zid(0, Dma32), zid(0, Dma), zid(1, Dma32)]);
}

#[test]
fn reserve_pages_freed_through_the_pcp_return_to_the_reserve_3x() {
    use mmtwin::mm::mmzone::MigrateType;
    let mut mm = boot("linux-3.0", 1, 1, "64M", "sysctl = { min_free_kbytes = 128 }");
    let z = zid(0, ZoneType::Dma32);
    // Find a MIGRATE_RESERVE pageblock and take one of its pages.
    let blocks = drain_zone(&mut mm, z);
    let (p, _) = *blocks.iter().find(|&&(p, _)| mm.get_pageblock_migratetype(p) == MigrateType::Reserve).unwrap();
    mm.pages[p as usize].order = 0;
    mm.free_pages(p, 0, 0);
    assert_eq!(mm.zones[z].pcp[0].lists[MigrateType::Movable as usize].head, p, "a reserve page sits on the movable pcp list");
    mm.drain_all_pages();
    assert_eq!(nr_free(&mm, z, 0, MigrateType::Reserve), 1, "and drains back to the reserve's free list");
}

/// A 2.6.31 machine (the 2.6.32 profile with the single per-cpu list) of one 64M zone with
/// one free order-10 movable block, and a MIGRATE_RESERVE page on CPU 0's list (freed cold,
/// so at the tail, with page_private RESERVE as 2.6.31's free_hot_cold_page sets it). Returns
/// the machine, the zone, the free block and the reserve page.
fn single_list_with_a_reserve_page(cold_refill: &str) -> (Mm, usize, u32, u32) {
    let extra = format!("sysctl = {{ min_free_kbytes = 128 }}\npolicy = {{ pcp = \"order0-single-list\", cold_refill = \"{cold_refill}\" }}");
    let mut mm = boot("linux-2.6.32", 1, 1, "64M", &extra);
    let z = zid(0, ZoneType::Dma32);
    let blocks = drain_zone(&mut mm, z);
    let (r, _) = *blocks.iter().find(|&&(p, _)| mm.get_pageblock_migratetype(p) == MigrateType::Reserve).unwrap();
    let (b, o) = *blocks.iter().find(|&&(p, o)| o == MAX_PAGE_ORDER && mm.get_pageblock_migratetype(p) == MigrateType::Movable).unwrap();
    mm.__free_one_page(z, b, o, MigrateType::Movable);
    mm.pages[r as usize].order = 0;
    mm.free_pages_hint(r, 0, 0, true);
    assert_eq!(mm.zones[z].pcp[0].lists[0].tail, r);
    (mm, z, b, r)
}

#[test]
fn single_list_2631_cold_request_that_finds_no_page_of_its_type_takes_the_head_after_a_refill() {
    let cold = Gfp::GFP_HIGHUSER_MOVABLE.with(Gfp::COLD);
    // With e084b the cold refill goes to the tail, so the head the request then takes is the
    // reserve page; the new pages follow in ascending order from the tail.
    let (mut mm, z, b, r) = single_list_with_a_reserve_page("pfn-order");
    let got: Vec<u32> = (0..5).map(|_| mm.alloc_pages(cold, 0, 0).unwrap()).collect();
    assert_eq!(got, vec![r, b, b + 1, b + 2, b + 3], "a 64M zone has batch 3");
    assert_eq!(mm.pcp_diag.allocate_more, 1);
    assert_eq!(mm.pcp_diag.other_type[MigrateType::Movable as usize][MigrateType::Reserve as usize], 1);
    // Before e084b the refill starts right after the head, so the request gets the first new
    // page; the reserve page stays at the tail, where every cold search passes over it.
    let (mut mm, z2, b, r) = single_list_with_a_reserve_page("reverse-pfn");
    assert_eq!(z, z2);
    let got: Vec<u32> = (0..4).map(|_| mm.alloc_pages(cold, 0, 0).unwrap()).collect();
    assert_eq!(got, vec![b, b + 2, b + 1, b + 3]);
    assert_eq!(mm.pcp_diag.allocate_more, 2);
    assert_eq!(mm.pcp_diag.other_type[MigrateType::Movable as usize][MigrateType::Reserve as usize], 0);
    assert_eq!(mm.zones[z].pcp[0].lists[0].tail, r, "the reserve page is still listed");
    assert_eq!(mm.pcp_diag.searched, 4, "each of the four cold searches passed over it");
}

#[test]
fn single_list_2631_hot_request_searches_from_the_head_and_an_overflow_frees_the_tail_by_page_type() {
    let (mut mm, z, b, r) = single_list_with_a_reserve_page("pfn-order");
    // A hot movable request finds no movable page either: the hot refill goes right after the
    // head, so it gets the first new page whatever the cold order.
    assert_eq!(mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap(), b);
    assert_eq!(mm.pcp_diag.other_type[MigrateType::Movable as usize][MigrateType::Reserve as usize], 0);
    // Hot frees up to high: the overflow frees a batch from the tail, the reserve page first,
    // to the reserve's free list (its page_private).
    let (high, batch) = (mm.zones[z].pcp[0].high, mm.zones[z].pcp[0].batch);
    let pages: Vec<u32> = (0..high).map(|_| mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap()).collect();
    assert!(!pages.contains(&r), "no movable request took the reserve page");
    let before = mm.zones[z].pcp[0].count;
    for &p in pages.iter().take((high - before) as usize) {
        mm.free_pages(p, 0, 0);
    }
    assert_eq!(mm.zones[z].pcp[0].count, high - batch);
    assert_ne!(mm.pages[r as usize].state(), mmtwin::mm::PageState::Pcp);
    assert_eq!(nr_free(&mm, z, 0, MigrateType::Reserve), 1, "the reserve page went back to the reserve");
}

#[test]
fn the_watermark_checks_see_nr_free_pages_only_once_a_cpus_diff_passes_the_threshold_or_is_folded() {
    // 24 CPUs and a 2G node (DMA32 just under 2G, 15 units of 128M): stat_threshold
    // 2 × fls(24) × (1 + fls(15)) = 50, refills of 31.
    let mut mm = boot("linux-3.0", 1, 24, "2G", "");
    let z = zid(0, ZoneType::Dma32);
    assert_eq!(mm.zones[z].stat_threshold, 50);
    let folded0 = mm.zones[z].nr_free_pages_vmstat();
    assert_eq!(folded0, mm.zones[z].nr_free_pages, "nothing unfolded after boot");
    // The first allocation on CPU 3 refills its list: 31 pages leave the free lists, and the
    // counter the watermark checks read does not move.
    let mut pages = vec![mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 3).unwrap()];
    assert_eq!(mm.zones[z].nr_free_pages, folded0 - 31);
    assert_eq!(mm.zones[z].nr_free_pages_vmstat(), folded0);
    assert_eq!(mm.zones[z].free_diff[3], -31);
    // The second refill would take the diff to -62: all of it is folded.
    while mm.zones[z].nr_free_pages > folded0 - 62 {
        pages.push(mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 3).unwrap());
    }
    assert_eq!(mm.zones[z].nr_free_pages_vmstat(), mm.zones[z].nr_free_pages);
    assert_eq!(mm.zones[z].free_diff[3], 0);
    // A third refill leaves -31 unfolded again, until vmstat_update runs on that CPU.
    while mm.zones[z].nr_free_pages > folded0 - 93 {
        pages.push(mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 3).unwrap());
    }
    assert_eq!(mm.zones[z].nr_free_pages_vmstat() - mm.zones[z].nr_free_pages, 31);
    mm.refresh_cpu_vm_stats(2);
    assert_eq!(mm.zones[z].free_diff[3], -31, "another CPU's refresh leaves it");
    mm.refresh_cpu_vm_stats(3);
    assert_eq!(mm.zones[z].nr_free_pages_vmstat(), mm.zones[z].nr_free_pages);
    check_all(&mm).unwrap();
}

#[test]
fn kswapd_folds_at_the_pressure_threshold_while_awake_and_reads_the_cpus_diffs_below_the_drift_mark() {
    for (profile, pressure) in [("linux-3.0", true), ("linux-6.x", true), ("linux-2.6.32", false)] {
        // Two 2G nodes of 12 CPUs: node 0's DMA32 zone has a threshold of 50 and a min
        // watermark of about 1,000 pages, which 24 CPUs × 50 of drift can hide.
        let mut mm = boot(profile, 2, 12, "2G", "");
        let z = zid(0, ZoneType::Dma32);
        let (min, low, high) = { let zz = &mm.zones[z]; (zz.min_wmark_pages(), zz.low_wmark_pages(), zz.high_wmark_pages()) };
        let normal = mm.zones[z].stat_threshold;
        assert_eq!(normal, 50, "{profile}");
        assert!(24 * normal as u64 > min, "{profile}: the drift can hide the min watermark ({} > {min})", 24 * normal);
        // percpu_drift_mark (2.6.36+): high + CPUs × threshold.
        let mark = if pressure { (high + 24 * normal as u64) as i64 } else { 0 };
        assert_eq!(mm.zones[z].percpu_drift_mark, mark, "{profile}");
        mm.set_pgdat_percpu_threshold(0, true);
        let expect = if pressure { ((low - min) / 24).clamp(1, 125) as i32 } else { normal };
        assert_eq!(mm.zones[z].stat_threshold, expect, "{profile}: kswapd awake");
        mm.set_pgdat_percpu_threshold(0, false);
        assert_eq!(mm.zones[z].stat_threshold, normal, "{profile}: kswapd asleep");
        // 24 blocks of 64K taken, then the rest of the zone; two 4M blocks given back on CPU 0
        // (each folded at once), and the 64K blocks freed one on each CPU: the counter does not
        // see those yet.
        let small: Vec<u32> = (0..24).map(|_| mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 4, 0).unwrap()).collect();
        assert!(small.iter().all(|&p| mm.page_zone(p) == z));
        let blocks = drain_zone(&mut mm, z);
        for cpu in 0..24 {
            mm.refresh_cpu_vm_stats(cpu);
        }
        for &(pfn, order) in blocks.iter().filter(|b| b.1 == 10).take(2) {
            mm.free_pages(pfn, order, 0);
        }
        for (cpu, &p) in small.iter().enumerate() {
            mm.free_pages(p, 4, cpu);
        }
        let (folded, exact) = (mm.zones[z].nr_free_pages_vmstat(), mm.zones[z].nr_free_pages);
        assert_eq!((folded, exact), (2048, 2048 + 24 * 16), "{profile}");
        if pressure {
            assert!(folded < mark, "{profile}: the counter is below the drift mark");
        }
        // A watermark between the two: the allocator's check fails on the counter; kswapd's
        // (2.6.36+) adds up the CPUs' diffs below the drift mark and passes.
        let m = ((exact + folded) / 2) as u64;
        assert!(!mm.zone_watermark_ok(z, 0, m, ZoneType::Dma32 as usize, 0), "{profile}");
        assert_eq!(mm.zone_watermark_ok_safe(z, 0, m, ZoneType::Dma32 as usize, 0), pressure, "{profile}: kswapd's check");
        check_all(&mm).unwrap();
    }
}
