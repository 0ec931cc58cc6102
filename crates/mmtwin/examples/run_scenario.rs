//! Runs a scenario file's kernels once each and prints a few figures (a development aid).
use mmtwin::config::scenario::Scenario;
use mmtwin::run::run_iteration;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("read scenario");
    let s = Scenario::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    for cfg in s.resolve() {
        let t = std::time::Instant::now();
        let mut last = 0.0;
        let r = run_iteration(&cfg, 0, &mut |f| { if std::env::var("MMDBG").is_ok() && f - last > 0.001 { last = f; eprintln!("progress {f:.4}"); } });
        let wall = t.elapsed().as_secs_f64();
        println!("{} {}: elapsed {:.3}s user {:.3}s sys {:.3}s events {} page events {} wall {:.3}s ({:.1} sim s / wall s)",
            cfg.results_name, cfg.kernel.name, r.elapsed_ns as f64 / 1e9, r.user_ns as f64 / 1e9, r.system_ns as f64 / 1e9,
            r.events_processed, r.page_events, wall, r.elapsed_ns as f64 / 1e9 / wall);
        let mut t = mmtwin::block::DiskStats::default();
        for (_, d) in &r.disks {
            t.add(d);
        }
        println!("  {} disks: reads {} ({} KiB avg, {:.2} segs avg) writes {} ({} KiB avg) merges {:?} refused(segs) {} seeks {} busy {:.1}s size hist r {:?} seg hist r {:?}",
            r.disks.len(), t.requests[0], t.sectors[0] / 2 / t.requests[0].max(1), t.segments[0] as f64 / t.requests[0].max(1) as f64,
            t.requests[1], t.sectors[1] / 2 / t.requests[1].max(1), t.merges, t.merge_refused_segments, t.seeks, t.busy_ns as f64 / 1e9,
            t.rq_size_hist[0], t.rq_seg_hist[0]);
        for m in &r.metrics {
            println!("  {} {} = {:.3} {}", m.table, m.op, m.value, m.unit);
        }
        for (k, v) in r.vmstat_delta.iter().filter(|(_, v)| *v != 0) {
            print!("{k}={v} ");
        }
        println!();
        if let Some(d) = r.dumps.first() {
            println!("{}", d.buddyinfo);
        }
    }
}
