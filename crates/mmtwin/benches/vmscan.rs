//! Reclaim-scanning benchmarks: the page cache turning over through direct reclaim, and 3.0's
//! zone_reclaim digging through a zone whose inactive list is mostly dirty (the "full scan of
//! the preferred zone for every page" of the zlc seed). Figures go in BENCHMARKS.md
//! (`make bench`).
//!
//! Both run the model's own paths with no engine around them: an allocation that finds its
//! zones below their marks reclaims in place (try_to_free_pages, or zone_reclaim from the
//! zonelist walk), and the benchmark puts each page it gets into the page cache as a reader
//! would. Simulated time advances by what each iteration was charged, so zone_reclaim's lock
//! (ZONE_RECLAIM_LOCKED, held for the reclaim's CPU time) has always run out at the next call.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use mmtwin::config::scenario::{RunConfig, Scenario};
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::mm_types::PG_UPTODATE;
use mmtwin::mm::vmstat::VmStat;
use mmtwin::mm::Mm;

fn config(profile: &str, nodes: usize, mem: &str) -> RunConfig {
    let list: Vec<String> = (0..nodes).map(|i| format!("{{ id = {i}, cpus = 1, memory = \"{mem}\" }}")).collect();
    let distance = if nodes == 2 { "distance = [[10, 30], [30, 10]]\n" } else { "" };
    let text = format!(
        "[scenario]\nname = \"bench\"\n[machine]\nnodes = [{}]\n{distance}\
         [[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\n",
        list.join(", ")
    );
    Scenario::parse(&text).unwrap().resolve().remove(0)
}

/// A reader's file: allocates `n` pages on `cpu` and caches them at the file's next offsets;
/// every `dirty_every`-th page (0: none) is dirtied as a writer's would be.
struct Reader {
    mapping: u32,
    next: u32,
}

impl Reader {
    fn new(mm: &mut Mm) -> Reader {
        let ino = mm.create_file(0, 0).unwrap();
        Reader { mapping: mm.inode(ino).mapping, next: 0 }
    }

    fn read(&mut self, mm: &mut Mm, n: u64, cpu: usize, dirty_every: u32) {
        for _ in 0..n {
            let pfn = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, cpu).expect("reclaim keeps the cache turning over");
            mm.add_to_page_cache_lru(pfn, self.mapping, self.next, Gfp::GFP_KERNEL, cpu);
            mm.pages[pfn as usize].flags |= PG_UPTODATE;
            if dirty_every != 0 && self.next % dirty_every != 0 {
                mm.set_page_dirty(pfn);
            }
            self.next = self.next.wrapping_add(1);
        }
        mm.kswapd_wakeups.clear();
    }
}

fn scanned(mm: &Mm) -> u64 {
    use VmStat::*;
    [PgscanDirectDma, PgscanDirectDma32, PgscanDirectNormal, PgscanDirectMovable, PgscanDirect].iter().map(|&v| mm.events.get(v)).sum()
}

const PAGES: u64 = 16_384;

/// Benchmarks reading `PAGES` clean pages through the full machine `mm` (simulated time moves
/// on by what they were charged), then prints how many pages reclaim scanned per page read.
fn bench_clean_reads(g: &mut BenchmarkGroup<'_, WallTime>, group: &str, name: &str, mm: &mut Mm, r: &mut Reader) {
    g.bench_function(name, |b| {
        b.iter(|| {
            r.read(mm, PAGES, 0, 0);
            let c = mm.take_cost();
            mm.now_ns += c;
            c
        })
    });
    let s0 = scanned(mm);
    r.read(mm, PAGES, 0, 0);
    eprintln!("{group}/{name}: {:.2} pages scanned a page read", (scanned(mm) - s0) as f64 / PAGES as f64);
}

/// Clean page cache on a full 1G node: every page read costs a page reclaimed by direct
/// reclaim (3.0: per zone, 6.x: per node), scanned once from the inactive tail.
fn direct_reclaim_clean_cache(c: &mut Criterion) {
    let mut g = c.benchmark_group("reclaim_clean_cache");
    g.throughput(Throughput::Elements(PAGES));
    for profile in ["linux-3.0", "linux-6.x"] {
        let mut mm = Mm::boot(&config(profile, 1, "1G"));
        let mut r = Reader::new(&mut mm);
        let managed: u64 = mm.zones.iter().map(|z| z.managed_pages).sum();
        r.read(&mut mm, managed + PAGES, 0, 0);
        bench_clean_reads(&mut g, "reclaim_clean_cache", profile, &mut mm, &mut r);
    }
    g.finish();
}

/// 3.0 with zone_reclaim_mode 1 on two distant 1G nodes: node 0's zones hold the page cache,
/// nine pages in ten of it dirtied first (and never written back here), then clean pages read
/// through it. Each read below the low mark runs zone_reclaim, which may not write, so it
/// passes over the dirty pages again at each turn of the list for the clean ones it frees.
/// Throughput counts pages read; the pages scanned per page read are printed after the run.
fn zone_reclaim_mostly_dirty(c: &mut Criterion) {
    let mut g = c.benchmark_group("zone_reclaim_mostly_dirty");
    g.throughput(Throughput::Elements(PAGES));
    let mut mm = Mm::boot(&config("linux-3.0", 2, "1G"));
    assert_eq!(mm.sysctl.zone_reclaim_mode, Some(1));
    let mut r = Reader::new(&mut mm);
    let node0: u64 = mm.zones.iter().filter(|z| z.node == 0).map(|z| z.managed_pages).sum();
    r.read(&mut mm, node0 + PAGES, 0, 10);
    bench_clean_reads(&mut g, "zone_reclaim_mostly_dirty", "linux-3.0", &mut mm, &mut r);
    g.finish();
}

criterion_group!(benches, direct_reclaim_clean_cache, zone_reclaim_mostly_dirty);
criterion_main!(benches);
