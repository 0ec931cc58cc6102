//! The event engine: simulated time in integer nanoseconds, an event queue ordered by
//! (time, sequence), CPUs grouped into nodes, tasks as state machines that run for a cost, sleep,
//! block until woken, or exit, and the one seeded PRNG of the run.
//!
//! A task's `step` does a piece of work against the memory manager and says how much CPU time it
//! took (user and system) and what the task does next. The engine keeps each CPU busy for that
//! long, round-robins the CPU's runnable tasks at step boundaries, wakes kswapd when the allocator
//! asked for it, and samples /proc/vmstat at a fixed interval.

pub mod cost;
pub mod queue;
pub mod rng;

use std::collections::VecDeque;

use crate::mm::vmscan::Kswapd;
use crate::mm::vmstat::NR_VMSTAT_ITEMS;
use crate::mm::Mm;
use queue::{EventQueue, SimTime};
use rng::Rng;

/// Index of a task in the simulation.
pub type TaskId = usize;

/// What a task does after the CPU time of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Stay runnable (other runnable tasks on the CPU go first).
    Continue,
    /// Sleep for this many ns.
    Sleep(SimTime),
    /// Sleep until woken.
    Block,
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
}

#[derive(Default)]
struct Cpu {
    current: Option<TaskId>,
    runqueue: VecDeque<TaskId>,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The step running on this CPU has used its time.
    CpuDone(usize),
    /// Make a sleeping or blocked task runnable.
    Wake(TaskId),
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

/// CPU time accounting of a run, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub system_ns: u64,
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
    live_workload: usize,
    sample_interval: SimTime,
    /// vmstat samples (time, full snapshot).
    pub samples: Vec<(SimTime, Box<[i64; NR_VMSTAT_ITEMS]>)>,
    pub times: CpuTimes,
    /// /proc dumps taken at the times asked for.
    pub dumps: Vec<ProcDump>,
    /// Events processed (for speed figures).
    pub events_processed: u64,
    /// Run the invariant checkers after every event.
    pub check_invariants: bool,
}

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
            live_workload: 0,
            sample_interval,
            samples: Vec::new(),
            times: CpuTimes::default(),
            dumps: Vec::new(),
            events_processed: 0,
            check_invariants: cfg!(any(debug_assertions, feature = "checkers")),
        };
        for nid in 0..sim.mm.nodes.len() {
            let cpu = sim.mm.nodes[nid].cpus[0];
            let tid = sim.spawn_blocked(Box::new(Kswapd::new(nid)), cpu);
            sim.kswapd.push(tid);
        }
        sim
    }

    fn spawn_blocked(&mut self, task: Box<dyn Task>, cpu: usize) -> TaskId {
        let tid = self.tasks.len();
        self.tasks.push(TaskSlot { task, cpu, state: TaskState::Blocked, after: After::Block });
        tid
    }

    /// Adds a runnable task bound to `cpu`.
    pub fn spawn(&mut self, task: Box<dyn Task>, cpu: usize) -> TaskId {
        assert!(cpu < self.cpus.len(), "cpu {cpu} does not exist");
        if task.is_workload() {
            self.live_workload += 1;
        }
        let tid = self.tasks.len();
        self.tasks.push(TaskSlot { task, cpu, state: TaskState::Sleeping, after: After::Continue });
        self.queue.push(self.now, Event::Wake(tid));
        tid
    }

    /// Runs until every workload task has exited (or nothing is left to happen), calling
    /// `progress` with the simulated time at each sample.
    pub fn run(&mut self, progress: &mut dyn FnMut(SimTime)) {
        self.queue.push(self.now, Event::Sample);
        while let Some((t, ev)) = self.queue.pop() {
            debug_assert!(t >= self.now, "time went backwards");
            self.now = t;
            self.events_processed += 1;
            match ev {
                Event::CpuDone(cpu) => self.cpu_done(cpu),
                Event::Wake(tid) => self.wake(tid),
                Event::Dump => self.dump(),
                Event::Sample => {
                    self.sample();
                    progress(self.now);
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
    }

    fn wake(&mut self, tid: TaskId) {
        let slot = &mut self.tasks[tid];
        if !matches!(slot.state, TaskState::Sleeping | TaskState::Blocked) {
            return;
        }
        slot.state = TaskState::Runnable;
        let cpu = slot.cpu;
        self.cpus[cpu].runqueue.push_back(tid);
        self.dispatch(cpu);
    }

    fn dispatch(&mut self, cpu: usize) {
        if self.cpus[cpu].current.is_some() {
            return;
        }
        if let Some(tid) = self.cpus[cpu].runqueue.pop_front() {
            self.run_step(cpu, tid);
        }
    }

    fn run_step(&mut self, cpu: usize, tid: TaskId) {
        self.cpus[cpu].current = Some(tid);
        self.tasks[tid].state = TaskState::Running;
        let step = {
            let mut cx = TaskCx { now: self.now, cpu, tid, mm: &mut self.mm, rng: &mut self.rng };
            self.tasks[tid].task.step(&mut cx)
        };
        let system = step.system_ns + self.mm.take_cost();
        self.times.user_ns += step.user_ns;
        self.times.system_ns += system;
        self.tasks[tid].after = step.after;
        self.queue.push(self.now + step.user_ns + system, Event::CpuDone(cpu));
        while let Some(nid) = self.mm.kswapd_wakeups.pop() {
            let k = self.kswapd[nid];
            if self.tasks[k].state == TaskState::Blocked {
                self.mm.cost_ns += self.mm.costs.wakeup_ns;
                self.queue.push(self.now, Event::Wake(k));
            }
        }
    }

    fn cpu_done(&mut self, cpu: usize) {
        let tid = self.cpus[cpu].current.take().expect("a CPU finished a step it was not running");
        match self.tasks[tid].after {
            After::Continue => {
                if self.cpus[cpu].runqueue.is_empty() {
                    self.run_step(cpu, tid);
                    return;
                }
                self.tasks[tid].state = TaskState::Runnable;
                self.cpus[cpu].runqueue.push_back(tid);
            }
            After::Sleep(ns) => {
                self.tasks[tid].state = TaskState::Sleeping;
                self.queue.push(self.now + ns, Event::Wake(tid));
            }
            After::Block => {
                // A kswapd woken again during its pass does not miss the wakeup.
                let rewoken = self.kswapd.iter().position(|&k| k == tid).is_some_and(|nid| self.mm.nodes[nid].kswapd_wait_pending);
                if rewoken {
                    self.tasks[tid].state = TaskState::Runnable;
                    self.cpus[cpu].runqueue.push_back(tid);
                } else {
                    self.tasks[tid].state = TaskState::Blocked;
                }
            }
            After::Exit => {
                self.tasks[tid].state = TaskState::Exited;
                if self.tasks[tid].task.is_workload() {
                    self.live_workload -= 1;
                }
            }
        }
        self.dispatch(cpu);
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }
}
