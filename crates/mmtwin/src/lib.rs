//! mmtwin: a deterministic digital twin of the Linux physical memory manager.
//!
//! * `mm`        — the kernel mechanisms, one module per kernel file (page_alloc, vmscan, vmstat…).
//! * `block`     — block devices, request queues, merging and the device model.
//! * `fs`        — file systems: inodes, dentries, block mapping, writeback.
//! * `klib`      — what the memory manager uses from the kernel's lib/ (proportions).
//! * `sim`       — the event engine: time, event queue, CPUs and tasks, the seeded PRNG, costs.
//! * `workloads` — workload definitions and the tasks that run them.
//! * `config`    — scenario files, kernel profiles, sysctls, resolution and hashing.
//! * `run`       — one iteration of one kernel: boot, run the workload, collect the results.
//! * `testing`   — invariant checkers.

pub mod block;
pub mod config;
pub mod fs;
pub mod klib;
pub mod mm;
pub mod run;
pub mod sim;
pub mod testing;
pub mod util;
pub mod workloads;
