//! Determinism: the same configuration and iteration give bit-identical results; another seed
//! gives different ones.

mod common;

use mmtwin::config::scenario::Scenario;
use mmtwin::run::{run_iteration, IterationResult};

fn cfg(seed: u64) -> mmtwin::config::scenario::RunConfig {
    let text = common::scenario("linux-6.x", 2, 2, "64M", "", "duration = \"200ms\"\nfootprint = 0.8")
        .replace("seed = 7", &format!("seed = {seed}"));
    Scenario::parse(&text).unwrap().resolve().remove(0)
}

fn fingerprint(r: &IterationResult) -> String {
    format!("{:?}|{:?}|{:?}|{:?}|{}|{}|{}", r.vmstat_delta, r.timeline_ns, r.timeline, r.metrics, r.user_ns, r.system_ns, r.elapsed_ns)
}

#[test]
fn same_config_same_iteration_gives_identical_results() {
    let c = cfg(11);
    let a = run_iteration(&c, 0, &mut |_| {}).unwrap();
    let b = run_iteration(&c, 0, &mut |_| {}).unwrap();
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_eq!(a.dumps, b.dumps);
    assert!(a.page_events > 1000, "the run did real work: {} page events", a.page_events);
}

#[test]
fn another_seed_or_iteration_gives_a_different_run() {
    let c = cfg(11);
    let a = run_iteration(&c, 0, &mut |_| {}).unwrap();
    let b = run_iteration(&c, 1, &mut |_| {}).unwrap();
    let d = run_iteration(&cfg(12), 0, &mut |_| {}).unwrap();
    assert_ne!(a.seed, b.seed);
    assert_ne!(fingerprint(&a), fingerprint(&b));
    assert_ne!(fingerprint(&a), fingerprint(&d));
}

#[test]
fn resolved_config_round_trips_and_its_hash_is_stable() {
    let c = cfg(11);
    let text = c.to_toml();
    let back = mmtwin::config::scenario::RunConfig::parse(&text).unwrap();
    assert_eq!(back.hash(), c.hash());
    let r1 = run_iteration(&c, 0, &mut |_| {}).unwrap();
    let r2 = run_iteration(&back, 0, &mut |_| {}).unwrap();
    assert_eq!(fingerprint(&r1), fingerprint(&r2), "a run is a pure function of its resolved config");
}

#[test]
fn a_file_workload_with_reclaim_and_io_is_bit_identical_across_runs() {
    let mut text = common::scenario("linux-3.0", 2, 2, "32M", "policy = { zonelist_cache = \"zlcfirst\" }", "");
    text = text.replace("type = \"anon-churn\"\n", "type = \"largedd\"\ntarget_ratio = 2.0\n");
    text = text.replace("[machine]\n", "[machine]\ndistance = [[10, 21], [21, 10]]\n");
    let c = Scenario::parse(&text).unwrap().resolve().remove(0);
    let a = run_iteration(&c, 0, &mut |_| {}).unwrap();
    let b = run_iteration(&c, 0, &mut |_| {}).unwrap();
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let scanned: i64 = a.vmstat_delta.iter().filter(|(k, _)| k.starts_with("pgscan_")).map(|(_, v)| v).sum();
    assert!(scanned > 0, "the run reclaimed");
}

#[test]
fn parallel_writers_under_the_io_less_throttle_are_bit_identical_across_runs() {
    // 6.x: two dd writers on a 32M machine sleep in the IO-less balance_dirty_pages, whose
    // rates come from the device's bandwidth estimate, itself updated at writeback.
    let mut text = common::scenario("linux-6.x", 1, 2, "32M", "", "");
    text = text.replace("type = \"anon-churn\"\n", "type = \"simple-writeback\"\nsize = \"48M\"\nfactors = [1]\n");
    let c = Scenario::parse(&text).unwrap().resolve().remove(0);
    let a = run_iteration(&c, 0, &mut |_| {}).unwrap();
    let b = run_iteration(&c, 0, &mut |_| {}).unwrap();
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let written: i64 = a.vmstat_delta.iter().filter(|(k, _)| *k == "pgpgout").map(|(_, v)| v).sum();
    assert!(written > 0, "the run wrote");
}

#[test]
fn the_timeline_has_each_nodes_counts_and_they_add_up_to_the_machines() {
    let r = run_iteration(&cfg(11), 0, &mut |_| {}).unwrap();
    let col = |name: &str| r.timeline_names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no column {name}"));
    let (free, node0, node1) = (col("nr_free_pages"), col("node0_nr_free_pages"), col("node1_nr_free_pages"));
    let (file, file0, file1) = (col("nr_file_pages"), col("node0_nr_file_pages"), col("node1_nr_file_pages"));
    assert!(r.timeline_names.iter().all(|n| !n.starts_with("node2_")));
    assert!(r.timeline.len() > 2);
    for row in &r.timeline {
        assert_eq!(row.len(), r.timeline_names.len());
        assert_eq!(row[node0] + row[node1], row[free]);
        assert_eq!(row[file0] + row[file1], row[file]);
    }
    // The churn allocates on both nodes: each node's free count moves during the run.
    for c in [node0, node1] {
        assert!(r.timeline.iter().any(|row| row[c] != r.timeline[0][c]), "column {} never moves", r.timeline_names[c]);
    }
}
