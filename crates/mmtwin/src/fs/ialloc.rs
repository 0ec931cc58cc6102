//! Inode placement and directories (fs/ext3/ialloc.c, fs/ext4/ialloc.c and the directory
//! blocks of fs/ext3/namei.c, 3.0).
//!
//! * A directory's inode goes where the Orlov allocator puts it (find_group_orlov). Below the
//!   root (and below a directory marked TOPDIR), directories are spread: among the groups with
//!   at least the average free inodes and free blocks, the one with the fewest directories,
//!   searched from a random group. Elsewhere a directory stays near its parent: the first group
//!   from the parent's with fewer than `ndirs / ngroups + inodes_per_group / 16` directories, at
//!   least the average free inodes less a quarter group's, and at least the average free blocks
//!   less a quarter group's; failing that the first with the average free inodes. ext4 runs
//!   the same search over flex groups and takes the first group of the chosen flex group with
//!   a free inode.
//! * A file's inode goes to its directory's group if that group has a free inode and a free
//!   block (find_group_other), else to a group found by a quadratic hash from the parent's
//!   group offset by the directory's inode number, else to the next group with a free inode.
//!   ext4 takes the first group of the directory's flex group with a free inode, then the flex
//!   group of the directory's last allocation, then an Orlov search over flex groups.
//! * Inside a group the lowest free inode number is taken.
//! * A directory's entries live in its blocks: 48 bytes per entry for fs_mark's 40-character
//!   names (ext3_dir_entry_2: 8 bytes + the name rounded to 4), so 85 per block; with dir_index
//!   (htree, on by default since e2fsprogs 1.39) leaves are split when full and are about three
//!   quarters full on average, and a name goes to the leaf its hash selects. Adding or removing
//!   a name dirties that leaf (logged in the journal); a new leaf is a block allocated near the
//!   directory's last block, without a reservation window.

use std::collections::BTreeSet;

use super::jbd::{BLOCKS_PER_GROUP, FLEX_BG, INODES_PER_GROUP};
use super::FsType;
use crate::mm::page_alloc::Mm;

/// A directory id: index into `SuperBlock::dirs`; 0 is the root.
pub type DirId = u32;
/// The root directory.
pub const ROOT_DIR: DirId = 0;
/// Entries per directory block (4096 / 48).
pub const DIR_ENTRIES_PER_BLOCK: u64 = 85;

/// Per-group descriptor counts (struct ext3_group_desc) and the inode bitmap.
#[derive(Clone, Debug, Default)]
pub struct GroupDesc {
    pub free_inodes: u32,
    pub used_dirs: u32,
    /// Inode numbers in the group never handed out start here.
    pub next_unused: u32,
    /// Inode numbers below `next_unused` freed since.
    pub freed: BTreeSet<u32>,
}

/// A directory: its inode, group, entries and blocks.
#[derive(Clone, Debug)]
pub struct Directory {
    pub i_ino: u64,
    pub group: u32,
    /// EXT3_TOPDIR_FL (the root has it implicitly).
    pub topdir: bool,
    pub entries: u64,
    pub blocks: Vec<u64>,
    /// The group of the last inode allocated in it (ext4's i_last_alloc_group).
    pub last_alloc_group: Option<u32>,
    /// Its inode's i_mutex (see `namei`).
    pub i_mutex: super::namei::DirMutex,
}

/// The name hash of htree and get_random_bytes of Orlov: a mix of small integers (the names
/// and random draws themselves are not modelled).
pub use crate::sim::rng::splitmix64 as mix64;

impl Mm {
    /// Orlov statistics of allocation unit `u` (`unit` groups each): free inodes, free blocks,
    /// directories.
    fn orlov_stats(&self, sb: usize, u: usize, unit: usize) -> (u64, u64, u64) {
        let s = &self.sbs[sb];
        let mut st = (0, 0, 0);
        for g in u * unit..((u + 1) * unit).min(s.groups.len()) {
            st.0 += u64::from(s.groups[g].free_inodes);
            st.1 += u64::from(s.free.group_free[g]);
            st.2 += u64::from(s.groups[g].used_dirs);
        }
        st
    }

    /// find_group_orlov over units of `unit` groups (1: ext2/ext3, the flex size: ext4) for a
    /// new inode under directory `parent`; `spread` places a top-level directory. Returns a
    /// unit.
    fn find_unit_orlov(&self, sb: usize, parent: DirId, spread: bool, unit: usize, rnd: u64) -> Option<usize> {
        let s = &self.sbs[sb];
        let nunits = s.groups.len().div_ceil(unit);
        let ipu = INODES_PER_GROUP * unit as u64;
        let freei: u64 = s.groups.iter().map(|g| u64::from(g.free_inodes)).sum();
        let avefreei = freei / nunits as u64;
        let avefreeb = s.free.total_free / nunits as u64;
        let ndirs: u64 = s.groups.iter().map(|g| u64::from(g.used_dirs)).sum();
        let parent_unit = s.dirs[parent as usize].group as usize / unit;
        if spread {
            let start = (rnd % nunits as u64) as usize;
            let mut best: Option<(usize, u64)> = None;
            for i in 0..nunits {
                let u = (start + i) % nunits;
                let (fi, fb, nd) = self.orlov_stats(sb, u, unit);
                if fi == 0 || nd >= best.map_or(ipu, |b| b.1) || fi < avefreei || fb < avefreeb {
                    continue;
                }
                best = Some((u, nd));
            }
            if let Some((u, _)) = best {
                return Some(u);
            }
        } else {
            let max_dirs = ndirs / nunits as u64 + ipu / 16;
            let min_inodes = avefreei.saturating_sub(ipu / 4);
            let min_blocks = avefreeb.saturating_sub(BLOCKS_PER_GROUP * unit as u64 / 4);
            for i in 0..nunits {
                let u = (parent_unit + i) % nunits;
                let (fi, fb, nd) = self.orlov_stats(sb, u, unit);
                if fi == 0 || nd >= max_dirs || fi < min_inodes || fb < min_blocks {
                    continue;
                }
                return Some(u);
            }
        }
        // fallback: the first unit with the average free inodes, then any with one.
        for min in [avefreei.max(1), 1] {
            for i in 0..nunits {
                let u = (parent_unit + i) % nunits;
                if self.orlov_stats(sb, u, unit).0 >= min {
                    return Some(u);
                }
            }
        }
        None
    }

    /// The first group of unit `u` with a free inode.
    fn first_group_with_inode(&self, sb: usize, u: usize, unit: usize) -> Option<usize> {
        let s = &self.sbs[sb];
        (u * unit..((u + 1) * unit).min(s.groups.len())).find(|&g| s.groups[g].free_inodes > 0)
    }

    /// find_group_other (ext2/ext3): the group of a new file's inode in directory `parent`.
    fn find_group_other(&self, sb: usize, parent: DirId) -> Option<usize> {
        let s = &self.sbs[sb];
        let n = s.groups.len();
        let ok = |g: usize| s.groups[g].free_inodes > 0 && s.free.group_free[g] > 0;
        let pg = s.dirs[parent as usize].group as usize;
        if ok(pg) {
            return Some(pg);
        }
        let mut g = (pg + s.dirs[parent as usize].i_ino as usize) % n;
        let mut i = 1;
        while i < n {
            g = (g + i) % n;
            if ok(g) {
                return Some(g);
            }
            i <<= 1;
        }
        (1..=n).map(|i| (pg + i) % n).find(|&g| s.groups[g].free_inodes > 0)
    }

    /// ext4's find_group_other with flex_bg.
    fn find_group_other_flex(&self, sb: usize, parent: DirId, rnd: u64) -> Option<usize> {
        let d = &self.sbs[sb].dirs[parent as usize];
        let unit = FLEX_BG as usize;
        for g in [Some(d.group), d.last_alloc_group].into_iter().flatten() {
            if let Some(g) = self.first_group_with_inode(sb, g as usize / unit, unit) {
                return Some(g);
            }
        }
        let u = self.find_unit_orlov(sb, parent, false, unit, rnd)?;
        self.first_group_with_inode(sb, u, unit)
    }

    /// Allocates an on-disk inode for a new file (or directory, `is_dir`) in directory
    /// `parent` (ext3_new_inode / ext4_new_inode): chooses its group and takes the lowest free
    /// inode there. Returns (group, i_ino), or None when no inode is free.
    pub fn ialloc(&mut self, sb: usize, parent: DirId, is_dir: bool, rnd: u64) -> Option<(u32, u64)> {
        let fs = self.sbs[sb].fs_type;
        let flex = matches!(fs, FsType::Ext4 | FsType::Xfs);
        let g = if is_dir {
            let spread = parent == ROOT_DIR || self.sbs[sb].dirs[parent as usize].topdir;
            let unit = if flex { FLEX_BG as usize } else { 1 };
            let u = self.find_unit_orlov(sb, parent, spread, unit, rnd)?;
            self.first_group_with_inode(sb, u, unit)?
        } else if flex {
            self.find_group_other_flex(sb, parent, rnd)?
        } else {
            self.find_group_other(sb, parent)?
        };
        let gd = &mut self.sbs[sb].groups[g];
        let idx = match gd.freed.pop_first() {
            Some(i) => i,
            None => {
                gd.next_unused += 1;
                gd.next_unused - 1
            }
        };
        gd.free_inodes -= 1;
        if is_dir {
            gd.used_dirs += 1;
        }
        self.sbs[sb].dirs[parent as usize].last_alloc_group = Some(g as u32);
        Some((g as u32, g as u64 * INODES_PER_GROUP + u64::from(idx)))
    }

    /// Frees on-disk inode `i_ino` (ext3_free_inode).
    pub fn ifree(&mut self, sb: usize, i_ino: u64, is_dir: bool) {
        let g = (i_ino / INODES_PER_GROUP) as usize;
        let gd = &mut self.sbs[sb].groups[g];
        gd.freed.insert((i_ino % INODES_PER_GROUP) as u32);
        gd.free_inodes += 1;
        if is_dir {
            gd.used_dirs -= 1;
        }
    }

    /// mkdir: a new directory under `parent` on superblock `sb`, by task `pid`; its inode
    /// goes where Orlov puts it and it gets its first block (near its group's start plus the
    /// task's colour, as ext3_find_near places a block of a new inode). Returns its id.
    pub fn mkdir(&mut self, sb: usize, parent: DirId, pid: u32) -> Option<DirId> {
        let rnd = mix64(self.sbs[sb].dirs.len() as u64 ^ u64::from(pid) << 32);
        let (group, i_ino) = self.ialloc(sb, parent, true, rnd)?;
        self.jbd_inode_alloc(sb, i_ino);
        let id = self.sbs[sb].dirs.len() as DirId;
        self.sbs[sb].dirs.push(Directory { i_ino, group, topdir: false, entries: 0, blocks: Vec::new(), last_alloc_group: None, i_mutex: Default::default() });
        self.dir_add_entry(sb, parent, name_hash_of(parent, i_ino));
        let goal = u64::from(group) * BLOCKS_PER_GROUP + u64::from(pid % 16) * (BLOCKS_PER_GROUP / 16);
        let b = self.new_block(sb, None, goal)?;
        self.dir_block_added(sb, id, b);
        Some(id)
    }

    /// A new block of directory `dir` (ext3_append): allocated and logged; on a file system
    /// with indexed directories its buffer is made in the block device's page cache, zeroed
    /// and uptodate, without a read (ext4_bread with create on a new block).
    fn dir_block_added(&mut self, sb: usize, dir: DirId, b: u64) {
        self.sbs[sb].dirs[dir as usize].blocks.push(b);
        let sector = self.sbs[sb].sector_of(b);
        self.jbd_block_allocated(sb, sector);
        self.jbd_dirty_metadata(sb, b);
        if self.sbs[sb].fs_type.htree_dirs() {
            self.touch_metadata_block(sb, b, super::namei::DIR_HINT_LEVEL + 1);
        }
    }

    /// Adds a name hashing to `name_hash` to directory `dir` (ext3_add_entry through the
    /// htree): new blocks when the leaves are three quarters full on average (the first split
    /// of a one-block directory makes it indexed: a dx_root in block 0 and two leaves), and the
    /// leaf the name hashes to is dirtied.
    pub fn dir_add_entry(&mut self, sb: usize, dir: DirId, name_hash: u64) {
        let d = &self.sbs[sb].dirs[dir as usize];
        // ext2's linear directories (and xfs's, not modelled) fill all their blocks alike.
        let leaves = if self.sbs[sb].fs_type.htree_dirs() { (d.blocks.len() as u64).saturating_sub(1).max(1) } else { d.blocks.len() as u64 };
        if (d.entries + 1) * 4 > leaves * DIR_ENTRIES_PER_BLOCK * 3 {
            let goal = d.blocks.last().map_or(u64::from(d.group) * BLOCKS_PER_GROUP, |&b| b + 1);
            if let Some(b) = self.new_block(sb, None, goal) {
                self.dir_block_added(sb, dir, b);
            }
        }
        if let Some(leaf) = self.dir_leaf_of(sb, dir, name_hash) {
            self.jbd_dirty_metadata(sb, leaf);
            // add_dirent_to_buf's buffer lookup touches the leaf's page again (touch_buffer).
            if self.sbs[sb].fs_type.htree_dirs() && self.sbs[sb].bdev_ino.is_some() {
                self.touch_cached_metadata_block(sb, leaf, super::namei::DIR_HINT_LEVEL + 1);
            }
        }
        self.sbs[sb].dirs[dir as usize].entries += 1;
    }

    /// Removes the name hashing to `name_hash` from directory `dir` (ext3_delete_entry): its
    /// leaf is dirtied.
    pub fn dir_remove_entry(&mut self, sb: usize, dir: DirId, name_hash: u64) {
        if let Some(leaf) = self.dir_leaf_of(sb, dir, name_hash) {
            self.jbd_dirty_metadata(sb, leaf);
        }
        let d = &mut self.sbs[sb].dirs[dir as usize];
        d.entries = d.entries.saturating_sub(1);
    }

    /// The block of directory `dir` that holds the names hashing like `name_hash`: the only
    /// block of a one-block directory, else the htree leaf the hash selects (block 0 is the
    /// dx_root; the hash is taken as uniform over the leaves, as half_md4 of fs_mark's random
    /// names is).
    pub fn dir_leaf_of(&self, sb: usize, dir: DirId, name_hash: u64) -> Option<u64> {
        let b = &self.sbs[sb].dirs[dir as usize].blocks;
        match b.len() {
            0 => None,
            1 => Some(b[0]),
            n => Some(b[1 + (name_hash % (n as u64 - 1)) as usize]),
        }
    }
}

/// The name hash the model gives a name it does not draw itself (a directory's entry in its
/// parent, a file created by a workload that does not name its files): a mix of the parent and
/// the inode number.
pub fn name_hash_of(dir: DirId, i_ino: u64) -> u64 {
    mix64(i_ino ^ u64::from(dir) << 40)
}

/// What mke2fs leaves on a new file system of `blocks` blocks with the journal at
/// `journal` (first block, blocks): every data block free except the root directory's block
/// and lost+found's four (the first data blocks of group 0), inodes 0–11 of group 0 in use
/// (the reserved inodes, the root as 2, lost+found as 11), two directories in group 0.
pub fn mkfs(fs: FsType, blocks: u64, journal: (u64, u64)) -> (super::balloc::FreeSpace, Vec<GroupDesc>, Vec<Directory>) {
    let ngroups = blocks.div_ceil(BLOCKS_PER_GROUP) as usize;
    let mut free = super::balloc::FreeSpace { group_free: vec![0; ngroups], ..Default::default() };
    let (js, jn) = journal;
    for g in 0..ngroups as u64 {
        let start = g * BLOCKS_PER_GROUP + fs.group_meta_blocks(g);
        let end = ((g + 1) * BLOCKS_PER_GROUP).min(blocks);
        if start >= end {
            continue;
        }
        if jn > 0 && js < end && js + jn > start {
            free.give(start, js.max(start) - start);
            free.give((js + jn).min(end), end - (js + jn).min(end));
        } else {
            free.give(start, end - start);
        }
    }
    let mut groups = vec![GroupDesc { free_inodes: INODES_PER_GROUP as u32, ..Default::default() }; ngroups];
    groups[0].next_unused = 12;
    groups[0].free_inodes -= 12;
    groups[0].used_dirs = 2;
    let first = free.first_free(0, blocks).expect("a data block");
    for b in first..first + 5 {
        free.take(b);
    }
    let root = Directory { i_ino: 2, group: 0, topdir: true, entries: 3, blocks: vec![first], last_alloc_group: None, i_mutex: Default::default() };
    (free, groups, vec![root])
}
