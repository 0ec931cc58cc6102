//! The journals of ext3 (fs/jbd, data=ordered) and ext4 (fs/jbd2), 2.6.32–3.0 behaviour, and the
//! on-disk places of the metadata they log.
//!
//! A running transaction collects the metadata blocks file operations dirty: the inode table
//! block of an inode whose size or times change (every write marks the inode dirty), the block
//! bitmap and group descriptor of each block allocation, the inode bitmap on create and delete,
//! and ext3's indirect blocks. In data=ordered mode (ext3) it also collects the inodes whose data
//! was written (journal_dirty_data on each written buffer). The journal thread (kjournald,
//! jbd2/sdX-8) commits the running transaction when it is `commit_interval` old (5 s,
//! JBD_DEFAULT_MAX_COMMIT_AGE) or holds a quarter of the journal (j_max_transaction_buffers):
//!
//! 1. ext3 data=ordered: the buffers of every dirty data page of the transaction's inodes are
//!    submitted (journal_submit_data_buffers: lock the buffer, clear its dirty bit, submit_bh;
//!    the page stays dirty and out of page writeback, `PG_BUF_CLEAN`/`PG_BUF_LOCKED`, until a
//!    ->writepage finds its buffers clean) and the thread waits for those writes and for
//!    writes already in flight on them. ext4 with delayed allocation has no allocated dirty data at
//!    commit (jbd2 writes it through ->writepage, which redirties delalloc pages), so it skips
//!    this step.
//! 2. A descriptor block per 512 tags plus a copy of every metadata block go to the journal
//!    area, sequentially from the journal head, and the thread waits for them; then the commit
//!    block, waited for too (3.0 mounts ext3 without barriers; the commit block still goes after
//!    the log blocks completed).
//! 3. The committed metadata blocks are dirty against their home locations: dirty pages of the
//!    block device inode, which the flusher writes in its turn like any dirty inode (oldest
//!    dirtied first, a chunk at a time in block order, requeued while pages remain; kupdate
//!    once it has been dirty for dirty_expire_centisecs). A transaction's log stays
//!    in the journal until all its blocks are home. When less than a quarter of the journal is
//!    free, log_do_checkpoint releases the log of every such transaction (cleanup_journal_tail)
//!    and, only if the oldest transaction in the log still has blocks to write, writes those
//!    and waits for them (fs/jbd/checkpoint.c, 3.0).
//!
//! The memory of metadata blocks is the block device's page cache ("Buffers": `touch_metadata_block`
//! and `bread_metadata` in fs/mod.rs), whose pages reclaim may not take while the journal holds
//! their block (`bdev_page_pinned`). Those pages are never dirtied or written back themselves:
//! the journal's log and checkpoint writes are bios of stand-in frames that go through the
//! block layer like any other and count in pgpgout. Directory leaf blocks are logged like other
//! metadata (see `ialloc`); xfs's log is not modelled.
//!
//! The journal submits its own writes WRITE_SYNC (3.0 journal_commit_transaction,
//! __flush_batch): the ordered data, the log and the checkpoint take their requests from the
//! queue's sync pool, the one reads use (`block::Pool`), and never make it write-congested. The
//! flusher's turn at the block device inode writes WRITE, from the async pool.

use std::collections::{BTreeMap, BTreeSet};

use super::{FsType, Ino};
use crate::block::{Bio, Dir, PlugSite, Pool, SECTORS_PER_PAGE};
use crate::mm::mm_types::{PG_BUF_CLEAN, PG_BUF_LOCKED, PG_DIRTY, PG_LOCKED, PG_WRITEBACK};
use crate::mm::page_alloc::Mm;
use crate::mm::radix_tree::PAGECACHE_TAG_DIRTY;
use crate::mm::Pfn;
use crate::sim::{After, Step, Task, TaskCx};

/// Blocks per block group (4 KiB blocks: one bitmap block covers 32768).
pub const BLOCKS_PER_GROUP: u64 = 32768;
/// Inodes per group (mke2fs's default inode_ratio of 16 KiB on 128 MiB groups).
pub const INODES_PER_GROUP: u64 = 8192;
/// Inode table blocks per group (256-byte inodes, the mke2fs default since 1.41).
pub const ITABLE_BLOCKS: u64 = INODES_PER_GROUP * 256 / 4096;
/// ext4's flex_bg: the bitmaps and inode tables of 16 groups sit together in the first.
pub const FLEX_BG: u64 = 16;
/// Tags per descriptor block (4 KiB block, 8-byte tags, a header).
pub const TAGS_PER_DESCRIPTOR: u64 = 512;
/// The default commit interval (JBD_DEFAULT_MAX_COMMIT_AGE = 5 s).
pub const COMMIT_INTERVAL_NS: u64 = 5_000_000_000;

/// The default journal size of mke2fs (ext2fs_default_journal_size, e2fsprogs 1.41/1.42) for
/// a file system of `blocks` 4 KiB blocks.
pub fn default_journal_blocks(blocks: u64) -> u64 {
    match blocks {
        b if b < 2048 => 0,
        b if b < 32768 => 1024,
        b if b < 256 * 1024 => 4096,
        b if b < 512 * 1024 => 8192,
        b if b < 1024 * 1024 => 16384,
        _ => 32768,
    }
}

/// Where a file system type keeps its per-group metadata (block numbers relative to the file
/// system's first block).
impl FsType {
    /// The file system writes a journal (ext3: jbd, ext4: jbd2).
    pub fn journaled(self) -> bool {
        matches!(self, FsType::Ext3 | FsType::Ext4)
    }

    /// Directories are hashed b-trees in the block device's buffer cache (dir_index, on by
    /// default in mke2fs since 1.39, for ext3 and ext4). ext2 keeps directories in their own
    /// page cache and scans them linearly, xfs in its own btrees: neither is modelled.
    pub fn htree_dirs(self) -> bool {
        matches!(self, FsType::Ext3 | FsType::Ext4)
    }

    /// The blocks at the start of group `g` that hold metadata (superblock and descriptors in
    /// group 0, bitmaps, inode tables); data allocation skips them. xfs's allocation group
    /// headers are not modelled (0).
    pub fn group_meta_blocks(self, g: u64) -> u64 {
        let sb = if g == 0 { 2 } else { 0 };
        match self {
            FsType::Ext2 | FsType::Ext3 => sb + 2 + ITABLE_BLOCKS,
            FsType::Ext4 if g % FLEX_BG == 0 => sb + FLEX_BG * (2 + ITABLE_BLOCKS),
            FsType::Ext4 | FsType::Xfs => 0,
        }
    }

    /// (block bitmap, inode bitmap, first inode table block) of group `g`.
    fn group_meta(self, g: u64) -> (u64, u64, u64) {
        match self {
            FsType::Ext4 => {
                let base = g / FLEX_BG * FLEX_BG * BLOCKS_PER_GROUP + if g < FLEX_BG { 2 } else { 0 };
                let i = g % FLEX_BG;
                (base + i, base + FLEX_BG + i, base + 2 * FLEX_BG + i * ITABLE_BLOCKS)
            }
            _ => {
                let base = g * BLOCKS_PER_GROUP + if g == 0 { 2 } else { 0 };
                (base, base + 1, base + 2)
            }
        }
    }

    /// The block bitmap block of the group holding block `block`.
    pub fn block_bitmap_of(self, block: u64) -> u64 {
        self.group_meta(block / BLOCKS_PER_GROUP).0
    }

    /// The inode bitmap block of on-disk inode `i_ino`.
    pub fn inode_bitmap_of(self, i_ino: u64) -> u64 {
        self.group_meta(i_ino / INODES_PER_GROUP).1
    }

    /// The inode table block holding on-disk inode `i_ino`.
    pub fn inode_block_of(self, i_ino: u64) -> u64 {
        self.group_meta(i_ino / INODES_PER_GROUP).2 + i_ino % INODES_PER_GROUP * 256 / 4096
    }

    /// The indirect blocks on the path to data block `index` of an ext2/ext3 file, top down
    /// (ext2_block_to_path), each named by a slot: 0 the single-indirect block, 1 the double-,
    /// 2 the triple-indirect block, 3 + k the double-indirect block's k-th child, 3 + 1024 + j
    /// the triple's j-th child and 3 + 2048 + m that one's children. Empty for the 12 direct
    /// blocks and for file systems with extents.
    pub fn indirect_chain(self, index: u64) -> ([u32; 3], usize) {
        const NDIR: u64 = 12;
        const PTRS: u64 = ADDR_PER_BLOCK as u64;
        if !matches!(self, FsType::Ext2 | FsType::Ext3) || index < NDIR {
            return ([0; 3], 0);
        }
        let i = index - NDIR;
        if i < PTRS {
            return ([0, 0, 0], 1);
        }
        let i = i - PTRS;
        if i < PTRS * PTRS {
            return ([1, (3 + i / PTRS) as u32, 0], 2);
        }
        let i = i - PTRS * PTRS;
        ([2, (3 + PTRS + i / (PTRS * PTRS)) as u32, (3 + 2 * PTRS + i / PTRS) as u32], 3)
    }
}

/// Block pointers in an ext2/ext3 indirect block of 4 KiB (EXT3_ADDR_PER_BLOCK).
const ADDR_PER_BLOCK: u32 = 1024;

/// Where the indirect block in `slot` (`FsType::indirect_chain`'s numbering) comes in a
/// truncate's depth-first walk, and its depth: a sort key (tree, child, grandchild; 0 for a
/// tree's own block), an indirect block's children last to first when `reverse` (ext3).
pub fn free_branches_order(slot: u32, reverse: bool) -> ((u32, u32, u32), usize) {
    const PTRS: u32 = ADDR_PER_BLOCK;
    let child = |k: u32| 1 + if reverse { PTRS - 1 - k } else { k };
    match slot {
        0..=2 => ((slot, 0, 0), 0),
        _ if slot < 3 + PTRS => ((1, child(slot - 3), 0), 1),
        _ if slot < 3 + 2 * PTRS => ((2, child(slot - 3 - PTRS), 0), 1),
        _ => {
            let m = slot - 3 - 2 * PTRS;
            ((2, child(m / PTRS), child(m % PTRS)), 2)
        }
    }
}

/// Buffers the checkpoint writes under one plug (NR_BATCH in fs/jbd/checkpoint.c).
const CHECKPOINT_BATCH: usize = 64;

/// A transaction's contents.
#[derive(Clone, Debug, Default)]
pub struct Transaction {
    /// Metadata blocks (file system block numbers) logged in it.
    pub meta: BTreeSet<u64>,
    /// Inodes whose data it orders (data=ordered), in the order their data first joined it:
    /// the commit writes them in that order, as jbd walks t_sync_datalist (the buffers in the
    /// order they were written) and jbd2 t_inode_list (the inodes in the order they were
    /// filed). `inode_set` says which are in.
    pub inodes: Vec<Ino>,
    pub inode_set: BTreeSet<Ino>,
    /// When its first handle started (the commit timer runs from here), ns.
    pub start_ns: Option<u64>,
    /// The blocks logged last, already in `meta` (a model shortcut: most pages written log
    /// the same inode table block, bitmap and group descriptor as the page before).
    recent_meta: [Option<u64>; 4],
    /// The inode whose data joined last, already in `inode_set`.
    last_inode: Option<Ino>,
}

impl Transaction {
    /// Logs metadata block `block`; true if it was not in the transaction yet.
    fn log_meta(&mut self, block: u64) -> bool {
        if self.recent_meta.contains(&Some(block)) {
            return false;
        }
        self.recent_meta.rotate_right(1);
        self.recent_meta[0] = Some(block);
        self.meta.insert(block)
    }

    /// Files inode `ino`'s data in the transaction (data=ordered), once.
    fn order_inode(&mut self, ino: Ino) {
        if self.last_inode != Some(ino) && self.inode_set.insert(ino) {
            self.inodes.push(ino);
        }
        self.last_inode = Some(ino);
    }
}

/// A journal (journal_t) of one superblock.
#[derive(Clone, Debug)]
pub struct Journal {
    pub sb: usize,
    /// data=ordered: the commit writes the transaction's data first.
    pub ordered_data: bool,
    /// First block of the journal area and its length, in file system blocks.
    pub first: u64,
    pub blocks: u64,
    /// Next journal block to write (relative to `first`).
    pub head: u64,
    /// The committed transactions still in the log, oldest first: (commit time, journal
    /// blocks their commit wrote). A transaction's metadata blocks in `checkpoint` carry the
    /// same commit time.
    pub log: std::collections::VecDeque<(u64, u64)>,
    /// Journal blocks the transaction being committed has written so far.
    pub log_pending: u64,
    /// The block device inode's dirtied_when: when a commit dirtied its first buffer since
    /// it was last clean.
    pub dirty_since: Option<u64>,
    /// Its place on its superblock's dirty list (the key sequence of `SuperBlock::b_dirty`),
    /// while it has dirty buffers.
    pub dirty_key: Option<u64>,
    pub commit_interval_ns: u64,
    pub running: Transaction,
    /// Metadata blocks of the transaction being committed.
    pub committing: BTreeSet<u64>,
    /// The committing transaction's metadata copies are being written to the log (BJ_Shadow)
    /// since this time: from their submission until kjournald has seen them written, a task
    /// that needs write access to one of `committing`'s blocks waits (`jbd_shadow_wait`).
    pub shadow: Option<u64>,
    /// The queue those tasks sleep on (the buffers' BH_Unshadow bit waits).
    pub shadow_wait: usize,
    /// Committed metadata blocks not yet written home, with their commit time.
    pub checkpoint: BTreeMap<u64, u64>,
    /// The journal thread's wait queue (j_wait_commit), also woken by its I/O.
    pub wait: usize,
    /// The running transaction's id (j_transaction_sequence's last), the committing one's,
    /// the last one fully committed (j_commit_sequence) and the highest one a task asked to
    /// have committed (j_commit_request, log_start_commit).
    pub tid: u64,
    pub committing_tid: u64,
    pub commit_sequence: u64,
    pub commit_request: u64,
    /// Where log_wait_commit sleeps until a commit completes (j_wait_done_commit).
    pub done_wait: usize,
    /// Direct-I/O style contexts counting the thread's log and checkpoint writes in flight.
    pub log_io: u32,
    pub ckpt_io: u32,
}

impl Journal {
    /// Journal blocks between the tail and the head: the log of every transaction not yet
    /// released by cleanup_journal_tail, and what the committing one has written so far.
    pub fn used(&self) -> u64 {
        self.log.iter().map(|&(_, n)| n).sum::<u64>() + self.log_pending
    }

    /// j_max_transaction_buffers: a transaction is committed early at a quarter of the journal.
    pub fn max_transaction_blocks(&self) -> u64 {
        self.blocks / 4
    }
}

impl Mm {
    /// The journal holds metadata block `block` of `sb` (in the running or committing
    /// transaction, or committed and not yet written home): its buffer is attached to the
    /// journal, so jbd2_journal_try_to_free_buffers refuses to free it.
    pub fn jbd_holds(&self, sb: usize, block: u64) -> bool {
        self.journal_of(sb).is_some_and(|j| {
            let jr = &self.journals[j];
            jr.running.meta.contains(&block) || jr.committing.contains(&block) || jr.checkpoint.contains_key(&block)
        })
    }

    /// The journal of superblock `sb`, if it has one.
    fn journal_of(&self, sb: usize) -> Option<usize> {
        self.sbs[sb].journal
    }

    /// journal_dirty_metadata: metadata block `block` of superblock `sb` joins the running
    /// transaction; a transaction grown to a quarter of the journal is committed now.
    pub fn jbd_dirty_metadata(&mut self, sb: usize, block: u64) {
        let Some(j) = self.journal_of(sb) else { return };
        let now = self.now_ns;
        let jr = &mut self.journals[j];
        // A new transaction arms the commit timer (t_expires): the thread learns of it.
        let new = jr.running.start_ns.is_none();
        jr.running.start_ns.get_or_insert(now);
        let full = jr.running.log_meta(block) && jr.running.meta.len() as u64 >= jr.max_transaction_blocks();
        if new || full {
            let wq = jr.wait;
            self.wake_up(wq);
        }
    }

    /// do_get_write_access on a shadowed buffer (3.0 fs/jbd/transaction.c, jbd2 alike): the
    /// write of page `index` of file `ino` needs write access to metadata blocks, and if one of
    /// them is in the committing transaction while its copy is being written to the log
    /// (BJ_Shadow), the writer sleeps until kjournald has seen the log written and unshadowed
    /// the buffers. The blocks: for an unmapped page of a file system without delayed
    /// allocation, the block bitmap of the allocation goal's group and the group descriptors
    /// (ext3_new_blocks); for a page past the end of the file, the inode's table block
    /// (write_end's mark_inode_dirty as i_size grows). An existing indirect block the
    /// allocation updates, and file_update_time's once-a-second mark_inode_dirty, are not
    /// looked at. Returns the queue to sleep on, or None to go on.
    pub fn jbd_shadow_wait(&mut self, ino: Ino, index: u32) -> Option<usize> {
        let sb = self.inode(ino).sb;
        let j = self.journal_of(sb)?;
        if self.journals[j].shadow.is_none() {
            return None;
        }
        let fs = self.sbs[sb].fs_type;
        let shadowed = |b: u64| self.journals[j].committing.contains(&b);
        let grows = u64::from(index) >= self.inode(ino).size_pages;
        let inode_block = grows && shadowed(fs.inode_block_of(self.inode(ino).i_ino));
        let allocates = !fs.delalloc() && self.bmap(ino, index).is_none();
        let alloc_blocks = allocates && (shadowed(1) || shadowed(fs.block_bitmap_of(self.block_goal(ino, index, self.sched.current_pid))));
        let wq = (inode_block || alloc_blocks).then_some(self.journals[j].shadow_wait);
        self.count_shadow_wait(sb, wq)
    }

    /// Counts a wait `jbd_shadow_wait` found on superblock `sb`'s device, and passes it on.
    fn count_shadow_wait(&mut self, sb: usize, wq: Option<usize>) -> Option<usize> {
        if wq.is_some() {
            let dev = self.sbs[sb].dev;
            self.bdevs[dev].stats.shadow_waits += 1;
        }
        wq
    }

    /// `jbd_shadow_wait` for a create in superblock `sb` (ext3_new_inode): it needs write
    /// access to the group descriptors (bg_free_inodes_count) before anything else. The model
    /// keeps every group's descriptor in one block (block 1), as a file system of up to 128
    /// groups (16 GiB) has it.
    pub fn jbd_create_shadow_wait(&mut self, sb: usize) -> Option<usize> {
        let jr = &self.journals[self.journal_of(sb)?];
        let wq = (jr.shadow.is_some() && jr.committing.contains(&1)).then_some(jr.shadow_wait);
        self.count_shadow_wait(sb, wq)
    }

    /// The write path's journal work for a page written to file `ino` (ext3_ordered_write_end,
    /// ext4_da_write_end and the file_update_time that precedes them): the inode is marked
    /// dirty, which logs its inode table block; in data=ordered mode the inode's data joins
    /// the transaction.
    pub fn jbd_write_end(&mut self, ino: Ino) {
        let sb = self.inode(ino).sb;
        let Some(j) = self.journal_of(sb) else { return };
        let block = self.sbs[sb].fs_type.inode_block_of(self.inode(ino).i_ino);
        self.jbd_dirty_metadata(sb, block);
        // The write grew the file (i_disksize): fdatasync must see this transaction committed.
        self.inode_mut(ino).datasync_tid = self.journals[j].tid;
        if self.journals[j].ordered_data {
            self.journals[j].running.order_inode(ino);
        }
    }

    /// A block was allocated for a file (ext3_new_blocks, ext4_mb_new_blocks): its group's
    /// block bitmap and the group descriptor block are logged.
    pub fn jbd_block_allocated(&mut self, sb: usize, sector: u64) {
        if self.journal_of(sb).is_none() {
            return;
        }
        let block = (sector - self.sbs[sb].start_sector) / SECTORS_PER_PAGE;
        let fs = self.sbs[sb].fs_type;
        self.jbd_dirty_metadata(sb, fs.block_bitmap_of(block));
        self.jbd_dirty_metadata(sb, 1);
    }

    /// An inode was allocated or freed (ext3_new_inode, ext3_free_inode): its bitmap, its
    /// inode table block and the group descriptor are logged.
    pub fn jbd_inode_alloc(&mut self, sb: usize, i_ino: u64) {
        if self.journal_of(sb).is_none() {
            return;
        }
        let fs = self.sbs[sb].fs_type;
        self.jbd_dirty_metadata(sb, fs.inode_bitmap_of(i_ino));
        self.jbd_dirty_metadata(sb, fs.inode_block_of(i_ino));
        self.jbd_dirty_metadata(sb, 1);
    }

    /// A file's blocks were freed (ext3_truncate at delete): the block bitmaps of the groups
    /// of its extents are logged.
    pub fn jbd_blocks_freed(&mut self, ino: Ino) {
        let sb = self.inode(ino).sb;
        if self.journal_of(sb).is_none() {
            return;
        }
        let fs = self.sbs[sb].fs_type;
        let start = self.sbs[sb].start_sector;
        let mut bitmaps = BTreeSet::new();
        for &(_, sector, len) in &self.inode(ino).extents {
            let first = (sector - start) / SECTORS_PER_PAGE;
            let last = first + u64::from(len.max(1)) - 1;
            for g in first / BLOCKS_PER_GROUP..=last / BLOCKS_PER_GROUP {
                bitmaps.insert(fs.block_bitmap_of(g * BLOCKS_PER_GROUP));
            }
        }
        for b in bitmaps {
            self.jbd_dirty_metadata(sb, b);
        }
    }

    /// Submits writes of file system blocks `blocks` (sorted) of superblock `sb`, adjacent
    /// blocks in one bio, counted on I/O context `io`, under one plug; WRITE_SYNC if `sync`
    /// (the journal's own writes: its log, log_do_checkpoint's batches), else WRITE (the
    /// flusher's turn at the block device inode). Each bio asks for a request as submit_bh's
    /// do in 3.x (get_request_wait): if the pool is used up, the task sleeps holding it at
    /// the end of its step (`submit_bio_or_sleep`). The bios carry stand-in frames, not the
    /// blocks' cached pages: the completion has no page to end (like direct I/O), and each
    /// block is its own segment.
    fn jbd_write_blocks(&mut self, sb: usize, blocks: &[u64], io: u32, sync: bool) {
        let (dev, start) = (self.sbs[sb].dev, self.sbs[sb].start_sector);
        let plugged = self.blk_start_plug(PlugSite::Journal);
        let mut bio: Option<Bio> = None;
        for (n, &b) in blocks.iter().enumerate() {
            let sector = start + b * SECTORS_PER_PAGE;
            // Distinct, non-adjacent frame numbers: one segment per buffer.
            let fake = 2 * n as Pfn;
            if !bio.as_mut().is_some_and(|x| x.add_page(&self.bdevs[dev].model, sector, fake)) {
                let mut x = Bio::new(Dir::Write, sector, fake);
                x.dio = io;
                x.sync = sync;
                x.noidle = sync;
                if let Some(x) = bio.replace(x) {
                    self.submit_bio_or_sleep(dev, x);
                }
            }
        }
        self.dios[io as usize - 1].remaining += blocks.len() as u32;
        if let Some(x) = bio.take() {
            self.submit_bio_or_sleep(dev, x);
        }
        self.blk_finish_plug(plugged);
    }

    /// journal_submit_data_buffers for one inode: submits its pages `indexes` (in descending
    /// order, the next one last) that are still dirty, adjacent blocks in one bio, and notes
    /// every page under writeback in `waits`. Each buffer is submitted on its own and merged
    /// in the commit's plug, so the thread asks for a request at the first page of each bio;
    /// if the pool is used up it sleeps holding that page (`submit_first_page_or_sleep`).
    /// Returns false if it did.
    fn jbd_submit_inode_data(&mut self, ino: Ino, indexes: &mut Vec<u32>, waits: &mut Vec<(Pfn, u32, u32)>) -> bool {
        let mapping = self.inode(ino).mapping;
        let dev = self.sbs[self.inode(ino).sb].dev;
        // Back from get_request_wait, the thread goes on adding pages to the request it slept
        // for.
        let mut bio: Option<Bio> = self.take_granted_bio(dev);
        while let Some(&index) = indexes.last() {
            let ahead = indexes.len().checked_sub(1 + crate::mm::PREFETCH_AHEAD).map(|k| indexes[k]);
            if let Some(p) = ahead.and_then(|a| self.find_get_page(mapping, a)) {
                self.prefetch_page(p);
            }
            let Some(pfn) = self.find_get_page(mapping, index) else {
                indexes.pop();
                continue;
            };
            let f = self.pages[pfn as usize].flags;
            // Buffers under a write (the flusher's, or an earlier commit's) are waited for
            // (BJ_Locked); clean ones are done with.
            if f & (PG_WRITEBACK | PG_BUF_LOCKED) != 0 {
                indexes.pop();
                waits.push((pfn, mapping, index));
                continue;
            }
            if f & (PG_LOCKED | PG_DIRTY) != PG_DIRTY || f & PG_BUF_CLEAN != 0 {
                indexes.pop();
                continue;
            }
            let sector = self.get_block(ino, index);
            let mut alone = false;
            if !bio.as_mut().is_some_and(|b| b.add_page(&self.bdevs[dev].model, sector, pfn)) {
                // The bio is complete (its request was had at its first page); the next one
                // asks for its own.
                if let Some(b) = bio.take() {
                    self.submit_bio(dev, b);
                }
                // journal_submit_data_buffers submits WRITE_SYNC: the sync pool.
                alone = !self.may_get_request(dev, Pool::Sync);
                bio = Some(Bio::new(Dir::Write, sector, pfn).req_sync());
            }
            indexes.pop();
            // The buffer is locked and its dirty bit cleared (test_clear_buffer_dirty); the
            // page stays dirty, and out of writeback, until a ->writepage finds it clean.
            self.pages[pfn as usize].flags |= PG_BUF_CLEAN | PG_BUF_LOCKED;
            self.cost_ns += self.costs.writeback_page_ns;
            self.bdevs[dev].stats.ordered_data_pages += 1;
            waits.push((pfn, mapping, index));
            if alone && !self.submit_first_page_or_sleep(dev, bio.take().expect("the page's bio")) {
                return false;
            }
        }
        if let Some(b) = bio.take() {
            self.submit_bio(dev, b);
        }
        true
    }

    /// Writes `n` blocks at the journal head (wrapping at the end of the journal area).
    fn jbd_write_log(&mut self, j: usize, n: u64) {
        let jr = &self.journals[j];
        let (sb, first, size, head) = (jr.sb, jr.first, jr.blocks, jr.head);
        let blocks: Vec<u64> = (0..n).map(|i| first + (head + i) % size).collect();
        let mut sorted = blocks;
        // A wrap splits the write in two runs; bios are built in ascending order within each.
        sorted.sort_unstable_by_key(|&b| (b < first + head, b));
        let io = self.journals[j].log_io;
        self.jbd_write_blocks(sb, &sorted, io, true);
        let jr = &mut self.journals[j];
        jr.head = (head + n) % size;
        jr.log_pending += n;
        let dev = self.sbs[sb].dev;
        self.bdevs[dev].stats.journal_blocks += n;
    }

    /// cleanup_journal_tail: moves the tail of the log past every transaction none of whose
    /// metadata blocks still waits to be written home, freeing their journal blocks. Returns
    /// the blocks freed (0: the oldest transaction in the log is still pinned).
    fn jbd_cleanup_journal_tail(&mut self, j: usize) -> u64 {
        let jr = &mut self.journals[j];
        let pinned = jr.checkpoint.values().min().copied();
        let mut freed = 0;
        while let Some(&(t, n)) = jr.log.front() {
            if pinned.is_some_and(|p| t >= p) {
                break;
            }
            jr.log.pop_front();
            freed += n;
        }
        freed
    }

    /// The flusher's turn at the block device inode of journal `j` (its ->writepages): up to
    /// `nr_to_write` dirty metadata buffers in block order. The inode goes back to the end of
    /// the dirty list if some remain, and is clean otherwise. Returns the number written.
    pub fn jbd_writeback_metadata(&mut self, j: usize, nr_to_write: u64) -> u64 {
        let blocks: Vec<u64> = self.journals[j].checkpoint.keys().copied().take(nr_to_write as usize).collect();
        self.jbd_write_home(j, &blocks, true);
        blocks.len() as u64
    }

    /// The journal of device `dev` whose block device inode is next on the dirty list, if it
    /// was dirtied at or before `older_than`: (journal, its key on the dirty list).
    pub fn jbd_next_dirty_metadata(&self, dev: usize, older_than: u64) -> Option<(usize, u64)> {
        self.journals
            .iter()
            .enumerate()
            .filter(|(_, jr)| self.sbs[jr.sb].dev == dev && jr.dirty_since.is_some_and(|t| t <= older_than))
            .filter_map(|(j, jr)| jr.dirty_key.map(|k| (j, k)))
            .min_by_key(|&(_, k)| k)
    }

    /// Dirty metadata buffers of the journals on device `dev` (the block device inodes' dirty
    /// pages).
    pub fn jbd_dirty_metadata_pages(&self, dev: usize) -> u64 {
        self.journals.iter().filter(|jr| self.sbs[jr.sb].dev == dev).map(|jr| jr.checkpoint.len() as u64).sum()
    }

    /// log_do_checkpoint's write of one transaction: the metadata blocks committed at
    /// `commit_time` that still wait to go home.
    fn jbd_checkpoint_transaction(&mut self, j: usize, commit_time: u64) {
        let blocks: Vec<u64> = self.journals[j].checkpoint.iter().filter(|&(_, &t)| t == commit_time).map(|(&b, _)| b).collect();
        self.jbd_write_home(j, &blocks, false);
    }

    /// Writes metadata blocks `blocks` (ascending) of journal `j` home: they are no longer
    /// dirty, and the block device inode is clean if none is left. `flusher`: the flusher's
    /// turn at the inode (WRITE; the inode goes to the end of the dirty list if some remain),
    /// else log_do_checkpoint (WRITE_SYNC).
    fn jbd_write_home(&mut self, j: usize, blocks: &[u64], flusher: bool) {
        let jr = &mut self.journals[j];
        for b in blocks {
            jr.checkpoint.remove(b);
        }
        if jr.checkpoint.is_empty() {
            (jr.dirty_since, jr.dirty_key) = (None, None);
        } else if flusher {
            let key = self.sbs[jr.sb].next_key();
            self.journals[j].dirty_key = Some(key);
        }
        self.jbd_submit_checkpoint(j, blocks, !flusher);
    }

    /// Submits metadata blocks `blocks` (ascending) to their home locations, WRITE_SYNC if
    /// `sync` (log_do_checkpoint's __flush_batch).
    fn jbd_submit_checkpoint(&mut self, j: usize, blocks: &[u64], sync: bool) {
        let (sb, io) = (self.journals[j].sb, self.journals[j].ckpt_io);
        if !blocks.is_empty() {
            // __flush_batch: NR_BATCH buffers per plug.
            for batch in blocks.chunks(CHECKPOINT_BATCH) {
                self.jbd_write_blocks(sb, batch, io, sync);
            }
            let dev = self.sbs[sb].dev;
            self.bdevs[dev].stats.checkpoint_blocks += blocks.len() as u64;
        }
    }
}

/// What the journal thread is doing.
#[derive(Clone, Debug)]
enum Commit {
    Idle,
    /// Submitting the ordered data of these inodes (next one last; each with the page indexes
    /// still to write, next one last), then waiting for `waits` (page, mapping, index: a frame
    /// that was freed and reused since is not waited for).
    Data { inodes: Vec<(Ino, Vec<u32>)>, waits: Vec<(Pfn, u32, u32)> },
    /// Waiting for the descriptor and metadata copies (of `Journal::committing`).
    Log,
    /// Waiting for the commit block.
    CommitBlock,
    /// Waiting for a forced checkpoint.
    Checkpoint,
}

/// The journal thread of one file system (kjournald for ext3, jbd2/sdX-8 for ext4:
/// kjournald/kjournald2 and journal_commit_transaction).
#[derive(Debug)]
pub struct Kjournald {
    j: usize,
    name: String,
    state: Commit,
}

impl Kjournald {
    pub fn new(j: usize, name: String) -> Kjournald {
        Kjournald { j, name, state: Commit::Idle }
    }
}

impl Task for Kjournald {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_workload(&self) -> bool {
        false
    }

    fn waiter(&self) -> Option<crate::sim::Waiter> {
        Some(crate::sim::Waiter::Journal)
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let mm = &mut *cx.mm;
        let now = cx.now;
        let j = self.j;
        let cost = mm.costs.kswapd_pass_ns / 4;
        let step = |after| Step { user_ns: 0, system_ns: cost, after };
        let wq = mm.journals[j].wait;
        match std::mem::replace(&mut self.state, Commit::Idle) {
            Commit::Idle => {
                // __log_wait_for_space: with less than a quarter of the journal free
                // (j_max_transaction_buffers), log_do_checkpoint first releases the log of
                // every transaction whose buffers have all gone home (cleanup_journal_tail);
                // only if the oldest one in the log is still pinned does it write that
                // transaction's buffers and wait for them. (The kernel's caller is the task
                // starting a handle, and other handle starters wait; here kjournald does it.)
                if mm.journals[j].used() * 4 >= mm.journals[j].blocks * 3 && mm.jbd_cleanup_journal_tail(j) == 0 {
                    if let Some(&oldest) = mm.journals[j].checkpoint.values().min() {
                        mm.jbd_checkpoint_transaction(j, oldest);
                        self.state = Commit::Checkpoint;
                        return step(After::Continue);
                    }
                }
                let jr = &mut mm.journals[j];
                let due = jr.running.start_ns.map(|t| t + jr.commit_interval_ns);
                let full = jr.running.meta.len() as u64 >= jr.max_transaction_blocks();
                // log_start_commit: a task waits for the running transaction (fsync).
                let requested = jr.commit_request >= jr.tid && jr.running.start_ns.is_some();
                if !(full || requested || due.is_some_and(|d| d <= now)) {
                    // Sleep until the commit timer.
                    return step(match due {
                        Some(t) => After::WaitTimeout(wq, t.saturating_sub(now).max(1)),
                        None => After::Wait(wq),
                    });
                }
                let t = std::mem::take(&mut jr.running);
                jr.committing = t.meta;
                jr.committing_tid = jr.tid;
                jr.tid += 1;
                let dev = mm.sbs[jr.sb].dev;
                mm.bdevs[dev].stats.journal_commits += 1;
                self.state = if mm.journals[j].ordered_data {
                    // The data buffers filed on the transaction: the inodes' pages dirty now,
                    // the first filed last (taken from the end).
                    let inodes = t
                        .inodes
                        .into_iter()
                        .rev()
                        .filter(|&i| mm.inodes.get(i as usize).is_some_and(|x| x.is_some()))
                        .map(|i| {
                            let mut dirty = Vec::new();
                            mm.find_get_pages_tag(mm.inode(i).mapping, 0, u32::MAX, PAGECACHE_TAG_DIRTY, usize::MAX, &mut dirty);
                            dirty.reverse();
                            (i, dirty)
                        })
                        .collect();
                    Commit::Data { inodes, waits: Vec::new() }
                } else {
                    start_log(mm, j)
                };
                step(After::Continue)
            }
            Commit::Data { mut inodes, mut waits } => {
                // journal_submit_data_buffers runs under the commit's plug, flushed before the
                // thread sleeps for a request.
                let plugged = mm.blk_start_plug(PlugSite::Journal);
                while let Some((ino, indexes)) = inodes.last_mut() {
                    let ino = *ino;
                    if mm.inodes.get(ino as usize).is_some_and(|i| i.is_some()) && !indexes.is_empty() {
                        if !mm.jbd_submit_inode_data(ino, indexes, &mut waits) {
                            // Asleep in get_request_wait holding a page (`Mm::rq_wait_owed`).
                            mm.blk_finish_plug(plugged);
                            self.state = Commit::Data { inodes, waits };
                            return step(After::Continue);
                        }
                    }
                    inodes.pop();
                }
                mm.blk_finish_plug(plugged);
                while let Some(&(pfn, mapping, index)) = waits.last() {
                    let p = &mm.pages[pfn as usize];
                    if p.flags & (PG_WRITEBACK | PG_BUF_LOCKED) != 0 && p.mapping == mapping && p.index == index {
                        let q = mm.page_waitqueue(pfn);
                        self.state = Commit::Data { inodes, waits };
                        return step(After::Wait(q));
                    }
                    waits.pop();
                }
                self.state = start_log(mm, j);
                step(After::Continue)
            }
            Commit::Log => {
                if mm.dio_remaining(mm.journals[j].log_io) > 0 {
                    self.state = Commit::Log;
                    return step(After::Wait(wq));
                }
                // The log is written: the buffers leave BJ_Shadow and their waiters wake.
                if let Some(since) = mm.journals[j].shadow.take() {
                    let (sw, dev) = (mm.journals[j].shadow_wait, mm.sbs[mm.journals[j].sb].dev);
                    mm.bdevs[dev].stats.shadow_ns += now - since;
                    mm.wake_up(sw);
                }
                mm.jbd_write_log(j, 1);
                self.state = Commit::CommitBlock;
                step(After::Continue)
            }
            Commit::CommitBlock => {
                if mm.dio_remaining(mm.journals[j].log_io) > 0 {
                    self.state = Commit::CommitBlock;
                    return step(After::Wait(wq));
                }
                // Committed: the metadata is now dirty against its home location, and the
                // transaction's log stays in the journal until its buffers are home.
                let jr = &mut mm.journals[j];
                for b in std::mem::take(&mut jr.committing) {
                    jr.checkpoint.entry(b).or_insert(now);
                }
                let n = std::mem::take(&mut jr.log_pending);
                jr.log.push_back((now, n));
                // j_commit_sequence moves on and log_wait_commit's sleepers wake.
                jr.commit_sequence = jr.committing_tid;
                let done = jr.done_wait;
                mm.wake_up(done);
                let jr = &mut mm.journals[j];
                // The block device inode turns dirty (__mark_inode_dirty): dirtied_when, the
                // end of the dirty list, and the flusher learns of it.
                if !jr.checkpoint.is_empty() && jr.dirty_key.is_none() {
                    jr.dirty_since = Some(now);
                    let sb = jr.sb;
                    let key = mm.sbs[sb].next_key();
                    mm.journals[j].dirty_key = Some(key);
                    let dev = mm.sbs[sb].dev;
                    let fw = mm.bdevs[dev].flusher_wait;
                    mm.wake_up(fw);
                }
                step(After::Continue)
            }
            Commit::Checkpoint => {
                if mm.dio_remaining(mm.journals[j].ckpt_io) > 0 {
                    self.state = Commit::Checkpoint;
                    return step(After::Wait(wq));
                }
                step(After::Continue)
            }
        }
    }
}

/// Starts writing the descriptor blocks and metadata copies of the committing transaction to
/// the log; the thread then waits for them.
fn start_log(mm: &mut Mm, j: usize) -> Commit {
    let n = mm.journals[j].committing.len() as u64;
    if n > 0 {
        mm.jbd_write_log(j, n.div_ceil(TAGS_PER_DESCRIPTOR) + n);
        mm.journals[j].shadow = Some(mm.now_ns);
    }
    Commit::Log
}
