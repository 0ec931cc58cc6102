//! The cost table: simulated CPU time of each modelled operation, in nanoseconds.
//!
//! Elapsed times and throughputs come out of the model by charging these costs for the work the
//! model actually does (list operations, lock round trips, page clearing, …). Defaults are order
//! of magnitude figures for a 2011–2020 x86_64 server core; a scenario may override any of them
//! under `[costs]`, and `[machine] cpu_slowdown` multiplies them all for a slower CPU. The
//! oracle's scenarios carry the values fitted to a QEMU/TCG guest (docs/calibration.md); native
//! costs cannot be measured there, since TCG slows some operations far more than others.

use serde::{Deserialize, Serialize};

/// Simulated CPU cost of each operation, in ns. All fields have documented defaults.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostTable {
    /// Taking a page from a per-cpu list (rmqueue_pcplist / buffered_rmqueue hot path).
    pub pcp_alloc_ns: u64,
    /// Passing over one page of another migratetype while searching the 2.6.31 single per-cpu
    /// list (buffered_rmqueue's list walk: reading page_private of the next struct page).
    pub pcp_search_ns: u64,
    /// Putting a page on a per-cpu list (free_unref_page / free_hot_cold_page).
    pub pcp_free_ns: u64,
    /// Taking and releasing zone->lock once (rmqueue_bulk, free_pcppages_bulk, rmqueue_buddy).
    pub zone_lock_ns: u64,
    /// One free-list insertion or removal while splitting or merging buddies.
    pub buddy_list_op_ns: u64,
    /// One watermark check of one zone in the zonelist walk.
    pub watermark_check_ns: u64,
    /// Moving one free page block between migratetype lists (move_freepages).
    pub move_freepages_block_ns: u64,
    /// Entering the allocator slow path (flag setup, kswapd wakeups).
    pub slowpath_entry_ns: u64,
    /// A page fault trap and PTE update, excluding the allocation and the clearing.
    pub page_fault_ns: u64,
    /// Clearing one 4 KiB page (clear_page) on the local node.
    pub clear_page_ns: u64,
    /// Unmapping one page at munmap/exit (zap_pte_range per page).
    pub unmap_page_ns: u64,
    /// The user program touching one 4 KiB page that is already mapped (local node).
    pub touch_page_ns: u64,
    /// Waking a sleeping task (try_to_wake_up).
    pub wakeup_ns: u64,
    /// One kswapd balance_pgdat pass that finds nothing to do.
    pub kswapd_pass_ns: u64,
    /// One vmstat_update run on a CPU (folding counters, visiting each zone's pcp).
    pub vmstat_update_ns: u64,
    /// Adding a page to or taking it off an LRU list, under the LRU lock.
    pub lru_op_ns: u64,
    /// Inserting a page into or deleting it from a file's page cache (radix tree / xarray).
    pub page_cache_op_ns: u64,
    /// Looking a page up in the page cache (find_get_page).
    pub page_cache_lookup_ns: u64,
    /// Copying 4 KiB between user memory and a page (copy_from_user / copy_to_user), local.
    pub copy_page_ns: u64,
    /// Entering and leaving a system call.
    pub syscall_ns: u64,
    /// The file system's ->write_begin and ->write_end for one page of a buffered write:
    /// reserving or mapping its block, buffer heads, updating i_size and dirtying the inode
    /// (under a journal handle on ext3/ext4). Not the page cache lookup, allocation or copy.
    /// Default 0: the reference core's buffered write is the other entries alone (about
    /// 1.1 µs a page); the oracle's 6.1 guest needs 1500 (× its slowdown) on top. The
    /// per-zone-dirty scenarios set 3300, fitted to their seed's dd CPU time, and the zlc
    /// scenarios 18600, fitted to their seed's fs_mark CPU time (docs/calibration.md).
    pub write_begin_end_ns: u64,
    /// Mapping a new data block in ->write_begin, which file systems without delayed
    /// allocation (ext2, ext3) do for every page a write extends: ext3_get_blocks_handle's
    /// bitmap search and, under the journal, getting write access to and dirtying the bitmap,
    /// group descriptor and indirect block buffers. Delayed allocation maps blocks at
    /// writeback, in the flusher's time, and is not charged here. Default 0, as
    /// `write_begin_end_ns`; the per-zone-dirty and zlc scenarios set 2100, fitted with it
    /// (docs/calibration.md).
    pub get_block_ns: u64,
    /// Creating a file: path lookup, inode and dentry set-up, directory entry (not the slab
    /// allocations, charged separately).
    pub file_create_ns: u64,
    /// Unlinking a file (besides truncating its pages).
    pub file_unlink_ns: u64,
    /// Reclaim looking at one isolated page in shrink_page_list (lock, flags, mapping checks).
    pub shrink_page_ns: u64,
    /// Walking the reverse map of a mapped page (page_referenced, try_to_unmap, page_mkclean).
    pub rmap_walk_ns: u64,
    /// Removing a reclaimed page from its mapping (__remove_mapping).
    pub remove_mapping_ns: u64,
    /// A slab object allocation and free.
    pub slab_alloc_ns: u64,
    pub slab_free_ns: u64,
    /// A shrinker looking at one dentry or inode.
    pub slab_object_scan_ns: u64,
    /// Writeback preparing one dirty page for I/O (tag lookup, clear dirty, set writeback,
    /// block mapping, adding it to a bio).
    pub writeback_page_ns: u64,
    /// Submitting one bio (generic_make_request, elevator merge attempt).
    pub submit_bio_ns: u64,
    /// Taking or dropping a swap slot (swap_info lock, swap_map update).
    pub swap_slot_ns: u64,
    /// Direct I/O per page: pinning the user page (get_user_pages), mapping its block,
    /// adding it to a bio, releasing it at completion.
    pub dio_page_ns: u64,
}

impl CostTable {
    /// The table for a CPU `slowdown` times slower than the reference core (every entry
    /// multiplied and rounded to the nearest ns).
    pub fn scaled(&self, slowdown: f64) -> CostTable {
        if slowdown == 1.0 {
            return *self;
        }
        let mut v = toml::Value::try_from(self).expect("a cost table serializes");
        for (_, x) in v.as_table_mut().expect("a table of fields").iter_mut() {
            let ns = x.as_integer().expect("every cost is an integer");
            *x = toml::Value::Integer((ns as f64 * slowdown).round() as i64);
        }
        v.try_into().expect("the scaled table has the same fields")
    }
}

impl Default for CostTable {
    fn default() -> Self {
        CostTable {
            pcp_alloc_ns: 40,
            pcp_search_ns: 3,
            pcp_free_ns: 35,
            zone_lock_ns: 60,
            buddy_list_op_ns: 12,
            watermark_check_ns: 8,
            move_freepages_block_ns: 15,
            slowpath_entry_ns: 300,
            page_fault_ns: 700,
            clear_page_ns: 350,
            unmap_page_ns: 60,
            touch_page_ns: 150,
            wakeup_ns: 1500,
            kswapd_pass_ns: 2000,
            vmstat_update_ns: 1000,
            lru_op_ns: 40,
            page_cache_op_ns: 120,
            page_cache_lookup_ns: 40,
            copy_page_ns: 600,
            syscall_ns: 150,
            write_begin_end_ns: 0,
            get_block_ns: 0,
            file_create_ns: 12_000,
            file_unlink_ns: 8_000,
            shrink_page_ns: 120,
            rmap_walk_ns: 300,
            remove_mapping_ns: 150,
            slab_alloc_ns: 80,
            slab_free_ns: 70,
            slab_object_scan_ns: 150,
            writeback_page_ns: 250,
            submit_bio_ns: 800,
            swap_slot_ns: 100,
            dio_page_ns: 300,
        }
    }
}
