//! What the scheduler decides when a kernel thread is woken: which CPU it runs on
//! (select_task_rq_fair: its previous CPU if idle, else an idle CPU it may use, else the
//! waker's CPU when allowed — wake_affine) and whether the task running there must give way
//! (check_preempt_wakeup: a thread that slept has the smaller vruntime and preempts at the
//! waker's next preemption point, such as the might_sleep() of the next page allocation).
//!
//! The engine keeps this state current (which CPUs are busy, which kswapd threads sleep, the
//! CPU whose step is running); the memory manager reads it when it wakes kswapd, so that the
//! waker can yield inside its step, as a voluntarily preemptible kernel does. Workload tasks
//! stay on the CPUs the scenario binds them to.

/// sysctl_sched_latency and sysctl_sched_min_granularity before scaling (CFS, 2.6.38–6.5).
pub const SCHED_LATENCY_NS: u64 = 6_000_000;
pub const SCHED_MIN_GRANULARITY_NS: u64 = 750_000;

/// The time a task runs before a runnable one on its CPU gets a turn (sched_slice with equal
/// weights): the latency target, scaled by 1 + ilog2(CPUs, at most 8) as the kernel's default
/// SCHED_TUNABLESCALING_LOG does, shared among the `nr_running` tasks, at least the scaled
/// minimum granularity.
pub fn sched_slice(nr_cpus: usize, nr_running: usize) -> u64 {
    let factor = 1 + (nr_cpus.clamp(1, 8) as u64).ilog2() as u64;
    (SCHED_LATENCY_NS * factor / nr_running.max(1) as u64).max(SCHED_MIN_GRANULARITY_NS * factor)
}

/// The run state the memory manager may look at during a step.
#[derive(Clone, Debug, Default)]
pub struct SchedState {
    /// The CPU whose task's step is running.
    pub current_cpu: usize,
    /// Per CPU: a task is running there or waits in its run queue.
    pub busy: Vec<bool>,
    /// Per CPU: a woken thread will preempt the running task at its next preemption point.
    pub need_resched: Vec<bool>,
    /// Per node: its kswapd is asleep (idle or in its HZ/10 nap).
    pub kswapd_sleeping: Vec<bool>,
    /// Per node: the CPUs its kswapd may run on (cpumask_of_node, or every CPU for a node
    /// without CPUs).
    pub kswapd_cpus: Vec<Vec<usize>>,
}

impl SchedState {
    pub fn new(nr_cpus: usize, node_cpus: &[Vec<usize>]) -> SchedState {
        SchedState {
            current_cpu: 0,
            busy: vec![false; nr_cpus],
            need_resched: vec![false; nr_cpus],
            kswapd_sleeping: vec![true; node_cpus.len()],
            kswapd_cpus: node_cpus.iter().map(|c| if c.is_empty() { (0..nr_cpus).collect() } else { c.clone() }).collect(),
        }
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

    /// Called when the running step wakes node `nid`'s sleeping kswapd: if no CPU it may use is
    /// idle and the waker's CPU is one of them, the thread will run there, so the waker must
    /// yield at its next preemption point.
    pub fn kswapd_woken(&mut self, nid: usize) {
        if !self.kswapd_sleeping.get(nid).copied().unwrap_or(false) {
            return;
        }
        let cpu = self.current_cpu;
        let cpus = &self.kswapd_cpus[nid];
        if cpus.contains(&cpu) && cpus.iter().all(|&c| c == cpu || self.busy[c]) {
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
    fn a_woken_thread_goes_to_an_idle_cpu_and_preempts_only_when_there_is_none() {
        let mut s = SchedState::new(3, &[vec![0, 1], vec![2]]);
        s.busy = vec![true, false, false];
        assert_eq!(s.select_cpu(0, &[0, 1], Some(0)), 1);
        s.current_cpu = 0;
        s.kswapd_woken(0);
        assert!(!s.need_resched(0), "CPU 1 is idle: kswapd runs there");
        s.busy[1] = true;
        assert_eq!(s.select_cpu(0, &[0, 1], Some(0)), 0);
        s.kswapd_woken(0);
        assert!(s.need_resched(0), "no idle CPU on the node: the waker gives way");
        // A waker on another node does not run the thread on its own CPU.
        s.need_resched = vec![false; 3];
        s.current_cpu = 2;
        s.kswapd_woken(0);
        assert!(!s.need_resched(2));
        // A kswapd that is already running is not woken.
        s.current_cpu = 0;
        s.kswapd_sleeping[0] = false;
        s.kswapd_woken(0);
        assert!(!s.need_resched(0));
    }
}
