//! Pieces the file workloads share: CPU binding checks, a cursor over a file's pages that
//! resumes after waits, and the bookkeeping of time spent inside the kernel.

use crate::config::machine::MachineLayout;
use crate::config::ConfigError;
use crate::fs::Ino;
use crate::mm::filemap::PageIo;
use crate::mm::page_writeback::DirtyThrottle;
use crate::sim::{After, Step, TaskCx};

/// Checks a `cpus` list against the machine.
pub fn validate_cpus(cpus: &Option<Vec<usize>>, layout: &MachineLayout) -> Result<(), ConfigError> {
    if let Some(cpus) = cpus {
        if cpus.is_empty() {
            return Err(ConfigError::new("workload.cpus", "lists no CPUs"));
        }
        if let Some(&c) = cpus.iter().find(|&&c| c >= layout.nr_cpus) {
            return Err(ConfigError::new("workload.cpus", format!("CPU {c} does not exist; the machine has CPUs 0..{}", layout.nr_cpus - 1)));
        }
    }
    Ok(())
}

/// The machine's memory (MemTotal, approximately: present pages) in bytes.
pub fn mem_total(layout: &MachineLayout) -> u64 {
    layout.total_present() * crate::mm::PAGE_SIZE
}

/// What a page loop stopped on.
pub enum Stop {
    /// All pages done.
    Done,
    /// Step budget used; continue next step.
    Yield,
    /// Sleep on a wait queue (a page under I/O) and retry.
    Wait(usize),
    /// Out of memory: back off and retry.
    NoMem,
}

/// A step's outcome for a task that did some kernel work: the step's system time is what the
/// memory manager charged (added by the engine), plus `user_ns`.
pub fn step_after(user_ns: u64, stop: &Stop) -> Step {
    let after = match stop {
        Stop::Wait(wq) => After::Wait(*wq),
        Stop::NoMem => After::Sleep(10_000_000),
        _ => After::Continue,
    };
    Step { user_ns, system_ns: 0, after }
}

/// The step of a task whose lookup or unlink could not finish (`Mm::iget`, `Mm::unlink_file`):
/// it sleeps on the page it waits for (`Some`), or backs off without memory (`None`), and
/// calls again.
pub fn file_op_blocked(cx: &TaskCx, blocked: Option<crate::mm::Pfn>) -> Step {
    let stop = match blocked {
        Some(pfn) => Stop::Wait(cx.mm.page_waitqueue(pfn)),
        None => Stop::NoMem,
    };
    step_after(0, &stop)
}

/// Runs `op` on pages `*next..end` of a file, at most `budget` pages, advancing `*next` past
/// each page done. `op` is file_write_page, file_read_page or a fault.
pub fn page_loop(
    cx: &mut TaskCx,
    next: &mut u32,
    end: u32,
    budget: u32,
    mut op: impl FnMut(&mut TaskCx, u32) -> PageIo,
) -> Stop {
    let stop_at = end.min(next.saturating_add(budget));
    while *next < stop_at {
        match op(cx, *next) {
            PageIo::Done => *next += 1,
            PageIo::Wait(wq) => return Stop::Wait(wq),
            PageIo::NoMem => return Stop::NoMem,
            // Slept in the allocator: the same page again after the sleep.
            PageIo::Retry => return Stop::Yield,
        }
        if cx.mm.owes_sleep() {
            // Throttled: the pause follows this step.
            return if *next >= end { Stop::Done } else { Stop::Yield };
        }
        if cx.mm.sched.need_resched(cx.cpu) && *next < end {
            // A thread this step woke (kswapd) preempts at the next allocation's might_sleep().
            return Stop::Yield;
        }
    }
    if *next >= end {
        Stop::Done
    } else {
        Stop::Yield
    }
}

/// The system call overhead per page of I/O done with `io_size`-byte read()/write() calls.
pub fn syscalls_per_page_ns(cx: &TaskCx, io_size: u64) -> u64 {
    cx.mm.costs.syscall_ns * crate::mm::PAGE_SIZE / io_size.max(1)
}

/// Writes pages of `ino` with `write_size`-byte write() calls (file_write_page plus the
/// calls' entry cost).
pub fn write_op(ino: Ino, write_size: u64, t: &mut DirtyThrottle) -> impl FnMut(&mut TaskCx, u32) -> PageIo + '_ {
    move |cx, index| {
        let cpu = cx.cpu;
        let r = cx.mm.file_write_page(ino, index, crate::mm::PAGE_SIZE, cpu, t);
        if r == PageIo::Done {
            cx.mm.cost_ns += syscalls_per_page_ns(cx, write_size);
        }
        r
    }
}
