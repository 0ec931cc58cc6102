//! Block allocation of ext2/ext3 (fs/ext3/balloc.c with its reservation windows, 2.6.21–3.x)
//! and of ext4's multiblock allocator as far as placement goes (fs/ext4/mballoc.c, 3.0).
//!
//! Free space is kept per superblock as free extents (the block bitmaps' zero runs) and per
//! group as a free-block count (bg_free_blocks_count). Blocks of deleted files return to it.
//!
//! * Goal. ext2/ext3 (ext3_find_goal): the block after the one allocated last for the same
//!   file if this is the next logical block, else the file's nearest mapped block before this
//!   one (ext3_find_near), else the start of the inode's group plus the allocating task's
//!   colour, `(pid % 16) × blocks_per_group / 16`, so that concurrent writers of a group start
//!   in different sixteenths of it. ext4 (ext4_ext_find_goal): the block after the file's
//!   previous extent, else the first group of the inode's flex group plus one (regular files
//!   leave the first group to directories, EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME) without colour
//!   (delayed allocation). xfs: the start of the file system (its allocation groups are not
//!   modelled).
//! * ext2/ext3 reservation windows (ext3_try_to_allocate_with_rsv). A regular file allocates
//!   inside its own window of `rsv_goal_size` blocks (8 at first, EXT3_DEFAULT_RESERVE_BLOCKS),
//!   which other files' windows avoid. When the goal is outside the window or the window has no
//!   free block left, a new window is placed at the first spot at or after the goal, within the
//!   goal's group, that overlaps no other window (find_next_reservable_window) and holds a free
//!   block (alloc_new_reservation); the size doubles, up to 1027 blocks
//!   (EXT3_MAX_RESERVE_BLOCKS), when more than half of the old window was used. If the goal's
//!   group has no room, the following groups are tried from their start, skipping groups with
//!   no more than half a window free. Closing the last writer of a file discards its window
//!   (ext3_release_file). Directories and other non-regular files allocate without a window.
//!   Inside a window or a group the first free block at or after the goal is taken (the
//!   kernel's preference for a whole free byte of the bitmap, find_next_usable_block, is not
//!   modelled).
//! * ext4 and xfs take the first free block at or after the goal, going on to the following
//!   groups; with delayed allocation the flusher allocates a file's dirty pages in one pass, so
//!   consecutive calls extend one extent (mballoc's request normalisation and per-inode
//!   preallocation give the same layout for a file written whole; its per-CPU locality groups
//!   for small files are not modelled).
//! * Freed blocks are reusable at once (the kernels hold them until the transaction that freed
//!   them commits: not modelled).

use std::collections::BTreeMap;

use super::jbd::{free_branches_order, BLOCKS_PER_GROUP, FLEX_BG};
use super::{FsType, Ino};
use crate::mm::page_alloc::Mm;

/// EXT3_DEFAULT_RESERVE_BLOCKS.
pub const DEFAULT_RESERVE_BLOCKS: u64 = 8;
/// EXT3_MAX_RESERVE_BLOCKS.
pub const MAX_RESERVE_BLOCKS: u64 = 1027;

/// A reservation window (struct ext3_reserve_window_node) of a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RsvWindow {
    pub start: u64,
    pub end: u64,
    /// Blocks allocated from the current window (rsv_alloc_hit).
    pub alloc_hit: u64,
}

/// A file's allocation state (struct ext3_block_alloc_info): its window, the window size it
/// asks for next, and the last block it allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockAllocInfo {
    pub window: Option<RsvWindow>,
    pub rsv_goal_size: u64,
    /// (logical page index, physical block) of the last allocation.
    pub last_alloc: Option<(u32, u64)>,
}

impl Default for BlockAllocInfo {
    fn default() -> Self {
        BlockAllocInfo { window: None, rsv_goal_size: DEFAULT_RESERVE_BLOCKS, last_alloc: None }
    }
}

/// Free space of a file system: free extents and free blocks per group. The extents are keyed
/// by their end (one past the last free block) and hold their first block, so taking the first
/// block of a run, as an allocation moving up through a free run does, changes one value.
#[derive(Clone, Debug, Default)]
pub struct FreeSpace {
    /// end → start of each free extent [start, end).
    pub extents: BTreeMap<u64, u64>,
    pub group_free: Vec<u32>,
    pub total_free: u64,
}

impl FreeSpace {
    /// The free extent [start, end) holding block `b`, or the first one after it.
    fn extent_at_or_after(&self, b: u64) -> Option<(u64, u64)> {
        self.extents.range(b + 1..).next().map(|(&e, &s)| (s, e))
    }

    /// Marks blocks [start, start + len) free (the caller knows they were in use).
    pub fn give(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (mut s, mut e) = (start, start + len);
        // The extent ending at `start` merges from below, the one starting at the end from
        // above.
        if let Some(ps) = self.extents.remove(&start) {
            s = ps;
        }
        if let Some((ns, ne)) = self.extent_at_or_after(start) {
            debug_assert!(ns >= start + len, "a block of [{start}, {}) freed twice", start + len);
            if ns == start + len {
                self.extents.remove(&ne);
                e = ne;
            }
        }
        self.extents.insert(e, s);
        let mut b = start;
        while b < start + len {
            let g = b / BLOCKS_PER_GROUP;
            let n = ((g + 1) * BLOCKS_PER_GROUP).min(start + len) - b;
            self.group_free[g as usize] += n as u32;
            b += n;
        }
        self.total_free += len;
    }

    /// Takes free block `b` (the caller found it free).
    pub fn take(&mut self, b: u64) {
        let taken = self.take_first_free(b, b + 1);
        assert_eq!(taken, Some(b), "block {b} is not free");
    }

    /// Takes the first free block in [from, to), if any (the block `first_free` finds), with
    /// one search of the free extents.
    pub fn take_first_free(&mut self, from: u64, to: u64) -> Option<u64> {
        if from >= to {
            return None;
        }
        let (&e, start) = self.extents.range_mut(from + 1..).next()?;
        let s = *start;
        let b = s.max(from);
        if b >= to {
            return None;
        }
        if b + 1 < e {
            // The part above `b` keeps the key; the part below, if any, is a new extent.
            *start = b + 1;
        } else {
            self.extents.remove(&e);
        }
        if b > s {
            self.extents.insert(b, s);
        }
        self.group_free[(b / BLOCKS_PER_GROUP) as usize] -= 1;
        self.total_free -= 1;
        Some(b)
    }

    /// The first free block in [from, to), if any.
    pub fn first_free(&self, from: u64, to: u64) -> Option<u64> {
        if from >= to {
            return None;
        }
        let (s, _) = self.extent_at_or_after(from)?;
        let first = s.max(from);
        (first < to).then_some(first)
    }
}

impl Mm {
    /// The block allocation goal for page `index` of file `ino` (ext3_find_goal /
    /// ext4_ext_find_goal; see the module comment), for a task of pid `pid`.
    pub fn block_goal(&self, ino: Ino, index: u32, pid: u32) -> u64 {
        let i = self.inode(ino);
        let fs = self.sbs[i.sb].fs_type;
        if let Some((l, p)) = i.alloc.last_alloc {
            if fs != FsType::Ext4 && index == l + 1 {
                return p + 1;
            }
        }
        // The nearest mapped block before this one.
        let k = i.extents_upto(index);
        if k > 0 {
            let (start, sector, len) = i.extents[k - 1];
            let block = self.sbs[i.sb].block_of(sector);
            return match fs {
                // ext4_ext_find_goal: where the extent would put this block.
                FsType::Ext4 | FsType::Xfs => block + u64::from(index - start),
                // ext3_find_near: the previous mapped block itself.
                _ => block + u64::from((index - 1).min(start + len - 1) - start),
            };
        }
        let group = u64::from(i.i_block_group);
        match fs {
            FsType::Ext2 | FsType::Ext3 => group * BLOCKS_PER_GROUP + u64::from(pid % 16) * (BLOCKS_PER_GROUP / 16),
            FsType::Ext4 => {
                let g = (group / FLEX_BG * FLEX_BG + 1).min(self.sbs[i.sb].groups.len() as u64 - 1);
                g * BLOCKS_PER_GROUP
            }
            FsType::Xfs => 0,
        }
    }

    /// Allocates one block near `goal` for file `ino` (`Some`) or for metadata without a
    /// window (`None`: directories, indirect blocks of a file without a window) on superblock
    /// `sb`: ext3_new_blocks with reservation windows on ext2/ext3, first fit from the goal
    /// otherwise. Returns None when the file system is full.
    pub fn new_block(&mut self, sb: usize, ino: Option<Ino>, goal: u64) -> Option<u64> {
        let s = &self.sbs[sb];
        let ngroups = s.groups.len() as u64;
        let goal = if goal >= s.blocks { 0 } else { goal };
        let goal_group = goal / BLOCKS_PER_GROUP;
        let windows = matches!(s.fs_type, FsType::Ext2 | FsType::Ext3) && ino.is_some();
        if !windows {
            let blocks = s.blocks;
            for k in 0..=ngroups {
                let g = (goal_group + k) % ngroups;
                let from = if k == 0 { goal } else { g * BLOCKS_PER_GROUP };
                let to = if k == ngroups { goal } else { ((g + 1) * BLOCKS_PER_GROUP).min(blocks) };
                if let Some(b) = self.sbs[sb].free.take_first_free(from, to) {
                    return Some(b);
                }
            }
            return None;
        }
        let ino = ino.expect("a file");
        let windowsz = self.inode(ino).alloc.rsv_goal_size;
        for k in 0..=ngroups {
            let g = (goal_group + k) % ngroups;
            let free = u64::from(self.sbs[sb].free.group_free[g as usize]);
            if free == 0 {
                continue;
            }
            let mut use_rsv = true;
            if k == 0 {
                if free < windowsz && self.inode(ino).alloc.window.is_none() {
                    use_rsv = false;
                }
            } else if free <= windowsz / 2 {
                continue;
            }
            let grp_goal = (k == 0).then_some(goal);
            let got = if use_rsv { self.try_to_allocate_with_rsv(sb, ino, g, grp_goal) } else { self.try_to_allocate(sb, g, grp_goal, None) };
            if let Some(b) = got {
                return Some(b);
            }
        }
        None
    }

    /// ext3_try_to_allocate: the first free block at or after the goal (or the range's start)
    /// in group `g`, limited to `window` if given; taken if found.
    fn try_to_allocate(&mut self, sb: usize, g: u64, goal: Option<u64>, window: Option<(u64, u64)>) -> Option<u64> {
        let s = &self.sbs[sb];
        let (gs, ge) = (g * BLOCKS_PER_GROUP, ((g + 1) * BLOCKS_PER_GROUP).min(s.blocks));
        let (lo, hi) = match window {
            Some((ws, we)) => (ws.max(gs), (we + 1).min(ge)),
            None => (gs, ge),
        };
        let from = goal.filter(|&b| b >= lo && b < hi).unwrap_or(lo);
        self.sbs[sb].free.take_first_free(from, hi)
    }

    /// ext3_try_to_allocate_with_rsv: allocates in the file's window, placing a new window
    /// when the goal lies outside it or it is used up.
    fn try_to_allocate_with_rsv(&mut self, sb: usize, ino: Ino, g: u64, mut goal: Option<u64>) -> Option<u64> {
        let mut failed = false;
        loop {
            let w = self.inode(ino).alloc.window;
            let in_window = |w: &RsvWindow, goal: Option<u64>| goal.is_some_and(|b| b >= w.start && b <= w.end);
            match w {
                Some(w) if !failed && (goal.is_none() || in_window(&w, goal)) => {}
                _ => {
                    self.alloc_new_reservation(sb, ino, g, goal)?;
                    let w = self.inode(ino).alloc.window.expect("a new window");
                    if !in_window(&w, goal) {
                        goal = None;
                    }
                }
            }
            let w = self.inode(ino).alloc.window.expect("a window");
            if let Some(b) = self.try_to_allocate(sb, g, goal, Some((w.start, w.end))) {
                self.inode_mut(ino).alloc.window.as_mut().expect("a window").alloc_hit += 1;
                return Some(b);
            }
            failed = true;
        }
    }

    /// alloc_new_reservation: places file `ino`'s window in group `g` at or after the goal (or
    /// the group's start), clear of other windows and starting at or before a free block.
    fn alloc_new_reservation(&mut self, sb: usize, ino: Ino, g: u64, goal: Option<u64>) -> Option<()> {
        let gs = g * BLOCKS_PER_GROUP;
        let ge = ((g + 1) * BLOCKS_PER_GROUP).min(self.sbs[sb].blocks) - 1;
        let mut start = goal.unwrap_or(gs);
        let mut info = self.inode(ino).alloc;
        if let Some(w) = info.window {
            if w.start <= ge && w.end > ge && start >= w.start {
                return None;
            }
            if w.alloc_hit > (w.end - w.start + 1) / 2 {
                info.rsv_goal_size = (info.rsv_goal_size * 2).min(MAX_RESERVE_BLOCKS);
            }
        }
        let size = info.rsv_goal_size;
        // Our own old window is skipped over like any other (find_next_reservable_window walks
        // the whole tree), so it stays in the tree during the search.
        let placed = loop {
            let Some(cur) = self.find_next_reservable_window(sb, start, ge, size) else { break None };
            let first_free = self.sbs[sb].free.first_free(cur, ge + 1);
            match first_free {
                None => break None,
                Some(f) if f <= cur + size - 1 => break Some(cur),
                Some(f) => start = f,
            }
        };
        if let Some(w) = info.window.take() {
            self.sbs[sb].rsv.remove(&w.start);
        }
        let cur = placed?;
        let w = RsvWindow { start: cur, end: cur + size - 1, alloc_hit: 0 };
        self.sbs[sb].rsv.insert(cur, (w.end, ino));
        info.window = Some(w);
        self.inode_mut(ino).alloc = info;
        Some(())
    }

    /// find_next_reservable_window: the first block at or after `start` where `size` blocks
    /// overlap no reservation window, if it lies at or before `last`.
    fn find_next_reservable_window(&self, sb: usize, start: u64, last: u64, size: u64) -> Option<u64> {
        let rsv = &self.sbs[sb].rsv;
        let mut cur = start;
        // The window at or before `start` (search_reserve_window), then its successors.
        let first = rsv.range(..=start).next_back().map(|(&s, _)| s).unwrap_or(0);
        for (&s, &(e, _)) in rsv.range(first..) {
            if cur + size <= s {
                break;
            }
            if cur <= e {
                cur = e + 1;
            }
        }
        (cur <= last).then_some(cur)
    }

    /// ext3_discard_reservation: the file's window goes (its goal size stays).
    pub fn discard_reservation(&mut self, ino: Ino) {
        let sb = self.inode(ino).sb;
        if let Some(w) = self.inode_mut(ino).alloc.window.take() {
            self.sbs[sb].rsv.remove(&w.start);
        }
    }

    /// The indirect blocks ext2/ext3 read to free a deleted file's blocks (ext3_truncate →
    /// ext3_free_branches, ext2_truncate_blocks → ext2_free_branches, 2.6–3.x; 6.x's ext4
    /// driver walks an indirect-mapped file as ext3 does), in the order they are read, each with
    /// its depth on the indirect path. Each is read with sb_bread before the blocks it maps are
    /// freed, depth first: the single-indirect block, the double-indirect block and its
    /// children, then the triple-indirect tree. ext3 takes an indirect block's children last to
    /// first (`while (--p >= first)`), ext2 first to last. The block bitmaps ext3_free_blocks
    /// reads are not cached pages in the model, so they are not among them. Empty for file
    /// systems with extents.
    pub fn truncate_reads(&self, ino: Ino) -> Vec<(u64, usize)> {
        let i = self.inode(ino);
        let reverse = match self.sbs[i.sb].fs_type {
            FsType::Ext3 => true,
            FsType::Ext2 => false,
            FsType::Ext4 | FsType::Xfs => return Vec::new(),
        };
        let mut walk: Vec<((u32, u32, u32), u64, usize)> = i
            .meta_blocks
            .iter()
            .map(|(&slot, &block)| {
                let (key, level) = free_branches_order(slot, reverse);
                (key, block, level)
            })
            .collect();
        walk.sort_unstable();
        walk.into_iter().map(|(_, block, level)| (block, level)).collect()
    }

    /// A deleted ext2/ext3 file's truncate reads its indirect blocks (`truncate_reads`) one at
    /// a time: a block reclaim dropped is read synchronously (sb_bread waits for it) before the
    /// walk goes on. Err(page) for the caller to wait on and call again; Ok once all are read.
    pub fn free_branches(&mut self, ino: Ino, cpu: usize) -> Result<(), crate::mm::Pfn> {
        let sb = self.inode(ino).sb;
        let mut left = self.truncating.remove(&ino).unwrap_or_else(|| {
            let mut reads = self.truncate_reads(ino);
            reads.reverse();
            reads
        });
        while let Some(&(block, level)) = left.last() {
            if let Some((pfn, _)) = self.bread_metadata(sb, block, level, Some(cpu)) {
                self.truncating.insert(ino, left);
                return Err(pfn);
            }
            left.pop();
        }
        Ok(())
    }

    /// Frees file `ino`'s data and indirect blocks (ext3_free_blocks / ext4_free_blocks at
    /// delete), and its window.
    pub fn free_file_blocks(&mut self, ino: Ino) {
        self.discard_reservation(ino);
        let sb = self.inode(ino).sb;
        let start = self.sbs[sb].start_sector;
        let runs: Vec<(u64, u64)> = self.inode(ino).extents.iter().map(|&(_, sector, len)| ((sector - start) / crate::block::SECTORS_PER_PAGE, u64::from(len))).collect();
        let meta = std::mem::take(&mut self.inode_mut(ino).meta_blocks);
        let free = &mut self.sbs[sb].free;
        for (b, n) in runs {
            free.give(b, n);
        }
        for b in meta.into_values() {
            free.give(b, 1);
        }
    }
}
