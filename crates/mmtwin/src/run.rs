//! One iteration of one kernel: boot the machine, run the workload, collect counters, timelines,
//! /proc dumps and the benchmark's metrics. A pure function of (RunConfig, iteration).

use crate::config::scenario::RunConfig;
use crate::mm::vmstat::{VmStat, NODE_TIMELINE_ITEMS};
use crate::mm::Mm;
use crate::sim::{ProcDump, Sim, SimError};
use crate::workloads::MetricSample;

/// What one iteration produced.
#[derive(Clone, Debug)]
pub struct IterationResult {
    pub iteration: u32,
    pub seed: u64,
    /// CPU time of the benchmark's tasks.
    pub user_ns: u64,
    pub system_ns: u64,
    /// CPU time of kswapd and of the other kernel threads and daemons.
    pub kswapd_ns: u64,
    pub others_ns: u64,
    /// Time kswapd waited for a CPU while runnable (schedstat run_delay).
    pub kswapd_wait_ns: u64,
    pub elapsed_ns: u64,
    /// Counters printed by this era, with their change over the iteration.
    pub vmstat_delta: Vec<(&'static str, i64)>,
    /// Sample times and, per sample, the counters named in `timeline_names`: the era's
    /// /proc/vmstat counters, then per node `NODE_TIMELINE_ITEMS` as `node<N>_<name>`.
    pub timeline_ns: Vec<u64>,
    pub timeline_names: Vec<String>,
    pub timeline: Vec<Vec<i64>>,
    pub metrics: Vec<MetricSample>,
    pub dumps: Vec<ProcDump>,
    /// Engine events processed and page allocator events (allocations + frees, in blocks).
    pub events_processed: u64,
    pub page_events: u64,
    /// Per block device: (name, statistics) — mmtwin's own "why" figures.
    pub disks: Vec<(String, crate::block::DiskStats)>,
    /// congestion_wait calls and their sleep in ns, by `CongestionSite`.
    pub congestion_waits: [u64; 3],
    pub congestion_wait_ns: [u64; 3],
    /// Time the benchmark's tasks, kswapd, the flushers and the journal threads spent blocked
    /// for requests, pages and journals (`crate::sim::WaitStats`).
    pub waits: crate::sim::WaitStats,
    /// Per-cpu list and page placement figures (`PcpDiag`).
    pub pcp_diag: crate::mm::page_alloc::PcpDiag,
    /// At the end of the run: pageblocks by migratetype, and file LRU pages by the migratetype
    /// of the pageblock they lie in (every zone).
    pub blocks_by_type: [u64; crate::mm::mmzone::MIGRATE_TYPES],
    pub file_lru_by_block: [u64; crate::mm::mmzone::MIGRATE_TYPES],
}

/// Runs iteration `iteration` of `cfg`, calling `progress` with the fraction of the workload's
/// simulated duration done. Fails, with no figures, if the simulation hung.
pub fn run_iteration(cfg: &RunConfig, iteration: u32, progress: &mut dyn FnMut(f64)) -> Result<IterationResult, SimError> {
    let seed = cfg.iteration_seed(iteration);
    let mm = Mm::boot(cfg);
    let mut sim = Sim::new(mm, seed, cfg.sampling.interval.0);
    for t in &cfg.sampling.dump_at {
        sim.schedule_dump(t.0);
    }
    let before = sim.mm.vmstat_snapshot();
    let layout = cfg.machine.layout().expect("validated machine");
    crate::workloads::daemons::start(&cfg.machine.system, &mut sim);
    let run = cfg.workload.start(&mut sim, &layout);
    let horizon = workload_duration_ns(cfg).max(1) as f64;
    sim.run(&mut |t| progress((t as f64 / horizon).min(1.0)))?;
    let after = sim.mm.vmstat_snapshot();
    let era = sim.mm.era;
    let names: Vec<VmStat> = VmStat::ALL.iter().copied().filter(|v| v.in_era(era)).collect();
    let vmstat_delta = names.iter().map(|v| (v.name(), after[*v as usize] - before[*v as usize])).collect();
    let timeline_ns = sim.samples.iter().map(|s| s.0).collect();
    let timeline = sim
        .samples
        .iter()
        .zip(&sim.node_samples)
        .map(|((_, snap), per_node)| names.iter().map(|v| snap[*v as usize]).chain(per_node.iter().copied()).collect())
        .collect();
    let node_names = (0..sim.mm.nodes.len()).flat_map(|n| NODE_TIMELINE_ITEMS.iter().map(move |(name, _)| format!("node{n}_{name}")));
    let timeline_names = names.iter().map(|v| v.name().to_string()).chain(node_names).collect();
    for sb in 0..sim.mm.sbs.len() {
        let (dev, n) = (sim.mm.sbs[sb].dev, sim.mm.nr_bdev_pages(sb));
        sim.mm.bdevs[dev].stats.buffers_pages = n;
    }
    let page_events = [VmStat::PgallocDma, VmStat::PgallocDma32, VmStat::PgallocNormal, VmStat::PgallocMovable, VmStat::Pgfree]
        .iter()
        .map(|v| (after[*v as usize] - before[*v as usize]) as u64)
        .sum();
    Ok(IterationResult {
        iteration,
        seed,
        user_ns: sim.times.user_ns,
        system_ns: sim.times.system_ns,
        kswapd_ns: sim.times.kswapd_ns,
        others_ns: sim.times.others_ns,
        kswapd_wait_ns: sim.times.kswapd_wait_ns,
        elapsed_ns: sim.now,
        vmstat_delta,
        timeline_ns,
        timeline_names,
        timeline,
        metrics: run.metrics(&sim),
        dumps: std::mem::take(&mut sim.dumps),
        events_processed: sim.events_processed,
        page_events,
        disks: sim.mm.bdevs.iter().map(|d| (d.name.clone(), d.disk_stats())).collect(),
        congestion_waits: sim.mm.congestion_waits,
        congestion_wait_ns: sim.mm.congestion_wait_ns,
        waits: sim.waits,
        pcp_diag: sim.mm.pcp_diag.clone(),
        blocks_by_type: sim.mm.blocks_by_type(),
        file_lru_by_block: sim.mm.file_lru_by_block(),
    })
}

/// The nominal simulated duration of the workload (for progress).
pub fn workload_duration_ns(cfg: &RunConfig) -> u64 {
    let layout = cfg.machine.layout().expect("validated machine");
    cfg.workload.nominal_duration_ns(&layout, cfg.machine.disk.bandwidth)
}
