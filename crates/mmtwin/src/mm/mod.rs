//! The physical memory manager, one module per kernel mechanism, named as the kernel names it.
//!
//! * `mm_types`   — `struct page` (24 bytes here) and the intrusive lists pages sit on.
//! * `mmzone`     — zones, nodes, free areas, per-cpu page sets, pageblock flags.
//! * `gfp`        — gfp flags, alloc flags, migratetype selection.
//! * `mm_init`    — building zones from a machine description, zonelists.
//! * `page_alloc` — the buddy allocator, per-cpu lists, watermarks, lowmem_reserve, the zonelist walk.
//! * `vmstat`     — /proc/vmstat counters and the /proc text dumps.
//! * `swap`       — LRU list maintenance (lru_cache_add, mark_page_accessed, activate_page).
//! * `filemap`    — the page cache (address spaces).
//! * `vmscan`     — reclaim: LRU scanning, shrink_slab, kswapd, direct reclaim, zone_reclaim.
//! * `page_writeback` — dirty accounting, dirty limits, balance_dirty_pages.
//! * `slab`       — slab caches (the pages reclaim sees as slab).
//! * `swapfile`   — the swap area and its slots.
//! * `swap_state` — the swap cache and swap I/O.
//! * `memory`     — anonymous regions, their page-table entries and faults, anon rmap.

pub mod filemap;
pub mod gfp;
pub mod memory;
pub mod mm_init;
pub mod mm_types;
pub mod mmzone;
pub mod page_alloc;
pub mod page_writeback;
pub mod policy;
pub mod radix_tree;
pub mod slab;
pub mod swap;
pub mod swap_state;
pub mod swapfile;
pub mod vmscan;
pub mod vmstat;

pub use mm_types::{Page, PageState, NIL};
pub use mmzone::{MigrateType, Zone, ZoneType};

/// Bytes per page frame (x86_64 base pages).
pub const PAGE_SIZE: u64 = 4096;
/// log2(PAGE_SIZE).
pub const PAGE_SHIFT: u32 = 12;
/// x86_64's highest buddy order (the 6.x name MAX_PAGE_ORDER; 3.x called the exclusive bound
/// MAX_ORDER = 11). A machine's own is `Mm::max_order` (`Arch::max_page_order`): s390 forced
/// MAX_ORDER to 9 from 2.6.25 to past 3.1.
pub const MAX_PAGE_ORDER: usize = 10;
/// Buddy orders an array must hold: the largest MAX_PAGE_ORDER of any arch, plus one.
pub const NR_PAGE_ORDERS: usize = MAX_PAGE_ORDER + 1;
/// x86_64's pageblock order: the PMD huge page order. A machine's own is `Mm::pageblock_order`
/// (`Arch::pageblock_order`): 8 on s390 (1M huge pages).
pub const PAGEBLOCK_ORDER: usize = 9;
/// Pages per x86_64 pageblock.
pub const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;
/// Orders above this are "costly" to the allocator and reclaim.
pub const PAGE_ALLOC_COSTLY_ORDER: usize = 3;
/// The batch of reclaim and of the 6.x minimum watermark for highmem-like zones.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// How many frames ahead the simulator's loops over a list of frames prefetch
/// (`Mm::prefetch_page`): far enough for a cache miss to complete meanwhile. Not a kernel
/// constant; it changes only the simulator's speed.
pub const PREFETCH_AHEAD: usize = 8;

/// A page frame number.
pub type Pfn = u32;

/// The physical-memory half of the simulated kernel: page frames, pageblock flags, nodes, zones
/// and the counters, plus the era policy. Everything the allocator touches lives here.
pub use page_alloc::Mm;
