//! The event engine: simulated time in integer nanoseconds, an event queue ordered by
//! (time, sequence), CPUs grouped into nodes, tasks as state machines that run for a cost, sleep,
//! block until woken, or exit, and the one seeded PRNG of the run.
//!
//! A task's `step` does a piece of work against the memory manager and says how much CPU time it
//! took (user and system) and what the task does next. The engine keeps each CPU busy for that
//! long, runs each CPU's runnable task with the smallest vruntime and switches at step
//! boundaries when a woken task lags the running one by more than the wakeup granularity or a
//! tick during the step finds it past its CFS slice (`sched`), wakes kswapd when the allocator
//! asked for it, and samples /proc/vmstat at a fixed interval.
//!
//! A sleep inside the kernel (a congestion_wait, a dirty-throttling pause) follows the step's
//! CPU time. Where the kernel's task would sleep in the middle of an allocation and then retry,
//! the callers that can stop there (readahead, the buffered write, the file fault) end their
//! step at the sleep; the retry, and what the sleep interrupted (the rest of a readahead
//! window), run at the start of the task's next step (`Mm::resume_kernel_work`).

pub mod cost;
pub mod queue;
pub mod rng;
pub mod sched;

use std::collections::VecDeque;

use crate::mm::vmscan::Kswapd;
use crate::mm::vmstat::{VmstatWorker, NR_VMSTAT_ITEMS};
use crate::mm::Mm;
use queue::{EventQueue, SimTime};
use rng::Rng;

/// Index of a task in the simulation.
pub type TaskId = usize;

/// Index of a wait queue (wait_queue_head_t) in the simulation.
pub type WaitQueueId = usize;

/// What a task does after the CPU time of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Stay runnable (other runnable tasks on the CPU go first).
    Continue,
    /// Sleep for this many ns in the kernel (schedule_timeout and what is built on it:
    /// congestion_wait, io_schedule_timeout, msleep): the timer wheel wakes the task at the tick
    /// that ends the timeout rounded up to whole jiffies, so one jiffy early at most.
    Sleep(SimTime),
    /// Sleep exactly this many ns: user space on a high-resolution timer (nanosleep), or waiting
    /// for an outside event whose time is known (data arriving from the network).
    SleepExact(SimTime),
    /// Sleep until woken directly (a kernel thread such as kswapd).
    Block,
    /// Sleep on a wait queue until something wakes it (prepare_to_wait + schedule).
    Wait(WaitQueueId),
    /// Sleep on a wait queue until woken or until the timeout passes (schedule_timeout);
    /// the next step's `TaskCx::timed_out` says which.
    WaitTimeout(WaitQueueId, SimTime),
    /// As WaitTimeout, with a timeout already ended at its tick by the kernel (ns from the end
    /// of the step): the engine's form of a congestion_wait the step owes.
    WaitTimeoutExact(WaitQueueId, SimTime),
    /// Finish.
    Exit,
}

/// The outcome of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub user_ns: u64,
    pub system_ns: u64,
    pub after: After,
}

/// What a task sees while it runs a step.
pub struct TaskCx<'a> {
    pub now: SimTime,
    pub cpu: usize,
    pub tid: TaskId,
    pub mm: &'a mut Mm,
    pub rng: &'a mut Rng,
    /// The task's last sleep ended by its timeout rather than a wakeup.
    pub timed_out: bool,
}

impl TaskCx<'_> {
    /// Wakes every task waiting on `wq` (wake_up_all) once this step's time has passed.
    pub fn wake_up(&mut self, wq: WaitQueueId) {
        self.mm.wake_up(wq);
    }
}

/// A simulated task: a state machine advanced one step at a time.
///
/// Contract: `step` must either charge some time or change state (sleep, block, exit), so that
/// simulated time advances; the allocator's charges left in `Mm::cost_ns` are added to the
/// step's system time by the engine.
pub trait Task {
    fn name(&self) -> &str;
    fn step(&mut self, cx: &mut TaskCx) -> Step;
    /// Workload tasks keep the run going; kernel threads do not.
    fn is_workload(&self) -> bool {
        true
    }
    /// Which row of the wait accounting (`WaitStats`) the task's waits count in, if it is
    /// not a workload task (those are `Waiter::Benchmark`) or kswapd (known to the engine).
    fn waiter(&self) -> Option<Waiter> {
        None
    }
}

/// Whose waits `WaitStats` counts: the benchmark's tasks, kswapd, the flusher threads and the
/// journal threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiter {
    Benchmark,
    Kswapd,
    Flusher,
    Journal,
}

/// Their names, in `Waiter` order.
pub const WAITERS: [&str; 4] = ["benchmark", "kswapd", "flusher", "journal"];

/// What `WaitStats` counts a wait as, by the wait queue: a block device's free requests
/// (get_request_wait), a page (its lock or its writeback: lock_page, wait_on_page_writeback),
/// or a journal (a commit the task asked for, or a buffer the commit is writing to the log,
/// BJ_Shadow). Other waits are not counted here: a thread's idle sleep, direct I/O
/// completions, and congestion_wait and a directory's i_mutex (both counted apart).
pub const WAIT_KINDS: [&str; 3] = ["requests", "pages", "journal"];

/// Time tasks spent blocked, by who waited and for what (mmtwin's own "why" figures): ns and
/// number of waits, indexed [`Waiter`][`WAIT_KINDS`]. A wait still going on when the run ends
/// is not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitStats {
    pub ns: [[u64; 3]; 4],
    pub count: [[u64; 3]; 4],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaskState {
    Runnable,
    Running,
    Sleeping,
    Blocked,
    Exited,
}

struct TaskSlot {
    task: Box<dyn Task>,
    cpu: usize,
    state: TaskState,
    after: After,
    /// Incremented each time the task goes to sleep; wakeups and timeouts carry the value they
    /// were meant for, so a stale one is ignored.
    gen: u64,
    timed_out: bool,
    /// The engine event during which the current step started.
    step_started: u64,
    /// When the task last got its CPU from another task (the start of its time slice).
    slice_start: SimTime,
    /// When the task last entered its CPU's run queue (for sched_info's run_delay).
    queued_at: SimTime,
    /// CFS virtual runtime: the task's CPU time (every task has nice 0), renormalised when it
    /// moves between CPUs and placed when it wakes.
    vruntime: u64,
    /// The CPU it last ran on.
    ran_on: usize,
    /// Not run yet: starts at its CPU's min_vruntime.
    new: bool,
    /// In congestion_wait: its caller and when the sleep began (credited when it ends).
    congestion: Option<(crate::mm::vmscan::CongestionSite, SimTime)>,
    /// What the last step ended with (blocking, a timed wait, exit), carried out once the
    /// sleep that step owed from inside the kernel is over.
    deferred: Option<After>,
    /// Blocked on a wait `WaitStats` counts: (who, what, since when).
    waiting: Option<(Waiter, usize, SimTime)>,
}

impl TaskSlot {
    fn new(task: Box<dyn Task>, cpu: usize, state: TaskState, after: After) -> TaskSlot {
        TaskSlot { task, cpu, state, after, gen: 0, timed_out: false, step_started: 0, slice_start: 0, queued_at: 0, vruntime: 0, ran_on: cpu, new: true, congestion: None, deferred: None, waiting: None }
    }
}

#[derive(Default)]
struct Cpu {
    current: Option<TaskId>,
    /// Runnable tasks waiting, in the order they were queued; the one with the smallest
    /// vruntime runs next (the leftmost of the CFS tree; among equals the earliest queued).
    runqueue: VecDeque<TaskId>,
    /// When the running step began.
    step_start: SimTime,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The step running on this CPU has used its time.
    CpuDone(usize),
    /// Make a sleeping or blocked task runnable (if still in the sleep of this generation).
    Wake(TaskId, u64),
    /// A sleep's timeout (WaitTimeout).
    Timeout(TaskId, u64),
    /// A block device finished its request in flight.
    IoDone(usize),
    /// A plugged queue's unplug timer (2.6.32).
    Unplug(usize),
    /// A device's queued bandwidth update (bw_dwork, 3.2+ IO-less throttle).
    BwUpdate(usize),
    /// Take a vmstat sample.
    Sample,
    /// Record the /proc dumps.
    Dump,
}

/// The /proc text files at one simulated time.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcDump {
    pub time_ns: SimTime,
    pub buddyinfo: String,
    pub pagetypeinfo: String,
    pub zoneinfo: String,
    pub vmstat: String,
}

/// CPU time accounting of a run, in ns: the benchmark's tasks (what `time` of the benchmark
/// reports, as MMTests' "User/Sys Time Running Test" does), kswapd, and the other kernel
/// threads and daemons (flushers, jbd, vmstat, system processes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub system_ns: u64,
    pub kswapd_ns: u64,
    pub others_ns: u64,
    /// Time kswapd spent runnable but waiting for a CPU (the run_delay of
    /// /proc/PID/schedstat, sched_info_dequeue/arrive).
    pub kswapd_wait_ns: u64,
}

/// One run of the simulated machine.
pub struct Sim {
    pub now: SimTime,
    pub mm: Mm,
    pub rng: Rng,
    queue: EventQueue<Event>,
    cpus: Vec<Cpu>,
    tasks: Vec<TaskSlot>,
    kswapd: Vec<TaskId>,
    /// Each node's kswapd_wait as kswapd naps on it (kswapd_try_to_sleep's HZ/10).
    kswapd_nap: Vec<WaitQueueId>,
    wait_queues: Vec<VecDeque<(TaskId, u64)>>,
    /// Queues whose waiters sleep exclusively (prepare_to_wait_exclusive): a wakeup wakes the
    /// longest waiter only (__wake_up_common with nr_exclusive 1).
    exclusive: Vec<bool>,
    /// The engine event during which each wait queue was last woken: a task whose step asked
    /// to wait on a queue woken by a later event, while the step's CPU time ran, does not sleep
    /// (the kernel's prepare_to_wait before the condition is checked).
    last_woken: Vec<Option<u64>>,
    live_workload: usize,
    sample_interval: SimTime,
    /// vmstat samples (time, full snapshot).
    pub samples: Vec<(SimTime, Box<[i64; NR_VMSTAT_ITEMS]>)>,
    /// At each sample, the per-node counts of `Mm::node_timeline_snapshot`.
    pub node_samples: Vec<Vec<i64>>,
    pub times: CpuTimes,
    /// Time tasks spent blocked, by who and for what.
    pub waits: WaitStats,
    /// /proc dumps taken at the times asked for.
    pub dumps: Vec<ProcDump>,
    /// Events processed (for speed figures).
    pub events_processed: u64,
    /// Run the invariant checkers after every event.
    pub check_invariants: bool,
    /// When a workload task last began a step (for the hung-run watchdog).
    last_workload_step: SimTime,
}

/// How long every live workload task may sit in an untimed wait, with none of them running a
/// step, before the run is declared hung: ten times the kernel's default hung_task_timeout_secs
/// (120 s), far longer than any wait a working model produces.
pub const HUNG_RUN_NS: SimTime = 1_200 * 1_000_000_000;

/// Why a run could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// Every live workload task has waited, untimed, for `HUNG_RUN_NS` or more with nothing
    /// waking it: a lost wakeup in the model. `tasks` names each task and what it waits on.
    Hung { at_ns: SimTime, tasks: Vec<String> },
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Hung { at_ns, tasks } => write!(
                f,
                "the simulation hung at {:.3} s: no workload task ran for {} s and nothing wakes them ({})",
                *at_ns as f64 / 1e9,
                HUNG_RUN_NS / 1_000_000_000,
                tasks.join("; ")
            ),
        }
    }
}

impl std::error::Error for SimError {}

impl Sim {
    /// A machine with its kswapd threads, no workload yet.
    pub fn new(mm: Mm, seed: u64, sample_interval: SimTime) -> Sim {
        let nr_cpus = mm.cpu_to_node.len();
        let mut sim = Sim {
            now: 0,
            mm,
            rng: Rng::new(seed),
            queue: EventQueue::default(),
            cpus: (0..nr_cpus).map(|_| Cpu::default()).collect(),
            tasks: Vec::new(),
            kswapd: Vec::new(),
            kswapd_nap: Vec::new(),
            wait_queues: Vec::new(),
            exclusive: Vec::new(),
            last_woken: Vec::new(),
            live_workload: 0,
            sample_interval,
            samples: Vec::new(),
            node_samples: Vec::new(),
            times: CpuTimes::default(),
            waits: WaitStats::default(),
            dumps: Vec::new(),
            events_processed: 0,
            check_invariants: cfg!(any(debug_assertions, feature = "checkers")),
            last_workload_step: 0,
        };
        // The timer tick's phase, from its own stream so the run's other draws stay as they were.
        sim.mm.sched.tick_phase = Rng::new(seed ^ 0x7469_636b_7068_6173).below(sim.mm.sched.jiffy_ns);
        // The hashed page wait table comes first (ids 0..NR_PAGE_WAITQUEUES), then
        // congestion_wqh, then each block device's request and flusher queues.
        for _ in 0..crate::mm::filemap::NR_PAGE_WAITQUEUES {
            sim.new_wait_queue();
        }
        sim.mm.congestion_wqh = sim.new_wait_queue();
        for d in 0..sim.mm.bdevs.len() {
            for p in 0..2 {
                let wq = sim.new_wait_queue();
                sim.mm.bdevs[d].rq_wait[p] = wq;
                sim.exclusive[wq] = true;
            }
            sim.mm.bdevs[d].flusher_wait = sim.new_wait_queue();
            sim.mm.bdevs[d].io_wait = sim.new_wait_queue();
        }
        for nid in 0..sim.mm.nodes.len() {
            let cpu = sim.mm.nodes[nid].cpus.first().copied().unwrap_or(0);
            let wq = sim.new_wait_queue();
            sim.mm.nodes[nid].reclaim_wait_writeback = sim.new_wait_queue();
            let tid = sim.spawn_blocked(Box::new(Kswapd::new(nid, wq)), cpu);
            sim.kswapd.push(tid);
            sim.kswapd_nap.push(wq);
        }
        for d in 0..sim.mm.bdevs.len() {
            let t = crate::fs::fs_writeback::Flusher::new(d, sim.mm.sysctl.dirty_writeback_centisecs);
            let first = t.first_wakeup_ns();
            // Flushers are unbound; they run on the last CPU, away from node 0's workloads.
            sim.spawn_kernel_thread_at(Box::new(t), nr_cpus - 1, first);
        }
        for j in 0..sim.mm.journals.len() {
            let wq = sim.new_wait_queue();
            sim.mm.journals[j].wait = wq;
            sim.mm.journals[j].shadow_wait = sim.new_wait_queue();
            sim.mm.journals[j].done_wait = sim.new_wait_queue();
            sim.mm.journals[j].log_io = sim.mm.new_dio(wq);
            sim.mm.journals[j].ckpt_io = sim.mm.new_dio(wq);
            let sb = sim.mm.journals[j].sb;
            let dev = sim.mm.sbs[sb].dev;
            let name = match sim.mm.sbs[sb].fs_type {
                crate::fs::FsType::Ext3 => "kjournald".to_string(),
                _ => format!("jbd2/{}-8", sim.mm.bdevs[dev].name),
            };
            sim.spawn_kernel_thread_at(Box::new(crate::fs::jbd::Kjournald::new(j, name)), nr_cpus - 1, 0);
        }
        // Directory i_mutex waiters, last so that the ids above stay as they were.
        sim.mm.mutex_wq_base = sim.wait_queues.len();
        for _ in 0..crate::fs::namei::NR_MUTEX_WAITQUEUES {
            sim.new_wait_queue();
        }
        let interval = sim.mm.sysctl.stat_interval.max(1) * 1_000_000_000;
        for cpu in 0..nr_cpus {
            sim.spawn_kernel_thread_at(Box::new(VmstatWorker::new(cpu, interval)), cpu, interval);
        }
        sim
    }

    fn spawn_blocked(&mut self, task: Box<dyn Task>, cpu: usize) -> TaskId {
        let tid = self.tasks.len();
        self.tasks.push(TaskSlot::new(task, cpu, TaskState::Blocked, After::Block));
        tid
    }

    /// Adds a kernel thread that first runs at simulated time `t`.
    fn spawn_kernel_thread_at(&mut self, task: Box<dyn Task>, cpu: usize, t: SimTime) -> TaskId {
        debug_assert!(!task.is_workload());
        let tid = self.tasks.len();
        self.tasks.push(TaskSlot::new(task, cpu, TaskState::Sleeping, After::Continue));
        self.queue.push(t, Event::Wake(tid, 0));
        tid
    }

    /// A new, empty wait queue.
    pub fn new_wait_queue(&mut self) -> WaitQueueId {
        self.wait_queues.push(VecDeque::new());
        self.exclusive.push(false);
        self.last_woken.push(None);
        self.wait_queues.len() - 1
    }

    /// Adds a runnable task bound to `cpu`.
    pub fn spawn(&mut self, task: Box<dyn Task>, cpu: usize) -> TaskId {
        assert!(cpu < self.cpus.len(), "cpu {cpu} does not exist");
        if task.is_workload() {
            self.live_workload += 1;
        }
        let tid = self.tasks.len();
        self.tasks.push(TaskSlot::new(task, cpu, TaskState::Sleeping, After::Continue));
        self.queue.push(self.now, Event::Wake(tid, 0));
        tid
    }

    /// Runs until every workload task has exited (or nothing is left to happen), calling
    /// `progress` with the simulated time at each sample. Fails if the workload hangs: every
    /// live workload task in an untimed wait for `HUNG_RUN_NS` (checked at each sample).
    pub fn run(&mut self, progress: &mut dyn FnMut(SimTime)) -> Result<(), SimError> {
        self.queue.push(self.now, Event::Sample);
        self.last_workload_step = self.now;
        while let Some((t, ev)) = self.queue.pop() {
            debug_assert!(t >= self.now, "time went backwards");
            self.now = t;
            self.events_processed += 1;
            match ev {
                Event::CpuDone(cpu) => self.cpu_done(cpu),
                Event::Wake(tid, gen) => self.wake(tid, gen, false),
                Event::Timeout(tid, gen) => self.wake(tid, gen, true),
                Event::IoDone(dev) => {
                    self.mm.now_ns = self.now;
                    self.mm.blk_complete(dev);
                    self.mm.take_cost();
                    self.flush_mm_requests(self.now, None);
                }
                Event::Unplug(dev) => {
                    self.mm.now_ns = self.now;
                    self.mm.blk_unplug_timeout(dev);
                    self.flush_mm_requests(self.now, None);
                }
                Event::BwUpdate(dev) => {
                    self.mm.now_ns = self.now;
                    self.mm.wb_update_bandwidth_workfn(dev);
                    self.mm.take_cost();
                }
                Event::Dump => self.dump(),
                Event::Sample => {
                    self.sample();
                    progress(self.now);
                    if let Some(tasks) = self.hung_workload() {
                        return Err(SimError::Hung { at_ns: self.now, tasks });
                    }
                    if self.live_workload > 0 {
                        self.queue.push(self.now + self.sample_interval, Event::Sample);
                    }
                }
            }
            if self.check_invariants {
                if let Err(e) = crate::testing::checkers::check_all(&self.mm) {
                    panic!("invariant violated at t={}ns after {:?}: {e}", self.now, ev);
                }
            }
            if self.live_workload == 0 {
                break;
            }
        }
        if self.samples.last().map(|s| s.0) != Some(self.now) {
            self.sample();
        }
        progress(self.now);
        Ok(())
    }

    /// The hung-run watchdog (in the spirit of khungtaskd): if no workload task has begun a
    /// step for `HUNG_RUN_NS` and every live one sits in an untimed wait, the tasks and what
    /// each waits on; None otherwise (a task that is runnable, sleeping on a timer or waiting
    /// with a timeout will run again by itself).
    fn hung_workload(&self) -> Option<Vec<String>> {
        if self.live_workload == 0 || self.now - self.last_workload_step < HUNG_RUN_NS {
            return None;
        }
        let mut hung = Vec::new();
        for slot in self.tasks.iter().filter(|s| s.task.is_workload() && s.state != TaskState::Exited) {
            match (slot.state, slot.after) {
                (TaskState::Blocked, After::Wait(wq)) => hung.push(format!("{} on {}", slot.task.name(), self.wait_queue_name(wq))),
                (TaskState::Blocked, After::Block) => hung.push(format!("{} blocked", slot.task.name())),
                _ => return None,
            }
        }
        Some(hung)
    }

    /// What a wait queue belongs to, for messages.
    /// Task `tid` has just blocked on `wq`: remembers it if `WaitStats` counts such a wait.
    fn note_wait(&mut self, tid: TaskId, wq: WaitQueueId) {
        let who = if self.tasks[tid].task.is_workload() {
            Some(Waiter::Benchmark)
        } else if self.kswapd_node(tid).is_some() {
            Some(Waiter::Kswapd)
        } else {
            self.tasks[tid].task.waiter()
        };
        let Some(who) = who else { return };
        if let Some(kind) = self.wait_kind(wq, who) {
            self.tasks[tid].waiting = Some((who, kind, self.now));
        }
    }

    /// The `WAIT_KINDS` index of a wait on `wq` by `who`, if it is counted. A journal thread's
    /// sleep on its own wait queue is its idle time and its wait for its log writes: not counted.
    fn wait_kind(&self, wq: WaitQueueId, who: Waiter) -> Option<usize> {
        if wq < crate::mm::filemap::NR_PAGE_WAITQUEUES {
            return Some(1);
        }
        if self.mm.bdevs.iter().any(|d| d.rq_wait.contains(&wq)) {
            return Some(0);
        }
        let journal = self.mm.journals.iter().any(|j| wq == j.shadow_wait || (wq == j.wait && who != Waiter::Journal));
        journal.then_some(2)
    }

    fn wait_queue_name(&self, wq: WaitQueueId) -> String {
        if wq < crate::mm::filemap::NR_PAGE_WAITQUEUES {
            return format!("a page's wait queue ({wq})");
        }
        if wq == self.mm.congestion_wqh {
            return "congestion_wqh".to_string();
        }
        for d in &self.mm.bdevs {
            if d.rq_wait.contains(&wq) {
                return format!("{}'s request queue", d.name);
            }
            if wq == d.flusher_wait {
                return format!("{}'s flusher", d.name);
            }
            if wq == d.io_wait {
                return format!("{}'s completions", d.name);
            }
        }
        for (nid, n) in self.mm.nodes.iter().enumerate() {
            if wq == n.reclaim_wait_writeback {
                return format!("node {nid}'s reclaim writeback wait");
            }
        }
        for j in &self.mm.journals {
            if wq == j.wait {
                return "a journal's commit".to_string();
            }
            if wq == j.shadow_wait {
                return "a journal's log write (BJ_Shadow)".to_string();
            }
        }
        if self.mm.dios.iter().any(|d| d.wait == wq) {
            return format!("its direct I/O (wait queue {wq})");
        }
        if (self.mm.mutex_wq_base..self.mm.mutex_wq_base + crate::fs::namei::NR_MUTEX_WAITQUEUES).contains(&wq) {
            return format!("a directory's i_mutex (wait queue {wq})");
        }
        format!("wait queue {wq}")
    }

    /// Asks for the /proc dumps at simulated time `t`.
    pub fn schedule_dump(&mut self, t: SimTime) {
        self.queue.push(t, Event::Dump);
    }

    /// Records the /proc dumps now.
    pub fn dump(&mut self) {
        self.dumps.push(ProcDump {
            time_ns: self.now,
            buddyinfo: self.mm.proc_buddyinfo(),
            pagetypeinfo: self.mm.proc_pagetypeinfo(),
            zoneinfo: self.mm.proc_zoneinfo(),
            vmstat: self.mm.proc_vmstat(),
        });
    }

    fn sample(&mut self) {
        self.samples.push((self.now, Box::new(self.mm.vmstat_snapshot())));
        self.node_samples.push(self.mm.node_timeline_snapshot());
    }

    fn wake(&mut self, tid: TaskId, gen: u64, timed_out: bool) {
        let slot = &mut self.tasks[tid];
        if slot.gen != gen || !matches!(slot.state, TaskState::Sleeping | TaskState::Blocked) {
            return;
        }
        slot.timed_out = timed_out;
        slot.state = TaskState::Runnable;
        if let Some((who, kind, since)) = slot.waiting.take() {
            self.waits.ns[who as usize][kind] += self.now - since;
            self.waits.count[who as usize][kind] += 1;
        }
        if let Some((site, start)) = slot.congestion.take() {
            self.mm.congestion_wait_ns[site as usize] += self.now - start;
        }
        // Workload tasks stay on their CPU; kswapd may move within its node's CPUs.
        if let Some(nid) = self.kswapd_node(tid) {
            self.tasks[tid].cpu = self.mm.sched.select_cpu(self.tasks[tid].cpu, &self.mm.sched.kswapd_cpus[nid], None);
            self.mm.sched.kswapd_sleeping[nid] = false;
        }
        let cpu = self.tasks[tid].cpu;
        self.update_min_vruntime(cpu);
        let slot = &mut self.tasks[tid];
        slot.vruntime = if std::mem::take(&mut slot.new) {
            self.mm.sched.min_vruntime[cpu]
        } else {
            self.mm.sched.woken_vruntime(slot.vruntime, slot.ran_on, cpu)
        };
        let v = slot.vruntime;
        self.enqueue(cpu, tid);
        // check_preempt_wakeup against the task running there (it gives way at the end of its
        // step; a kswapd woken by the running step itself was decided inside the step).
        if let Some(curr) = self.curr_vruntime(cpu) {
            if sched::wakeup_preempts(curr, v, self.cpus.len()) {
                self.mm.sched.need_resched[cpu] = true;
            }
        }
        self.update_busy(cpu);
        self.dispatch(cpu);
    }

    /// The vruntime of the task running on `cpu` now (update_curr): its vruntime when the step
    /// began plus the step's CPU time that has passed.
    fn curr_vruntime(&self, cpu: usize) -> Option<u64> {
        self.cpus[cpu].current.map(|t| self.tasks[t].vruntime + (self.now - self.cpus[cpu].step_start))
    }

    /// Position in `cpu`'s run queue of the task that runs next (__pick_first_entity).
    fn leftmost(&self, cpu: usize) -> Option<usize> {
        let rq = &self.cpus[cpu].runqueue;
        (0..rq.len()).min_by_key(|&i| (self.tasks[rq[i]].vruntime, i))
    }

    /// update_min_vruntime: the smaller of the running task's and the leftmost waiting task's
    /// vruntime, never going back.
    fn update_min_vruntime(&mut self, cpu: usize) {
        let left = self.leftmost(cpu).map(|i| self.tasks[self.cpus[cpu].runqueue[i]].vruntime);
        let v = match (self.curr_vruntime(cpu), left) {
            (Some(c), Some(l)) => c.min(l),
            (Some(c), None) => c,
            (None, Some(l)) => l,
            (None, None) => return,
        };
        let m = &mut self.mm.sched.min_vruntime[cpu];
        *m = (*m).max(v);
    }

    /// Tells the memory manager's view of the scheduler whether `cpu` has work.
    fn update_busy(&mut self, cpu: usize) {
        self.mm.sched.busy[cpu] = self.cpus[cpu].current.is_some() || !self.cpus[cpu].runqueue.is_empty();
    }

    /// Puts runnable task `tid` at the end of `cpu`'s run queue.
    fn enqueue(&mut self, cpu: usize, tid: TaskId) {
        self.tasks[tid].queued_at = self.now;
        self.cpus[cpu].runqueue.push_back(tid);
    }

    fn dispatch(&mut self, cpu: usize) {
        if self.cpus[cpu].current.is_some() {
            return;
        }
        if let Some(i) = self.leftmost(cpu) {
            let tid = self.cpus[cpu].runqueue.remove(i).expect("a queued task");
            if self.kswapd_node(tid).is_some() {
                self.times.kswapd_wait_ns += self.now - self.tasks[tid].queued_at;
            }
            self.tasks[tid].slice_start = self.now;
            self.run_step(cpu, tid);
        }
        self.update_busy(cpu);
    }

    fn run_step(&mut self, cpu: usize, tid: TaskId) {
        self.cpus[cpu].current = Some(tid);
        self.cpus[cpu].step_start = self.now;
        self.update_min_vruntime(cpu);
        self.mm.sched.curr_vruntime[cpu] = self.tasks[tid].vruntime;
        self.tasks[tid].ran_on = cpu;
        self.tasks[tid].state = TaskState::Running;
        self.tasks[tid].step_started = self.events_processed;
        if self.tasks[tid].task.is_workload() {
            self.last_workload_step = self.now;
        }
        self.mm.now_ns = self.now;
        self.mm.sched.current_cpu = cpu;
        self.mm.sched.current_pid = tid as u32;
        self.mm.sched.need_resched[cpu] = false;
        self.mm.sched.busy[cpu] = true;
        if let Some(after) = self.tasks[tid].deferred.take() {
            // Back from the sleep its last step owed: it now blocks, waits or exits as that
            // step said, without running again (prepare_to_wait happens now).
            self.tasks[tid].after = after;
            self.queue.push(self.now, Event::CpuDone(cpu));
            return;
        }
        let timed_out = std::mem::take(&mut self.tasks[tid].timed_out);
        // Back from get_request_wait: the bio the task slept holding gets its request.
        self.mm.woken_for_request();
        // A task back from the allocator's wait continues that allocation at rebalance, in
        // this step only.
        self.mm.arm_alloc_rebalance(tid as u32);
        // Kernel work left half done by a sleep inside the allocator is finished first; if it
        // has to sleep again, that is all the step does.
        let mut step = if self.mm.resume_kernel_work(cpu) {
            Step { user_ns: 0, system_ns: 0, after: After::Continue }
        } else {
            let mut cx = TaskCx { now: self.now, cpu, tid, mm: &mut self.mm, rng: &mut self.rng, timed_out };
            self.tasks[tid].task.step(&mut cx)
        };
        self.mm.disarm_alloc_rebalance();
        if self.mm.holds_granted_bio() {
            self.mm.submit_held_bio();
        }
        debug_assert!(self.mm.plug.is_none(), "{} ended a step with its block plug still open", self.tasks[tid].task.name());
        // A writer that found its device's requests used up sleeps in get_request_wait, unless
        // it owes another sleep first.
        if let Some(wq) = self.mm.rq_wait_owed {
            if self.mm.owes_request_wait() && step.after == After::Continue {
                step.after = After::Wait(wq);
            } else {
                self.mm.request_sleep_cancelled();
            }
            self.mm.rq_wait_owed = None;
        }
        // Sleeps the step asked for inside the kernel (congestion_wait, dirty throttling) follow
        // its CPU time; the memory manager already ended each at its tick.
        let mut debt = std::mem::take(&mut self.mm.sleep_ns);
        // A step that slept inside the kernel and then met a page under I/O (a read whose
        // readahead allocation stalled, say) sleeps first; the wait on the page comes after,
        // so the task's next step looks at the page again, as after any early wakeup.
        // A step that ends by blocking, on a timed wait or by exiting does that after the
        // sleep it owes.
        let defers = matches!(step.after, After::Block | After::WaitTimeout(..) | After::WaitTimeoutExact(..) | After::Exit);
        if defers && (debt > 0 || self.mm.congestion_sleep.is_some()) {
            self.tasks[tid].deferred = Some(step.after);
            step.after = After::Continue;
        }
        let waits_after = matches!(step.after, After::Wait(_));
        match self.mm.congestion_sleep.take() {
            Some((ns, site)) if debt == 0 && (step.after == After::Continue || waits_after) => {
                // congestion_wait: on congestion_wqh until a freed request or the timeout.
                step.after = After::WaitTimeoutExact(self.mm.congestion_wqh, ns);
                self.tasks[tid].congestion = Some((site, 0));
            }
            Some((ns, site)) => {
                // Behind another sleep: the whole timeout, as before the wakeups.
                self.mm.congestion_wait_ns[site as usize] += ns;
                debt += ns;
            }
            None => {}
        }
        if debt > 0 {
            step.after = match step.after {
                After::Continue => After::SleepExact(debt),
                After::Sleep(ns) => After::Sleep(ns + debt),
                After::SleepExact(ns) => After::SleepExact(ns + debt),
                After::Wait(_) => After::SleepExact(debt),
                other => unreachable!("{other:?} is deferred behind the sleep"),
            };
        }
        let system = step.system_ns + self.mm.take_cost();
        let done = self.now + step.user_ns + system;
        if self.tasks[tid].task.is_workload() {
            self.times.user_ns += step.user_ns;
            self.times.system_ns += system;
        } else if self.kswapd_node(tid).is_some() {
            self.times.kswapd_ns += step.user_ns + system;
        } else {
            self.times.others_ns += step.user_ns + system;
        }
        self.tasks[tid].after = step.after;
        self.queue.push(done, Event::CpuDone(cpu));
        // Waiters become runnable when the waker's step has run (its CPU time has passed).
        self.flush_mm_requests(done, Some(cpu));
    }

    /// Carries out what the memory manager asked for during an event: wait queue wakeups (at
    /// `at`), device dispatches, kswapd wakeups (now, on the CPU the scheduler picks; `waker`
    /// is the CPU whose step asked, None from an interrupt).
    fn flush_mm_requests(&mut self, at: SimTime, waker: Option<usize>) {
        while let Some(wq) = self.mm.wakeups.pop() {
            self.wake_queue(wq, at, self.exclusive[wq]);
        }
        for (wq, tid) in std::mem::take(&mut self.mm.task_wakeups) {
            self.last_woken[wq] = Some(self.events_processed);
            let gen = self.tasks[tid].gen;
            if let Some(k) = self.wait_queues[wq].iter().position(|&(w, g)| w == tid && g == gen) {
                self.wait_queues[wq].remove(k);
                self.queue.push(at, Event::Wake(tid, gen));
            }
        }
        while let Some((t, dev)) = self.mm.io_timers.pop() {
            self.queue.push(t, Event::IoDone(dev));
        }
        while let Some((t, dev)) = self.mm.unplug_timers.pop() {
            self.queue.push(t, Event::Unplug(dev));
        }
        while let Some((t, dev)) = self.mm.bw_timers.pop() {
            self.queue.push(t, Event::BwUpdate(dev));
        }
        while let Some(nid) = self.mm.kswapd_wakeups.pop() {
            let k = self.kswapd[nid];
            if self.tasks[k].state == TaskState::Blocked && self.mm.sched.kswapd_sleeping[nid] {
                self.tasks[k].cpu = self.mm.sched.select_cpu(self.tasks[k].cpu, &self.mm.sched.kswapd_cpus[nid], waker);
                self.mm.cost_ns += self.mm.costs.wakeup_ns;
                self.queue.push(self.now, Event::Wake(k, self.tasks[k].gen));
            }
        }
    }

    /// Wakes the waiters of `wq` at `at`: every one, or with `one` the longest waiter that is
    /// still asleep there (entries of tasks woken otherwise meanwhile are dropped on the way).
    fn wake_queue(&mut self, wq: WaitQueueId, at: SimTime, one: bool) {
        self.last_woken[wq] = Some(self.events_processed);
        while let Some((w, gen)) = self.wait_queues[wq].pop_front() {
            let live = self.tasks[w].gen == gen && self.tasks[w].state == TaskState::Blocked;
            self.queue.push(at, Event::Wake(w, gen));
            if live && one {
                break;
            }
        }
    }

    fn cpu_done(&mut self, cpu: usize) {
        let tid = self.cpus[cpu].current.expect("a CPU finished a step it was not running");
        let step_start = self.cpus[cpu].step_start;
        self.update_min_vruntime(cpu);
        self.tasks[tid].vruntime += self.now - step_start;
        self.cpus[cpu].current = None;
        if let After::Wait(wq) | After::WaitTimeout(wq, _) = self.tasks[tid].after {
            if self.last_woken[wq].is_some_and(|e| e > self.tasks[tid].step_started) {
                // Woken while the step ran: the condition it waits for may already hold.
                self.tasks[tid].after = After::Continue;
            }
        }
        match self.tasks[tid].after {
            After::Continue => {
                // CFS: the task keeps its CPU until a task woken during the step preempts it
                // (check_preempt_wakeup) or a tick during the step finds it past its slice
                // (check_preempt_tick); then the leftmost task runs, which may be itself.
                let preempted = std::mem::take(&mut self.mm.sched.need_resched[cpu]);
                let ticked = self.mm.sched.jiffies_at(step_start) != self.mm.sched.jiffies_at(self.now);
                let tick = ticked
                    && self.leftmost(cpu).is_some_and(|i| {
                        let left = self.tasks[self.cpus[cpu].runqueue[i]].vruntime;
                        let nr_running = self.cpus[cpu].runqueue.len() + 1;
                        sched::tick_preempts(self.cpus.len(), nr_running, self.now - self.tasks[tid].slice_start, self.tasks[tid].vruntime, left)
                    });
                if self.cpus[cpu].runqueue.is_empty() || !(preempted || tick) {
                    self.run_step(cpu, tid);
                    return;
                }
                self.tasks[tid].state = TaskState::Runnable;
                self.enqueue(cpu, tid);
            }
            After::Sleep(ns) | After::SleepExact(ns) => {
                // A kernel timeout ends at a tick, an exact sleep on time.
                let at = match self.tasks[tid].after {
                    After::Sleep(_) => self.mm.sched.timer_expiry(self.now, ns),
                    _ => self.now + ns,
                };
                let slot = &mut self.tasks[tid];
                slot.state = TaskState::Sleeping;
                slot.gen += 1;
                self.queue.push(at, Event::Wake(tid, slot.gen));
            }
            After::Wait(wq) => {
                let slot = &mut self.tasks[tid];
                slot.state = TaskState::Blocked;
                slot.gen += 1;
                self.wait_queues[wq].push_back((tid, slot.gen));
                self.note_wait(tid, wq);
            }
            After::WaitTimeoutExact(wq, ns) => {
                // Not kswapd's idle sleep: wakeup_kswapd finds nobody on kswapd_wait.
                let slot = &mut self.tasks[tid];
                slot.state = TaskState::Blocked;
                slot.gen += 1;
                if let Some((site, _)) = slot.congestion {
                    slot.congestion = Some((site, self.now));
                }
                self.wait_queues[wq].push_back((tid, slot.gen));
                self.queue.push(self.now + ns, Event::Timeout(tid, slot.gen));
                self.note_wait(tid, wq);
            }
            After::WaitTimeout(wq, _) if self.is_kswapd_nap(tid, wq) && self.kswapd_asked_again(tid) => {
                self.kswapd_stays_awake(tid, cpu);
            }
            After::WaitTimeout(wq, ns) => {
                let at = self.mm.sched.timer_expiry(self.now, ns);
                let slot = &mut self.tasks[tid];
                slot.state = TaskState::Blocked;
                slot.gen += 1;
                self.wait_queues[wq].push_back((tid, slot.gen));
                self.queue.push(at, Event::Timeout(tid, slot.gen));
                self.note_wait(tid, wq);
                if self.is_kswapd_nap(tid, wq) {
                    self.kswapd_sleeps(tid);
                }
            }
            After::Block if self.kswapd_asked_again(tid) => self.kswapd_stays_awake(tid, cpu),
            After::Block => {
                self.tasks[tid].gen += 1;
                self.tasks[tid].state = TaskState::Blocked;
                self.kswapd_sleeps(tid);
            }
            After::Exit => {
                self.tasks[tid].state = TaskState::Exited;
                if self.tasks[tid].task.is_workload() {
                    self.live_workload -= 1;
                }
            }
        }
        self.update_busy(cpu);
        self.dispatch(cpu);
    }

    /// The node whose kswapd `tid` is, if it is one.
    fn kswapd_node(&self, tid: TaskId) -> Option<usize> {
        self.kswapd.iter().position(|&k| k == tid)
    }

    /// Whether `tid` is a kswapd and `wq` its HZ/10 nap's queue (kswapd_wait).
    fn is_kswapd_nap(&self, tid: TaskId, wq: WaitQueueId) -> bool {
        self.kswapd_node(tid).is_some_and(|nid| self.kswapd_nap[nid] == wq)
    }

    /// Whether `tid` is a kswapd that was asked for again while its last step ran. Going to
    /// sleep or to nap on kswapd_wait, it is on the queue before it looks (prepare_to_wait),
    /// so the next allocator's wakeup_kswapd would wake it at once; the twin's allocators do
    /// not repeat a request that is pending, so the engine does not let it sleep.
    fn kswapd_asked_again(&self, tid: TaskId) -> bool {
        self.kswapd_node(tid).is_some_and(|nid| self.mm.nodes[nid].kswapd_wait_pending)
    }

    /// Puts kswapd `tid` back on `cpu`'s run queue instead of the sleep its step asked for.
    fn kswapd_stays_awake(&mut self, tid: TaskId, cpu: usize) {
        self.tasks[tid].gen += 1;
        self.tasks[tid].state = TaskState::Runnable;
        self.enqueue(cpu, tid);
    }

    /// Marks kswapd `tid` as on kswapd_wait, where wakeup_kswapd finds it: its idle sleep
    /// (Block) or its HZ/10 nap. A kswapd waiting on another queue (6.x reclaim_throttle on
    /// the node's reclaim_wait) is not there, and only that queue's wakeup or its timeout ends
    /// the wait.
    fn kswapd_sleeps(&mut self, tid: TaskId) {
        if let Some(nid) = self.kswapd_node(tid) {
            self.mm.sched.kswapd_sleeping[nid] = true;
            self.mm.sched.kswapd_vruntime[nid] = self.tasks[tid].vruntime;
            self.mm.sched.kswapd_cpu[nid] = self.tasks[tid].ran_on;
        }
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Three CPUs: the flusher thread lives on the last one, out of the scripted tasks' way.
    fn sim() -> Sim {
        let text = "[scenario]\nname = \"t\"\n[machine]\nnodes = [{ id = 0, cpus = 3, memory = \"32M\" }]\nboot_reserved = \"1M\"\n[[kernel]]\nname = \"k\"\nprofile = \"linux-6.x\"\n[workload]\ntype = \"anon-churn\"\n";
        let cfg = crate::config::scenario::Scenario::parse(text).unwrap().resolve().remove(0);
        let mut s = Sim::new(Mm::boot(&cfg), 1, 1_000_000);
        // Ticks at whole jiffies from 0, so the scheduling tests can name tick times.
        s.mm.sched.tick_phase = 0;
        s
    }

    type Log = Rc<RefCell<Vec<(&'static str, SimTime)>>>;

    /// Runs its planned steps in order, logging when each starts; wakes `wake.1` on step `wake.0`.
    struct Scripted {
        name: &'static str,
        plan: Vec<Step>,
        step: usize,
        wake: Option<(usize, WaitQueueId)>,
        log: Log,
    }

    impl Task for Scripted {
        fn name(&self) -> &str {
            self.name
        }
        fn step(&mut self, cx: &mut TaskCx) -> Step {
            self.log.borrow_mut().push((self.name, cx.now));
            if let Some((n, wq)) = self.wake {
                if n == self.step {
                    cx.wake_up(wq);
                }
            }
            self.step += 1;
            self.plan.remove(0)
        }
    }

    fn run(ns: u64, after: After) -> Step {
        Step { user_ns: ns, system_ns: 0, after }
    }

    #[test]
    fn a_waiter_resumes_when_the_wakers_step_is_done_and_sleepers_on_time() {
        let mut s = sim();
        let wq = s.new_wait_queue();
        let log: Log = Rc::default();
        let waiter = Scripted { name: "waiter", plan: vec![run(10_000, After::Wait(wq)), run(1, After::Exit)], step: 0, wake: None, log: log.clone() };
        let waker = Scripted { name: "waker", plan: vec![run(0, After::SleepExact(1_000_000)), run(5_000, After::Exit)], step: 0, wake: Some((1, wq)), log: log.clone() };
        s.spawn(Box::new(waiter), 0);
        s.spawn(Box::new(waker), 1);
        s.run(&mut |_| {}).unwrap();
        let l = log.borrow().clone();
        assert_eq!(l, vec![("waiter", 0), ("waker", 0), ("waker", 1_000_000), ("waiter", 1_005_000)]);
        assert_eq!(s.times.user_ns, 10_000 + 5_000 + 1);
    }

    #[test]
    fn a_freed_request_wakes_only_the_longest_waiter_for_one() {
        // Two tasks sleep on the disk's request wait queue (get_request_wait's exclusive
        // wait), the second after the first; a waker stands in for a request freed 1 ms later
        // and another 1 ms after that. Each wakes one waiter, the one asleep longest.
        let mut s = sim();
        let rq = s.mm.bdevs[0].rq_wait[crate::block::Pool::Async as usize];
        let log: Log = Rc::default();
        let first = Scripted { name: "first", plan: vec![run(1_000, After::Wait(rq)), run(1, After::Exit)], step: 0, wake: None, log: log.clone() };
        let second = Scripted { name: "second", plan: vec![run(2_000, After::Wait(rq)), run(1, After::Exit)], step: 0, wake: None, log: log.clone() };
        let plan = vec![run(0, After::SleepExact(1_000_000)), run(0, After::SleepExact(1_000_000)), run(0, After::Exit)];
        let waker = Scripted { name: "waker", plan, step: 0, wake: None, log: log.clone() };
        s.spawn(Box::new(second), 1);
        s.spawn(Box::new(first), 0);
        struct Freer(Scripted, WaitQueueId);
        impl Task for Freer {
            fn name(&self) -> &str {
                self.0.name
            }
            fn step(&mut self, cx: &mut TaskCx) -> Step {
                if self.0.step > 0 {
                    cx.wake_up(self.1);
                }
                self.0.step(cx)
            }
        }
        s.spawn(Box::new(Freer(waker, rq)), 2);
        s.run(&mut |_| {}).unwrap();
        let l = log.borrow().clone();
        let resumed: Vec<_> = l.iter().filter(|e| e.0 != "waker").skip(2).copied().collect();
        // (The waker's CPU is the flusher's, which runs first at boot: it starts at 1 µs.)
        assert_eq!(resumed, vec![("first", 1_001_000), ("second", 2_001_000)], "{l:?}");
        // The wait accounting: two waits for requests by the benchmark's tasks, from the ends
        // of their first steps (1 µs and 2 µs) to their wakeups.
        assert_eq!(s.waits.count[Waiter::Benchmark as usize], [2, 0, 0]);
        assert_eq!(s.waits.ns[Waiter::Benchmark as usize][0], (1_001_000 - 1_000) + (2_001_000 - 2_000));
        assert_eq!(s.waits.count[Waiter::Kswapd as usize], [0, 0, 0]);
    }

    /// Calls congestion_wait(HZ/50) in its first step, logs when it runs again, exits.
    struct CongestionWaiter {
        step: usize,
        log: Log,
    }

    impl Task for CongestionWaiter {
        fn name(&self) -> &str {
            "waiter"
        }
        fn step(&mut self, cx: &mut TaskCx) -> Step {
            self.log.borrow_mut().push(("waiter", cx.now));
            self.step += 1;
            if self.step == 1 {
                cx.mm.congestion_wait(20_000_000);
                return run(1_000, After::Continue);
            }
            run(1, After::Exit)
        }
    }

    #[test]
    fn congestion_wait_ends_at_a_wakeup_of_congestion_wqh_or_at_its_tick() {
        let waited = |wake_at: Option<u64>| {
            let mut s = sim();
            let log: Log = Rc::default();
            s.spawn(Box::new(CongestionWaiter { step: 0, log: log.clone() }), 0);
            if let Some(t) = wake_at {
                // Stands in for a write request freed at `t` (blk_complete's wakeup).
                let wqh = s.mm.congestion_wqh;
                let waker = Scripted { name: "waker", plan: vec![run(0, After::SleepExact(t)), run(0, After::Exit)], step: 0, wake: Some((1, wqh)), log: log.clone() };
                s.spawn(Box::new(waker), 1);
            }
            s.run(&mut |_| {}).unwrap();
            let l = log.borrow().clone();
            let resumed = l.iter().filter(|e| e.0 == "waiter").nth(1).unwrap().1;
            (resumed, s.mm.congestion_waits[0], s.mm.congestion_wait_ns[0])
        };
        // Nothing freed: five jiffies, ended at the tick (20 ms after the call at 0), slept
        // after the step's CPU time, as every sleep a step owes.
        assert_eq!(waited(None), (20_001_000, 1, 20_000_000));
        // A request freed at 3 ms ends it then; the time slept is counted from the step's end.
        assert_eq!(waited(Some(3_000_000)), (3_000_000, 1, 3_000_000 - 1_000));
    }

    /// Stalls in congestion_wait(HZ/50) in its first step and then meets a page under I/O
    /// (ends the step on `page`'s wait queue), as a reader whose readahead allocation stalled;
    /// logs each step and exits on the second.
    struct StalledReader {
        step: usize,
        page: WaitQueueId,
        log: Log,
    }

    impl Task for StalledReader {
        fn name(&self) -> &str {
            "reader"
        }
        fn step(&mut self, cx: &mut TaskCx) -> Step {
            self.log.borrow_mut().push(("reader", cx.now));
            self.step += 1;
            if self.step == 1 {
                cx.mm.congestion_wait(20_000_000);
                return run(1_000, After::Wait(self.page));
            }
            run(1, After::Exit)
        }
    }

    /// Owes `owed` ns of kernel sleep after its first step, which ends with `after`; logs
    /// each step; its second step exits.
    struct Owes {
        owed: u64,
        after: After,
        steps: u32,
        log: Log,
    }

    impl Task for Owes {
        fn name(&self) -> &str {
            "owes"
        }
        fn step(&mut self, cx: &mut TaskCx) -> Step {
            self.log.borrow_mut().push(("owes", cx.now));
            self.steps += 1;
            if self.steps == 1 {
                cx.mm.sleep_ns += self.owed;
                return run(1_000, self.after);
            }
            run(1, After::Exit)
        }
    }

    #[test]
    fn a_step_that_owes_a_sleep_and_then_exits_or_waits_sleeps_first() {
        // Exit: the task leaves after the sleep, not before.
        let log: Log = Rc::new(RefCell::new(Vec::new()));
        let mut s = sim();
        s.spawn(Box::new(Owes { owed: 5_000_000, after: After::Exit, steps: 0, log: log.clone() }), 0);
        s.run(&mut |_| {}).unwrap();
        assert_eq!(log.borrow().len(), 1, "the task did not run again: {:?}", log.borrow());
        assert_eq!(s.now, 5_001_000);
        // A timed wait (schedule_timeout of 1 ms, ended at a tick): after the 5 ms sleep.
        let log: Log = Rc::new(RefCell::new(Vec::new()));
        let mut s = sim();
        let wq = s.new_wait_queue();
        s.spawn(Box::new(Owes { owed: 5_000_000, after: After::WaitTimeout(wq, 1_000_000), steps: 0, log: log.clone() }), 0);
        s.run(&mut |_| {}).unwrap();
        let second = log.borrow()[1].1;
        assert!((6_001_000..=9_001_000).contains(&second), "the second step began at {second} ns");
    }

    #[test]
    fn a_workload_left_waiting_with_nothing_to_wake_it_ends_the_run_as_hung() {
        let text = "[scenario]\nname = \"t\"\n[machine]\nnodes = [{ id = 0, cpus = 3, memory = \"32M\" }]\nboot_reserved = \"1M\"\n[[kernel]]\nname = \"k\"\nprofile = \"linux-6.x\"\n[workload]\ntype = \"anon-churn\"\n";
        let cfg = crate::config::scenario::Scenario::parse(text).unwrap().resolve().remove(0);
        // Samples every 10 s: the watchdog looks at each.
        let mut s = Sim::new(Mm::boot(&cfg), 1, 10_000_000_000);
        let wq = s.new_wait_queue();
        let log: Log = Rc::new(RefCell::new(Vec::new()));
        let lost = Scripted { name: "lost", plan: vec![run(1_000, After::Wait(wq)), run(1, After::Exit)], step: 0, wake: None, log: log.clone() };
        s.spawn(Box::new(lost), 0);
        let err = s.run(&mut |_| {}).unwrap_err();
        let SimError::Hung { at_ns, tasks } = &err;
        assert!(*at_ns >= HUNG_RUN_NS && *at_ns <= HUNG_RUN_NS + 10_000_000_001, "declared hung at {at_ns} ns");
        assert_eq!(tasks, &vec![format!("lost on wait queue {wq}")]);
        assert!(err.to_string().contains("no workload task ran for 1200 s"), "{err}");
        // A task that sleeps on a timer for longer is not hung.
        let mut s = Sim::new(Mm::boot(&cfg), 1, 10_000_000_000);
        let sleeper = Scripted { name: "sleeper", plan: vec![run(1_000, After::SleepExact(2 * HUNG_RUN_NS)), run(1, After::Exit)], step: 0, wake: None, log: log.clone() };
        s.spawn(Box::new(sleeper), 0);
        s.run(&mut |_| {}).unwrap();
        assert!(s.now >= 2 * HUNG_RUN_NS);
    }

    #[test]
    fn a_step_that_stalled_in_the_kernel_sleeps_before_its_wait_on_a_page() {
        // The page's read completes at 2 ms, during the stall: the reader sleeps its whole
        // stall (to the tick at 20 ms, nothing written frees a request), then looks at the page
        // again. Before session 19 the stall was counted but not slept: the reader ran at 2 ms.
        let mut s = sim();
        let page = s.new_wait_queue();
        let log: Log = Rc::default();
        s.spawn(Box::new(StalledReader { step: 0, page, log: log.clone() }), 0);
        let io = Scripted { name: "io", plan: vec![run(0, After::SleepExact(2_000_000)), run(0, After::Exit)], step: 0, wake: Some((1, page)), log: log.clone() };
        s.spawn(Box::new(io), 1);
        s.run(&mut |_| {}).unwrap();
        let reader: Vec<SimTime> = log.borrow().iter().filter(|e| e.0 == "reader").map(|e| e.1).collect();
        assert_eq!(reader[1], 20_001_000);
        assert_eq!((s.mm.congestion_waits[0], s.mm.congestion_wait_ns[0]), (1, 20_000_000));
    }

    #[test]
    fn a_kernel_timeout_ends_at_a_tick_and_a_nanosleep_on_time() {
        // Ticks 1 ms into every 4 ms jiffy. A task sleeps 10 ms (3 jiffies rounded up) in the
        // kernel at 6 ms, a second one on an exact timer.
        let at = |after: After| {
            let mut s = sim();
            s.mm.sched.tick_phase = 1_000_000;
            let log: Log = Rc::default();
            let t = Scripted { name: "t", plan: vec![run(6_000_000, after), run(1, After::Exit)], step: 0, wake: None, log: log.clone() };
            s.spawn(Box::new(t), 0);
            s.run(&mut |_| {}).unwrap();
            let l = log.borrow().clone();
            l[1].1
        };
        // The last tick was at 5 ms: the timer fires at the third tick after it, 17 ms.
        assert_eq!(at(After::Sleep(10_000_000)), 17_000_000);
        assert_eq!(at(After::SleepExact(10_000_000)), 16_000_000);
        // A one-jiffy timeout set 1 ms after a tick ends at the next tick, 3 ms later.
        assert_eq!(at(After::Sleep(1)), 9_000_000);
    }

    /// Wakes kswapd from a task's step (as wakeup_kswapd does), with `busy` other CPUs running a
    /// 5 ms step; returns how long kswapd waited for a CPU.
    fn kswapd_wait_with(busy: usize) -> u64 {
        /// Runs 1 µs (the others are on their CPUs by then), then wakes kswapd and runs 5 ms.
        struct Waker(bool);
        impl Task for Waker {
            fn name(&self) -> &str {
                "waker"
            }
            fn step(&mut self, cx: &mut TaskCx) -> Step {
                if !std::mem::replace(&mut self.0, true) {
                    return run(1_000, After::Continue);
                }
                cx.mm.kswapd_wakeups.push(0);
                run(5_000_000, After::Exit)
            }
        }
        let mut s = sim();
        let log: Log = Rc::default();
        s.spawn(Box::new(Waker(false)), 0);
        for cpu in 1..=busy {
            s.spawn(Box::new(Scripted { name: "busy", plan: vec![run(5_000_000, After::Exit)], step: 0, wake: None, log: log.clone() }), cpu);
        }
        s.run(&mut |_| {}).unwrap();
        s.times.kswapd_wait_ns
    }

    #[test]
    fn a_kswapd_asked_for_again_while_its_last_pass_ran_does_not_nap() {
        // An allocator asks for kswapd every microsecond for 40 µs: kswapd wakes, balances the
        // (balanced) node in two short steps and goes to nap while a request is pending. It is
        // on kswapd_wait before it looks, so the next request ends the nap at once and it
        // balances again; the twin's allocators do not repeat a pending request, so the nap
        // ends at once by itself. Before session 35 it napped the whole HZ/10.
        use crate::mm::vmstat::VmStat;
        struct Asker(u32);
        impl Task for Asker {
            fn name(&self) -> &str {
                "asker"
            }
            fn step(&mut self, cx: &mut TaskCx) -> Step {
                self.0 += 1;
                if self.0 <= 40 {
                    cx.mm.wakeup_kswapd(0, 0, crate::mm::mmzone::ZoneType::Dma32 as usize);
                    return run(1_000, After::Continue);
                }
                if self.0 == 41 {
                    return run(0, After::SleepExact(50_000_000));
                }
                // At 50 ms, before any HZ/10 nap could have run out.
                assert!(cx.mm.events.get(VmStat::KswapdLowWmarkHitQuickly) >= 1, "the nap ended early");
                assert!(cx.mm.events.get(VmStat::Pageoutrun) >= 2, "kswapd balanced again");
                run(0, After::Exit)
            }
        }
        let mut s = sim();
        s.spawn(Box::new(Asker(0)), 0);
        s.run(&mut |_| {}).unwrap();
    }

    #[test]
    fn wakeup_kswapd_does_not_end_kswapds_reclaim_throttle_wait() {
        // Node 0's kswapd (scripted) is asked for at 0, takes the request and waits on the
        // node's reclaim_wait for writeback, HZ/10 at most (6.x reclaim_throttle). A second
        // request at 10 ms finds nobody on kswapd_wait (wakeup_kswapd's waitqueue_active), so
        // kswapd runs again only when its timeout ends, at the first tick 100 ms after the wait
        // began. Before session 36 the request woke it at 10 ms.
        struct Throttled {
            steps: u32,
            log: Log,
        }
        impl Task for Throttled {
            fn name(&self) -> &str {
                "kswapd0"
            }
            fn step(&mut self, cx: &mut TaskCx) -> Step {
                self.log.borrow_mut().push(("kswapd", cx.now));
                self.steps += 1;
                cx.mm.nodes[0].kswapd_wait_pending = false;
                if self.steps == 1 {
                    return run(1_000, After::WaitTimeout(cx.mm.nodes[0].reclaim_wait_writeback, crate::mm::vmscan::HZ_10_NS));
                }
                run(0, After::Block)
            }
        }
        // Asks for node 0's kswapd at 0 and at 10 ms, then exits at 160 ms.
        struct Asker(u32);
        impl Task for Asker {
            fn name(&self) -> &str {
                "asker"
            }
            fn step(&mut self, cx: &mut TaskCx) -> Step {
                self.0 += 1;
                if self.0 > 2 {
                    return run(0, After::Exit);
                }
                cx.mm.wakeup_kswapd(0, 0, crate::mm::mmzone::ZoneType::Dma32 as usize);
                run(1_000, After::SleepExact(if self.0 == 1 { 10_000_000 } else { 150_000_000 }))
            }
        }
        let mut s = sim();
        let log: Log = Rc::default();
        let k = s.kswapd[0];
        s.tasks[k].task = Box::new(Throttled { steps: 0, log: log.clone() });
        s.spawn(Box::new(Asker(0)), 0);
        s.run(&mut |_| {}).unwrap();
        let l = log.borrow().clone();
        assert_eq!(l.len(), 2, "kswapd ran twice: {l:?}");
        let (first, second) = (l[0].1, l[1].1);
        assert!(first < 1_000_000, "the first request woke kswapd at once: {l:?}");
        let end = s.mm.sched.timer_expiry(first + 1_000, crate::mm::vmscan::HZ_10_NS);
        assert_eq!(second, end, "kswapd slept its throttle out: {l:?}");
    }

    #[test]
    fn kswapd_waits_for_a_cpu_only_when_none_of_its_node_is_idle() {
        // An idle CPU: kswapd runs at once. All three busy: it queues behind its waker's 5 ms
        // step.
        assert_eq!(kswapd_wait_with(1), 0);
        assert_eq!(kswapd_wait_with(2), 5_000_000);
    }

    /// Task "b" runs `b_runs` ns, sleeps until 3 ms, then runs 1 µs; "a" runs 1 ms steps on the
    /// same CPU meanwhile. Returns when "b" got its CPU back.
    fn sleeper_back_at(b_runs: u64) -> SimTime {
        let mut s = sim();
        let log: Log = Rc::default();
        let b = Scripted { name: "b", plan: vec![run(b_runs, After::SleepExact(3_000_000 - b_runs)), run(1_000, After::Exit)], step: 0, wake: None, log: log.clone() };
        let mut plan = vec![run(1_000_000, After::Continue); 20];
        plan.push(run(1, After::Exit));
        let a = Scripted { name: "a", plan, step: 0, wake: None, log: log.clone() };
        s.spawn(Box::new(b), 0);
        s.spawn(Box::new(a), 0);
        s.run(&mut |_| {}).unwrap();
        let l = log.borrow().clone();
        l.iter().filter(|e| e.0 == "b").nth(1).expect("b ran twice").1
    }

    #[test]
    fn a_woken_task_preempts_only_when_it_lags_by_more_than_the_wakeup_granularity() {
        // Three CPUs: wakeup granularity 2 ms, slice 6 ms for two tasks. Having run nothing,
        // "b" lags "a" by 3 ms when it wakes and takes the CPU at the end of a's step.
        assert_eq!(sleeper_back_at(0), 3_000_000);
        // Having run 2.5 ms, it is ahead of "a" (which started at 2.5 ms) and waits until the
        // tick at 12 ms finds "a" past its slice, at the end of a's step then.
        assert_eq!(sleeper_back_at(2_500_000), 12_500_000);
    }

    /// Runs two tasks "a" and "b" with the same plan on CPU 0; returns who started when.
    fn turns(plan: Vec<Step>) -> Vec<(&'static str, SimTime)> {
        let mut s = sim();
        let log: Log = Rc::default();
        for name in ["a", "b"] {
            s.spawn(Box::new(Scripted { name, plan: plan.clone(), step: 0, wake: None, log: log.clone() }), 0);
        }
        s.run(&mut |_| {}).unwrap();
        let l = log.borrow().clone();
        l
    }

    #[test]
    fn tasks_on_one_cpu_take_turns_when_their_slice_is_used() {
        // Three CPUs: sched_latency 6 ms × (1 + ilog2 3) = 12 ms, 6 ms each for two tasks.
        let c = After::Continue;
        assert_eq!(turns(vec![run(100, c), run(100, c), run(100, After::Exit)]), vec![("a", 0), ("a", 100), ("a", 200), ("b", 300), ("b", 400), ("b", 500)]);
        assert_eq!(turns(vec![run(4_000_000, c), run(4_000_000, After::Exit)]), vec![("a", 0), ("a", 4_000_000), ("b", 8_000_000), ("b", 12_000_000)]);
        assert_eq!(turns(vec![run(7_000_000, c), run(1, After::Exit)]), vec![("a", 0), ("b", 7_000_000), ("a", 14_000_000), ("b", 14_000_001)]);
    }
}
