//! Helpers shared by the integration tests.
#![allow(dead_code)]

use mmtwin::config::scenario::{RunConfig, Scenario};
use mmtwin::mm::mmzone::{MigrateType, ZoneType, MAX_NR_ZONES};
use mmtwin::mm::{Mm, Pfn, NR_PAGE_ORDERS};

/// A scenario text for a machine of `nodes` nodes with `mem` each and one kernel of `profile`.
pub fn scenario(profile: &str, nodes: usize, cpus: usize, mem: &str, extra_kernel: &str, workload: &str) -> String {
    let mut s = String::from("[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [");
    for i in 0..nodes {
        s += &format!("{{ id = {i}, cpus = {cpus}, memory = \"{mem}\" }},");
    }
    s += "]\nboot_reserved = \"1M\"\n";
    s += &format!("[[kernel]]\nname = \"k\"\nprofile = \"{profile}\"\n{extra_kernel}\n");
    s += &format!("[workload]\ntype = \"anon-churn\"\n{workload}\n");
    s
}

pub fn config(profile: &str, nodes: usize, cpus: usize, mem: &str, extra_kernel: &str) -> RunConfig {
    let text = scenario(profile, nodes, cpus, mem, extra_kernel, "");
    Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}")).resolve().remove(0)
}

pub fn boot(profile: &str, nodes: usize, cpus: usize, mem: &str, extra_kernel: &str) -> Mm {
    Mm::boot(&config(profile, nodes, cpus, mem, extra_kernel))
}

/// A linux-3.0 machine of one 64M node with one CPU and file system `fs`, with what the engine
/// sets up at start for a journal (the journal thread's I/O contexts).
pub fn boot_fs(fs: &str) -> Mm {
    boot_fs_disk(fs, "")
}

/// `boot_fs` with the machine's disk line `disk` (e.g. `disk = { nr_requests = 16 }`).
pub fn boot_fs_disk(fs: &str, disk: &str) -> Mm {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[machine]\nnodes = [{{ id = 0, cpus = 1, memory = \"64M\" }}]\nboot_reserved = \"1M\"\nfs = \"{fs}\"\n{disk}\n\
         [[kernel]]\nname = \"k\"\nprofile = \"linux-3.0\"\n[workload]\ntype = \"anon-churn\"\n"
    );
    let mut mm = Mm::boot(&Scenario::parse(&text).unwrap_or_else(|e| panic!("{e}")).resolve().remove(0));
    if !mm.journals.is_empty() {
        mm.journals[0].log_io = mm.new_dio(usize::MAX);
        mm.journals[0].ckpt_io = mm.new_dio(usize::MAX);
    }
    mm
}

/// The engine's part when the current task, asleep in get_request_wait, is woken: the wait is
/// over and the bio it slept holding has its request (queued, or left open for its writer).
pub fn woken_for_request(mm: &mut Mm) {
    mm.rq_wait_owed = None;
    mm.woken_for_request();
}

/// Completes every request the devices have in flight or queued, in time order (2.6.32
/// queues held by a plug are unplugged when their timer fires).
pub fn run_io(mm: &mut Mm) {
    loop {
        let io = (0..mm.io_timers.len()).min_by_key(|&i| mm.io_timers[i]).map(|i| (mm.io_timers[i], i));
        let unplug = (0..mm.unplug_timers.len()).min_by_key(|&i| mm.unplug_timers[i]).map(|i| (mm.unplug_timers[i], i));
        match (io, unplug) {
            (Some(((t, _), i)), u) if u.is_none_or(|((tu, _), _)| t <= tu) => {
                let (t, dev) = mm.io_timers.swap_remove(i);
                mm.now_ns = t;
                mm.blk_complete(dev);
            }
            (_, Some((_, i))) => {
                let (t, dev) = mm.unplug_timers.swap_remove(i);
                mm.now_ns = mm.now_ns.max(t);
                mm.blk_unplug_timeout(dev);
            }
            _ => break,
        }
    }
}

/// The zone id of (node, zone type).
pub fn zid(node: usize, zt: ZoneType) -> usize {
    node * MAX_NR_ZONES + zt as usize
}

/// Takes every free block out of a zone (largest first, so no block is split) and returns them.
pub fn drain_zone(mm: &mut Mm, zid: usize) -> Vec<(Pfn, usize)> {
    mm.drain_all_pages();
    let mut out = Vec::new();
    for order in (0..NR_PAGE_ORDERS).rev() {
        for mt in MigrateType::ALL {
            while mm.zones[zid].free_area[order].free_list[mt as usize].head != mmtwin::mm::NIL {
                let pfn = mm.__rmqueue_smallest(zid, order, mt).unwrap();
                mm.pages[pfn as usize].order = order as u8;
                out.push((pfn, order));
            }
        }
    }
    assert_eq!(mm.zones[zid].nr_free_pages, 0);
    out
}

/// Number of free blocks of `order` and type `mt` in a zone.
pub fn nr_free(mm: &Mm, zid: usize, order: usize, mt: MigrateType) -> u32 {
    mm.zones[zid].free_area[order].free_list[mt as usize].len
}
