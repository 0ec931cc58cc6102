//! `struct page` and the intrusive doubly linked lists pages sit on (include/linux/mm_types.h,
//! include/linux/list.h).
//!
//! A page frame is 24 bytes (the kernel's is 64): two list links, the owner (`mapping`) and
//! offset (`index`) it belongs to, flag bits, the buddy order and which kind of list the frame
//! is on. Page frames are addressed by pfn; links are pfns, `NIL` ends a list. A frame can be on
//! at most one list at a time (buddy free list, per-cpu list, later an LRU list), exactly as
//! `page->lru` is shared in the kernel.

use super::Pfn;

/// The end of a list.
pub const NIL: Pfn = Pfn::MAX;

/// Page flag bits (enum pageflags). PG_MOVABLE_ALLOC (bit 0) lives in page_alloc.rs.
pub const PG_LRU: u32 = 1 << 1;
pub const PG_ACTIVE: u32 = 1 << 2;
/// Referenced by a read/write since the last scan (mark_page_accessed).
pub const PG_REFERENCED: u32 = 1 << 3;
/// Anonymous or shmem: backed by swap, on the anon lists.
pub const PG_SWAPBACKED: u32 = 1 << 4;
pub const PG_DIRTY: u32 = 1 << 5;
pub const PG_WRITEBACK: u32 = 1 << 6;
/// Reclaim wants it freed when writeback completes.
pub const PG_RECLAIM: u32 = 1 << 7;
pub const PG_UNEVICTABLE: u32 = 1 << 8;
/// Mapped into a page table whose accessed bit is set (what page_referenced finds).
pub const PG_YOUNG: u32 = 1 << 9;
/// Mapped into some process (page_mapped; one mapper is modelled, so this is mapcount > 0).
pub const PG_MAPPED: u32 = 1 << 10;
/// Locked for I/O (a read in flight) or by reclaim (PG_locked).
pub const PG_LOCKED: u32 = 1 << 11;
/// The page's contents are valid (PG_uptodate).
pub const PG_UPTODATE: u32 = 1 << 12;
/// Reading this page starts the next asynchronous readahead (PG_readahead).
pub const PG_READAHEAD: u32 = 1 << 13;
/// A slab page (PG_slab): `mapping` is the cache id, `index` the objects in use.
pub const PG_SLAB: u32 = 1 << 14;
/// In the swap cache (PG_swapcache): `index` is the swap slot.
pub const PG_SWAPCACHE: u32 = 1 << 15;
/// Mapped by an executable mapping (VM_EXEC in the mapping's vm_flags; one mapper modelled).
pub const PG_EXEC_MAPPED: u32 = 1 << 16;
/// PG_private: a page cache page with buffer heads (page_has_buffers); the slab holding them
/// is the page's private word in its page-cache tree leaf.
pub const PG_PRIVATE: u32 = 1 << 17;
/// A dirty page whose buffers are clean: ext3's commit wrote them (data=ordered; 3.0 jbd's
/// journal_submit_data_buffers clears the buffers' dirty bits, not the page's). The next
/// ->writepage finds nothing to submit and only cleans the page.
pub const PG_BUF_CLEAN: u32 = 1 << 18;
/// Its buffers are locked for that write (BH_Lock while the commit's I/O is in flight): a
/// ->writepage redirties the page, the commit and truncate wait for it.
pub const PG_BUF_LOCKED: u32 = 1 << 19;

/// Where a page frame is. Checkers verify that every frame is in exactly one place.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// A hole in the physical address space (no memory behind the pfn).
    Hole = 0,
    /// Present but reserved at boot (memmap, firmware, kernel image): never free.
    Reserved = 1,
    /// The head of a free buddy block (PageBuddy); `order` is the block's order.
    Buddy = 2,
    /// The head of a block on a per-cpu list; `order` is its order.
    Pcp = 3,
    /// The head of an allocated block; `order` is its order.
    Allocated = 4,
}
// Only a block's head page carries its state; the other frames of a block are never read until
// the block is split or freed (as with PageBuddy in the kernel), so they are not written either.

/// One page frame.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Page {
    /// Next frame on the list this frame is on (`NIL` at the tail).
    pub next: Pfn,
    /// Previous frame on the list this frame is on (`NIL` at the head).
    pub prev: Pfn,
    /// Owner of an allocated frame (an address space or task id); 0 when free.
    pub mapping: u32,
    /// Offset of the frame within its owner.
    pub index: u32,
    /// PG_* flag bits.
    pub flags: u32,
    /// Buddy order of a free or allocated block head.
    pub order: u8,
    /// `PageState` as u8.
    pub state: u8,
    /// `page_private` of a per-cpu page: the migratetype it was listed under (3.x).
    pub private: u8,
    /// The zone id the frame belongs to (node × MAX_NR_ZONES + zone type; the kernel keeps
    /// node and zone in page->flags).
    pub zone: u8,
}

const _: () = assert!(core::mem::size_of::<Page>() == 24);

impl Page {
    /// A frame in a hole.
    pub const HOLE: Page = Page {
        next: NIL,
        prev: NIL,
        mapping: 0,
        index: 0,
        flags: 0,
        order: 0,
        state: PageState::Hole as u8,
        private: 0,
        zone: 0,
    };

    /// The state of this frame.
    #[inline(always)]
    pub fn state(&self) -> PageState {
        // SAFETY-free decode: the field is only ever written from a PageState.
        match self.state {
            0 => PageState::Hole,
            1 => PageState::Reserved,
            2 => PageState::Buddy,
            3 => PageState::Pcp,
            _ => PageState::Allocated,
        }
    }

    #[inline(always)]
    pub fn set_state(&mut self, s: PageState) {
        self.state = s as u8;
    }
}

/// The head and tail of an intrusive list of page frames, with its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListHead {
    pub head: Pfn,
    pub tail: Pfn,
    pub len: u32,
}

impl Default for ListHead {
    fn default() -> Self {
        ListHead::EMPTY
    }
}

impl ListHead {
    pub const EMPTY: ListHead = ListHead { head: NIL, tail: NIL, len: 0 };

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// The frame at `pfn`. List links are pfns of frames that exist (the checkers verify every
/// link in debug builds), so the list primitives skip the bounds check in release builds.
#[inline(always)]
fn frame(pages: &mut [Page], pfn: Pfn) -> &mut Page {
    debug_assert!((pfn as usize) < pages.len(), "pfn {pfn} beyond the last frame");
    // SAFETY: every pfn on a list is a valid index (asserted above in debug builds; list links
    // are only ever set from existing frames' pfns).
    unsafe { pages.get_unchecked_mut(pfn as usize) }
}

/// Adds `pfn` at the head of `list` (list_add).
#[inline(always)]
pub fn list_add(pages: &mut [Page], list: &mut ListHead, pfn: Pfn) {
    let old = list.head;
    {
        let p = frame(pages, pfn);
        p.next = old;
        p.prev = NIL;
    }
    if old == NIL {
        list.tail = pfn;
    } else {
        frame(pages, old).prev = pfn;
    }
    list.head = pfn;
    list.len += 1;
}

/// Adds `pfn` at the tail of `list` (list_add_tail).
#[inline(always)]
pub fn list_add_tail(pages: &mut [Page], list: &mut ListHead, pfn: Pfn) {
    let old = list.tail;
    {
        let p = frame(pages, pfn);
        p.prev = old;
        p.next = NIL;
    }
    if old == NIL {
        list.head = pfn;
    } else {
        frame(pages, old).next = pfn;
    }
    list.tail = pfn;
    list.len += 1;
}

/// Inserts `pfn` immediately after `at`, which is on `list` (list_add(new, &at->lru)).
#[inline(always)]
pub fn list_add_after(pages: &mut [Page], list: &mut ListHead, at: Pfn, pfn: Pfn) {
    let next = frame(pages, at).next;
    {
        let p = frame(pages, pfn);
        p.prev = at;
        p.next = next;
    }
    frame(pages, at).next = pfn;
    if next == NIL {
        list.tail = pfn;
    } else {
        frame(pages, next).prev = pfn;
    }
    list.len += 1;
}

/// Inserts `pfn` immediately before `at`, which is on `list` (list_add_tail(new, &at->lru)).
#[inline(always)]
pub fn list_add_before(pages: &mut [Page], list: &mut ListHead, at: Pfn, pfn: Pfn) {
    let prev = frame(pages, at).prev;
    {
        let p = frame(pages, pfn);
        p.next = at;
        p.prev = prev;
    }
    frame(pages, at).prev = pfn;
    if prev == NIL {
        list.head = pfn;
    } else {
        frame(pages, prev).next = pfn;
    }
    list.len += 1;
}

/// Removes `pfn` from `list` (list_del).
#[inline(always)]
pub fn list_del(pages: &mut [Page], list: &mut ListHead, pfn: Pfn) {
    let (prev, next) = {
        let p = &*frame(pages, pfn);
        (p.prev, p.next)
    };
    if prev == NIL {
        list.head = next;
    } else {
        frame(pages, prev).next = next;
    }
    if next == NIL {
        list.tail = prev;
    } else {
        frame(pages, next).prev = prev;
    }
    let p = frame(pages, pfn);
    p.next = NIL;
    p.prev = NIL;
    list.len -= 1;
}

/// Iterates the pfns on a list from head to tail.
pub fn list_iter<'a>(pages: &'a [Page], list: &ListHead) -> impl Iterator<Item = Pfn> + 'a {
    let mut cur = list.head;
    std::iter::from_fn(move || {
        if cur == NIL {
            None
        } else {
            let c = cur;
            cur = pages[c as usize].next;
            Some(c)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(n: usize) -> Vec<Page> {
        vec![Page::HOLE; n]
    }

    #[test]
    fn add_head_tail_and_delete_keep_order_and_length() {
        let mut p = pages(8);
        let mut l = ListHead::EMPTY;
        list_add(&mut p, &mut l, 1);
        list_add_tail(&mut p, &mut l, 2);
        list_add(&mut p, &mut l, 0);
        list_add_after(&mut p, &mut l, 2, 3);
        list_add_before(&mut p, &mut l, 0, 4);
        assert_eq!(list_iter(&p, &l).collect::<Vec<_>>(), vec![4, 0, 1, 2, 3]);
        assert_eq!(l.len, 5);
        list_del(&mut p, &mut l, 4);
        list_del(&mut p, &mut l, 3);
        list_del(&mut p, &mut l, 1);
        assert_eq!(list_iter(&p, &l).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!((l.head, l.tail, l.len), (0, 2, 2));
        list_del(&mut p, &mut l, 0);
        list_del(&mut p, &mut l, 2);
        assert!(l.is_empty());
        assert_eq!(l.tail, NIL);
    }
}
