//! Hot-path benchmarks: the allocator through the pcp lists, random orders through the buddy
//! lists, the event queue, the page-cache tree. Figures go in BENCHMARKS.md (`make bench`).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mmtwin::config::scenario::{RunConfig, Scenario};
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::mmzone::{MigrateType, ZoneType, MAX_NR_ZONES};
use mmtwin::mm::Mm;
use mmtwin::sim::queue::EventQueue;
use mmtwin::sim::rng::Rng;
use std::hint::black_box;

fn config(profile: &str, mem: &str) -> RunConfig {
    let text = format!(
        "[scenario]\nname = \"bench\"\n[machine]\nnodes = [{{ id = 0, cpus = 2, memory = \"{mem}\" }}]\n\
         [[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\n"
    );
    Scenario::parse(&text).unwrap().resolve().remove(0)
}

const PAIRS: u64 = 100_000;

fn pcp_order0(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc_free_order0_pcp");
    g.throughput(Throughput::Elements(PAIRS));
    for profile in ["linux-3.0", "linux-6.x"] {
        let mut mm = Mm::boot(&config(profile, "4G"));
        g.bench_function(profile, |b| {
            b.iter(|| {
                for _ in 0..PAIRS {
                    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, 0, 0).unwrap();
                    mm.free_pages(black_box(p), 0, 0);
                }
                mm.take_cost()
            })
        });
    }
    g.finish();
}

fn random_orders(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc_free_random_order");
    g.throughput(Throughput::Elements(PAIRS));
    let mut rng = Rng::new(1);
    let orders: Vec<usize> = (0..PAIRS).map(|_| rng.below(11) as usize).collect();
    for profile in ["linux-3.0", "linux-6.x"] {
        let mut mm = Mm::boot(&config(profile, "4G"));
        let zid = ZoneType::Dma32 as usize;
        let _ = MAX_NR_ZONES;
        g.bench_function(format!("buddy/{profile}"), |b| {
            b.iter(|| {
                for &o in &orders {
                    let p = mm.__rmqueue(zid, o, MigrateType::Movable, 0).unwrap();
                    mm.__free_one_page(zid, black_box(p), o, MigrateType::Movable);
                }
                mm.take_cost()
            })
        });
        g.bench_function(format!("alloc_pages/{profile}"), |b| {
            b.iter(|| {
                for &o in &orders {
                    let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, o, 0).unwrap();
                    mm.free_pages(black_box(p), o, 0);
                }
                mm.take_cost()
            })
        });
    }
    g.finish();
}

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    const N: u64 = 100_000;
    g.throughput(Throughput::Elements(N));
    g.bench_function("push_pop_1k_pending", |b| {
        b.iter_batched(
            || {
                let mut q = EventQueue::default();
                let mut rng = Rng::new(3);
                for i in 0..1000u64 {
                    q.push(rng.below(1_000_000), i);
                }
                (q, rng)
            },
            |(mut q, mut rng)| {
                for i in 0..N {
                    let (t, _) = q.pop().unwrap();
                    q.push(t + rng.below(1_000_000), i);
                }
                q.len()
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// The page-cache tree as a streaming writer and its flusher use it: a 1 GiB file's pages
/// inserted in offset order and tagged dirty, then walked a pagevec (14) at a time by the dirty
/// tag, each page looked up, untagged and deleted.
fn page_cache_tree(c: &mut Criterion) {
    use mmtwin::mm::radix_tree::{RadixTreeNodes, RadixTreeRoot, PAGECACHE_TAG_DIRTY};
    let mut g = c.benchmark_group("page_cache_tree");
    const PAGES: u32 = 262_144;
    g.throughput(Throughput::Elements(u64::from(PAGES)));
    g.bench_function("insert_tag_walk_delete_1g", |b| {
        let mut t = RadixTreeNodes::default();
        b.iter(|| {
            let mut root = RadixTreeRoot::default();
            for i in 0..PAGES {
                t.insert(&mut root, i, i + 1, &mut || 0);
                t.tag_set(&root, i, PAGECACHE_TAG_DIRTY);
            }
            let mut vec = Vec::with_capacity(14);
            let mut from = 0;
            loop {
                vec.clear();
                t.gang_lookup(&root, from, u32::MAX, 14, Some(PAGECACHE_TAG_DIRTY), &mut vec);
                let Some(&last) = vec.last() else { break };
                for &i in &vec {
                    black_box(t.lookup(&root, i));
                    t.tag_clear(&root, i, PAGECACHE_TAG_DIRTY);
                }
                from = last + 1;
            }
            for i in 0..PAGES {
                t.delete(&mut root, i);
            }
            root
        })
    });
    g.finish();
}

criterion_group!(benches, pcp_order0, random_orders, event_queue, page_cache_tree);
criterion_main!(benches);
