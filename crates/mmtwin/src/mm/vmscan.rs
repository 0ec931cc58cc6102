//! kswapd (mm/vmscan.c). One kernel thread per node, woken by the allocator when a zone falls
//! below its low watermark (or, in 6.x, when a fragmenting fallback boosted the watermarks).
//!
//! There are no LRU lists yet, so balance_pgdat finds nothing to reclaim: a pass counts
//! `pageoutrun`, clears the watermark boost as 6.x does at the end of balance_pgdat, and goes
//! back to sleep. Reclaim proper (shrink_node, priorities, kswapd_try_to_sleep) is the next
//! mechanism to land here.

use crate::sim::{After, Step, Task, TaskCx};

use super::mmzone::MAX_NR_ZONES;
use super::vmstat::VmStat;

/// The kswapd thread of one node.
#[derive(Debug)]
pub struct Kswapd {
    pub nid: usize,
    name: String,
}

impl Kswapd {
    pub fn new(nid: usize) -> Kswapd {
        Kswapd { nid, name: format!("kswapd{nid}") }
    }
}

impl Task for Kswapd {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_workload(&self) -> bool {
        false
    }

    /// One balance_pgdat pass, then sleep until woken.
    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let mm = &mut *cx.mm;
        let node = &mut mm.nodes[self.nid];
        node.kswapd_wait_pending = false;
        node.kswapd_order = 0;
        node.kswapd_highest_zoneidx = 0;
        mm.events.count(VmStat::Pageoutrun, 1);
        let first = self.nid * MAX_NR_ZONES;
        for z in &mut mm.zones[first..first + MAX_NR_ZONES] {
            z.watermark_boost = 0;
        }
        Step { user_ns: 0, system_ns: mm.costs.kswapd_pass_ns, after: After::Block }
    }
}
