//! What the scheduler decides (CFS, 2.6.38–6.5; the linux-3.0 and linux-6.1 profiles both
//! have it): each CPU runs the runnable task with the smallest vruntime (its CPU time, all
//! tasks having nice 0); a woken task is placed at no less than the CPU's min_vruntime minus
//! half the latency target (place_entity with GENTLE_FAIR_SLEEPERS), and preempts the running
//! task only when it lags that task by more than the wakeup granularity
//! (check_preempt_wakeup); otherwise it waits for a tick to find the running task past its
//! slice (check_preempt_tick). A woken kernel thread goes to its previous CPU if idle, else an
//! idle CPU it may use, else the waker's CPU when allowed (select_task_rq_fair reduced to idle
//! CPUs and wake_affine).
//!
//! The engine keeps this state current (which CPUs are busy, their min_vruntime, the vruntime
//! of the task each runs, which kswapd threads sleep and their vruntime, the CPU whose step is
//! running); the memory manager reads it when it wakes kswapd, so that the waker can yield
//! inside its step at its next preemption point (the might_sleep() of the next page
//! allocation), as a voluntarily preemptible kernel does. Workload tasks stay on the CPUs the
//! scenario binds them to.

use crate::mm::page_writeback::JIFFY_NS;

/// sysctl_sched_latency, sysctl_sched_min_granularity and sysctl_sched_wakeup_granularity
/// before scaling (CFS, 2.6.38–6.5).
pub const SCHED_LATENCY_NS: u64 = 6_000_000;
pub const SCHED_MIN_GRANULARITY_NS: u64 = 750_000;
pub const SCHED_WAKEUP_GRANULARITY_NS: u64 = 1_000_000;

/// The factor the tunables are scaled by (SCHED_TUNABLESCALING_LOG): 1 + ilog2(CPUs, at most 8).
fn tunable_factor(nr_cpus: usize) -> u64 {
    1 + u64::from((nr_cpus.clamp(1, 8) as u64).ilog2())
}

/// The vruntime a woken task starts from on a CPU whose min_vruntime is `min_vruntime`
/// (place_entity for a wakeup): a sleep counts for at most half the scaled latency target, and a
/// task never gains by being placed backwards.
pub fn place_entity(vruntime: u64, min_vruntime: u64, nr_cpus: usize) -> u64 {
    let thresh = SCHED_LATENCY_NS * tunable_factor(nr_cpus) / 2;
    vruntime.max(min_vruntime.saturating_sub(thresh))
}

/// Whether a woken task with vruntime `wakee` preempts the running one with `curr`
/// (wakeup_preempt_entity == 1): it lags by more than the scaled wakeup granularity.
pub fn wakeup_preempts(curr: u64, wakee: u64, nr_cpus: usize) -> bool {
    curr > wakee + SCHED_WAKEUP_GRANULARITY_NS * tunable_factor(nr_cpus)
}

/// check_preempt_tick: at a tick, the running task, which has run `delta_exec` ns since it got
/// its CPU, gives way when it has used its slice, or when it has run at least the minimum
/// granularity and is more than a slice of vruntime ahead of the leftmost waiting task.
pub fn tick_preempts(nr_cpus: usize, nr_running: usize, delta_exec: u64, curr: u64, leftmost: u64) -> bool {
    let ideal = sched_slice(nr_cpus, nr_running);
    if delta_exec > ideal {
        return true;
    }
    if delta_exec < SCHED_MIN_GRANULARITY_NS * tunable_factor(nr_cpus) {
        return false;
    }
    curr > leftmost && curr - leftmost > ideal
}

/// The time a task runs before a runnable one on its CPU gets a turn (sched_slice with equal
/// weights): the latency target, scaled by 1 + ilog2(CPUs, at most 8) as the kernel's default
/// SCHED_TUNABLESCALING_LOG does, shared among the `nr_running` tasks, at least the scaled
/// minimum granularity.
pub fn sched_slice(nr_cpus: usize, nr_running: usize) -> u64 {
    let factor = tunable_factor(nr_cpus);
    (SCHED_LATENCY_NS * factor / nr_running.max(1) as u64).max(SCHED_MIN_GRANULARITY_NS * factor)
}

/// The run state the memory manager may look at during a step.
#[derive(Clone, Debug, Default)]
pub struct SchedState {
    /// The CPU whose task's step is running.
    pub current_cpu: usize,
    /// The pid of the task whose step is running (its task id: tasks are numbered in the
    /// order they were created, as fork hands out pids).
    pub current_pid: u32,
    /// Per CPU: a task is running there or waits in its run queue.
    pub busy: Vec<bool>,
    /// Per CPU: a woken thread will preempt the running task at its next preemption point.
    pub need_resched: Vec<bool>,
    /// Per node: its kswapd is asleep (idle or in its HZ/10 nap).
    pub kswapd_sleeping: Vec<bool>,
    /// Per node: the CPUs its kswapd may run on (cpumask_of_node, or every CPU for a node
    /// without CPUs).
    pub kswapd_cpus: Vec<Vec<usize>>,
    /// Per node: its kswapd's vruntime and the CPU it last ran on, while it sleeps.
    pub kswapd_vruntime: Vec<u64>,
    pub kswapd_cpu: Vec<usize>,
    /// Per CPU: cfs_rq->min_vruntime.
    pub min_vruntime: Vec<u64>,
    /// Per CPU: the vruntime of the running task when its current step began.
    pub curr_vruntime: Vec<u64>,
    /// Where the timer tick falls within a jiffy: ticks come at tick_phase + k jiffies. The
    /// machine was up before the run began, so the phase is a matter of chance (drawn from the
    /// run's seed by the engine).
    pub tick_phase: u64,
    /// A jiffy in ns: 10⁹ / CONFIG_HZ of the kernel that runs (set at boot).
    pub jiffy_ns: u64,
}

impl SchedState {
    /// The jiffy count at time `t`.
    pub fn jiffies_at(&self, t: u64) -> u64 {
        (t + self.jiffy_ns - self.tick_phase) / self.jiffy_ns
    }

    /// When a kernel timeout of `ns` set at `now` expires (schedule_timeout → the timer wheel):
    /// at the tick that brings jiffies to their value now plus the timeout in whole jiffies,
    /// rounded up (msecs_to_jiffies), so up to one jiffy short of `ns`.
    pub fn timer_expiry(&self, now: u64, ns: u64) -> u64 {
        let j = self.jiffy_ns;
        let n = ns.div_ceil(j).max(1);
        // The last tick was this long ago.
        let since_tick = (now + j - self.tick_phase) % j;
        now + n * j - since_tick
    }

    pub fn new(nr_cpus: usize, node_cpus: &[Vec<usize>]) -> SchedState {
        SchedState {
            current_cpu: 0,
            current_pid: 0,
            busy: vec![false; nr_cpus],
            need_resched: vec![false; nr_cpus],
            kswapd_sleeping: vec![true; node_cpus.len()],
            kswapd_cpus: node_cpus.iter().map(|c| if c.is_empty() { (0..nr_cpus).collect() } else { c.clone() }).collect(),
            kswapd_vruntime: vec![0; node_cpus.len()],
            kswapd_cpu: node_cpus.iter().map(|c| c.first().copied().unwrap_or(0)).collect(),
            min_vruntime: vec![0; nr_cpus],
            curr_vruntime: vec![0; nr_cpus],
            tick_phase: 0,
            jiffy_ns: JIFFY_NS,
        }
    }

    /// The vruntime a task that last ran on `from` with `vruntime` gets when woken onto `to`:
    /// renormalised to the new CPU's min_vruntime if it moves (migrate_task_rq_fair and
    /// enqueue_entity), then placed.
    pub fn woken_vruntime(&self, vruntime: u64, from: usize, to: usize) -> u64 {
        let v = if from == to { vruntime } else { (vruntime + self.min_vruntime[to]).saturating_sub(self.min_vruntime[from]) };
        place_entity(v, self.min_vruntime[to], self.busy.len())
    }

    /// The CPU a woken thread that may run on `allowed` goes to (select_task_rq_fair, reduced to
    /// idle CPUs and wake_affine): `prev` if idle, else the first idle allowed CPU, else the
    /// waker's CPU if allowed, else `prev`.
    pub fn select_cpu(&self, prev: usize, allowed: &[usize], waker: Option<usize>) -> usize {
        if !self.busy[prev] && allowed.contains(&prev) {
            return prev;
        }
        if let Some(&c) = allowed.iter().find(|&&c| !self.busy[c]) {
            return c;
        }
        match waker {
            Some(w) if allowed.contains(&w) => w,
            _ => prev,
        }
    }

    /// Called when the running step, `elapsed_ns` into its CPU time, wakes node `nid`'s sleeping
    /// kswapd: if no CPU it may use is idle and the waker's CPU is one of them, the thread is
    /// queued there, and the waker yields at its next preemption point if the thread's placed
    /// vruntime lags the waker's by more than the wakeup granularity (check_preempt_wakeup);
    /// otherwise the thread waits for a tick to end the waker's slice.
    pub fn kswapd_woken(&mut self, nid: usize, elapsed_ns: u64) {
        if !self.kswapd_sleeping.get(nid).copied().unwrap_or(false) {
            return;
        }
        let cpu = self.current_cpu;
        let cpus = &self.kswapd_cpus[nid];
        if !(cpus.contains(&cpu) && cpus.iter().all(|&c| c == cpu || self.busy[c])) {
            return;
        }
        let wakee = self.woken_vruntime(self.kswapd_vruntime[nid], self.kswapd_cpu[nid], cpu);
        if wakeup_preempts(self.curr_vruntime[cpu] + elapsed_ns, wakee, self.busy.len()) {
            self.need_resched[cpu] = true;
        }
    }

    /// Should the task running on `cpu` give way now?
    pub fn need_resched(&self, cpu: usize) -> bool {
        self.need_resched.get(cpu).copied().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slice_is_the_scaled_latency_shared_by_the_runnable_tasks() {
        assert_eq!(sched_slice(1, 2), 3_000_000);
        assert_eq!(sched_slice(2, 2), 6_000_000);
        assert_eq!(sched_slice(24, 2), 12_000_000);
        assert_eq!(sched_slice(1, 100), 750_000);
    }

    #[test]
    fn a_woken_thread_goes_to_an_idle_cpu_and_preempts_only_when_there_is_none_and_it_lags() {
        // Three CPUs: wakeup granularity 2 ms, sleeper credit 6 ms.
        let mut s = SchedState::new(3, &[vec![0, 1], vec![2]]);
        s.busy = vec![true, false, false];
        assert_eq!(s.select_cpu(0, &[0, 1], Some(0)), 1);
        s.current_cpu = 0;
        s.min_vruntime[0] = 50_000_000;
        s.curr_vruntime[0] = 50_000_000;
        s.kswapd_woken(0, 0);
        assert!(!s.need_resched(0), "CPU 1 is idle: kswapd runs there");
        s.busy[1] = true;
        assert_eq!(s.select_cpu(0, &[0, 1], Some(0)), 0);
        // Slept long: placed 6 ms behind min_vruntime, more than 2 ms behind the waker.
        s.kswapd_woken(0, 0);
        assert!(s.need_resched(0), "no idle CPU on the node and kswapd lags: the waker gives way");
        // Ran recently: its vruntime is within the granularity of the waker's, so it waits.
        s.need_resched = vec![false; 3];
        s.kswapd_vruntime[0] = 49_000_000;
        s.kswapd_woken(0, 0);
        assert!(!s.need_resched(0));
        // ... until the waker has run another 2 ms inside its step.
        s.kswapd_woken(0, 2_000_001);
        assert!(s.need_resched(0));
        // A waker on another node does not run the thread on its own CPU.
        s.need_resched = vec![false; 3];
        s.kswapd_vruntime[0] = 0;
        s.current_cpu = 2;
        s.kswapd_woken(0, 0);
        assert!(!s.need_resched(2));
        // A kswapd that is already running is not woken.
        s.current_cpu = 0;
        s.kswapd_sleeping[0] = false;
        s.kswapd_woken(0, 0);
        assert!(!s.need_resched(0));
    }

    #[test]
    fn placement_renormalises_a_moving_task_and_caps_the_sleeper_credit() {
        let mut s = SchedState::new(2, &[vec![0, 1]]);
        s.min_vruntime = vec![100_000_000, 10_000_000];
        // Two CPUs: latency 12 ms, so a sleeper gets at most 6 ms of credit.
        assert_eq!(s.woken_vruntime(0, 0, 0), 94_000_000);
        assert_eq!(s.woken_vruntime(99_000_000, 0, 0), 99_000_000);
        // 1 ms ahead of CPU 0's min_vruntime stays 1 ms ahead of CPU 1's.
        assert_eq!(s.woken_vruntime(101_000_000, 0, 1), 11_000_000);
    }

    #[test]
    fn congestion_waits_hz_50_timeout_ends_at_the_second_tick_at_hz_100_and_the_fifth_at_250() {
        // congestion_wait(BLK_RW_ASYNC, HZ/50): 2 jiffies at HZ=100 (s390), 5 at HZ=250. Set
        // 0.5 ms after a tick, it sleeps 19.5 ms at either rate; set 0.5 ms before one, 10.5 ms
        // at HZ=100 and 16.5 ms at HZ=250.
        let mut s = SchedState::new(1, &[vec![0]]);
        for (jiffy, before_tick) in [(10_000_000, 10_500_000), (4_000_000, 16_500_000)] {
            s.jiffy_ns = jiffy;
            s.tick_phase = 0;
            assert_eq!(s.timer_expiry(100_500_000, 20_000_000) - 100_500_000, 19_500_000);
            assert_eq!(s.timer_expiry(99_500_000, 20_000_000) - 99_500_000, before_tick);
            assert_eq!(s.jiffies_at(100_000_000), 100_000_000 / jiffy + 1);
        }
    }

    #[test]
    fn a_tick_preempts_past_the_slice_or_a_slice_ahead_of_the_leftmost() {
        // Two CPUs, two tasks: slice 6 ms, minimum granularity 1.5 ms.
        assert!(tick_preempts(2, 2, 6_000_001, 0, 0));
        assert!(!tick_preempts(2, 2, 1_000_000, 20_000_000, 0));
        assert!(tick_preempts(2, 2, 2_000_000, 20_000_000, 13_000_000));
        assert!(!tick_preempts(2, 2, 2_000_000, 20_000_000, 15_000_000));
    }
}
