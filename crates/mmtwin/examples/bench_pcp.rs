//! Profiling aid: order-0 alloc+free pairs through the pcp lists.
use mmtwin::config::scenario::Scenario;
use mmtwin::mm::gfp::Gfp;
use mmtwin::mm::Mm;
fn main() {
    let profile = std::env::args().nth(1).unwrap_or("linux-6.x".into());
    let text = format!("[scenario]\nname = \"b\"\n[machine]\nnodes = [{{ id = 0, cpus = 2, memory = \"4G\" }}]\n[[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\n");
    let mut mm = Mm::boot(&Scenario::parse(&text).unwrap().resolve()[0]);
    let t = std::time::Instant::now();
    let random = std::env::args().nth(2).is_some();
    let n: u64 = std::env::var("PAIRS").ok().and_then(|v| v.parse().ok()).unwrap_or(if random { 5_000_000 } else { 50_000_000 });
    let mut rng = mmtwin::sim::rng::Rng::new(1);
    for _ in 0..n {
        let o = if random { rng.below(11) as usize } else { 0 };
        let p = mm.alloc_pages(Gfp::GFP_HIGHUSER_MOVABLE, o, 0).unwrap();
        mm.free_pages(std::hint::black_box(p), o, 0);
    }
    println!("{:.1} M pairs/s", n as f64 / t.elapsed().as_secs_f64() / 1e6);
}
