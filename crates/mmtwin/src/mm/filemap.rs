//! The page cache (mm/filemap.c): pages of files indexed by (address space, offset).
//!
//! An address space maps page offsets to frames in a BTreeMap, so lookups are ordered and runs
//! are deterministic. A frame's `mapping` is its address space id (0 = none) and `index` its
//! offset, as in struct page.

use std::collections::BTreeMap;

use super::mm_types::*;
use super::page_alloc::Mm;
use super::Pfn;

/// An address space (struct address_space) of one file.
#[derive(Clone, Debug, Default)]
pub struct AddressSpace {
    /// The inode this is the page cache of.
    pub host: u64,
    /// Cached pages by offset (i_pages).
    pub i_pages: BTreeMap<u32, Pfn>,
}

impl AddressSpace {
    /// Pages in the cache (nrpages).
    pub fn nrpages(&self) -> u64 {
        self.i_pages.len() as u64
    }
}

impl Mm {
    /// Creates the page cache of a new inode; returns its address space id (never 0).
    pub fn new_mapping(&mut self, host: u64) -> u32 {
        self.mappings.push(AddressSpace { host, i_pages: BTreeMap::new() });
        self.mappings.len() as u32
    }

    /// The address space with id `mapping`.
    pub fn mapping(&self, mapping: u32) -> &AddressSpace {
        &self.mappings[mapping as usize - 1]
    }

    /// The cached page of (mapping, index), if any (find_get_page).
    pub fn find_get_page(&self, mapping: u32, index: u32) -> Option<Pfn> {
        self.mapping(mapping).i_pages.get(&index).copied()
    }

    /// Inserts a freshly allocated page into the page cache and the inactive file LRU
    /// (add_to_page_cache_lru). Returns false if the offset is already cached.
    pub fn add_to_page_cache_lru(&mut self, pfn: Pfn, mapping: u32, index: u32) -> bool {
        let space = &mut self.mappings[mapping as usize - 1];
        if space.i_pages.contains_key(&index) {
            return false;
        }
        space.i_pages.insert(index, pfn);
        let p = &mut self.pages[pfn as usize];
        p.mapping = mapping;
        p.index = index;
        p.flags &= !(PG_SWAPBACKED | PG_ACTIVE | PG_REFERENCED);
        let nid = self.page_to_nid(pfn);
        self.nr_file_pages_node[nid] += 1;
        self.cost_ns += self.costs.page_cache_op_ns;
        self.lru_cache_add(pfn, false);
        true
    }

    /// Removes a page from the page cache (delete_from_page_cache / __remove_mapping); the
    /// caller has taken it off the LRU and frees it.
    pub fn delete_from_page_cache(&mut self, pfn: Pfn) {
        let (mapping, index) = (self.pages[pfn as usize].mapping, self.pages[pfn as usize].index);
        debug_assert!(mapping != 0, "pfn {pfn} is in no page cache");
        let removed = self.mappings[mapping as usize - 1].i_pages.remove(&index);
        debug_assert_eq!(removed, Some(pfn));
        self.pages[pfn as usize].mapping = 0;
        let nid = self.page_to_nid(pfn);
        self.nr_file_pages_node[nid] -= 1;
        self.cost_ns += self.costs.page_cache_op_ns;
    }
}
