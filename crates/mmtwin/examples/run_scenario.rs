//! Runs a scenario file's kernels and prints a few figures (a development aid).
//!
//! Environment: MMITERS=N runs iterations 0..N of each kernel (default 1; MMFIRST=K starts
//! at iteration K instead of 0) and ends with each
//! metric's harmonic mean and spread over them; MMKERNELS=a,b runs only the kernels so named;
//! MMDIAG=1 prints the per-cpu list and placement figures (`PcpDiag`) of each run;
//! MMTIMELINE=nr_dirty,nr_writeback,... prints those vmstat items at each sample.
use mmtwin::config::scenario::Scenario;
use mmtwin::mm::mmzone::MigrateType;
use mmtwin::run::run_iteration;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("read scenario");
    let s = Scenario::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let iters: u32 = std::env::var("MMITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let only: Option<Vec<String>> = std::env::var("MMKERNELS").ok().map(|v| v.split(',').map(str::to_string).collect());
    let diag = std::env::var("MMDIAG").is_ok();
    let first: u32 = std::env::var("MMFIRST").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    // (results name, kernel, table, op) -> values over the iterations, in first-seen order.
    let mut summary: Vec<((String, String, String, String), Vec<f64>)> = Vec::new();
    for cfg in s.resolve() {
        if only.as_ref().is_some_and(|o| !o.iter().any(|k| *k == cfg.kernel.name)) {
            continue;
        }
        for it in first..first + iters {
            let t = std::time::Instant::now();
            let mut last = 0.0;
            let r = run_iteration(&cfg, it, &mut |f| { if std::env::var("MMDBG").is_ok() && f - last > 0.001 { last = f; eprintln!("progress {f:.4}"); } }).unwrap_or_else(|e| panic!("{e}"));
            let wall = t.elapsed().as_secs_f64();
            println!("[iteration {it}] {} {}: elapsed {:.3}s user {:.3}s sys {:.3}s events {} page events {} wall {:.3}s ({:.1} sim s / wall s)",
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
            if t.ftl.gc_copies > 0 {
                println!("  ftl: erase blocks closed by copying {} ({} pages copied); cfq {:?}", t.ftl.gc_copies, t.ftl.gc_copied_pages, t.cfq);
            }
            if t.metadata_reads + t.i_mutex_waits > 0 {
                println!("  metadata reads {} (directory blocks {}), i_mutex waits {} ({:.1} s waited), buffers at end {} pages",
                    t.metadata_reads, t.dir_reads, t.i_mutex_waits, t.i_mutex_wait_ns as f64 / 1e9, t.buffers_pages);
            }
            if let Ok(fields) = std::env::var("MMTIMELINE") {
                // MMTIMELINE=nr_dirty,nr_writeback prints those vmstat items at each sample.
                let idx: Vec<usize> = fields.split(',').filter_map(|f| r.timeline_names.iter().position(|n| n == f)).collect();
                for (t, row) in r.timeline_ns.iter().zip(&r.timeline) {
                    let vals: Vec<String> = idx.iter().map(|&i| row[i].to_string()).collect();
                    println!("  timeline {:.1} {}", *t as f64 / 1e9, vals.join(" "));
                }
            }
            for m in &r.metrics {
                println!("  {} {} = {:.3} {}", m.table, m.op, m.value, m.unit);
                let key = (cfg.results_name.clone(), cfg.kernel.name.clone(), m.table.to_string(), m.op.to_string());
                match summary.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.push(m.value),
                    None => summary.push((key, vec![m.value])),
                }
            }
            for (w, who) in mmtwin::sim::WAITERS.iter().enumerate() {
                let line: Vec<String> = mmtwin::sim::WAIT_KINDS.iter().enumerate().filter(|&(k, _)| r.waits.count[w][k] > 0)
                    .map(|(k, what)| format!("{what} {:.1} s ({})", r.waits.ns[w][k] as f64 / 1e9, r.waits.count[w][k])).collect();
                if !line.is_empty() {
                    println!("  {who} waited for {}", line.join(", "));
                }
            }
            println!("  congestion_waits by site {:?} sleeping {:?} s", r.congestion_waits,
                r.congestion_wait_ns.iter().map(|n| (*n as f64 / 1e9 * 10.0).round() / 10.0).collect::<Vec<_>>());
            if diag {
                let d = &r.pcp_diag;
                let name = |i: usize| MigrateType::ALL[i].name();
                let fmt = |m: &[[u64; 6]; 6]| {
                    let mut out = String::new();
                    for (a, row) in m.iter().enumerate() {
                        for (b, n) in row.iter().enumerate() {
                            if *n != 0 {
                                out += &format!("{}<-{}:{} ", name(a), name(b), n);
                            }
                        }
                    }
                    out
                };
                println!("  pcp_diag: searched {} allocate_more {} other_type [{}]", d.searched, d.allocate_more, fmt(&d.other_type));
                println!("  pcp_diag: stalls {} mean pcp pages at a stall {:.1} mean NR_FREE_PAGES at a stall {:.1} high-order failures {}",
                    d.stalls, d.stall_pcp_pages as f64 / d.stalls.max(1) as f64, d.stall_free_pages as f64 / d.stalls.max(1) as f64, d.high_order_fail);
                for (i, what) in ["succeeded", "failed"].iter().enumerate() {
                    let n = d.reclaim_progress[i].max(1) as f64;
                    println!("  pcp_diag: direct reclaims with progress after which the allocation {what}: {} (mean pcp pages of the CPU before {:.1}, of them unusable {:.1}, NR_FREE_PAGES gain {:.1})",
                        d.reclaim_progress[i], d.reclaim_pcp_before[i] as f64 / n, d.reclaim_pcp_unusable[i] as f64 / n, d.reclaim_free_gain[i] as f64 / n);
                }
                println!("  pcp_diag: unusable pcp pages at those reclaims by page_private type {:?}", d.reclaim_pcp_unusable_by_type);
                println!("  pcp_diag: slow paths by waits made [0..8+] {:?}, allocations with a wait owed {}", d.slowpath_waits, d.alloc_with_wait_owed);
                println!("  end: blocks by type {:?} file LRU pages by block type {:?} (Unmovable, Movable, Reclaimable, HighAtomic, Reserve, Isolate)",
                    r.blocks_by_type, r.file_lru_by_block);
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
    if iters > 1 {
        println!("summary over {iters} iterations: harmonic mean, sample stddev, min, max");
        for ((res, k, table, op), v) in &summary {
            let n = v.len() as f64;
            let hmean = if v.iter().all(|x| *x > 0.0) { n / v.iter().map(|x| 1.0 / x).sum::<f64>() } else { 0.0 };
            let mean = v.iter().sum::<f64>() / n;
            let sd = if v.len() > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
            let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
            println!("  {res} {k} {table} {op}: {hmean:.1} sd {sd:.1} [{lo:.1}..{hi:.1}] {v:?}");
        }
    }
}
