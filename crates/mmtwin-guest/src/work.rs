//! The guest executors of the workloads: the same definitions (`mmtwin::workloads`) the
//! simulator runs, performed with real system calls. Each follows its simulator task step for
//! step (sizes, block sizes, jobs, CPUs, phases, what is timed) and returns the metrics under
//! the simulator's table titles and operation names.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::thread;
use std::time::{Duration, Instant};

use mmtwin::config::machine::MachineLayout;
use mmtwin::config::scenario::RunConfig;
use mmtwin::workloads::anon_churn::{AnonChurnSpec, Mobility};
use mmtwin::workloads::fileio::mem_total;
use mmtwin::workloads::iozone::IozoneSpec;
use mmtwin::workloads::largedd::LargeddSpec;
use mmtwin::workloads::mapped_writer::MappedWriterSpec;
use mmtwin::workloads::simple_writeback::{DdConv, SimpleWritebackSpec};
use mmtwin::workloads::WorkloadSpec;

use crate::sys;
use crate::Metric;

const PAGE: u64 = 4096;
type R<T> = Result<T, String>;

fn io<T>(what: &str, r: std::io::Result<T>) -> R<T> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn join<T>(h: thread::JoinHandle<R<T>>) -> R<T> {
    h.join().map_err(|_| "a workload thread panicked".to_string())?
}

/// Runs the configuration's workload in `dir`; `iteration` picks the seed as the simulator does.
pub fn run(cfg: &RunConfig, layout: &MachineLayout, dir: &str, iteration: u32) -> R<Vec<Metric>> {
    if cfg.machine.system.anon.0 > 0 {
        println!("ORACLE warn: [machine.system] anon is not reproduced in the guest");
    }
    match &cfg.workload {
        WorkloadSpec::SimpleWriteback(s) => simple_writeback(s, layout, dir),
        WorkloadSpec::Largedd(s) => largedd(s, layout, dir),
        WorkloadSpec::MappedWriter(s) => mapped_writer(s, layout, dir),
        WorkloadSpec::AnonChurn(s) => anon_churn(s, cfg.iteration_seed(iteration), dir),
        WorkloadSpec::Iozone(s) => iozone(s, layout, dir),
        other => Err(format!("workload {:?} has no guest executor yet", other.benchmark())),
    }
}

/// Work done before the "before" snapshot, outside what is measured: without iozone's write
/// test its files are written beforehand and must start on disk and out of the page cache.
pub fn prepare(cfg: &RunConfig, dir: &str) -> R<()> {
    if let WorkloadSpec::Iozone(s) = &cfg.workload {
        if s.tests.contains(&0) {
            return Ok(());
        }
        let files = s.readers.iter().copied().max().unwrap_or(1) as usize;
        let chunk = vec![0x69u8; 1 << 20];
        for d in 0..files {
            let p = format!("{dir}/iozone-{d}");
            let mut f = io(&p, File::create(&p))?;
            let mut left = s.file_size.0;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                io(&p, f.write_all(&chunk[..n]))?;
                left -= n as u64;
            }
            io(&p, f.sync_all())?;
        }
        drop_caches()?;
    }
    Ok(())
}

fn drop_caches() -> R<()> {
    // SAFETY: sync(2) takes no arguments.
    unsafe { libc::sync() };
    io("/proc/sys/vm/drop_caches", std::fs::write("/proc/sys/vm/drop_caches", "3\n"))
}

/// One timed pass of iozone over every child's file: (report table, writes?, creates?).
const IOZONE_PASSES: [(&str, bool, bool); 4] = [
    ("iozone Write Throughput", true, true),
    ("iozone Rewrite Throughput", true, false),
    ("iozone Read Throughput", false, false),
    ("iozone Re-read Throughput", false, false),
];

/// iozone -i 0 -i 1 -t N: per child count, the passes of the tests in iozone's order (test 0:
/// write, then rewrite; test 1: read, then re-read), N children each working on its own file
/// front to back in `record`-byte calls (O_DIRECT reads with `direct`), each on its CPU, all
/// released together at the start of each pass. A pass's result is the sum over children of
/// KB/s. With test 0 the files are deleted when the round ends; without it they were written
/// beforehand and the caches are dropped between rounds. One disk: every child's file is on
/// the same file system (the oracle boots one disk).
fn iozone(s: &IozoneSpec, layout: &MachineLayout, dir: &str) -> R<Vec<Metric>> {
    let cpus = s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect());
    let record = s.record.0 as usize;
    let writes = s.tests.contains(&0);
    let passes: Vec<_> = IOZONE_PASSES.iter().filter(|p| if p.1 { writes } else { s.tests.contains(&1) }).copied().collect();
    let mut out: Vec<Metric> = Vec::new();
    for (round, &n) in s.readers.iter().enumerate() {
        if round > 0 && !writes {
            drop_caches()?;
        }
        for &(table, write, create) in &passes {
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(n as usize));
            let mut handles = Vec::new();
            for d in 0..n as usize {
                let cpu = cpus[d % cpus.len()];
                let path = format!("{dir}/iozone-{d}");
                let (direct, size, barrier) = (s.direct, s.file_size.0, barrier.clone());
                handles.push(thread::spawn(move || -> R<f64> {
                    use std::os::unix::fs::OpenOptionsExt;
                    sys::pin(cpu);
                    let mut o = OpenOptions::new();
                    if write {
                        o.write(true).create(create).truncate(create);
                    } else {
                        o.read(true);
                    }
                    if direct {
                        o.custom_flags(libc::O_DIRECT);
                    }
                    let Some((buf, len, _)) = sys::mmap_anon(record, 4096) else {
                        return Err("cannot map the I/O buffer".into());
                    };
                    // SAFETY: the mapping is `len` bytes, ours until munmap below.
                    let slice = unsafe { std::slice::from_raw_parts_mut(buf, len) };
                    slice.fill(0x69);
                    barrier.wait();
                    let t0 = Instant::now();
                    let mut f = io(&path, o.open(&path))?;
                    let mut bytes = 0u64;
                    loop {
                        let got = if write {
                            let n = (size - bytes).min(len as u64) as usize;
                            if n == 0 {
                                0
                            } else {
                                io(&path, f.write(&slice[..n]))?
                            }
                        } else {
                            io(&path, f.read(slice))?
                        };
                        if got == 0 {
                            break;
                        }
                        bytes += got as u64;
                    }
                    drop(f);
                    let secs = t0.elapsed().as_secs_f64();
                    sys::munmap(buf, len);
                    Ok(bytes as f64 / 1024.0 / secs.max(1e-9))
                }));
            }
            let mut total = 0.0;
            for h in handles {
                total += join(h)?;
            }
            let op = n.to_string();
            match out.iter_mut().find(|m| m.table == table && m.op == op) {
                Some(m) => m.value += total,
                None => out.push(Metric::new(table, "higher", "KB/s", op, total)),
            }
        }
        if writes {
            for d in 0..n as usize {
                let p = format!("{dir}/iozone-{d}");
                io(&p, std::fs::remove_file(&p))?;
            }
        }
    }
    Ok(out)
}

/// simple-writeback: per job count, that many parallel `dd if=/dev/zero of=file-N bs=BS`, each
/// on its CPU (round robin over all rounds), timed from start to close (after an fdatasync or
/// fsync with `conv`); then `rm` of the files.
fn simple_writeback(s: &SimpleWritebackSpec, layout: &MachineLayout, dir: &str) -> R<Vec<Metric>> {
    let conv = s.conv;
    let cpus = s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect());
    let size = s.size.ok_or("simple-writeback: size not resolved")?.0;
    let bs = s.bs.0 as usize;
    let mut out = Vec::new();
    let mut k = 0;
    for (round, jobs) in s.job_counts(layout.nr_cpus).into_iter().enumerate() {
        let blocks = size / jobs as u64 / bs as u64;
        let mut handles = Vec::new();
        let mut paths = Vec::new();
        for j in 0..jobs {
            let cpu = cpus[k % cpus.len()];
            k += 1;
            let path = format!("{dir}/file-{round}-{j}");
            paths.push(path.clone());
            handles.push(thread::spawn(move || -> R<f64> {
                sys::pin(cpu);
                let t0 = Instant::now();
                let mut zero = io("/dev/zero", File::open("/dev/zero"))?;
                let mut f = io(&path, File::create(&path))?;
                let mut buf = vec![0u8; bs];
                for _ in 0..blocks {
                    io("/dev/zero", zero.read_exact(&mut buf))?;
                    io(&path, f.write_all(&buf))?;
                }
                match conv {
                    Some(DdConv::Fdatasync) => io(&path, f.sync_data())?,
                    Some(DdConv::Fsync) => io(&path, f.sync_all())?,
                    None => {}
                }
                drop(f);
                Ok(t0.elapsed().as_secs_f64())
            }));
        }
        for h in handles {
            out.push(Metric::new("simple-writeback", "lower", "s", jobs.to_string(), join(h)?));
        }
        for p in paths {
            io(&p, std::fs::remove_file(&p))?;
        }
    }
    Ok(out)
}

/// largedd: download the source at `download_rate` in 16 KiB writes, make copies 1..NR_COPIES−1
/// of it with dd (bs-byte reads and writes), then remove the source and every copy.
fn largedd(s: &LargeddSpec, layout: &MachineLayout, dir: &str) -> R<Vec<Metric>> {
    let cpu = s.cpus.as_ref().map_or(0, |c| c[0]);
    let src_bytes = s.source.ok_or("largedd: source not resolved")?.0.div_ceil(PAGE) * PAGE;
    let nr_copies = s.nr_copies(layout);
    let bs = s.bs.0 as usize;
    let rate = s.download_rate.0 as f64;
    let dir = dir.to_string();
    let h = thread::spawn(move || -> R<Vec<Metric>> {
        sys::pin(cpu);
        let mut phases = Vec::new();
        let src = format!("{dir}/0");
        let t0 = Instant::now();
        {
            let mut f = io(&src, File::create(&src))?;
            let buf = vec![0x61u8; 16384];
            let mut written = 0u64;
            while written < src_bytes {
                let n = (src_bytes - written).min(buf.len() as u64) as usize;
                io(&src, f.write_all(&buf[..n]))?;
                written += n as u64;
                let due = Duration::from_secs_f64(written as f64 / rate);
                let now = t0.elapsed();
                if due > now {
                    thread::sleep(due - now);
                }
            }
        }
        phases.push(("download tar", t0.elapsed().as_secs_f64()));
        let t1 = Instant::now();
        let mut buf = vec![0u8; bs];
        for n in 1..nr_copies {
            let dst = format!("{dir}/{n}");
            let mut r = io(&src, File::open(&src))?;
            let mut w = io(&dst, File::create(&dst))?;
            loop {
                let got = io(&src, r.read(&mut buf))?;
                if got == 0 {
                    break;
                }
                io(&dst, w.write_all(&buf[..got]))?;
            }
        }
        phases.push(("dd source files", t1.elapsed().as_secs_f64()));
        let t2 = Instant::now();
        for n in 0..nr_copies {
            let p = format!("{dir}/{n}");
            io(&p, std::fs::remove_file(&p))?;
        }
        phases.push(("delete source", t2.elapsed().as_secs_f64()));
        Ok(phases.into_iter().map(|(op, v)| Metric::new("largedd", "lower", "s", op, v)).collect())
    });
    join(h)
}

/// mapped-writer: one writer per CPU maps its own sparse file MAP_SHARED and stores a word at the
/// start of every page, then exits without msync; the result is when the last one finished;
/// then the files are removed.
fn mapped_writer(s: &MappedWriterSpec, layout: &MachineLayout, dir: &str) -> R<Vec<Metric>> {
    let cpus = s.cpus.clone().unwrap_or_else(|| (0..layout.nr_cpus).collect());
    let total = (mem_total(layout) as f64 * s.total_ratio) as u64;
    let pages = total / cpus.len() as u64 / PAGE;
    let mut files = Vec::new();
    for w in 0..cpus.len() {
        let p = format!("{dir}/sparse-{w}");
        let f = io(&p, OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&p))?;
        io(&p, f.set_len((pages + 1) * PAGE))?;
        files.push((p, f));
    }
    let t0 = Instant::now();
    let mut handles = Vec::new();
    for (w, (_, f)) in files.iter().enumerate() {
        let (cpu, fd) = (cpus[w], f.as_raw_fd());
        handles.push(thread::spawn(move || -> R<f64> {
            sys::pin(cpu);
            let len = (pages * PAGE) as usize;
            // SAFETY: a shared mapping of a file we keep open; we store within [0, len).
            let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
            if p == libc::MAP_FAILED {
                return Err(format!("mmap of {len} bytes failed: {}", std::io::Error::last_os_error()));
            }
            for i in 0..pages as usize {
                unsafe { std::ptr::write_volatile((p as *mut u8).add(i * PAGE as usize) as *mut u64, i as u64) };
            }
            sys::munmap(p as *mut u8, len);
            Ok(t0.elapsed().as_secs_f64())
        }));
    }
    let mut finish = 0f64;
    for h in handles {
        finish = finish.max(join(h)?);
    }
    for (p, f) in files {
        drop(f);
        io(&p, std::fs::remove_file(&p))?;
    }
    Ok(vec![Metric::new("mappedwriter Time", "lower", "s", "write", finish)])
}

/// splitmix64, as the simulator seeds its runs (the sequences differ from the simulator's).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn exp(&mut self, mean_ns: u64) -> Duration {
        let u = ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        Duration::from_nanos((-(u.ln()) * mean_ns as f64) as u64)
    }
}

#[derive(Clone, Default)]
struct ClassStats {
    blocks: u64,
    latency_ns: u64,
    requested_ok: u64,
    bytes: u64,
}

enum Held {
    Anon(*mut u8, usize),
    Pipe([libc::c_int; 2]),
    Files(Vec<String>),
}

// SAFETY: the pointer is only an address of a mapping owned by the thread holding it.
unsafe impl Send for Held {}

fn release(h: Held) {
    match h {
        Held::Anon(p, len) => sys::munmap(p, len),
        Held::Pipe(fds) => sys::close_pipe(fds),
        Held::Files(v) => {
            for p in v {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// Sum of the zones' managed pages (/proc/zoneinfo), the base of anon-churn's footprint.
fn managed_pages() -> u64 {
    let text = std::fs::read_to_string("/proc/zoneinfo").unwrap_or_default();
    text.lines().filter_map(|l| l.trim().strip_prefix("managed")).filter_map(|v| v.trim().parse::<u64>().ok()).sum()
}

/// anon-churn: tasks keep footprint × managed memory / tasks mapped in regions of the classes,
/// each living an exponentially distributed time. Movable classes are anonymous mappings (a
/// PMD-order class is a 2 MiB-aligned MADV_HUGEPAGE region, smaller ones MADV_NOHUGEPAGE),
/// unmovable ones pipe buffers, reclaimable ones empty files (inodes and dentries).
fn anon_churn(s: &AnonChurnSpec, seed: u64, dir: &str) -> R<Vec<Metric>> {
    sys::raise_nofile();
    let cpus = s.cpus.clone().unwrap_or_else(|| vec![0]);
    let ntasks = s.tasks.unwrap_or(cpus.len());
    let target = (managed_pages() as f64 * s.footprint / ntasks as f64) as u64;
    let duration = Duration::from_nanos(s.duration.0);
    let t0 = Instant::now();
    let end = t0 + duration;
    let mut handles = Vec::new();
    for t in 0..ntasks {
        let spec = s.clone();
        let cpu = cpus[t % cpus.len()];
        let slab_dir = format!("{dir}/slab-{t}");
        io(&slab_dir, std::fs::create_dir_all(&slab_dir))?;
        handles.push(thread::spawn(move || -> R<Vec<ClassStats>> {
            sys::pin(cpu);
            let mut rng = Rng(seed ^ (t as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
            let probe = sys::ThpProbe::new();
            let mut stats = vec![ClassStats::default(); spec.classes.len()];
            let mut cum = Vec::new();
            let mut acc = 0u64;
            for c in &spec.classes {
                acc += u64::from(c.weight);
                cum.push(acc);
            }
            let mut live: Vec<Option<(Held, u64)>> = Vec::new();
            let mut expiry: BinaryHeap<Reverse<(Instant, usize)>> = BinaryHeap::new();
            let mut resident = 0u64;
            let mut nfile = 0u64;
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                if let Some(&Reverse((when, slot))) = expiry.peek() {
                    if when <= now {
                        expiry.pop();
                        if let Some((h, pages)) = live[slot].take() {
                            release(h);
                            resident -= pages;
                        }
                        continue;
                    }
                }
                if resident < target {
                    let pick = rng.below(acc);
                    let ci = cum.iter().position(|&c| pick < c).unwrap_or(0);
                    let c = &spec.classes[ci];
                    let size = c.size.0 as usize;
                    let block = (PAGE as usize) << c.order;
                    let nblocks = (size / block).max(1) as u64;
                    let st = &mut stats[ci];
                    let f0 = Instant::now();
                    let held = match c.mobility {
                        Mobility::Movable => {
                            let thp = c.order == 9;
                            let Some((p, len, _)) = sys::mmap_anon(size, if thp { 2 << 20 } else { 4096 }) else {
                                thread::sleep(Duration::from_millis(10));
                                continue;
                            };
                            sys::madvise(p, len, if thp { libc::MADV_HUGEPAGE } else { libc::MADV_NOHUGEPAGE });
                            for b in 0..nblocks as usize {
                                let bt = Instant::now();
                                for i in (0..block).step_by(PAGE as usize) {
                                    unsafe { std::ptr::write_volatile(p.add(b * block + i), 1) };
                                }
                                st.latency_ns += bt.elapsed().as_nanos() as u64;
                                if thp && probe.is_thp(p as usize + b * block) == Some(true) {
                                    st.requested_ok += 1;
                                }
                            }
                            Held::Anon(p, len)
                        }
                        Mobility::Unmovable => {
                            let Some(fds) = sys::pipe_holding(size) else {
                                thread::sleep(Duration::from_millis(10));
                                continue;
                            };
                            st.latency_ns += f0.elapsed().as_nanos() as u64;
                            Held::Pipe(fds)
                        }
                        Mobility::Reclaimable => {
                            let mut v = Vec::new();
                            for _ in 0..(size / 1024).max(1) {
                                let p = format!("{slab_dir}/{nfile}");
                                nfile += 1;
                                if File::create(&p).is_ok() {
                                    v.push(p);
                                }
                            }
                            st.latency_ns += f0.elapsed().as_nanos() as u64;
                            Held::Files(v)
                        }
                    };
                    st.blocks += nblocks;
                    st.bytes += size as u64;
                    let pages = size as u64 / PAGE;
                    resident += pages;
                    let until = Instant::now() + rng.exp(c.lifetime.0);
                    let slot = live.iter().position(|x| x.is_none()).unwrap_or_else(|| {
                        live.push(None);
                        live.len() - 1
                    });
                    live[slot] = Some((held, pages));
                    expiry.push(Reverse((until, slot)));
                    continue;
                }
                let next = expiry.peek().map_or(end, |Reverse((w, _))| (*w).min(end));
                thread::sleep(next.saturating_duration_since(Instant::now()).max(Duration::from_micros(100)));
            }
            for (h, _) in live.into_iter().flatten() {
                release(h);
            }
            Ok(stats)
        }));
    }
    let mut total = vec![ClassStats::default(); s.classes.len()];
    for h in handles {
        for (t, c) in total.iter_mut().zip(join(h)?) {
            t.blocks += c.blocks;
            t.latency_ns += c.latency_ns;
            t.requested_ok += c.requested_ok;
            t.bytes += c.bytes;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    for t in 0..ntasks {
        let _ = std::fs::remove_dir_all(format!("{dir}/slab-{t}"));
    }
    let mut out = Vec::new();
    for (c, cs) in s.classes.iter().zip(&total) {
        if cs.blocks > 0 {
            out.push(Metric::new("anonchurn Fault Latencies", "lower", "us", format!("fault-{}", c.name), cs.latency_ns as f64 / cs.blocks as f64 / 1000.0));
        }
    }
    // Only a THP fault says whether it got its order; other kernel allocations cannot be asked.
    for (c, cs) in s.classes.iter().zip(&total) {
        if c.order == 9 && c.mobility == Mobility::Movable && cs.blocks > 0 {
            out.push(Metric::new("anonchurn Percentage Requested Order", "higher", "%", format!("order-{}", c.name), cs.requested_ok as f64 * 100.0 / cs.blocks as f64));
        }
    }
    let bytes: u64 = total.iter().map(|c| c.bytes).sum();
    if secs > 0.0 {
        out.push(Metric::new("anonchurn Throughput", "higher", "MB/s", "faulted", bytes as f64 / (1 << 20) as f64 / secs));
    }
    Ok(out)
}
