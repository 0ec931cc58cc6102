//! mmtwin-guest: the oracle's guest program. It runs inside a QEMU guest booted by
//! `mmtwin oracle run`, reads the same resolved configuration the simulator runs
//! (`config.toml` of a results folder), performs the `[workload]` with real system calls on the
//! guest's file system, and writes what it measured to a raw output device:
//!
//! * /proc/vmstat, buddyinfo, zoneinfo and pagetypeinfo right before and right after the workload
//!   (after `work::prepare`, which lays down what the workload expects to find on disk);
//! * /proc/vmstat sampled every `[sampling] interval` (at least 100 ms) while it runs;
//! * the benchmark's metrics, with the table titles and operations the simulator reports;
//! * user, system and elapsed time of the workload, and the CPU time of kswapd and of
//!   everything else (other kernel threads, interrupts) meanwhile, and how long kswapd was
//!   runnable but waiting for a CPU (the run_delay of /proc/PID/schedstat).
//!
//! Usage: `mmtwin-guest CONFIG OUTPUT-DEVICE DIR` (DIR: where the workload's files go).
//! The device receives `MMTWIN-ORACLE 1\n<length>\n<JSON>`; the console gets `ORACLE ...`
//! lines for people reading the log. Exit status 0 on success; on failure an
//! `ORACLE error: ...` line and status 1.

mod sys;
mod work;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mmtwin::config::scenario::RunConfig;
use serde_json::{json, Value};

/// One metric sample, as the simulator's `MetricSample`.
pub struct Metric {
    pub table: String,
    pub preferred: &'static str,
    pub unit: &'static str,
    pub op: String,
    pub value: f64,
}

impl Metric {
    pub fn new(table: &str, preferred: &'static str, unit: &'static str, op: impl Into<String>, value: f64) -> Metric {
        Metric { table: table.into(), preferred, unit, op: op.into(), value }
    }
}

const PROC_FILES: [&str; 4] = ["vmstat", "buddyinfo", "zoneinfo", "pagetypeinfo"];

fn proc_snapshot() -> Value {
    let mut m = serde_json::Map::new();
    for f in PROC_FILES {
        let text = std::fs::read_to_string(format!("/proc/{f}")).unwrap_or_default();
        m.insert(f.to_string(), Value::String(text));
    }
    Value::Object(m)
}

/// CPU time, in seconds, of the kswapd threads (/proc/PID/stat utime + stime of every task
/// named kswapdN), of all CPUs together outside idle and iowait (/proc/stat's cpu line), and
/// the kswapd threads' time runnable on a run queue (/proc/PID/schedstat's second field,
/// run_delay in ns; 0 without CONFIG_SCHED_INFO).
fn kernel_cpu() -> (f64, f64, f64) {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut kswapd = 0u64;
    let mut run_delay = 0u64;
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let name = e.file_name();
            if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
            if !stat[open + 1..close].starts_with("kswapd") {
                continue;
            }
            // After the comm: state, ppid, ... utime is the 12th field, stime the 13th.
            let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            kswapd += f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            let sched = std::fs::read_to_string(e.path().join("schedstat")).unwrap_or_default();
            run_delay += sched.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let busy: u64 = stat
        .lines()
        .find(|l| l.starts_with("cpu "))
        .map(|l| {
            let v: Vec<u64> = l.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal
            [0, 1, 2, 5, 6].iter().filter_map(|&i| v.get(i)).sum()
        })
        .unwrap_or(0);
    (kswapd as f64 / hz, busy as f64 / hz, run_delay as f64 / 1e9)
}

/// /proc/vmstat as (names, values).
fn read_vmstat() -> (Vec<String>, Vec<i64>) {
    let text = std::fs::read_to_string("/proc/vmstat").unwrap_or_default();
    let mut names = Vec::new();
    let mut values = Vec::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        if let (Some(n), Some(v)) = (it.next(), it.next()) {
            if let Ok(v) = v.parse::<i64>() {
                names.push(n.to_string());
                values.push(v);
            }
        }
    }
    (names, values)
}

struct Timeline {
    names: Vec<String>,
    time_ns: Vec<u64>,
    rows: Vec<Vec<i64>>,
}

impl Timeline {
    fn push(&mut self, t: u64) {
        let (names, values) = read_vmstat();
        if self.names.is_empty() {
            self.names = names;
        }
        if values.len() == self.names.len() {
            self.time_ns.push(t);
            self.rows.push(values);
        }
    }
}

fn run(config_path: &str, out_dev: &str, dir: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(config_path).map_err(|e| format!("{config_path}: {e}"))?;
    let cfg = RunConfig::parse(&text).map_err(|e| format!("{config_path}: {}: {}", e.key, e.message))?;
    let layout = cfg.machine.layout().map_err(|e| format!("machine: {}", e.message))?;
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
    println!("ORACLE start benchmark={} kernel={} release={}", cfg.results_name, cfg.kernel.name, release);

    work::prepare(&cfg, dir)?;
    let interval = Duration::from_nanos(cfg.sampling.interval.0.max(100_000_000));
    let before = proc_snapshot();
    let start = Instant::now();
    let usage0 = sys::rusage();
    let kcpu0 = kernel_cpu();
    let timeline = Arc::new(Mutex::new(Timeline { names: Vec::new(), time_ns: Vec::new(), rows: Vec::new() }));
    timeline.lock().unwrap().push(0);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (timeline, stop) = (timeline.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut next = interval;
            while !stop.load(Ordering::Relaxed) {
                let now = start.elapsed();
                if now >= next {
                    timeline.lock().unwrap().push(now.as_nanos() as u64);
                    next += interval;
                    continue;
                }
                std::thread::sleep((next - now).min(Duration::from_millis(20)));
            }
        })
    };

    let metrics = work::run(&cfg, &layout, dir, 0);

    stop.store(true, Ordering::Relaxed);
    sampler.join().map_err(|_| "the vmstat sampler failed".to_string())?;
    let elapsed = start.elapsed();
    let usage1 = sys::rusage();
    let kcpu1 = kernel_cpu();
    let (user, system) = (usage1.0 - usage0.0, usage1.1 - usage0.1);
    let kswapd = kcpu1.0 - kcpu0.0;
    timeline.lock().unwrap().push(elapsed.as_nanos() as u64);
    let after = proc_snapshot();
    let metrics = metrics?;

    for m in &metrics {
        println!("ORACLE metric {:?} {:?} {:.6}", m.table, m.op, m.value);
    }
    println!("ORACLE elapsed {:.3}", elapsed.as_secs_f64());
    let tl = timeline.lock().unwrap();
    let out = json!({
        "format": 1,
        "release": release,
        "benchmark": cfg.results_name,
        "kernel": cfg.kernel.name,
        "seed": cfg.iteration_seed(0),
        "duration": {
            "user": user,
            "system": system,
            "elapsed": elapsed.as_secs_f64(),
            "kswapd": kswapd,
            "others": (kcpu1.1 - kcpu0.1 - user - system - kswapd).max(0.0),
            "kswapd_wait": kcpu1.2 - kcpu0.2,
        },
        "metrics": metrics.iter().map(|m| json!({
            "table": m.table, "preferred": m.preferred, "unit": m.unit, "op": m.op, "value": m.value,
        })).collect::<Vec<_>>(),
        "before": before,
        "after": after,
        "timeline": {"names": tl.names, "time_ns": tl.time_ns, "rows": tl.rows},
    });
    let body = serde_json::to_vec(&out).map_err(|e| e.to_string())?;
    let mut f = std::fs::OpenOptions::new().write(true).open(out_dev).map_err(|e| format!("{out_dev}: {e}"))?;
    let mut data = format!("MMTWIN-ORACLE 1\n{}\n", body.len()).into_bytes();
    data.extend_from_slice(&body);
    f.write_all(&data).and_then(|_| f.sync_all()).map_err(|e| format!("{out_dev}: {e}"))?;
    println!("ORACLE done bytes={}", data.len());
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        println!("ORACLE error: usage: mmtwin-guest CONFIG OUTPUT-DEVICE DIR");
        std::process::exit(1);
    }
    if let Err(e) = run(&args[1], &args[2], &args[3]) {
        println!("ORACLE error: {e}");
        std::process::exit(1);
    }
}
