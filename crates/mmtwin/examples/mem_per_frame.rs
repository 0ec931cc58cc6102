//! Measures host memory per simulated page frame: boots a twin of the given size and compares
//! the process's resident set before and after. Usage: mem_per_frame [SIZE] [PROFILE]
use mmtwin::config::scenario::Scenario;
use mmtwin::mm::Mm;

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4096
}

fn main() {
    let size = std::env::args().nth(1).unwrap_or("64G".into());
    let profile = std::env::args().nth(2).unwrap_or("linux-6.x".into());
    let text = format!("[scenario]\nname = \"m\"\n[machine]\nnodes = [{{ id = 0, cpus = 8, memory = \"{size}\" }}]\n[[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n[workload]\ntype = \"anon-churn\"\n");
    let cfg = Scenario::parse(&text).unwrap().resolve().remove(0);
    let before = rss_bytes();
    let t = std::time::Instant::now();
    let mm = Mm::boot(&cfg);
    let boot_s = t.elapsed().as_secs_f64();
    let after = rss_bytes();
    let frames = mm.pages.len() as u64;
    println!(
        "{size} {profile}: {frames} frames, resident {:.1} MiB, {:.2} bytes/frame (struct page {} bytes), boot {:.2}s",
        (after - before) as f64 / (1 << 20) as f64,
        (after - before) as f64 / frames as f64,
        std::mem::size_of::<mmtwin::mm::Page>(),
        boot_s
    );
}
