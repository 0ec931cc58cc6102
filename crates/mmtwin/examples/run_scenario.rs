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
        println!("{}: elapsed {:.3}s user {:.3}s sys {:.3}s events {} page events {} wall {:.3}s ({:.1} sim s / wall s)",
            cfg.kernel.name, r.elapsed_ns as f64 / 1e9, r.user_ns as f64 / 1e9, r.system_ns as f64 / 1e9,
            r.events_processed, r.page_events, wall, r.elapsed_ns as f64 / 1e9 / wall);
        for (name, d) in &r.disks {
            println!("  {name}: reads {} ({} KiB avg) writes {} ({} KiB avg) merges {:?} seeks {} busy {:.1}s",
                d.requests[0], d.sectors[0] / 2 / d.requests[0].max(1), d.requests[1], d.sectors[1] / 2 / d.requests[1].max(1), d.merges, d.seeks, d.busy_ns as f64 / 1e9);
        }
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
