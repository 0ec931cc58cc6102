//! CFQ, the completely fair queueing I/O scheduler (block/cfq-iosched.c of 3.0, read in the
//! 3.1 tree), the default elevator of kernels built with CONFIG_DEFAULT_CFQ (the Kconfig
//! default from 2.6.18 until blk-mq), as the 2011 seeds' kernels were.
//!
//! What it decides, for one request queue:
//! * Every task's sync I/O (reads, and writes with REQ_SYNC: the journal's WRITE_SYNC,
//!   O_DIRECT's WRITE_ODIRECT) goes to the task's own queue (cfq_queue); all async writes
//!   (writeback, reclaim, swap) share one queue of their priority. Every task here runs at
//!   the default best-effort priority 4 (nice 0), so there is one async queue.
//! * Busy queues wait on three service trees by workload (cfqq_type): async, sync-noidle (sync
//!   queues without an idle window: REQ_NOIDLE writes, seeky or slow-thinking tasks) and sync.
//!   A queue enters its tree keyed by now plus an offset that puts async queues behind sync ones
//!   (cfq_slice_offset), less what it left of its last slice.
//! * One queue at a time is active and dispatches for its time slice (100 ms sync, 40 ms
//!   async, scaled down so that the average number of busy queues fits the 300 ms target
//!   latency); the slice starts when its first request completes. An async queue also ends
//!   after 16 dispatched requests if others are waiting. A workload (tree) is served for a
//!   share of the target latency proportional to its queues (async: scaled by 40/100), then
//!   the tree whose first queue has the lowest key is chosen (cfq_choose_wl).
//! * A sync queue with an idle window that runs empty is not expired: the scheduler waits
//!   `slice_idle` (8 ms) for the task's next request, dispatching nothing else meanwhile
//!   (cfq_arm_slice_timer). The last queue of a sync tree idles too. There is no group idling:
//!   cfq_group_idle is 0 without CONFIG_CFQ_GROUP_IOSCHED.
//! * A sync request arriving while an async queue is active preempts it (cfq_should_preempt),
//!   as does a request of a queue that may run while the active one is idle or used up.
//! * Within a queue, requests go out in the order of cfq_choose_req from the head position
//!   (sync first, then forward distance, a backward seek of up to 16 MiB counted double),
//!   except that the oldest is served first once per slice if its FIFO deadline (125 ms sync,
//!   250 ms async) has passed.
//! * Merging: a bio joins only a request of the queue it would be queued in (cfq_allow_merge),
//!   front merges included, and a request merges with its neighbour of the same queue.
//!
//! Not modelled: cgroups (one root group; CONFIG_CFQ_GROUP_IOSCHED off, the 3.0 default),
//! I/O priorities other than best-effort 4, close cooperators (cfq_close_cooperator, which
//! merges the queues of tasks reading interleaved areas), REQ_META/REQ_PRIO preemption,
//! ELV_MQUEUE_MUST (a waiting queue's task allocating past a full pool), and NCQ detection
//! (hw_tag): every device is rotational to CFQ (usb-storage and the SATA disk do not set
//! QUEUE_FLAG_NONROT in 3.0); the devices work on one request at a time, and scsi_request_fn
//! takes the next from CFQ while they do (`BlockDevice::peeked`), so CFQ decides with that one
//! in flight.

use std::collections::VecDeque;

use serde::Serialize;

use super::{Dir, Request};
use crate::mm::page_writeback::JIFFY_NS;

/// cfq_slice_async (HZ/25) and cfq_slice_sync (HZ/10), in ns, indexed by sync.
pub const SLICE_NS: [u64; 2] = [40_000_000, 100_000_000];
/// cfq_slice_idle (HZ/125): how long an empty sync queue waits for its task's next request.
pub const SLICE_IDLE_NS: u64 = 8_000_000;
/// cfq_target_latency (300 ms).
pub const TARGET_LATENCY_NS: u64 = 300_000_000;
/// cfq_fifo_expire: async HZ/4, sync HZ/8, indexed by sync.
pub const FIFO_EXPIRE_NS: [u64; 2] = [250_000_000, 125_000_000];
/// cfq_slice_async_rq.
const SLICE_ASYNC_RQ: u64 = 2;
/// cfq_quantum.
const QUANTUM: u64 = 8;
/// cfq_back_max (16 MiB) in sectors, and cfq_back_penalty.
const BACK_MAX_SECTORS: u64 = 16 * 1024 * 2;
const BACK_PENALTY: u64 = 2;
/// CFQ_MIN_TT (2 jiffies).
const MIN_TT_NS: u64 = 2 * JIFFY_NS;
/// CFQQ_SEEK_THR and CFQQ_CLOSE_THR, in sectors.
const SEEK_THR_SECTORS: u64 = 8 * 100;
const CLOSE_THR_SECTORS: u64 = 8 * 1024;
/// CFQ_SLICE_SCALE.
const SLICE_SCALE: u64 = 5;
/// The best-effort priority of every task (task_nice_ioprio of nice 0), and IOPRIO_BE_NR.
const IOPRIO: u64 = 4;
const IOPRIO_BE_NR: u64 = 8;
/// One second (HZ), the head start of a preempting queue on its tree.
const HZ_NS: i64 = 1_000_000_000;

/// The service trees of the best-effort class (enum wl_type_t).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Workload {
    Async = 0,
    SyncNoidle = 1,
    Sync = 2,
}

const WORKLOADS: [Workload; 3] = [Workload::Async, Workload::SyncNoidle, Workload::Sync];

/// A think time estimate (struct cfq_ttime): the decaying mean gap between a completed sync
/// request and the next one queued, each gap capped at twice `slice_idle`.
#[derive(Clone, Copy, Debug, Default)]
struct ThinkTime {
    last_end_request: u64,
    samples: u64,
    total: u64,
    mean: u64,
}

impl ThinkTime {
    /// __cfq_update_io_thinktime.
    fn update(&mut self, now: u64, slice_idle: u64) {
        let elapsed = now.saturating_sub(self.last_end_request).min(2 * slice_idle);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * elapsed) / 8;
        self.mean = (self.total + 128) / self.samples;
    }

    /// sample_valid.
    fn valid(&self) -> bool {
        self.samples > 80
    }

    /// cfq_io_thinktime_big.
    fn big(&self, slice: u64) -> bool {
        self.valid() && self.mean > slice
    }
}

/// One queue (struct cfq_queue): a task's sync requests, or everyone's async ones.
#[derive(Clone, Debug)]
struct CfqQueue {
    /// `Request::cfqq` of its requests.
    key: u32,
    sync: bool,
    idle_window: bool,
    on_rr: bool,
    /// The service tree it is on, its key there (ns) and insertion order (equal keys).
    tree: Option<Workload>,
    rb_key: i64,
    rb_order: u64,
    slice_new: bool,
    wait_request: bool,
    must_dispatch: bool,
    fifo_expire: bool,
    deep: bool,
    wait_busy: bool,
    slice_start: u64,
    slice_end: u64,
    slice_resid: i64,
    slice_dispatch: u64,
    dispatched: u32,
    queued: u32,
    seek_history: u32,
    last_request_pos: u64,
    /// Its task's think time (the io context's, which only sync queues update).
    ttime: ThinkTime,
    next_rq: Option<u64>,
}

impl CfqQueue {
    /// cfqq_type.
    fn workload(&self) -> Workload {
        match (self.sync, self.idle_window) {
            (false, _) => Workload::Async,
            (true, false) => Workload::SyncNoidle,
            (true, true) => Workload::Sync,
        }
    }

    /// The service tree it is on, or would join (cfqq->service_tree, else cfqq_type).
    fn service_tree(&self) -> Workload {
        self.tree.unwrap_or(self.workload())
    }

    /// CFQQ_SEEKY: more than 4 of the last 32 requests were seeks.
    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 32 / 8
    }
}

/// What CFQ did on a device (mmtwin's own "why" statistics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CfqStats {
    /// Time slices begun (a queue made active).
    pub slices: u64,
    /// Active queues preempted by a newly queued request (cfq_preempt_queue).
    pub preemptions: u64,
    /// Idle waits armed (cfq_arm_slice_timer) and, of them, those whose timer expired the
    /// waiting queue because its task queued nothing in time.
    pub idle_waits: u64,
    pub idle_expired: u64,
    /// Async queues expired after their 16 requests while other queues waited.
    pub async_rq_expired: u64,
}

impl CfqStats {
    /// Adds another device's counters (for machine totals).
    pub fn add(&mut self, o: &CfqStats) {
        self.slices += o.slices;
        self.preemptions += o.preemptions;
        self.idle_waits += o.idle_waits;
        self.idle_expired += o.idle_expired;
        self.async_rq_expired += o.async_rq_expired;
    }
}

/// The scheduler's state of one queue (struct cfq_data with its root group).
#[derive(Clone, Debug)]
pub struct Cfq {
    queues: Vec<CfqQueue>,
    tree_count: [u64; 3],
    tree_ttime: [ThinkTime; 3],
    order: u64,
    busy_queues: u64,
    busy_sync_queues: u64,
    rq_in_flight: [u64; 2],
    rq_queued: u64,
    active: Option<usize>,
    active_cic: bool,
    /// The class served last had no busy queue (serving_prio IDLE_WORKLOAD).
    serving_idle: bool,
    serving_type: Workload,
    workload_expires: i64,
    busy_queues_avg: u64,
    /// The root group's busy queues (cfqg->nr_cfqq).
    nr_cfqq: u64,
    saved_workload_slice: u64,
    saved_workload: Workload,
    last_position: u64,
    last_delayed_sync: u64,
    /// When the idle slice timer fires, if it is armed.
    pub idle_timer: Option<u64>,
    pub stats: CfqStats,
}

impl Default for Cfq {
    fn default() -> Self {
        Cfq {
            queues: Vec::new(),
            tree_count: [0; 3],
            tree_ttime: [ThinkTime::default(); 3],
            order: 0,
            busy_queues: 0,
            busy_sync_queues: 0,
            rq_in_flight: [0; 2],
            rq_queued: 0,
            active: None,
            active_cic: false,
            serving_idle: false,
            serving_type: Workload::Async,
            workload_expires: 0,
            busy_queues_avg: 0,
            nr_cfqq: 0,
            saved_workload_slice: 0,
            saved_workload: Workload::Async,
            last_position: 0,
            last_delayed_sync: 0,
            idle_timer: None,
            stats: CfqStats::default(),
        }
    }
}

/// rq_is_sync: a read, or a write with REQ_SYNC.
fn rq_is_sync(rq: &Request) -> bool {
    rq.dir == Dir::Read || rq.sync
}

/// The queued requests CFQ looks at (the device's queues, both directions).
struct View<'a>(&'a [VecDeque<Request>; 2]);

impl<'a> View<'a> {
    fn get(&self, seq: u64) -> &'a Request {
        self.0.iter().flat_map(|q| q.iter()).find(|r| r.seq == seq).expect("a queued request")
    }

    fn of(&self, key: u32) -> impl Iterator<Item = &'a Request> {
        self.0.iter().flat_map(|q| q.iter()).filter(move |r| r.cfqq == key)
    }
}

/// cfq_prio_slice: the base slice scaled by priority.
fn prio_slice(sync: bool, prio: u64) -> u64 {
    let base = SLICE_NS[usize::from(sync)];
    base + base / SLICE_SCALE * (4 - prio)
}

/// cfq_choose_req: which of two requests to serve after the head position `last`: a sync one
/// before an async one, then the nearer ahead of the head; a request behind the head by up to
/// `BACK_MAX_SECTORS` counts its distance doubled, one further behind wraps and loses.
fn choose_req(a: Option<&Request>, b: Option<&Request>, last: u64) -> Option<u64> {
    let (a, b) = match (a, b) {
        (None, b) => return b.map(|r| r.seq),
        (a, None) => return a.map(|r| r.seq),
        (Some(a), Some(b)) if a.seq == b.seq => return Some(b.seq),
        (Some(a), Some(b)) => (a, b),
    };
    if rq_is_sync(a) != rq_is_sync(b) {
        return Some(if rq_is_sync(a) { a.seq } else { b.seq });
    }
    let dist = |s: u64| -> Option<u64> {
        if s >= last {
            Some(s - last)
        } else if s + BACK_MAX_SECTORS >= last {
            Some((last - s) * BACK_PENALTY)
        } else {
            None
        }
    };
    Some(match (dist(a.sector), dist(b.sector)) {
        (Some(d1), Some(d2)) if d1 != d2 => if d1 < d2 { a.seq } else { b.seq },
        (Some(_), Some(_)) => if a.sector >= b.sector { a.seq } else { b.seq },
        (None, None) => if a.sector <= b.sector { a.seq } else { b.seq },
        (None, Some(_)) => b.seq,
        (Some(_), None) => a.seq,
    })
}

impl Cfq {
    /// The queue index of `key` (cfq_get_queue), made on first use.
    fn queue(&mut self, key: u32, sync: bool, now: u64) -> usize {
        if let Some(i) = self.queues.iter().position(|q| q.key == key) {
            return i;
        }
        self.queues.push(CfqQueue {
            key,
            sync,
            idle_window: sync,
            on_rr: false,
            tree: None,
            rb_key: 0,
            rb_order: 0,
            slice_new: false,
            wait_request: false,
            must_dispatch: false,
            fifo_expire: false,
            deep: false,
            wait_busy: false,
            slice_start: 0,
            slice_end: 0,
            slice_resid: 0,
            slice_dispatch: 0,
            dispatched: 0,
            queued: 0,
            seek_history: 0,
            last_request_pos: 0,
            ttime: ThinkTime { last_end_request: now, ..ThinkTime::default() },
            next_rq: None,
        });
        self.queues.len() - 1
    }

    fn index(&self, key: u32) -> usize {
        self.queues.iter().position(|q| q.key == key).expect("a known queue")
    }

    /// The first queue of service tree `t` (cfq_rb_first).
    fn tree_first(&self, t: Workload) -> Option<usize> {
        (0..self.queues.len()).filter(|&i| self.queues[i].tree == Some(t)).min_by_key(|&i| (self.queues[i].rb_key, self.queues[i].rb_order))
    }

    fn busy_be(&self) -> u64 {
        self.tree_count.iter().sum()
    }

    /// cfq_slice_offset: how far behind now a queue enters its tree, by the queues of the
    /// group and how much shorter its slice is than the highest priority's sync slice.
    fn slice_offset(&self, i: usize) -> i64 {
        (self.nr_cfqq as i64 - 1) * (prio_slice(true, 0) - prio_slice(self.queues[i].sync, IOPRIO)) as i64
    }

    /// cfq_service_tree_add: (re)places queue `i` on the tree of its workload, at the front
    /// (a preempting queue) or keyed by its service time.
    fn service_tree_add(&mut self, i: usize, add_front: bool, now: u64) {
        let t = self.queues[i].workload();
        let rb_key = if add_front {
            self.tree_first(t).map_or(now as i64, |f| self.queues[f].rb_key) - HZ_NS
        } else {
            let k = now as i64 + self.slice_offset(i) - self.queues[i].slice_resid;
            self.queues[i].slice_resid = 0;
            k
        };
        let mut new = true;
        if let Some(old) = self.queues[i].tree {
            new = false;
            if rb_key == self.queues[i].rb_key && old == t {
                return;
            }
            self.tree_count[old as usize] -= 1;
        }
        self.order += 1;
        let q = &mut self.queues[i];
        q.tree = Some(t);
        q.rb_key = rb_key;
        q.rb_order = self.order;
        self.tree_count[t as usize] += 1;
        if !add_front && new {
            self.nr_cfqq += 1;
        }
    }

    /// cfq_resort_rr_list.
    fn resort(&mut self, i: usize, now: u64) {
        if self.queues[i].on_rr {
            self.service_tree_add(i, false, now);
        }
    }

    /// cfq_add_cfqq_rr: queue `i` has requests now.
    fn add_cfqq_rr(&mut self, i: usize, now: u64) {
        self.queues[i].on_rr = true;
        self.busy_queues += 1;
        if self.queues[i].sync {
            self.busy_sync_queues += 1;
        }
        self.resort(i, now);
    }

    /// cfq_del_cfqq_rr: queue `i` leaves its tree (expired with nothing queued).
    fn del_cfqq_rr(&mut self, i: usize) {
        let q = &mut self.queues[i];
        q.on_rr = false;
        if let Some(t) = q.tree.take() {
            self.tree_count[t as usize] -= 1;
        }
        self.nr_cfqq -= 1;
        if self.nr_cfqq == 0 {
            self.saved_workload_slice = 0;
        }
        self.busy_queues -= 1;
        if self.queues[i].sync {
            self.busy_sync_queues -= 1;
        }
    }

    /// cfq_group_get_avg_queues: the busy queues' average, quick to rise and slow to fall.
    fn avg_queues(&mut self) -> u64 {
        let busy = self.busy_be();
        let (lo, hi) = (self.busy_queues_avg.min(busy), self.busy_queues_avg.max(busy));
        self.busy_queues_avg = (3 * hi + lo + 2) / 4;
        self.busy_queues_avg
    }

    /// cfq_scaled_cfqq_slice (low_latency on): the queue's slice, shrunk when the average
    /// busy queues would take longer than the target latency, down to twice slice_idle scaled.
    fn scaled_slice(&mut self, i: usize) -> u64 {
        let mut slice = prio_slice(self.queues[i].sync, IOPRIO);
        let expect = SLICE_NS[1] * self.avg_queues();
        if expect > TARGET_LATENCY_NS {
            let low = slice.min(2 * SLICE_IDLE_NS * slice / SLICE_NS[1]);
            slice = (slice * TARGET_LATENCY_NS / expect).max(low);
        }
        slice
    }

    /// cfq_slice_used: the queue's slice has begun and ended.
    fn slice_used(&self, i: usize, now: u64) -> bool {
        let q = &self.queues[i];
        !q.slice_new && now >= q.slice_end
    }

    /// cfq_choose_wl: the tree whose first queue has the lowest key.
    fn choose_wl(&self) -> Workload {
        let mut best: (Workload, Option<i64>) = (Workload::SyncNoidle, None);
        for t in WORKLOADS {
            if let Some(f) = self.tree_first(t) {
                let k = self.queues[f].rb_key;
                if best.1.is_none_or(|b| k < b) {
                    best = (t, Some(k));
                }
            }
        }
        best.0
    }

    /// choose_service_tree: keep serving the current workload while it has queues and time,
    /// else choose one and give it its share of the target latency.
    fn choose_service_tree(&mut self, now: u64) {
        let busy = self.busy_be();
        if busy == 0 {
            self.serving_idle = true;
            self.workload_expires = (now + JIFFY_NS) as i64;
            return;
        }
        let was_idle = std::mem::take(&mut self.serving_idle);
        if !was_idle && self.tree_count[self.serving_type as usize] > 0 && now as i64 <= self.workload_expires {
            return;
        }
        self.serving_type = self.choose_wl();
        let count = self.tree_count[self.serving_type as usize];
        let mut slice = TARGET_LATENCY_NS * count / self.busy_queues_avg.max(busy);
        if self.serving_type == Workload::Async {
            let tmp = TARGET_LATENCY_NS * self.tree_count[Workload::Async as usize] / self.busy_queues.max(1);
            slice = slice.min(tmp) * SLICE_NS[0] / SLICE_NS[1];
        } else {
            slice = slice.max(2 * SLICE_IDLE_NS);
        }
        self.workload_expires = (now + slice.max(MIN_TT_NS)) as i64;
    }

    /// cfq_choose_cfqg for the root group: resume the workload an expired queue interrupted.
    fn choose_cfqg(&mut self, now: u64) {
        if self.saved_workload_slice > 0 {
            self.workload_expires = (now + self.saved_workload_slice) as i64;
            self.serving_type = self.saved_workload;
        } else {
            self.workload_expires = now as i64 - 1;
        }
        self.choose_service_tree(now);
    }

    /// __cfq_set_active_queue: queue `i` (if any) begins a turn; its slice starts with its
    /// first completed request.
    fn set_active_queue(&mut self, i: Option<usize>) {
        if let Some(i) = i {
            let q = &mut self.queues[i];
            q.slice_start = 0;
            q.slice_end = 0;
            q.slice_dispatch = 0;
            q.wait_request = false;
            q.must_dispatch = false;
            q.fifo_expire = false;
            q.slice_new = true;
            self.idle_timer = None;
            self.stats.slices += 1;
        }
        self.active = i;
    }

    /// __cfq_slice_expired: the active queue's turn ends; a queue whose idling timed out keeps
    /// what was left of its slice for its next key.
    fn slice_expired(&mut self, timed_out: bool, now: u64) {
        let Some(i) = self.active else { return };
        if self.queues[i].wait_request {
            self.idle_timer = None;
        }
        self.queues[i].wait_request = false;
        self.queues[i].wait_busy = false;
        if timed_out {
            self.queues[i].slice_resid = if self.queues[i].slice_new {
                self.scaled_slice(i) as i64
            } else {
                self.queues[i].slice_end as i64 - now as i64
            };
        }
        // cfq_group_served: save the interrupted workload's remaining time.
        if self.workload_expires > now as i64 {
            self.saved_workload_slice = (self.workload_expires - now as i64) as u64;
            self.saved_workload = self.serving_type;
        } else {
            self.saved_workload_slice = 0;
        }
        if self.queues[i].on_rr && self.queues[i].queued == 0 {
            self.del_cfqq_rr(i);
        }
        self.resort(i, now);
        self.active = None;
        self.active_cic = false;
    }

    /// cfq_should_idle: an empty queue waits for its task if it has an idle window, or is the
    /// last sync queue of its tree and the tree's tasks think quickly.
    fn should_idle(&self, i: usize) -> bool {
        let q = &self.queues[i];
        if q.idle_window {
            return true;
        }
        let t = q.service_tree() as usize;
        self.tree_count[t] == 1 && q.sync && !self.tree_ttime[t].big(SLICE_IDLE_NS)
    }

    /// The expire step of cfq_select_queue. (Its check_group_idle step waits for the group's
    /// requests only when cfq_group_idle is set, which needs CONFIG_CFQ_GROUP_IOSCHED.)
    fn expire(&mut self, now: u64) -> Option<usize> {
        self.slice_expired(false, now);
        self.new_queue(now)
    }

    fn new_queue(&mut self, now: u64) -> Option<usize> {
        self.choose_cfqg(now);
        let next = if self.rq_queued == 0 { None } else { self.tree_first(self.serving_type) };
        self.set_active_queue(next);
        next
    }

    /// cfq_select_queue: the queue to dispatch from, None while the active one idles or has
    /// requests in flight it should wait for.
    fn select_queue(&mut self, now: u64) -> Option<usize> {
        let Some(i) = self.active else { return self.new_queue(now) };
        if self.rq_queued == 0 {
            return None;
        }
        if self.queues[i].wait_busy && self.queues[i].queued > 0 {
            self.slice_expired(false, now);
            return self.new_queue(now);
        }
        if self.slice_used(i, now) && !self.queues[i].must_dispatch {
            let q = &self.queues[i];
            if self.nr_cfqq == 1 && q.queued == 0 && q.dispatched > 0 && self.should_idle(i) {
                return None;
            }
            return self.expire(now);
        }
        if self.queues[i].queued > 0 {
            return Some(i);
        }
        if self.idle_timer.is_some() {
            return None;
        }
        let q = &mut self.queues[i];
        if q.seeky() && q.idle_window && (q.slice_new || q.slice_end as i64 - now as i64 > now as i64 - q.slice_start as i64) {
            q.deep = false;
            q.idle_window = false;
        }
        if self.queues[i].dispatched > 0 && self.should_idle(i) {
            return None;
        }
        self.expire(now)
    }

    /// cfq_slice_used_soon.
    fn slice_used_soon(&self, i: usize, now: u64) -> bool {
        let q = &self.queues[i];
        q.slice_new || now + SLICE_IDLE_NS * u64::from(q.dispatched) > q.slice_end
    }

    /// cfq_may_dispatch: queue depth limits, async held back while sync I/O is in flight and
    /// ramped up after a delayed sync request.
    fn may_dispatch(&self, i: usize, now: u64) -> bool {
        let q = &self.queues[i];
        if self.should_idle(i) && self.rq_in_flight[0] > 0 {
            return false;
        }
        if self.rq_in_flight[1] > 0 && !q.sync {
            return false;
        }
        let mut max = (QUANTUM / 2).max(1);
        if u64::from(q.dispatched) >= max {
            let promote = q.sync && self.busy_sync_queues == 1;
            if self.busy_queues > 1 && self.slice_used_soon(i, now) && !promote {
                return false;
            }
            max = if self.busy_queues == 1 || promote { u64::MAX } else { QUANTUM };
        }
        if !q.sync {
            let mut depth = now.saturating_sub(self.last_delayed_sync) / SLICE_NS[1];
            if depth == 0 && q.dispatched == 0 {
                depth = 1;
            }
            max = max.min(depth);
        }
        u64::from(q.dispatched) < max
    }

    /// cfq_find_next_rq: after `last` leaves queue `i`, the better of its successor in sector
    /// order (wrapping to the first) and its predecessor.
    fn find_next_rq(&self, i: usize, last: &Request, view: &View) -> Option<u64> {
        let mine = || view.of(self.queues[i].key).filter(|r| r.seq != last.seq);
        let next = mine().filter(|r| r.sector > last.sector).min_by_key(|r| (r.sector, r.seq)).or_else(|| mine().min_by_key(|r| (r.sector, r.seq)));
        let prev = mine().filter(|r| r.sector < last.sector).max_by_key(|r| (r.sector, r.seq));
        choose_req(next, prev, last.sector)
    }

    /// cfq_check_fifo: once per slice, the queue's oldest request if its deadline has passed.
    fn check_fifo(&mut self, i: usize, now: u64, view: &View) -> Option<u64> {
        if std::mem::replace(&mut self.queues[i].fifo_expire, true) {
            return None;
        }
        let head = view.of(self.queues[i].key).min_by_key(|r| (r.fifo_time, r.seq))?;
        (now >= head.fifo_time).then_some(head.seq)
    }

    /// cfq_insert_request + cfq_rq_enqueued for the request `seq` just queued at `now`
    /// (its `fifo_time` set): it joins its queue, updates the task's think time, seek history
    /// and idle window, ends the active queue's idle wait, or preempts the active queue.
    pub fn insert(&mut self, seq: u64, queued: &[VecDeque<Request>; 2], now: u64) {
        let view = View(queued);
        let rq = view.get(seq);
        let i = self.queue(rq.cfqq, rq_is_sync(rq), now);
        self.queues[i].queued += 1;
        if !self.queues[i].on_rr {
            self.add_cfqq_rr(i, now);
        }
        let prev = self.queues[i].next_rq.map(|s| view.get(s));
        self.queues[i].next_rq = choose_req(prev, Some(rq), self.last_position);
        self.rq_queued += 1;
        let q = &mut self.queues[i];
        if q.sync {
            q.ttime.update(now, SLICE_IDLE_NS);
            let t = q.service_tree() as usize;
            self.tree_ttime[t].update(now, SLICE_IDLE_NS);
        }
        let q = &mut self.queues[i];
        let sdist = if q.last_request_pos > 0 { rq.sector.abs_diff(q.last_request_pos) } else { 0 };
        q.seek_history = (q.seek_history << 1) | u32::from(sdist > SEEK_THR_SECTORS);
        // cfq_update_idle_window.
        if q.sync {
            if q.queued >= 4 {
                q.deep = true;
            }
            let next_noidle = q.next_rq.is_some_and(|s| view.get(s).noidle);
            if next_noidle || (!q.deep && q.seeky()) {
                q.idle_window = false;
            } else if q.ttime.valid() {
                q.idle_window = q.ttime.mean <= SLICE_IDLE_NS;
            }
        }
        q.last_request_pos = rq.end();
        if self.active == Some(i) {
            if self.queues[i].wait_request {
                if rq.nr_sectors * 512 > crate::mm::PAGE_SIZE || self.busy_queues > 1 {
                    self.idle_timer = None;
                    self.queues[i].wait_request = false;
                } else {
                    self.queues[i].must_dispatch = true;
                }
            }
        } else if self.should_preempt(i, rq, now) {
            self.preempt(i, now);
        }
    }

    /// cfq_should_preempt: whether queue `i`, which just queued `rq`, takes over from the
    /// active queue.
    fn should_preempt(&self, i: usize, rq: &Request, now: u64) -> bool {
        let Some(a) = self.active else { return false };
        if rq_is_sync(rq) && !self.queues[a].sync {
            return true;
        }
        if self.slice_used(a, now) {
            return true;
        }
        let new_tree = self.queues[i].service_tree();
        if self.serving_type == Workload::SyncNoidle
            && self.queues[i].workload() == Workload::SyncNoidle
            && self.tree_count[new_tree as usize] == 2
            && self.queues[a].queued == 0
        {
            return true;
        }
        if self.queues[a].queued == 0 && !self.should_idle(a) {
            return true;
        }
        if !self.active_cic || !self.queues[a].wait_request {
            return false;
        }
        rq.sector.abs_diff(self.last_position) <= CLOSE_THR_SECTORS
    }

    /// cfq_preempt_queue: the active queue expires (keeping what was left of its slice) and
    /// queue `i` goes to the front of its tree with a new slice.
    fn preempt(&mut self, i: usize, now: u64) {
        let old = self.active.expect("an active queue");
        self.slice_expired(true, now);
        if self.queues[old].workload() != self.queues[i].workload() {
            self.saved_workload_slice = 0;
        }
        self.service_tree_add(i, true, now);
        self.queues[i].slice_end = 0;
        self.queues[i].slice_new = true;
        self.stats.preemptions += 1;
    }

    /// A queued request `gone` was merged into `into`, a request of the same queue
    /// (cfq_merged_requests + cfq_remove_request).
    pub fn merged(&mut self, gone: &Request, into: u64) {
        let i = self.index(gone.cfqq);
        let q = &mut self.queues[i];
        if q.next_rq == Some(gone.seq) {
            q.next_rq = Some(into);
        }
        q.queued -= 1;
        self.rq_queued -= 1;
    }

    /// cfq_dispatch_requests: the request to send to the device now, if any (None while the
    /// active queue idles). The request is accounted as dispatched and activated
    /// (cfq_dispatch_insert, cfq_activate_request); the caller takes it off the queue.
    pub fn dispatch(&mut self, queued: &[VecDeque<Request>; 2], now: u64) -> Option<u64> {
        let view = View(queued);
        if self.busy_queues == 0 {
            return None;
        }
        let i = self.select_queue(now)?;
        // Requests leave a queue only by dispatch or by merging into another of the same
        // queue, and an empty queue leaves its tree when it expires: the one chosen has some.
        debug_assert!(self.queues[i].queued > 0, "CFQ chose an empty queue");
        if !self.may_dispatch(i, now) {
            return None;
        }
        let seq = match self.check_fifo(i, now, &view) {
            Some(s) => s,
            None => self.queues[i].next_rq.expect("a queue with requests has a next one"),
        };
        let rq = view.get(seq);
        self.queues[i].next_rq = self.find_next_rq(i, rq, &view);
        let q = &mut self.queues[i];
        q.queued -= 1;
        q.dispatched += 1;
        self.rq_queued -= 1;
        self.rq_in_flight[usize::from(self.queues[i].sync)] += 1;
        self.last_position = rq.end();
        self.active_cic = true;
        let q = &mut self.queues[i];
        q.slice_dispatch += 1;
        q.must_dispatch = false;
        if self.busy_queues > 1 && !q.sync && q.slice_dispatch >= 2 * SLICE_ASYNC_RQ * (IOPRIO_BE_NR - IOPRIO) {
            q.slice_end = now + JIFFY_NS;
            self.stats.async_rq_expired += 1;
            self.slice_expired(false, now);
        }
        Some(seq)
    }

    /// cfq_should_wait_busy: the group's only queue, empty and (nearly) out of time, gets its
    /// slice stretched by slice_idle rather than losing its turn.
    fn should_wait_busy(&self, i: usize, now: u64) -> bool {
        let q = &self.queues[i];
        if q.queued > 0 || self.nr_cfqq > 1 {
            return false;
        }
        if self.slice_used(i, now) {
            return true;
        }
        let left = q.slice_end as i64 - now as i64;
        (q.ttime.valid() && left < q.ttime.mean as i64) || (left > 0 && left <= JIFFY_NS as i64)
    }

    /// cfq_arm_slice_timer: the active queue ran empty; wait slice_idle for its task. A queue
    /// that should not idle is not waited for: without CONFIG_CFQ_GROUP_IOSCHED, 3.x sets
    /// cfq_group_idle to 0 (cfq_init), so there is no group idling either.
    fn arm_slice_timer(&mut self, now: u64) {
        let Some(i) = self.active else { return };
        if !self.should_idle(i) {
            return;
        }
        let q = &self.queues[i];
        if q.dispatched > 0 {
            return;
        }
        if q.ttime.valid() && (q.slice_end as i64 - now as i64) < q.ttime.mean as i64 {
            return;
        }
        self.queues[i].wait_request = true;
        self.idle_timer = Some(now + SLICE_IDLE_NS);
        self.stats.idle_waits += 1;
    }

    /// cfq_completed_request for `rq`, finished at `now`: the queue's slice starts with its
    /// first completion; a used-up queue expires; an empty sync queue may idle.
    pub fn completed(&mut self, rq: &Request, now: u64) {
        let i = self.index(rq.cfqq);
        self.queues[i].dispatched -= 1;
        self.rq_in_flight[usize::from(self.queues[i].sync)] -= 1;
        let sync = rq_is_sync(rq);
        if sync {
            let q = &mut self.queues[i];
            q.ttime.last_end_request = now;
            let t = q.service_tree() as usize;
            self.tree_ttime[t].last_end_request = now;
            // The request waited at least its sync FIFO time since it was queued.
            if now >= rq.fifo_time {
                self.last_delayed_sync = now;
            }
        }
        if self.active != Some(i) {
            return;
        }
        if self.queues[i].slice_new {
            let slice = self.scaled_slice(i);
            let q = &mut self.queues[i];
            q.slice_start = now;
            q.slice_end = now + slice;
            q.slice_new = false;
        }
        if self.should_wait_busy(i, now) {
            self.queues[i].slice_end = now + SLICE_IDLE_NS;
            self.queues[i].wait_busy = true;
        }
        if self.slice_used(i, now) {
            self.slice_expired(true, now);
        } else if sync && self.queues[i].queued == 0 {
            self.arm_slice_timer(now);
        }
    }

    /// cfq_idle_slice_timer at `now`: the idle wait ended without a request from the queue's
    /// task; expires the queue unless it has something to send. Returns whether the queue
    /// should be run.
    pub fn idle_timer_fired(&mut self, now: u64) -> bool {
        self.idle_timer = None;
        let mut timed_out = true;
        if let Some(i) = self.active {
            timed_out = false;
            if self.queues[i].must_dispatch {
                return true;
            }
            if !self.slice_used(i, now) {
                if self.busy_queues == 0 {
                    return false;
                }
                if self.queues[i].queued > 0 {
                    return true;
                }
                self.queues[i].deep = false;
            }
            self.stats.idle_expired += 1;
        }
        self.slice_expired(timed_out, now);
        true
    }

    /// Whether the active queue is waiting for its task (a test aid).
    #[cfg(test)]
    pub fn idling(&self) -> bool {
        self.active.is_some_and(|i| self.queues[i].wait_request)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Bio, BlockDevice, DeviceModel, Dir, Scheduler, SECTORS_PER_PAGE};
    use super::*;

    fn cfq_disk() -> BlockDevice {
        BlockDevice::new("sda", DeviceModel { scheduler: Scheduler::Cfq, ..Default::default() })
    }

    /// A one-page bio of task `owner`.
    fn bio(dir: Dir, sector: u64, owner: u32, sync: bool) -> Bio {
        let mut b = Bio::new(dir, sector, sector as u32);
        b.owner = owner;
        b.sync = sync;
        b
    }

    /// Dispatches and completes one request at `now`, returning its sector and completion
    /// time, or None if the scheduler sends nothing.
    fn serve(d: &mut BlockDevice, now: u64) -> Option<(u64, u64)> {
        let done = d.dispatch(now, &mut 0)?;
        Some((d.complete(done).sector, done))
    }

    #[test]
    fn a_sync_write_preempts_the_async_queue_and_goes_out_next() {
        // The flusher's async writes are being served; kjournald's WRITE_SYNC arrives and is
        // the next request dispatched, ahead of the 7 async ones still queued.
        let mut d = cfq_disk();
        for i in 0..8 {
            d.submit_bio(bio(Dir::Write, 1000 + 100 * i, 7, false), 0);
        }
        let (first, t) = serve(&mut d, 0).expect("an async write");
        assert_eq!(first, 1000);
        d.submit_bio(bio(Dir::Write, 90_000, 3, true).req_sync(), t);
        let (s, t) = serve(&mut d, t).expect("a request");
        assert_eq!(s, 90_000);
        assert_eq!(d.cfq_stats().expect("cfq").preemptions, 1);
        // The journal's queue, the last of its tree, idles for slice_idle; then the async
        // writes go on in sector order.
        assert!(d.dispatch(t, &mut 0).is_none());
        let fire = d.cfq_timer_to_arm().expect("idling");
        assert_eq!(fire, t + SLICE_IDLE_NS);
        assert!(d.cfq_timer_fired(fire));
        let rest: Vec<u64> = std::iter::from_fn(|| serve(&mut d, fire).map(|s| s.0)).collect();
        assert_eq!(rest, (1..8).map(|i| 1000 + 100 * i).collect::<Vec<_>>());
    }

    #[test]
    fn an_empty_sync_queue_idles_for_its_task_and_serves_its_next_read_first() {
        // A reader's read completes; async writes wait. CFQ sends nothing for slice_idle (8 ms),
        // and a read the task queues within that time goes out before the writes.
        let mut d = cfq_disk();
        d.submit_bio(bio(Dir::Read, 500, 9, false), 0);
        for i in 0..4 {
            d.submit_bio(bio(Dir::Write, 10_000 + 100 * i, 7, false), 0);
        }
        let (s, t) = serve(&mut d, 0).expect("the read");
        assert_eq!(s, 500);
        assert!(d.dispatch(t, &mut 0).is_none(), "idling for the reader");
        assert_eq!(d.cfq_timer_to_arm(), Some(t + SLICE_IDLE_NS));
        d.submit_bio(bio(Dir::Read, 508, 9, false), t + 2_000_000);
        let (s, t) = serve(&mut d, t + 2_000_000).expect("the read");
        assert_eq!(s, 508);
        // Without another read the timer expires the reader's queue and the writes go out.
        assert!(d.dispatch(t, &mut 0).is_none());
        let fire = d.cfq_timer_to_arm().expect("armed again");
        assert!(d.cfq_timer_fired(fire));
        assert_eq!(serve(&mut d, fire).expect("a write").0, 10_000);
        let st = d.cfq_stats().expect("cfq");
        assert_eq!((st.idle_waits, st.idle_expired), (2, 1));
    }

    #[test]
    fn a_write_sync_queue_is_not_idled_on_while_another_sync_queue_waits() {
        // WRITE_SYNC carries REQ_NOIDLE: kjournald's queue has no idle window, so when it runs
        // empty with another sync queue on its tree, that queue goes next at once.
        let mut d = cfq_disk();
        d.submit_bio(bio(Dir::Write, 500, 3, true).req_sync(), 0);
        d.submit_bio(bio(Dir::Write, 40_000, 4, true).req_sync(), 0);
        let (s, t) = serve(&mut d, 0).expect("a log write");
        assert_eq!(s, 500);
        assert_eq!(d.cfq_stats().expect("cfq").idle_waits, 0);
        let (s, _) = serve(&mut d, t).expect("no idling");
        assert_eq!(s, 40_000);
    }

    #[test]
    fn a_reader_and_the_flusher_take_turns_and_the_async_turns_are_short() {
        // A reader with a backlog of reads and the flusher's scattered writes (a seek each):
        // the async queue's turns last its 40 ms slices within the async workload's share of
        // the target latency (60 ms here), at most 16 writes (cfq_prio_to_maxrq), and the
        // reader's turns come in between.
        let mut d = cfq_disk();
        for i in 0..200 {
            d.submit_bio(bio(Dir::Write, 1_000_000 + 100_000 * i, 7, false), 0);
        }
        for i in 0..200 {
            d.submit_bio(bio(Dir::Read, 16 * i, 9, false), 0);
        }
        let (mut now, mut run, mut longest, mut reads_left) = (0, 0, 0, 200);
        let mut guard = 0;
        while reads_left > 0 {
            guard += 1;
            assert!(guard < 10_000, "stuck: {:?}", d.cfq);
            let Some(done) = d.dispatch(now, &mut 0) else {
                now = d.cfq_timer_to_arm().unwrap_or(now + SLICE_IDLE_NS);
                d.cfq_timer_fired(now);
                continue;
            };
            let rq = d.complete(done);
            now = done;
            if rq.dir == Dir::Write {
                run += 1;
                longest = longest.max(run);
            } else {
                run = 0;
                reads_left -= 1;
            }
        }
        assert!((1..=16).contains(&longest), "longest run of writes while reads waited: {longest}");
    }

    #[test]
    fn an_async_request_past_its_250_ms_goes_out_first_in_the_next_slice() {
        // cfq_check_fifo: the flusher's far request X waits while nearer ones go out; once it
        // is 250 ms old, the async queue's next slice starts with it, ahead of the nearer Z
        // (deadline would keep sweeping until its 5 s write_expire).
        let mut d = cfq_disk();
        d.submit_bio(bio(Dir::Write, 500_000, 7, false), 0);
        d.submit_bio(bio(Dir::Write, 1_000, 7, false), 0);
        d.submit_bio(bio(Dir::Write, 2_000, 7, false), 0);
        let (s, _) = serve(&mut d, 0).expect("a write");
        assert_eq!(s, 1_000, "nearest ahead of the head first");
        // 300 ms on the slice is used up; the queue's next slice checks its FIFO.
        let (s, t) = serve(&mut d, 300_000_000).expect("a write");
        assert_eq!(s, 500_000, "the expired request first");
        assert_eq!(serve(&mut d, t).expect("a write").0, 2_000);
    }

    #[test]
    fn sync_bios_merge_only_into_their_own_tasks_requests_and_async_bios_into_any() {
        let mut d = cfq_disk();
        d.submit_bio(bio(Dir::Write, 0, 1, true), 0);
        d.submit_bio(bio(Dir::Write, SECTORS_PER_PAGE, 2, true), 0);
        assert_eq!(d.nr_queued(Dir::Write), 2, "two tasks' sync writes stay apart");
        d.submit_bio(bio(Dir::Write, 2 * SECTORS_PER_PAGE, 2, true), 0);
        assert_eq!(d.nr_queued(Dir::Write), 2, "task 2's next write joins its own request");
        d.submit_bio(bio(Dir::Write, 1000, 5, false), 0);
        d.submit_bio(bio(Dir::Write, 1000 + SECTORS_PER_PAGE, 6, false), 0);
        assert_eq!(d.nr_queued(Dir::Write), 3, "async writes share one queue and merge");
    }
}
