//! Direct I/O (fs/direct-io.c, 2.6.32–3.x do_blockdev_direct_IO): the file's blocks are read
//! straight into, or written straight from, the caller's pinned user pages, bypassing the
//! page cache. Bios are
//! built with bio_add_page like buffered I/O, so the user buffer's physical layout decides the
//! segments; the caller sleeps until every bio of the call has completed.

use super::Ino;
use crate::block::{Bio, Dir, PlugSite};
use crate::mm::page_alloc::Mm;
use crate::mm::Pfn;

/// One direct I/O in flight (struct dio): pages not yet completed and who waits for them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dio {
    pub remaining: u32,
    pub wait: usize,
}

impl Mm {
    /// A direct I/O context for a task that sleeps on wait queue `wait`; returns its id (never 0).
    pub fn new_dio(&mut self, wait: usize) -> u32 {
        self.dios.push(Dio { remaining: 0, wait });
        self.dios.len() as u32
    }

    /// Pages of direct I/O `id` still in flight.
    pub fn dio_remaining(&self, id: u32) -> u32 {
        self.dios[id as usize - 1].remaining
    }

    /// Reads pages `index..index + buf.len()` of file `ino` into the user pages `buf`
    /// (do_blockdev_direct_IO, READ): get_user_pages pins the buffer, each block is mapped
    /// (holes read as zeros without I/O) and added to the current bio, bios are submitted.
    /// Returns the pages under I/O; the caller waits until `dio_remaining` is 0.
    pub fn direct_io_read(&mut self, id: u32, ino: Ino, index: u32, buf: &[Pfn]) -> u32 {
        let size = self.inode(ino).size_pages;
        let n = buf.iter().enumerate().filter(|&(i, _)| u64::from(index + i as u32) < size && self.bmap(ino, index + i as u32).is_some()).count() as u32;
        self.dios[id as usize - 1].remaining += n;
        let plugged = self.blk_start_plug(PlugSite::DirectIo);
        let cpu = self.sched.current_cpu;
        self.dio_map_and_submit(id, ino, index, buf, Some(cpu));
        self.blk_finish_plug(plugged);
        n
    }

    /// Maps and submits the pages of a direct read from `index` on (their count is already in
    /// the dio's remaining pages). On ext2/ext3 an indirect block that is not cached is read
    /// first (get_block's sb_bread, while the dio's current bio is held): the held bio is
    /// queued behind the metadata read and the rest waits in `meta_read_waiters`. `cpu` as for
    /// `mpage_readpages`.
    pub fn dio_map_and_submit(&mut self, id: u32, ino: Ino, index: u32, buf: &[Pfn], cpu: Option<usize>) {
        let Some(inode) = self.inodes.get(ino as usize).and_then(|i| i.as_ref()) else { return };
        let (dev, size) = (self.sbs[inode.sb].dev, inode.size_pages);
        let mut bio: Option<Bio> = None;
        let mut run = None;
        for (i, &pfn) in buf.iter().enumerate() {
            let idx = index + i as u32;
            if u64::from(idx) >= size {
                break;
            }
            self.cost_ns += self.costs.dio_page_ns;
            let Some(sector) = self.bmap(ino, idx) else {
                self.cost_ns += self.costs.clear_page_ns;
                continue;
            };
            if let Some(meta) = self.map_block_for_read(ino, idx, &mut run, cpu) {
                if let Some(b) = bio.take() {
                    self.submit_bio(dev, b);
                }
                self.meta_read_waiters.push((meta, super::MetaWaiter::Dio { id, ino, index: idx, buf: buf[i..].to_vec() }));
                return;
            }
            self.dio_bio_add_page(dev, &mut bio, Dir::Read, id, sector, pfn);
        }
        if let Some(b) = bio.take() {
            self.submit_bio(dev, b);
        }
    }

    /// Writes the user pages `buf` to pages `index..index + buf.len()` of file `ino`
    /// (do_blockdev_direct_IO, WRITE): each block is mapped with get_block, which allocates the
    /// blocks of a write past the end of the file as ext2's does for an extending write
    /// (looking up and caching the indirect blocks on the way), and added to the current bio;
    /// the file grows to cover the write. Returns the pages under I/O; the caller waits until
    /// `dio_remaining` is 0.
    pub fn direct_io_write(&mut self, id: u32, ino: Ino, index: u32, buf: &[Pfn]) -> u32 {
        let dev = self.sbs[self.inode(ino).sb].dev;
        let n = buf.len() as u32;
        self.dios[id as usize - 1].remaining += n;
        let plugged = self.blk_start_plug(PlugSite::DirectIo);
        let mut bio: Option<Bio> = None;
        for (i, &pfn) in buf.iter().enumerate() {
            self.cost_ns += self.costs.dio_page_ns;
            let sector = self.get_block(ino, index + i as u32);
            self.dio_bio_add_page(dev, &mut bio, Dir::Write, id, sector, pfn);
        }
        if let Some(b) = bio.take() {
            self.submit_bio(dev, b);
        }
        let i = self.inode_mut(ino);
        i.size_pages = i.size_pages.max(u64::from(index + n));
        self.blk_finish_plug(plugged);
        n
    }

    /// dio_bio_add_page / dio_new_bio: adds `pfn` at `sector` to the current bio of direct
    /// I/O `id`, or submits that bio and starts a new one when the page does not fit it.
    fn dio_bio_add_page(&mut self, dev: usize, bio: &mut Option<Bio>, dir: Dir, id: u32, sector: u64, pfn: Pfn) {
        if bio.as_mut().is_some_and(|b| b.add_page(&self.bdevs[dev].model, sector, pfn)) {
            return;
        }
        let mut b = Bio::new(dir, sector, pfn);
        b.dio = id;
        // WRITE_ODIRECT (3.x: WRITE | REQ_SYNC).
        b.sync = dir == Dir::Write;
        if let Some(b) = bio.replace(b) {
            self.submit_bio(dev, b);
        }
    }

    /// dio_bio_end_io for `pages` pages of direct I/O `id`: wakes the caller when all are done.
    pub fn dio_complete(&mut self, id: u32, pages: u32) {
        let d = &mut self.dios[id as usize - 1];
        d.remaining -= pages;
        if d.remaining == 0 {
            let wq = d.wait;
            self.wake_up(wq);
        }
    }
}
