//! File systems (fs/): superblocks on block devices, inodes and dentries (objects in slab
//! caches, with their LRU lists and the superblock shrinker), block mapping of file pages, and
//! the file operations workloads call (create, unlink, open/close).
//!
//! Blocks come from the file system's allocator (`balloc`: ext2/ext3 reservation windows near
//! the inode's group and the writer's colour, ext4's goal in the inode's flex group); inodes
//! and directories are placed by `ialloc` (Orlov). When a page gets its block, and what
//! `->writepage` does when reclaim calls it, is the file system type's (`FsType`, 3.0
//! behaviour):
//!
//! | type | block allocated | writepage from kswapd | from direct reclaim |
//! |------|-----------------|------------------------|---------------------|
//! | ext2 | at write() (ext2_get_block in write_begin) | writes the page | writes the page |
//! | ext3 | at write() (ext3_get_block; data=ordered) | writes the page (ext3_ordered_writepage has no reclaim check) | writes the page |
//! | ext4 | at writeback (delayed allocation) | a delalloc page is redirtied, no I/O (ext4_writepage) | same |
//! | xfs  | at writeback (delayed allocation) | allocates the page's whole delalloc extent and writes the page plus up to 32 following dirty pages (xfs_vm_writepage + xfs_cluster_write) | redirtied, no I/O (PF_MEMALLOC without PF_KSWAPD) |
//!
//! Reclaim counts nr_vmscan_write for every writepage call, redirtied or not (pageout).
//! Data allocation skips each block group's metadata (bitmaps, inode tables; packed per 16
//! groups by ext4's flex_bg) and the journal, which mke2fs puts in the middle of the file
//! system; ext3 and ext4 journal their metadata (see `jbd`).

pub mod aops;
pub mod balloc;
pub mod buffer;
pub mod direct_io;
pub mod fs_writeback;
pub mod ialloc;
pub mod inode;
pub mod jbd;
pub mod namei;
pub mod sync;

use std::collections::BTreeMap;

use crate::block::SECTORS_PER_PAGE;
use crate::mm::gfp::Gfp;
use crate::mm::page_alloc::Mm;
use crate::mm::radix_tree::PAGECACHE_TAG_WRITEBACK;
use crate::mm::slab::CacheId;
use crate::mm::vmstat::Era;
use crate::mm::Pfn;

/// An inode number: index into `Mm::inodes`.
pub type Ino = u32;

/// Inode state bits (include/linux/fs.h I_*).
pub const I_DIRTY_PAGES: u32 = 1 << 0;
/// Being written back (I_SYNC).
pub const I_SYNC: u32 = 1 << 1;
/// Second chance on the inode LRU (I_REFERENCED).
pub const I_REFERENCED: u32 = 1 << 2;

/// The dentry of an inode (one name per file is modelled).
#[derive(Clone, Debug)]
pub struct Dentry {
    /// Slab page of the dentry object.
    pub slab: Pfn,
    /// References from open files and lookups in progress (d_count).
    pub d_count: u32,
    /// DCACHE_REFERENCED: used since the shrinker last looked.
    pub referenced: bool,
    /// Key in the superblock's dentry LRU, when unused.
    pub lru_key: Option<u64>,
}

/// Per-file readahead state (struct file_ra_state).
#[derive(Clone, Copy, Debug, Default)]
pub struct FileRaState {
    pub start: u32,
    pub size: u32,
    pub async_size: u32,
    /// Index after the last page read (prev_pos).
    pub prev_index: u32,
    /// Page faults that missed the cache (mmap_miss).
    pub mmap_miss: u32,
}

/// An inode (struct inode) with its page cache.
#[derive(Clone, Debug)]
pub struct Inode {
    pub sb: usize,
    /// Address space id of the page cache (see `Mm::mapping`).
    pub mapping: u32,
    /// File size in pages (i_size rounded up).
    pub size_pages: u64,
    pub nlink: u32,
    /// References: the dentry, open files, mappings (i_count).
    pub i_count: u32,
    /// I_* bits.
    pub state: u32,
    /// When the inode's pages were first dirtied (dirtied_when), ns.
    pub dirtied_when: u64,
    /// Key in the superblock's dirty list (b_dirty) while dirty.
    pub dirty_key: Option<u64>,
    /// Key in the superblock's inode LRU while unused.
    pub lru_key: Option<u64>,
    /// Disk extents: (first page index, first sector, pages), sorted by index.
    pub extents: Vec<(u32, u64, u32)>,
    /// Where the last extent lookup ended (`Inode::extents_upto`): a guess, checked before it
    /// is used, that makes walks in offset order cost no search.
    pub extent_hint: std::cell::Cell<u32>,
    /// Slab page of the inode object.
    pub slab: Pfn,
    pub dentry: Option<Dentry>,
    /// Where cyclic writeback resumes (mapping->writeback_index).
    pub writeback_index: u32,
    pub ra: FileRaState,
    /// The on-disk inode number (i_ino), which places the inode in a group's inode table.
    pub i_ino: u64,
    /// The group of the inode (i_block_group) and the directory holding its name.
    pub i_block_group: u32,
    pub dir: ialloc::DirId,
    /// The hash of its name in that directory (which htree leaf holds it).
    pub name_hash: u64,
    /// Block allocation state: reservation window, last allocation.
    pub alloc: balloc::BlockAllocInfo,
    /// ext2/ext3 indirect blocks of the file, by slot (`FsType::indirect_chain`).
    pub meta_blocks: BTreeMap<u32, u64>,
    /// The journal transaction that last logged a change fdatasync must make durable (its
    /// size or block allocations: ext3/ext4's i_datasync_tid), 0 if none.
    pub datasync_tid: u64,
}

impl Inode {
    /// How many extents start at or before page `index` (the extent holding it, if any, is
    /// the last of them): from the last lookup's place when that is still right, as in a walk
    /// in offset order, otherwise by binary search.
    #[inline]
    pub fn extents_upto(&self, index: u32) -> usize {
        let ext = &self.extents;
        let fits = |k: usize| (k == 0 || ext[k - 1].0 <= index) && (k == ext.len() || ext[k].0 > index);
        let h = self.extent_hint.get() as usize;
        let k = if h <= ext.len() && fits(h) {
            h
        } else if h < ext.len() && fits(h + 1) {
            h + 1
        } else {
            ext.partition_point(|e| e.0 <= index)
        };
        self.extent_hint.set(k as u32);
        k
    }

    /// An in-core inode of superblock `sb` with page cache `mapping` and its object in slab page
    /// `slab`: one reference, one link, no pages, no blocks, on no list.
    fn new(sb: usize, mapping: u32, slab: Pfn) -> Inode {
        Inode {
            sb,
            mapping,
            size_pages: 0,
            nlink: 1,
            i_count: 1,
            state: 0,
            dirtied_when: 0,
            dirty_key: None,
            lru_key: None,
            extents: Vec::new(),
            extent_hint: Default::default(),
            slab,
            dentry: None,
            writeback_index: 0,
            ra: FileRaState::default(),
            i_ino: 0,
            i_block_group: 0,
            dir: ialloc::ROOT_DIR,
            name_hash: 0,
            alloc: balloc::BlockAllocInfo::default(),
            meta_blocks: BTreeMap::new(),
            datasync_tid: 0,
        }
    }
}

/// grow_dev_page's mask: the block device mapping's GFP_USER without __GFP_FS, movable.
const METADATA_GFP: Gfp = Gfp::GFP_USER.without(Gfp::FS).with(Gfp::MOVABLE);

/// A read that waits for an indirect block before it can map the rest of its pages.
#[derive(Clone, Debug)]
pub enum MetaWaiter {
    /// mpage_readpages of a readahead: the file and its locked pages still to map, with their
    /// indexes.
    Readahead { ino: Ino, pages: Vec<(u32, Pfn)> },
    /// A direct I/O read: its id, the file, the index of the first page still to map and the
    /// user pages from there (already counted in the dio's remaining pages).
    Dio { id: u32, ino: Ino, index: u32, buf: Vec<Pfn> },
}

/// A file system type: what decides when blocks are allocated and how ->writepage treats
/// reclaim (see the module comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsType {
    Ext2,
    Ext3,
    #[default]
    Ext4,
    Xfs,
}

impl FsType {
    /// Blocks are allocated at writeback, not at write() (delayed allocation).
    pub fn delalloc(self) -> bool {
        matches!(self, FsType::Ext4 | FsType::Xfs)
    }

    /// Whether its writeback submits each page as a bio of its own (3.x ext3: generic_writepages
    /// calls ->writepage, block_write_full_page, per page, and the task's plug merges the
    /// pages into requests), so that the writer asks for a request at the first page of each
    /// and, finding the pool used up, sleeps holding that page alone. The others build a bio
    /// of many pages first (mpage_writepages, ext4's io_submit, xfs's ioends) and ask when
    /// they submit it. 6.x mounts ext3 with the ext4 driver.
    pub fn writes_page_by_page(self, era: Era) -> bool {
        self == FsType::Ext3 && era == Era::Linux3
    }

    /// The file system's inode slab cache: name, object size (x86_64, as slabinfo shows it on
    /// kernels of the era; ext2's is estimated from its struct) and the mask its ->alloc_inode
    /// uses (ext3, ext4 and xfs allocate inside a transaction: GFP_NOFS).
    pub fn inode_cache(self, era: Era) -> (&'static str, u32, Gfp) {
        match (self, era) {
            (FsType::Ext2, _) => ("ext2_inode_cache", 728, Gfp::GFP_KERNEL),
            (FsType::Ext3, _) => ("ext3_inode_cache", 768, Gfp::GFP_NOFS),
            (FsType::Ext4, Era::Linux3) => ("ext4_inode_cache", 1000, Gfp::GFP_NOFS),
            (FsType::Ext4, Era::Linux6) => ("ext4_inode_cache", 1256, Gfp::GFP_NOFS),
            (FsType::Xfs, Era::Linux3) => ("xfs_inode", 960, Gfp::GFP_NOFS),
            (FsType::Xfs, Era::Linux6) => ("xfs_inode", 1024, Gfp::GFP_NOFS),
        }
    }

    /// The mask of a file's page cache (mapping_gfp_mask): GFP_HIGHUSER_MOVABLE, without
    /// __GFP_FS for the 6.x xfs, which clears it on every inode's mapping (xfs_setup_inode).
    pub fn mapping_gfp(self, era: Era) -> Gfp {
        if self == FsType::Xfs && era == Era::Linux6 {
            Gfp::GFP_HIGHUSER_MOVABLE.without(Gfp::FS)
        } else {
            Gfp::GFP_HIGHUSER_MOVABLE
        }
    }

    /// Whether write_begin asks grab_cache_page_write_begin for AOP_FLAG_NOFS, so a buffered
    /// write's page comes without __GFP_FS (its direct reclaim neither writes pages nor prunes
    /// the inode and dentry caches): 3.x ext4 (ext4_write_begin, ext4_da_write_begin) and xfs
    /// (xfs_vm_write_begin); not ext2 or ext3, and not 6.x ext4, which takes the folio before
    /// it starts a handle.
    pub fn write_begin_nofs(self, era: Era) -> bool {
        era == Era::Linux3 && matches!(self, FsType::Ext4 | FsType::Xfs)
    }

    /// Whether buffered writes of file data go through buffer heads (block_write_begin,
    /// __block_write_begin): every ext* and the 2.6–3.x xfs (xfs_vm_write_begin); 6.x xfs
    /// writes through iomap without them.
    pub fn data_buffer_heads(self, era: Era) -> bool {
        !(self == FsType::Xfs && era == Era::Linux6)
    }

    /// Whether a write fault on a shared mapping attaches the page's buffers (->page_mkwrite
    /// that calls block_page_mkwrite: ext4 and the 3.x xfs); ext2 and ext3 of 3.x have no
    /// ->page_mkwrite, so a mapped page gets its buffers when it is written back.
    pub fn page_mkwrite_buffers(self, era: Era) -> bool {
        match self {
            FsType::Ext4 => true,
            FsType::Xfs => era == Era::Linux3,
            FsType::Ext2 | FsType::Ext3 => false,
        }
    }
}

/// What ->writepage did with a page reclaim handed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writepage {
    /// The page (and maybe its neighbours) is under writeback.
    Submitted,
    /// The file system declined and left the page dirty (redirty_page_for_writepage).
    Redirtied,
    /// The page was not dirty after all.
    Clean,
    /// Written without I/O: the journal's commit had written its buffers (`PG_BUF_CLEAN`), so
    /// its writeback began and ended at once and it is clean now.
    Done,
}

/// A mounted file system (struct super_block) on block device `dev`.
#[derive(Clone, Debug)]
pub struct SuperBlock {
    pub fs_type: FsType,
    pub dev: usize,
    /// First sector of the file system on the device.
    pub start_sector: u64,
    /// Free blocks (the block bitmaps) and free blocks per group.
    pub free: balloc::FreeSpace,
    /// Reservation windows of ext2/ext3 files: first block → (last block, file).
    pub rsv: BTreeMap<u64, (u64, Ino)>,
    /// Group descriptors (free inodes, directories, the inode bitmap).
    pub groups: Vec<ialloc::GroupDesc>,
    /// Directories; 0 is the root.
    pub dirs: Vec<ialloc::Directory>,
    /// Dirty inodes in the order they were dirtied (b_dirty; oldest first here).
    pub b_dirty: BTreeMap<u64, Ino>,
    /// Unused inodes (s_inode_lru): lowest key is the tail (oldest).
    pub inode_lru: BTreeMap<u64, Ino>,
    /// Unused dentries (s_dentry_lru).
    pub dentry_lru: BTreeMap<u64, Ino>,
    /// Sequence for the ordered lists above.
    pub seq: u64,
    /// Slab caches of this file system's inodes and of dentries.
    pub inode_cache: CacheId,
    pub dentry_cache: CacheId,
    /// Size of the file system in 4 KiB blocks.
    pub blocks: u64,
    /// The journal area (first block, blocks; 0 blocks: none) and its index in `Mm::journals`.
    pub journal_area: (u64, u64),
    pub journal: Option<usize>,
    /// The block device's inode, whose page cache holds the file system's metadata blocks
    /// ("Buffers"); made at the first metadata block cached.
    pub bdev_ino: Option<Ino>,
    /// The metadata block looked up last at each depth of an indirect path (0-2), the
    /// directory dx_root (3) and leaf (4) and the inode table block (5) looked up last, with
    /// their pages (a lookup shortcut
    /// of the model's: the page is checked to still hold the block before use).
    pub meta_hint: [Option<(u64, Pfn)>; 6],
}

impl SuperBlock {
    /// The next key: newer entries sort after older ones.
    pub fn next_key(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The first block at or after `block` that may hold data: past the metadata at the start
    /// of its block group and past the journal.
    pub fn next_data_block(&self, mut block: u64) -> u64 {
        loop {
            let g = block / jbd::BLOCKS_PER_GROUP;
            let meta = self.fs_type.group_meta_blocks(g);
            let (js, jn) = self.journal_area;
            if block % jbd::BLOCKS_PER_GROUP < meta {
                block = g * jbd::BLOCKS_PER_GROUP + meta;
            } else if jn > 0 && block >= js && block < js + jn {
                block = js + jn;
            } else {
                return block;
            }
        }
    }

    /// Data blocks from data block `block` up to the next metadata or the journal.
    pub fn data_run(&self, block: u64) -> u64 {
        let group_end = (block / jbd::BLOCKS_PER_GROUP + 1) * jbd::BLOCKS_PER_GROUP;
        let (js, jn) = self.journal_area;
        let end = if jn > 0 && js > block { group_end.min(js) } else { group_end };
        end - block
    }

    /// The block of a sector of this file system, and back.
    pub fn block_of(&self, sector: u64) -> u64 {
        (sector - self.start_sector) / SECTORS_PER_PAGE
    }

    pub fn sector_of(&self, block: u64) -> u64 {
        self.start_sector + block * SECTORS_PER_PAGE
    }
}

impl Mm {
    /// The inode with number `ino`.
    #[inline(always)]
    pub fn inode(&self, ino: Ino) -> &Inode {
        self.inodes[ino as usize].as_ref().expect("a live inode")
    }

    #[inline(always)]
    pub fn inode_mut(&mut self, ino: Ino) -> &mut Inode {
        self.inodes[ino as usize].as_mut().expect("a live inode")
    }

    /// Creates a file in the root directory of superblock `sb` (see `create_file_in`).
    pub fn create_file(&mut self, sb: usize, cpu: usize) -> Option<Ino> {
        self.create_file_in(sb, ialloc::ROOT_DIR, cpu)
    }

    /// Creates a file in directory `dir` of superblock `sb` (open(O_CREAT)): allocates its
    /// inode and dentry objects and an empty page cache, places its on-disk inode (`ialloc`)
    /// and adds its name to the directory; the file starts open once (i_count holds the dentry
    /// and the open). Returns None if the objects or an inode could not be allocated.
    pub fn create_file_in(&mut self, sb: usize, dir: ialloc::DirId, cpu: usize) -> Option<Ino> {
        self.create_file_named(sb, dir, None, cpu)
    }

    /// `create_file_in` for a name whose hash the caller drew (`name_hash`; None: the model's
    /// `ialloc::name_hash_of`). The caller of a named create has looked the name up (`namei`)
    /// under the directory's i_mutex, so the leaf it goes to is cached.
    pub fn create_file_named(&mut self, sb: usize, dir: ialloc::DirId, name_hash: Option<u64>, cpu: usize) -> Option<Ino> {
        self.cost_ns += self.costs.file_create_ns;
        let objects = self.alloc_inode_objects(sb, cpu)?;
        let rnd = ialloc::mix64(self.sbs[sb].seq ^ 0x5eed);
        let Some((i_block_group, i_ino)) = self.ialloc(sb, dir, false, rnd) else {
            self.free_inode_objects(sb, objects, cpu);
            return None;
        };
        let name_hash = name_hash.unwrap_or_else(|| ialloc::name_hash_of(dir, i_ino));
        self.dir_add_entry(sb, dir, name_hash);
        let ino = self.new_open_inode(sb, objects);
        self.jbd_inode_alloc(sb, i_ino);
        let i = self.inode_mut(ino);
        (i.i_ino, i.i_block_group, i.dir, i.name_hash) = (i_ino, i_block_group, dir, name_hash);
        Some(ino)
    }

    /// An inode object and a dentry object from superblock `sb`'s caches (alloc_inode and
    /// d_alloc); None, with neither kept, if either cannot be had.
    fn alloc_inode_objects(&mut self, sb: usize, cpu: usize) -> Option<(Pfn, Pfn)> {
        let (ic, dc) = (self.sbs[sb].inode_cache, self.sbs[sb].dentry_cache);
        let islab = self.kmem_cache_alloc(ic, cpu)?;
        let Some(dslab) = self.kmem_cache_alloc(dc, cpu) else {
            self.kmem_cache_free(ic, islab, cpu);
            return None;
        };
        Some((islab, dslab))
    }

    fn free_inode_objects(&mut self, sb: usize, (islab, dslab): (Pfn, Pfn), cpu: usize) {
        let (ic, dc) = (self.sbs[sb].inode_cache, self.sbs[sb].dentry_cache);
        self.kmem_cache_free(ic, islab, cpu);
        self.kmem_cache_free(dc, dslab, cpu);
    }

    /// A new in-core inode of `sb` on those objects, open once through its dentry (i_count
    /// holds the dentry and the open).
    fn new_open_inode(&mut self, sb: usize, (islab, dslab): (Pfn, Pfn)) -> Ino {
        let (ino, mapping) = self.new_inode_slot();
        self.inodes[ino as usize] = Some(Box::new(Inode {
            i_count: 2,
            dentry: Some(Dentry { slab: dslab, d_count: 1, referenced: false, lru_key: None }),
            ..Inode::new(sb, mapping, islab)
        }));
        ino
    }

    /// A file of superblock `sb` that existed before the run and that the booted system has
    /// looked up (d_alloc + iget): its inode and dentry objects are allocated from the
    /// superblock's caches, open once as after `create_file_named`. Nothing is placed,
    /// named or journaled, since its on-disk inode and directory entry predate the run; it is
    /// never written, so it needs no on-disk place here (its i_ino stays 0). None if the
    /// objects could not be allocated.
    pub fn boot_file(&mut self, sb: usize, cpu: usize) -> Option<Ino> {
        let objects = self.alloc_inode_objects(sb, cpu)?;
        Some(self.new_open_inode(sb, objects))
    }

    /// Opens an existing file (path lookup finds the cached dentry): takes a dentry and an inode
    /// reference; returns false if the file no longer exists.
    pub fn open_file(&mut self, ino: Ino) -> bool {
        self.cost_ns += self.costs.syscall_ns;
        let Some(inode) = self.inodes.get(ino as usize).and_then(|i| i.as_ref()) else { return false };
        if inode.nlink == 0 {
            return false;
        }
        let sb = inode.sb;
        if let Some(key) = self.inode(ino).dentry.as_ref().and_then(|d| d.lru_key) {
            self.sbs[sb].dentry_lru.remove(&key);
        }
        if let Some(key) = self.inode(ino).lru_key {
            self.sbs[sb].inode_lru.remove(&key);
        }
        let i = self.inode_mut(ino);
        i.lru_key = None;
        i.i_count += 1;
        if let Some(d) = i.dentry.as_mut() {
            d.d_count += 1;
            d.lru_key = None;
        }
        true
    }

    /// Closes a file (fput → dput + iput): its reservation window is discarded
    /// (ext3_release_file; every open is taken as the last writer), and an unused dentry goes
    /// on the dentry LRU with DCACHE_REFERENCED set.
    pub fn close_file(&mut self, ino: Ino) {
        self.cost_ns += self.costs.syscall_ns;
        self.discard_reservation(ino);
        let sb = self.inode(ino).sb;
        let key = self.sbs[sb].next_key();
        let i = self.inode_mut(ino);
        i.i_count -= 1;
        if let Some(d) = i.dentry.as_mut() {
            d.d_count -= 1;
            d.referenced = true;
            if d.d_count == 0 {
                d.lru_key = Some(key);
                self.sbs[sb].dentry_lru.insert(key, ino);
            }
        }
        self.iput_final_check(ino);
    }

    /// The sector of page `index` of a file, if blocks are allocated for it (bmap).
    pub fn bmap(&self, ino: Ino, index: u32) -> Option<u64> {
        let inode = self.inode(ino);
        let ext = &inode.extents;
        let i = inode.extents_upto(index);
        if i == 0 {
            return None;
        }
        let (start, sector, len) = ext[i - 1];
        (index < start + len).then(|| sector + u64::from(index - start) * SECTORS_PER_PAGE)
    }

    /// Allocates the block of page `index` (at write() for ext2/ext3, at writeback or at
    /// writepage from reclaim with delayed allocation) for the current task: the file system's
    /// allocator (`balloc`) places it near the goal, ext2/ext3 first allocating the indirect
    /// blocks the index needs in front of it (ext3_alloc_branch); the file's last extent grows
    /// when the block follows it, otherwise a new extent starts. A journaled file system logs
    /// the block bitmaps and the indirect blocks.
    pub fn get_block(&mut self, ino: Ino, index: u32) -> u64 {
        let pid = self.sched.current_pid;
        self.alloc_file_block(ino, index, pid, true)
    }

    /// ->write_begin of a file system without delayed allocation (ext2, ext3) maps page
    /// `index`'s block now; allocating one costs the writer `get_block_ns`.
    pub fn write_begin_get_block(&mut self, ino: Ino, index: u32) {
        if self.bmap(ino, index).is_none() {
            self.cost_ns += self.costs.get_block_ns;
            let pid = self.sched.current_pid;
            self.alloc_new_file_block(ino, index, pid, true);
        }
    }

    /// `get_block` for task `pid`, journaling the allocation or not.
    fn alloc_file_block(&mut self, ino: Ino, index: u32, pid: u32, journal: bool) -> u64 {
        match self.bmap(ino, index) {
            Some(s) => s,
            None => self.alloc_new_file_block(ino, index, pid, journal),
        }
    }

    /// `alloc_file_block` for a page that has no block yet.
    fn alloc_new_file_block(&mut self, ino: Ino, index: u32, pid: u32, journal: bool) -> u64 {
        let sb = self.inode(ino).sb;
        let fs = self.sbs[sb].fs_type;
        let mut goal = self.block_goal(ino, index, pid);
        let full = "the file system is full (mmtwin does not model ENOSPC): make [machine.disk] size larger";
        let (chain, depth) = fs.indirect_chain(u64::from(index));
        for (level, &slot) in chain[..depth].iter().enumerate() {
            // ext3_get_branch reads the path down to the first missing block (each read a
            // buffer lookup that touches its page), ext3_alloc_branch allocates the rest and
            // gets a buffer for each (sb_getblk) before the data block.
            if let Some(&b) = self.inode(ino).meta_blocks.get(&slot) {
                if journal {
                    self.touch_metadata_block(sb, b, level);
                }
                continue;
            }
            let b = self.new_block(sb, Some(ino), goal).expect(full);
            self.inode_mut(ino).meta_blocks.insert(slot, b);
            if journal {
                let sector = self.sbs[sb].sector_of(b);
                self.jbd_block_allocated(sb, sector);
                self.jbd_dirty_metadata(sb, b);
                self.touch_metadata_block(sb, b, level);
            }
            goal = b + 1;
        }
        let b = self.new_block(sb, Some(ino), goal).expect(full);
        let sector = self.sbs[sb].sector_of(b);
        if journal {
            self.jbd_block_allocated(sb, sector);
            if let Some(j) = self.sbs[sb].journal {
                // ext3/ext4_update_inode_fsync_trans(.., datasync=1) of a new block.
                self.inode_mut(ino).datasync_tid = self.journals[j].tid;
            }
        }
        let i = self.inode_mut(ino);
        i.alloc.last_alloc = Some((index, b));
        let k = i.extents_upto(index);
        let ext = &mut i.extents;
        if k > 0 {
            let last = &mut ext[k - 1];
            if last.0 + last.2 == index && last.1 + u64::from(last.2) * SECTORS_PER_PAGE == sector {
                last.2 += 1;
                return sector;
            }
        }
        ext.insert(k, (index, sector, 1));
        sector
    }

    /// Gives file `ino` (empty) `pages` pages of data on disk, placed as its file system places
    /// a file written in one sequential pass by one task (the file a benchmark wrote before it
    /// reads): block by block through the allocator, ext2/ext3's indirect blocks in front of
    /// the data blocks that need them. No page cache is created and nothing is journaled (the
    /// file predates the measurement).
    pub fn lay_out_file(&mut self, ino: Ino, pages: u64) {
        let pid = self.sched.current_pid;
        for index in 0..pages {
            self.alloc_file_block(ino, index as u32, pid, false);
        }
        self.discard_reservation(ino);
        self.inode_mut(ino).size_pages = pages;
    }

    /// A new number in the in-core inode table and a new page cache for it (new_inode).
    fn new_inode_slot(&mut self) -> (Ino, u32) {
        self.inodes.push(None);
        let ino = (self.inodes.len() - 1) as Ino;
        (ino, self.new_mapping(ino as u64))
    }

    /// The page cache of the file system's block device (bdget's inode; made on first use).
    /// Its pages are unmapped file pages on the file LRU, reclaimed like any clean page cache.
    pub fn bdev_mapping(&mut self, sb: usize) -> u32 {
        if let Some(ino) = self.sbs[sb].bdev_ino {
            return self.inode(ino).mapping;
        }
        let (ino, mapping) = self.new_inode_slot();
        // Pinned (i_count 1 for the mounted file system), so never on the inode LRU.
        self.inodes[ino as usize] = Some(Box::new(Inode { size_pages: self.sbs[sb].blocks, ..Inode::new(sb, mapping, 0) }));
        self.sbs[sb].bdev_ino = Some(ino);
        mapping
    }

    /// A buffer lookup of metadata block `block` of file system `sb` (__getblk): the block's
    /// page in the block device's page cache is marked accessed (touch_buffer), so a block
    /// looked up again and again, as an indirect block is for each of the 1,024 data blocks
    /// below it, goes to the active list. A block not cached gets a new page
    /// (grow_dev_page: the bdev mapping's GFP_USER without __GFP_FS, movable), uptodate: on
    /// this write path the model does not read back a metadata block that reclaim dropped
    /// (readers do, `bread_indirect_path`). No page if the allocation fails. `level` is the block's depth on its indirect path (0 for the top).
    pub fn touch_metadata_block(&mut self, sb: usize, block: u64, level: usize) {
        let (mapping, index, found) = self.find_metadata_page(sb, block, level);
        let pfn = match found {
            Some(p) => p,
            None => {
                let cpu = self.sched.current_cpu;
                let Some(pfn) = self.alloc_pages(METADATA_GFP, 0, cpu) else { return };
                self.add_to_page_cache_lru(pfn, mapping, index, Gfp::GFP_NOFS, cpu);
                self.create_empty_buffers(pfn, cpu);
                self.pages[pfn as usize].flags |= crate::mm::mm_types::PG_UPTODATE;
                self.sbs[sb].meta_hint[level] = Some((block, pfn));
                pfn
            }
        };
        self.mark_page_accessed(pfn);
    }

    /// __find_get_block of metadata block `block` of `sb`: its page, if cached, is marked
    /// accessed; nothing is allocated or read.
    pub fn touch_cached_metadata_block(&mut self, sb: usize, block: u64, level: usize) {
        if let (_, _, Some(p)) = self.find_metadata_page(sb, block, level) {
            self.mark_page_accessed(p);
        }
    }

    /// The block device page cache of `sb`, the page index of metadata block `block` in it and
    /// its page if cached. A shortcut of the model's (not the kernel's): the page found last at
    /// depth `level` of an indirect path is checked first, then the page cache's tree.
    fn find_metadata_page(&mut self, sb: usize, block: u64, level: usize) -> (u32, u32, Option<Pfn>) {
        let mapping = self.bdev_mapping(sb);
        let index = u32::try_from(block).expect("block numbers of a file system below 16 TiB fit a page index");
        self.cost_ns += self.costs.page_cache_lookup_ns;
        let hinted = self.sbs[sb].meta_hint[level].filter(|&(b, p)| b == block && self.pages[p as usize].mapping == mapping && self.pages[p as usize].index == index);
        let found = hinted.map(|(_, p)| p).or_else(|| self.find_get_page(mapping, index));
        if let Some(p) = found {
            self.sbs[sb].meta_hint[level] = Some((block, p));
        }
        (mapping, index, found)
    }

    /// get_block for a reader mapping data block `index` of `ino` (mpage_readpages'
    /// map_bh, direct I/O's get_more_blocks): one call maps a run of blocks under the same
    /// indirect blocks, so a block that continues the run mapped last (`run`: its last index
    /// and indirect path) needs no lookup; otherwise the path is read (`bread_indirect_path`).
    /// Returns the metadata page to wait for, if any.
    pub fn map_block_for_read(&mut self, ino: Ino, index: u32, run: &mut Option<(u32, ([u32; 3], usize))>, cpu: Option<usize>) -> Option<Pfn> {
        let chain = self.sbs[self.inode(ino).sb].fs_type.indirect_chain(u64::from(index));
        let same_run = run.is_some_and(|(i, c)| i + 1 == index && c == chain);
        *run = Some((index, chain));
        if same_run {
            return None;
        }
        self.bread_indirect_path(ino, index, cpu)
    }

    /// ext2_get_branch for a read: looks up the indirect blocks on the path to data block
    /// `index` of `ino`, touching the cached ones. The first that is not cached and uptodate is
    /// returned for the reader to wait on: a page already being read, or a new one whose read
    /// this call submits (__bread: submit_bh, then wait_on_buffer, whose sleep flushes the
    /// task's plug so the read starts at once). `cpu` is None in a read's completion context,
    /// where the page is taken without direct reclaim. None when the path is cached (or a page
    /// could not be had: then the block is taken as read).
    pub fn bread_indirect_path(&mut self, ino: Ino, index: u32, cpu: Option<usize>) -> Option<Pfn> {
        let sb = self.inode(ino).sb;
        let (chain, depth) = self.sbs[sb].fs_type.indirect_chain(u64::from(index));
        for (level, &slot) in chain[..depth].iter().enumerate() {
            let Some(&block) = self.inode(ino).meta_blocks.get(&slot) else { return None };
            if let Some((p, _)) = self.bread_metadata(sb, block, level, cpu) {
                return Some(p);
            }
        }
        None
    }

    /// __bread of metadata block `block` of `sb` for a task that needs it uptodate: a cached
    /// block is touched (marked accessed); a block the journal holds is in memory (its buffer
    /// cannot have been freed; should the model's page be gone, it is made again, uptodate,
    /// without a read); otherwise a new page is allocated, locked, and its read submitted
    /// (submit_bh, then wait_on_buffer, whose sleep flushes the task's plug so the read starts
    /// at once). Returns the page to wait for and whether this call submitted its read, None
    /// when the block is uptodate in memory (or no page could be had: then it is taken as
    /// read). `level` is the `meta_hint` slot; `cpu` None in a read's completion context,
    /// where the page is taken without direct reclaim.
    pub fn bread_metadata(&mut self, sb: usize, block: u64, level: usize, cpu: Option<usize>) -> Option<(Pfn, bool)> {
        let (mapping, bindex, found) = self.find_metadata_page(sb, block, level);
        if let Some(p) = found {
            self.mark_page_accessed(p);
            if self.pages[p as usize].flags & crate::mm::mm_types::PG_UPTODATE == 0 {
                return Some((p, false));
            }
            return None;
        }
        let gfp = if cpu.is_some() { METADATA_GFP } else { METADATA_GFP.without(Gfp::DIRECT_RECLAIM) };
        let acpu = cpu.unwrap_or(self.sched.current_cpu);
        let pfn = self.alloc_pages(gfp, 0, acpu)?;
        self.add_to_page_cache_lru(pfn, mapping, bindex, gfp.without(Gfp::FS), acpu);
        self.create_empty_buffers(pfn, acpu);
        self.sbs[sb].meta_hint[level] = Some((block, pfn));
        self.mark_page_accessed(pfn);
        if self.jbd_holds(sb, block) {
            self.pages[pfn as usize].flags |= crate::mm::mm_types::PG_UPTODATE;
            return None;
        }
        self.pages[pfn as usize].flags |= crate::mm::mm_types::PG_LOCKED;
        let dev = self.sbs[sb].dev;
        let sector = self.sbs[sb].sector_of(block);
        self.bdevs[dev].stats.metadata_reads += 1;
        self.submit_bio(dev, crate::block::Bio::new(crate::block::Dir::Read, sector, pfn));
        self.blk_flush_plug_list();
        Some((pfn, true))
    }

    /// The page of a block-device page cache page's file system block is held by the journal
    /// (try_to_release_page → jbd2_journal_try_to_free_buffers fails): reclaim must keep it.
    pub fn bdev_page_pinned(&self, pfn: Pfn) -> bool {
        let p = &self.pages[pfn as usize];
        if p.mapping == 0 {
            return false;
        }
        let ino = self.mapping(p.mapping).host as Ino;
        let sb = self.inode(ino).sb;
        self.sbs[sb].bdev_ino == Some(ino) && self.jbd_holds(sb, u64::from(p.index))
    }

    /// Metadata pages cached for file system `sb` (the "Buffers" of /proc/meminfo).
    pub fn nr_bdev_pages(&self, sb: usize) -> u64 {
        self.sbs[sb].bdev_ino.map_or(0, |ino| self.mapping(self.inode(ino).mapping).nrpages())
    }

    /// The block device of a page cache page's file.
    pub fn page_bdev(&self, pfn: Pfn) -> Option<usize> {
        let mapping = self.pages[pfn as usize].mapping;
        if mapping == 0 {
            return None;
        }
        let ino = self.mapping(mapping).host as Ino;
        Some(self.sbs[self.inode(ino).sb].dev)
    }

    /// Unlinks a file (unlink + the final iput): drops its name and, once nobody uses it,
    /// truncates its page cache and frees the inode, as truncate_inode_pages does it: a first
    /// pass removes every page that is neither locked nor under writeback (a dirty one is
    /// cancelled, never written), then the pages under writeback are waited for one by one;
    /// ext2/ext3 then read the file's indirect blocks that are not cached (`free_branches`).
    /// The name's lookup reads back an inode the shrinkers evicted (`iget`). Returns
    /// Err(Some(pfn)) of a page for the caller to wait on (that read, or a page under
    /// writeback) and call again, Err(None) when the lookup found no memory (try later), Ok
    /// when done.
    pub fn unlink_file(&mut self, ino: Ino, cpu: usize) -> Result<(), Option<Pfn>> {
        use crate::mm::mm_types::{PG_BUF_LOCKED, PG_LOCKED, PG_WRITEBACK};
        self.iget(ino, cpu)?;
        let sb = self.inode(ino).sb;
        if self.inode(ino).nlink > 0 {
            self.cost_ns += self.costs.file_unlink_ns;
            let (dir, name_hash) = (self.inode(ino).dir, self.inode(ino).name_hash);
            self.dir_remove_entry(sb, dir, name_hash);
            if self.d_free(ino, cpu) {
                self.inode_mut(ino).i_count -= 1;
            }
            self.inode_mut(ino).nlink = 0;
        }
        if self.inode(ino).i_count > 0 {
            // The last user's iput evicts it.
            return Ok(());
        }
        // iput_final of an unlinked inode: off the writeback and LRU lists, straight to evict.
        self.inode_off_lists(ino);
        let mapping = self.inode(ino).mapping;
        let (idle, busy): (Vec<Pfn>, Vec<Pfn>) = self.mapping_pages(mapping).into_iter().partition(|&p| self.pages[p as usize].flags & (PG_LOCKED | PG_WRITEBACK | PG_BUF_LOCKED) == 0);
        for pfn in idle {
            self.truncate_page(pfn, cpu);
        }
        let root = &self.mapping(mapping).i_pages;
        if let Some(index) = self.radix_nodes.next(root, 0, Some(PAGECACHE_TAG_WRITEBACK)) {
            return Err(Some(self.radix_nodes.lookup(root, index).expect("a tagged page is cached")));
        }
        // A page whose buffers the journal is writing: block_invalidatepage's lock_buffer.
        if let Some(&pfn) = busy.iter().find(|&&p| self.pages[p as usize].flags & PG_BUF_LOCKED != 0) {
            return Err(Some(pfn));
        }
        // ext3_delete_inode → ext3_truncate: the indirect blocks are read to free the file's
        // blocks.
        self.free_branches(ino, cpu).map_err(Some)?;
        self.evict_inode(ino, cpu);
        Ok(())
    }

    /// Frees an inode nobody references: truncates its page cache (truncate_inode_pages),
    /// takes it off the dirty and LRU lists and frees its object (evict + destroy_inode).
    pub fn evict_inode(&mut self, ino: Ino, cpu: usize) {
        let sb = self.inode(ino).sb;
        self.truncate_inode_pages(ino, cpu);
        if self.inode(ino).nlink == 0 {
            // ext3_delete_inode: the blocks and the inode are freed in a transaction.
            self.jbd_blocks_freed(ino);
            self.free_file_blocks(ino);
            let i_ino = self.inode(ino).i_ino;
            self.ifree(sb, i_ino, false);
            self.jbd_inode_alloc(sb, i_ino);
        }
        self.inode_off_lists(ino);
        self.d_free(ino, cpu);
        let slab = self.inode(ino).slab;
        let ic = self.sbs[sb].inode_cache;
        self.kmem_cache_free(ic, slab, cpu);
        let mapping = self.inode(ino).mapping;
        self.free_mapping(mapping);
        let mut inode = self.inodes[ino as usize].take().expect("a live inode");
        if inode.nlink > 0 {
            // Pruned from the icache: the file lives on on disk, where a lookup reads it back.
            (inode.mapping, inode.slab, inode.dentry, inode.i_count, inode.state) = (0, 0, None, 0, 0);
            self.evicted_inodes.insert(ino, inode);
        }
    }

    /// The lookup of an existing file by open or unlink (path walk, then 3.0 ext3_lookup →
    /// ext3_iget; iget_locked in 6.x): an inode still in the icache is found, with a new
    /// dentry if the shrinker freed its own (d_alloc), which takes an inode reference. An inode
    /// the shrinkers evicted is read back: its inode table block, read synchronously if it is
    /// not cached (__ext3_get_inode_loc), then new inode and dentry objects and an empty page
    /// cache; its in-core state (readahead, writeback position, reservation window) starts
    /// afresh. Err(Some(page)): wait for that page's read and call again; Err(None): no memory
    /// for the objects. A file unlinked and gone is Ok (the caller's open finds no file).
    pub fn iget(&mut self, ino: Ino, cpu: usize) -> Result<(), Option<Pfn>> {
        if let Some(Some(inode)) = self.inodes.get(ino as usize) {
            if inode.dentry.is_some() || inode.nlink == 0 {
                return Ok(());
            }
            let dc = self.sbs[inode.sb].dentry_cache;
            let dslab = self.kmem_cache_alloc(dc, cpu).ok_or(None)?;
            let i = self.inode_mut(ino);
            i.dentry = Some(Dentry { slab: dslab, d_count: 0, referenced: false, lru_key: None });
            i.i_count += 1;
            return Ok(());
        }
        let Some(disk) = self.evicted_inodes.get(&ino) else { return Ok(()) };
        let (sb, i_ino) = (disk.sb, disk.i_ino);
        self.cost_ns += self.costs.syscall_ns;
        let block = self.sbs[sb].fs_type.inode_block_of(i_ino);
        if let Some((pfn, _)) = self.bread_metadata(sb, block, namei::ITABLE_HINT_LEVEL, Some(cpu)) {
            return Err(Some(pfn));
        }
        let (islab, dslab) = self.alloc_inode_objects(sb, cpu).ok_or(None)?;
        let disk = *self.evicted_inodes.remove(&ino).expect("looked up above");
        let mapping = self.new_mapping(ino as u64);
        let fresh = Inode::new(sb, mapping, islab);
        self.inodes[ino as usize] = Some(Box::new(Inode {
            dentry: Some(Dentry { slab: dslab, d_count: 0, referenced: false, lru_key: None }),
            extents: disk.extents,
            size_pages: disk.size_pages,
            nlink: disk.nlink,
            i_ino,
            i_block_group: disk.i_block_group,
            dir: disk.dir,
            name_hash: disk.name_hash,
            meta_blocks: disk.meta_blocks,
            ..fresh
        }));
        Ok(())
    }

    /// Takes an inode off its superblock's writeback (b_dirty) and unused (LRU) lists.
    fn inode_off_lists(&mut self, ino: Ino) {
        let sb = self.inode(ino).sb;
        let i = self.inode_mut(ino);
        let (dk, lk) = (i.dirty_key.take(), i.lru_key.take());
        i.state &= !I_DIRTY_PAGES;
        if let Some(k) = dk {
            self.sbs[sb].b_dirty.remove(&k);
        }
        if let Some(k) = lk {
            self.sbs[sb].inode_lru.remove(&k);
        }
    }

    /// Frees an inode's dentry, if it has one (off the dentry LRU, back to its cache); returns
    /// true if it had one (the dentry held a reference to the inode).
    fn d_free(&mut self, ino: Ino, cpu: usize) -> bool {
        let sb = self.inode(ino).sb;
        let Some(d) = self.inode_mut(ino).dentry.take() else { return false };
        if let Some(k) = d.lru_key {
            self.sbs[sb].dentry_lru.remove(&k);
        }
        let dc = self.sbs[sb].dentry_cache;
        self.kmem_cache_free(dc, d.slab, cpu);
        true
    }

    /// Removes every page of a file from the page cache and frees it (truncate_inode_pages);
    /// dirty pages are cancelled. Pages under writeback must have finished (the caller waited).
    pub fn truncate_inode_pages(&mut self, ino: Ino, cpu: usize) {
        let mapping = self.inode(ino).mapping;
        let pages = self.mapping_pages(mapping);
        for (i, &pfn) in pages.iter().enumerate() {
            if let Some(&ahead) = pages.get(i + crate::mm::PREFETCH_AHEAD) {
                self.prefetch_page(ahead);
            }
            debug_assert!(self.pages[pfn as usize].flags & (crate::mm::mm_types::PG_WRITEBACK | crate::mm::mm_types::PG_BUF_LOCKED) == 0, "inode {ino} evicted with page {pfn} under writeback");
            self.truncate_page(pfn, cpu);
        }
    }

    /// Truncates one page cache page: unmaps it, cancels its dirty state, takes it off the LRU
    /// and out of the cache, and frees it.
    pub fn truncate_page(&mut self, pfn: Pfn, cpu: usize) {
        use crate::mm::mm_types::*;
        if self.pages[pfn as usize].flags & PG_MAPPED != 0 {
            self.try_to_unmap(pfn);
        }
        self.cancel_dirty_page(pfn);
        self.pages[pfn as usize].flags &= !PG_BUF_CLEAN;
        if self.pages[pfn as usize].flags & PG_LRU != 0 {
            self.del_page_from_lru_list(pfn);
        }
        self.delete_from_page_cache(pfn, cpu);
        self.free_pages(pfn, 0, cpu);
    }
}
