//! Invariant tests: random allocation and free sequences, and whole simulated runs, checked by
//! the checkers after every step; and the checkers themselves catch corruption.

mod common;

use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::mmzone::{MigrateType, ZoneType};
use mmtwin::mm::Mm;
use mmtwin::testing::checkers::check_all;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Alloc { order: usize, kind: u8, cpu: usize, cold: bool },
    Free { which: usize },
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..=10, 0u8..4, 0usize..3, any::<bool>()).prop_map(|(order, kind, cpu, cold)| Op::Alloc { order, kind, cpu, cold }),
        5 => any::<usize>().prop_map(|which| Op::Free { which }),
        1 => Just(Op::Drain),
    ]
}

fn gfp(kind: u8) -> Gfp {
    match kind {
        0 => Gfp::GFP_HIGHUSER_MOVABLE,
        1 => Gfp::GFP_KERNEL,
        2 => Gfp::GFP_KERNEL.with(Gfp::RECLAIMABLE),
        _ => Gfp::GFP_ATOMIC,
    }
}

fn run_ops(mm: &mut Mm, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut live: Vec<(u32, usize, usize)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Alloc { order, kind, cpu, cold } => {
                let g = if cold { gfp(kind).with(Gfp::COLD) } else { gfp(kind) };
                if let Some(p) = mm.alloc_pages(g, order, cpu) {
                    live.push((p, order, cpu));
                }
            }
            Op::Free { which } => {
                if !live.is_empty() {
                    let (p, o, cpu) = live.swap_remove(which % live.len());
                    mm.free_pages(p, o, cpu);
                }
            }
            Op::Drain => mm.drain_all_pages(),
        }
        if let Err(e) = check_all(mm) {
            return Err(TestCaseError::fail(format!("after op {i} {op:?}: {e}")));
        }
    }
    for (p, o, cpu) in live {
        mm.free_pages(p, o, cpu);
    }
    mm.drain_all_pages();
    check_all(mm).map_err(TestCaseError::fail)?;
    // Everything merged back: free pages equal managed pages.
    for z in &mm.zones {
        prop_assert_eq!(z.nr_free_pages as u64, z.managed_pages, "zone {} {}", z.node, z.zone_type.name());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_alloc_free_keeps_every_invariant_3x(ops in proptest::collection::vec(op(), 1..300)) {
        let mut mm = common::boot("linux-3.0", 2, 2, "32M", "sysctl = { min_free_kbytes = 128 }");
        run_ops(&mut mm, &ops)?;
    }

    #[test]
    fn random_alloc_free_keeps_every_invariant_2631_single_list(ops in proptest::collection::vec(op(), 1..300), e084b in any::<bool>()) {
        let order = if e084b { "pfn-order" } else { "reverse-pfn" };
        let extra = format!("sysctl = {{ min_free_kbytes = 128 }}\npolicy = {{ pcp = \"order0-single-list\", cold_refill = \"{order}\" }}");
        let mut mm = common::boot("linux-2.6.32", 2, 2, "32M", &extra);
        run_ops(&mut mm, &ops)?;
    }

    #[test]
    fn random_alloc_free_keeps_every_invariant_s390_2631_single_list(ops in proptest::collection::vec(op(), 1..300), e084b in any::<bool>()) {
        // s390 in 2.6.32: orders 0-8 and 1M pageblocks (orders 9 and 10 fail at once).
        let order = if e084b { "pfn-order" } else { "reverse-pfn" };
        let extra = format!("sysctl = {{ min_free_kbytes = 128 }}\npolicy = {{ pcp = \"order0-single-list\", cold_refill = \"{order}\" }}");
        let text = common::scenario("linux-2.6.32", 1, 3, "32M", &extra, "").replace("[machine]\n", "[machine]\narch = \"s390x\"\n");
        let mut mm = Mm::boot(&mmtwin::config::scenario::Scenario::parse(&text).unwrap().resolve().remove(0));
        prop_assert_eq!(mm.max_order, 8);
        run_ops(&mut mm, &ops)?;
    }

    #[test]
    fn random_alloc_free_keeps_every_invariant_6x(ops in proptest::collection::vec(op(), 1..300)) {
        let mut mm = common::boot("linux-6.x", 2, 2, "32M", "sysctl = { min_free_kbytes = 128 }");
        run_ops(&mut mm, &ops)?;
    }
}

#[test]
fn simulated_runs_keep_every_invariant_after_every_event() {
    // The engine runs the checkers after every event in test builds (Sim::check_invariants).
    let single_list = "policy = { pcp = \"order0-single-list\" }";
    for (profile, extra) in [("linux-3.0", ""), ("linux-6.x", ""), ("linux-2.6.32", single_list)] {
        let text = common::scenario(profile, 2, 2, "48M", extra, "duration = \"150ms\"\nfootprint = 0.9");
        let cfg = mmtwin::config::scenario::Scenario::parse(&text).unwrap().resolve().remove(0);
        let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap();
        assert!(r.events_processed > 100);
    }
    // s390: a huge page is 1M (order 8), so a 2M THP region maps two, each depositing a table.
    let classes = "classes = [{ name = \"small\", size = \"64K\", lifetime = \"20ms\", weight = 6 }, \
                   { name = \"huge\", size = \"2M\", order = 8, lifetime = \"50ms\", weight = 2 }]";
    let text = common::scenario("linux-2.6.32", 1, 2, "48M", "", &format!("duration = \"150ms\"\nfootprint = 0.9\n{classes}"))
        .replace("[machine]\n", "[machine]\narch = \"s390x\"\n");
    let cfg = mmtwin::config::scenario::Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}")).resolve().remove(0);
    let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap();
    let get = |n: &str| r.vmstat_delta.iter().filter(|(k, _)| *k == n).map(|(_, v)| *v).sum::<i64>();
    assert!(get("thp_fault_alloc") > 0, "s390 THPs were faulted");
}

#[test]
fn mapped_and_anonymous_faults_keep_every_invariant_after_every_event() {
    // A mapped writer on ext3 and the system's anonymous working set: faults allocate page
    // tables, exit frees the writer's, reclaim and swap run; the checkers (page tables and
    // NR_PAGETABLE included) run after every event.
    // The system's 4M of anonymous memory keeps its tables: two PTE pages, and in 6.x the PMD
    // page above them counts too.
    for (profile, system_tables) in [("linux-3.0", 2), ("linux-6.x", 3)] {
        let text = format!(
            "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 2, memory = \"32M\" }}]\n\
             boot_reserved = \"1M\"\nfs = \"ext3\"\nswap = \"16M\"\nsystem = {{ anon = \"4M\", period = \"20ms\", working_set = 0.5 }}\n\
             [[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"mapped-writer\"\ntotal_ratio = 1.2\n"
        );
        let cfg = mmtwin::config::scenario::Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0);
        let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap();
        let get = |n: &str| r.vmstat_delta.iter().filter(|(k, _)| *k == n).map(|(_, v)| *v).sum::<i64>();
        assert!(get("pgfault") > 9_000, "{profile}: the writers faulted their pages");
        assert_eq!(get("nr_page_table_pages"), system_tables, "{profile}: the writers' tables went with them");
    }
}

#[test]
fn checkers_catch_a_lost_page_a_bad_count_and_unmerged_buddies() {
    let base = common::boot("linux-6.x", 1, 1, "32M", "");
    check_all(&base).unwrap();
    let z = common::zid(0, ZoneType::Dma32);

    let mut mm = base.clone();
    mm.zones[z].free_area[3].nr_free += 1;
    assert!(check_all(&mm).unwrap_err().contains("nr_free[3]"));

    let mut mm = base.clone();
    mm.zones[z].nr_free_pages -= 1;
    assert!(check_all(&mm).unwrap_err().contains("NR_FREE_PAGES"));

    let mut mm = base.clone();
    mm.zones[z].vm_stat[mmtwin::mm::mmzone::ZoneStat::NrPageTable as usize] += 1;
    assert!(check_all(&mm).unwrap_err().contains("NR_PAGETABLE"));

    // A journal whose log outgrew it.
    let mut mm = common::boot_fs("ext3");
    check_all(&mm).unwrap();
    mm.journals[0].log_pending = mm.journals[0].blocks + 1;
    assert!(check_all(&mm).unwrap_err().contains("journal 0"));

    // A page marked free that is on no list.
    let mut mm = base.clone();
    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
    mm.pages[p as usize].set_state(mmtwin::mm::PageState::Buddy);
    assert!(check_all(&mm).is_err());

    // Two free buddies left side by side.
    let mut mm = base.clone();
    let blocks = common::drain_zone(&mut mm, z);
    let (p, _) = blocks.iter().copied().find(|b| b.1 == 10).unwrap();
    let q = mm.__rmqueue_smallest(z, 0, MigrateType::Movable);
    assert!(q.is_none());
    // Put the two order-9 halves on the lists without merging.
    mm.__free_one_page(z, p, 9, MigrateType::Movable);
    let mut copy = mm.clone();
    // Fake a second order-9 free block at the buddy without going through the merge.
    let zone = &mut copy.zones[z];
    let pages = &mut copy.pages;
    pages[(p + 512) as usize].set_state(mmtwin::mm::PageState::Buddy);
    pages[(p + 512) as usize].order = 9;
    pages[(p + 512) as usize].private = MigrateType::Movable as u8;
    mmtwin::mm::mm_types::list_add(pages, &mut zone.free_area[9].free_list[MigrateType::Movable as usize], p + 512);
    zone.free_area[9].nr_free += 1;
    zone.nr_free_pages += 512;
    assert!(check_all(&copy).unwrap_err().contains("not merged"));
}

/// A random machine: 1–3 nodes of 20–160 MiB (any page count), maybe a hole, maybe movablecore.
fn machine_text() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec((1usize..3, 5_000u64..40_000), 1..4),
        proptest::option::of((1u64..40_000, 1u64..20_000)),
        any::<bool>(),
        prop_oneof![Just("linux-3.0"), Just("linux-6.x")],
    )
        .prop_map(|(nodes, hole, big, profile)| {
            let mut s = String::from("[scenario]\nname = \"swarm\"\n[machine]\nnodes = [");
            for (i, (cpus, pages)) in nodes.iter().enumerate() {
                // `big` shifts memory above 4G so Normal (and movablecore) exist.
                let start = if i == 0 && big { ", start = \"4G\"" } else { "" };
                s += &format!("{{ id = {i}, cpus = {cpus}, memory = {} {start}}},", pages * 4096);
            }
            s += "]\nboot_reserved = \"2M\"\n";
            if let Some((at, len)) = hole {
                let base = if big { 4u64 << 30 } else { 0 };
                s += &format!("holes = [{{ start = {}, size = {} }}]\n", base + (at + 300) * 4096, len * 4096);
            }
            if big && nodes.len() == 1 {
                s += "movablecore = \"8M\"\n";
            }
            s += &format!("[[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\nduration = \"30ms\"\nfootprint = 0.9\n");
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Any machine the scenario accepts boots with consistent zones and runs with every
    /// invariant holding after every event.
    #[test]
    fn random_machines_boot_and_run_clean(text in machine_text()) {
        let s = match mmtwin::config::scenario::Scenario::parse(&text) {
            Ok(s) => s,
            // Refused machines must say why (e.g. node 0 too small for its reservations).
            Err(e) => { prop_assert!(!e.message.is_empty()); return Ok(()); }
        };
        let cfg = s.resolve().remove(0);
        let mm = Mm::boot(&cfg);
        check_all(&mm).map_err(TestCaseError::fail)?;
        let present: u64 = mm.zones.iter().map(|z| z.present_pages).sum();
        let layout = cfg.machine.layout().unwrap();
        prop_assert_eq!(present, layout.total_present());
        let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap();
        prop_assert!(r.page_events > 0);
    }
}

#[test]
fn file_workloads_keep_every_invariant_on_every_file_system() {
    // fs_mark and the mapped writer on a two-node 3.0 machine with zone_reclaim on (distance
    // 21), whose small DMA zone is reclaimed from inside writes: every file system's write,
    // writeback and reclaim paths, the checkers after every event.
    for fs in ["ext2", "ext3", "ext4", "xfs"] {
        let text = format!(
            "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 2, memory = \"24M\" }}, {{ id = 1, cpus = 2, memory = \"24M\" }}]\n\
             distance = [[10, 21], [21, 10]]\nboot_reserved = \"1M\"\nfs = \"{fs}\"\n[[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\n\
             [[workload]]\ntype = \"fsmark\"\nthreads = 4\nfiles = 16\nloops = 2\nsize = 131072\ncpus = [0, 1]\n\
             [[workload]]\ntype = \"mapped-writer\"\ntotal_ratio = 1.2\ncpus = [0, 1, 0, 1]\n"
        );
        for cfg in mmtwin::config::scenario::Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve() {
            let r = mmtwin::run::run_iteration(&cfg, 0, &mut |_| {}).unwrap_or_else(|e| panic!("{fs}: {e}"));
            let pgpgout = r.vmstat_delta.iter().find(|(k, _)| *k == "pgpgout").unwrap().1;
            assert!(pgpgout > 0, "{fs} {}: nothing written", cfg.results_name);
        }
    }
}
