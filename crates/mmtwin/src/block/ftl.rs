//! The flash translation layer of a cheap flash key (USB sticks and SD cards of about 2011).
//!
//! Such a device maps its flash in erase blocks (allocation units, typically 4 MiB) and can
//! keep only a few of them open for writing at once: pages written to an open erase block go
//! to a log block that replaces it. To write to another erase block the device closes the
//! least recently written open one, copying every page of it that the host did not write
//! since it was opened into the log block, which then becomes the erase block's new home.
//! A host that writes whole erase blocks in turn pays nothing extra; a host that writes a few
//! pages here and there pays a whole erase block copy for each. flashbench's --open-au test
//! measures the cut-off: on a card with two open erase blocks, 256 KiB writes cycling over
//! two erase blocks run at 6.3 MB/s and over three at 0.9 MB/s (the tool's own example), the
//! time of a 4 MiB copy per write.
//!
//! Figures the model takes from its `DeviceModel`: `erase_block_kb`, `open_erase_blocks`, and
//! the copy rate, which is the device's `bandwidth` (a copy reads and programs each page; the
//! program dominates). The erase itself and a log block filled by repeated rewrites of the
//! same pages are not modelled: a rewrite of a page in an open erase block costs nothing more.

use serde::Serialize;

/// The largest erase block the model takes, in KiB (64 MiB).
pub const MAX_ERASE_BLOCK_KB: u32 = 65536;

/// One open erase block: which one, the pages the host wrote since it was opened, and when it
/// was last written (for the least-recently-written choice).
#[derive(Clone, Debug)]
struct OpenBlock {
    block: u64,
    written: Vec<u64>,
    nr_written: u32,
    last_write: u64,
}

/// Counters of the FTL (mmtwin's own "why" statistics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlStats {
    /// Erase blocks closed with a copy of the pages the host had not written.
    pub gc_copies: u64,
    /// Pages those copies moved.
    pub gc_copied_pages: u64,
}

/// The FTL state of one device.
#[derive(Clone, Debug)]
pub struct Ftl {
    pages_per_block: u64,
    max_open: usize,
    open: Vec<OpenBlock>,
    clock: u64,
}

impl Ftl {
    /// An FTL with `erase_block_kb` erase blocks of which `max_open` may be open.
    pub fn new(erase_block_kb: u32, max_open: u32) -> Ftl {
        Ftl { pages_per_block: u64::from(erase_block_kb / 4), max_open: max_open.max(1) as usize, open: Vec::new(), clock: 0 }
    }

    /// Writes pages [`page`, `page` + `n`) (device pages of 4 KiB) and returns the pages the
    /// device must copy first to make room: for each erase block the write touches that is
    /// not open, the unwritten pages of the least recently written open block, if all are
    /// open already. The copies are counted in `stats`.
    pub fn write(&mut self, page: u64, n: u64, stats: &mut FtlStats) -> u64 {
        let mut copied = 0;
        let mut p = page;
        let end = page + n;
        while p < end {
            let block = p / self.pages_per_block;
            let block_end = ((block + 1) * self.pages_per_block).min(end);
            self.clock += 1;
            let i = match self.open.iter().position(|o| o.block == block) {
                Some(i) => i,
                None => {
                    if self.open.len() >= self.max_open {
                        let lru = (0..self.open.len()).min_by_key(|&i| self.open[i].last_write).expect("an open block");
                        let closed = self.open.swap_remove(lru);
                        let left = self.pages_per_block - u64::from(closed.nr_written);
                        if left > 0 {
                            stats.gc_copies += 1;
                            stats.gc_copied_pages += left;
                            copied += left;
                        }
                    }
                    self.open.push(OpenBlock { block, written: vec![0; self.pages_per_block.div_ceil(64) as usize], nr_written: 0, last_write: 0 });
                    self.open.len() - 1
                }
            };
            let o = &mut self.open[i];
            o.last_write = self.clock;
            for q in p..block_end {
                let off = q - block * self.pages_per_block;
                let (w, bit) = ((off / 64) as usize, 1u64 << (off % 64));
                if o.written[w] & bit == 0 {
                    o.written[w] |= bit;
                    o.nr_written += 1;
                }
            }
            // A block written in full is a complete replacement: the device closes it without
            // a copy and it no longer holds a place.
            if u64::from(o.nr_written) == self.pages_per_block {
                self.open.swap_remove(i);
            }
            p = block_end;
        }
        copied
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_whole_erase_blocks_copies_nothing() {
        let (mut f, mut st) = (Ftl::new(4096, 2), FtlStats::default());
        for p in (0..4096).step_by(30) {
            assert_eq!(f.write(p, 30.min(4096 - p), &mut st), 0);
        }
        assert_eq!(st, FtlStats::default());
    }

    #[test]
    fn a_third_block_closes_the_least_recently_written_one_with_a_copy() {
        let (mut f, mut st) = (Ftl::new(4096, 2), FtlStats::default());
        assert_eq!(f.write(0, 64, &mut st), 0);
        assert_eq!(f.write(1024, 64, &mut st), 0);
        assert_eq!(f.write(10, 1, &mut st), 0, "block 0 is open: a rewrite inside it is free");
        // Block 2 needs a place: block 1 was written least recently; its other 960 pages move.
        assert_eq!(f.write(2048, 1, &mut st), 1024 - 64);
        // Back to block 1: block 0 goes now (64 pages written, 960 copied).
        assert_eq!(f.write(1024 + 64, 1, &mut st), 960);
        assert_eq!(st, FtlStats { gc_copies: 2, gc_copied_pages: 1920 });
    }
}
