//! Swap space (mm/swapfile.c): one swap area (a partition at the start of the machine's disk),
//! its slot map and the allocation of slots.
//!
//! * `swap_map[slot]` counts the page-table entries that hold the slot, plus `SWAP_HAS_CACHE`
//!   while a page of the swap cache stands for it. Slot 0 holds the swap header and is never
//!   handed out. A slot is free when its entry is 0.
//! * Slots are handed out the 3.x way (scan_swap_map): sequentially from `cluster_next` within a
//!   cluster of `SWAPFILE_CLUSTER` slots; when a cluster is used up, the next run of that many
//!   free slots is searched from the lowest free one, so that pages reclaimed together are
//!   written next to each other and their writes merge; when no free run is left, the next free
//!   slot after `cluster_next` is taken.
//! * Without a swap area, `nr_swap_pages` is 0 and reclaim leaves anonymous pages alone
//!   (get_scan_count), exactly as on a machine booted without swap.

use super::page_alloc::Mm;
use super::Pfn;
use crate::block::SECTORS_PER_PAGE;

/// Slots allocated in a row before looking for a new free run (SWAPFILE_CLUSTER).
pub const SWAPFILE_CLUSTER: u32 = 256;
/// The swap cache holds a page for the slot (SWAP_HAS_CACHE).
pub const SWAP_HAS_CACHE: u8 = 0x40;
/// Highest reference count of a slot (SWAP_MAP_MAX; continuation pages are not modelled).
pub const SWAP_MAP_MAX: u8 = 0x3e;

/// A swap area (struct swap_info_struct) and its swap cache (swapper_space).
#[derive(Clone, Debug)]
pub struct SwapInfo {
    /// The block device the area is on.
    pub bdev: usize,
    /// First sector of the area (its slot 0, the header).
    pub start_sector: u64,
    /// Per slot: references from page tables, | SWAP_HAS_CACHE.
    pub swap_map: Vec<u8>,
    /// Slots in use (inuse_pages).
    pub inuse_pages: u64,
    pub lowest_bit: u32,
    pub highest_bit: u32,
    pub cluster_next: u32,
    pub cluster_nr: u32,
    /// The swap cache: slot → page (swapper_space's radix tree).
    pub cache: std::collections::HashMap<u32, Pfn>,
    /// The slot of each swap cache page (page_private).
    pub slot_of: std::collections::HashMap<Pfn, u32>,
}

impl SwapInfo {
    /// An empty area of `bytes` on device `bdev` starting at `start_sector` (swapon).
    pub fn new(bdev: usize, start_sector: u64, bytes: u64) -> SwapInfo {
        let slots = (bytes / crate::mm::PAGE_SIZE) as u32;
        let mut swap_map = vec![0u8; slots as usize];
        swap_map[0] = SWAP_MAP_MAX; // the header
        SwapInfo {
            bdev,
            start_sector,
            swap_map,
            inuse_pages: 0,
            lowest_bit: 1,
            highest_bit: slots - 1,
            cluster_next: 1,
            cluster_nr: 0,
            cache: Default::default(),
            slot_of: Default::default(),
        }
    }

    /// Usable slots (the area minus its header page).
    pub fn pages(&self) -> u64 {
        self.swap_map.len() as u64 - 1
    }

    /// The sector of a slot.
    pub fn slot_sector(&self, slot: u32) -> u64 {
        self.start_sector + u64::from(slot) * SECTORS_PER_PAGE
    }

    /// scan_swap_map: picks a free slot (see the module comment), marks it with `usage`.
    fn scan_swap_map(&mut self, usage: u8) -> Option<u32> {
        if self.inuse_pages >= self.pages() {
            return None;
        }
        let n = self.swap_map.len() as u32;
        let mut offset = self.cluster_next.max(1);
        if self.cluster_nr == 0 {
            // Look for SWAPFILE_CLUSTER free slots in a row from the lowest free one.
            self.cluster_nr = SWAPFILE_CLUSTER - 1;
            let mut run_start = self.lowest_bit;
            let mut found = None;
            let mut s = self.lowest_bit;
            while s <= self.highest_bit {
                if self.swap_map[s as usize] != 0 {
                    run_start = s + 1;
                } else if s - run_start + 1 == SWAPFILE_CLUSTER {
                    found = Some(run_start);
                    break;
                }
                s += 1;
            }
            match found {
                Some(start) => offset = start,
                None => {
                    // No free cluster: take free slots wherever they are.
                    self.cluster_nr = 0;
                    offset = self.cluster_next.max(self.lowest_bit);
                }
            }
        } else {
            self.cluster_nr -= 1;
        }
        // From `offset`, the first free slot (wrapping to lowest_bit).
        let mut s = offset;
        let mut wrapped = false;
        loop {
            if s > self.highest_bit || s >= n {
                if wrapped {
                    return None;
                }
                wrapped = true;
                s = self.lowest_bit;
                continue;
            }
            if self.swap_map[s as usize] == 0 {
                break;
            }
            s += 1;
        }
        self.swap_map[s as usize] = usage;
        self.inuse_pages += 1;
        if s == self.lowest_bit {
            self.lowest_bit = (s + 1..=self.highest_bit).find(|&i| self.swap_map[i as usize] == 0).unwrap_or(self.highest_bit);
        }
        self.cluster_next = s + 1;
        Some(s)
    }

    /// Drops one reference of `usage` (a page-table count of 1, or SWAP_HAS_CACHE) from a
    /// slot, freeing it when nothing is left (swap_entry_free). Returns the new map entry.
    fn swap_entry_free(&mut self, slot: u32, usage: u8) -> u8 {
        let e = &mut self.swap_map[slot as usize];
        debug_assert!(*e != 0, "slot {slot} is free");
        if usage == SWAP_HAS_CACHE {
            debug_assert!(*e & SWAP_HAS_CACHE != 0, "slot {slot} has no cache");
            *e &= !SWAP_HAS_CACHE;
        } else {
            debug_assert!(*e & !SWAP_HAS_CACHE > 0, "slot {slot} has no map count");
            *e -= 1;
        }
        let left = *e;
        if left == 0 {
            self.inuse_pages -= 1;
            self.lowest_bit = self.lowest_bit.min(slot);
        }
        left
    }

    /// References from page tables (swap_count).
    pub fn swap_count(&self, slot: u32) -> u8 {
        self.swap_map[slot as usize] & !SWAP_HAS_CACHE
    }
}

impl Mm {
    /// Free swap slots (nr_swap_pages).
    pub fn nr_swap_pages(&self) -> u64 {
        self.swap.as_ref().map_or(0, |s| s.pages() - s.inuse_pages)
    }

    /// All usable slots (total_swap_pages).
    pub fn total_swap_pages(&self) -> u64 {
        self.swap.as_ref().map_or(0, SwapInfo::pages)
    }

    /// vm_swap_full: more than half of the swap space is in use; swap-in then frees a slot
    /// as soon as its page is read back.
    pub fn vm_swap_full(&self) -> bool {
        self.nr_swap_pages() * 2 < self.total_swap_pages()
    }

    /// The block device swap writes go to.
    pub fn swap_bdev(&self) -> Option<usize> {
        self.swap.as_ref().map(|s| s.bdev)
    }

    /// get_swap_page: a slot for a page entering the swap cache (marked SWAP_HAS_CACHE).
    pub fn get_swap_page(&mut self) -> Option<u32> {
        self.cost_ns += self.costs.swap_slot_ns;
        self.swap.as_mut()?.scan_swap_map(SWAP_HAS_CACHE)
    }

    /// swap_duplicate: one more page-table entry holds the slot (try_to_unmap of an anon page).
    pub fn swap_duplicate(&mut self, slot: u32) {
        let si = self.swap.as_mut().expect("a swap entry exists only with a swap area");
        let e = &mut si.swap_map[slot as usize];
        debug_assert!(*e != 0, "duplicating free slot {slot}");
        debug_assert!(*e & !SWAP_HAS_CACHE < SWAP_MAP_MAX);
        *e += 1;
    }

    /// swap_free: a page-table entry no longer holds the slot (swap-in mapped the page, or the
    /// mapping went away).
    pub fn swap_free(&mut self, slot: u32) {
        self.cost_ns += self.costs.swap_slot_ns;
        let si = self.swap.as_mut().expect("a swap entry exists only with a swap area");
        si.swap_entry_free(slot, 1);
    }

    /// swapcache_free: the swap cache no longer holds a page for the slot.
    pub fn swapcache_free(&mut self, slot: u32) {
        let si = self.swap.as_mut().expect("a swap cache page exists only with a swap area");
        si.swap_entry_free(slot, SWAP_HAS_CACHE);
    }

    /// The slot of a page in the swap cache (page_private).
    pub fn page_swap_slot(&self, pfn: Pfn) -> u32 {
        self.swap.as_ref().and_then(|s| s.slot_of.get(&pfn).copied()).expect("page is in the swap cache")
    }
}
