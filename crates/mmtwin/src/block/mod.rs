//! The block layer (block/blk-core.c, block/elevator.c, block/deadline-iosched.c): bios from the
//! page cache and swap are merged into requests on a per-device queue, dispatched one at a time
//! to a device model, and completed with a callback into the memory manager.
//!
//! * Merging: a bio whose first sector follows the last sector of a queued request in the same
//!   direction is appended to it (a back merge, as elv_merge finds through the last-merge hint
//!   and the request hash), up to `max_sectors_kb`.
//! * Dispatch: deadline's preference for reads (a batch of reads goes first unless writes have
//!   been passed over `writes_starved` times); within a direction, arrival order.
//! * Queue depth: at most `nr_requests` requests per direction; a submitter finding the queue
//!   full sleeps on the device's request wait queue (get_request_wait). The queue is congested
//!   above 7/8 of `nr_requests` and uncongested again below 13/16 (blk_queue_congestion_threshold).
//! * The device serves one request at a time: a seek when the request does not start where the
//!   previous one ended, a fixed per-request overhead, then the transfer at the device bandwidth.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::mm::Pfn;

/// 512-byte sectors per 4 KiB page.
pub const SECTORS_PER_PAGE: u64 = 8;

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read = 0,
    Write = 1,
}

/// A device's performance model and queue limits. Defaults describe a 2011 7200 rpm SATA disk
/// (average seek plus half a rotation about 8 ms, 100 MB/s sequential) behind a 3.x queue
/// (nr_requests 128, max_sectors_kb 512).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceModel {
    /// Time to move the head to a non-adjacent sector (seek + rotational latency), in ns.
    pub seek_ns: u64,
    /// What a write that does not continue the previous request costs instead of `seek_ns`,
    /// if different: on a flash key, the rewrite of a partly written erase block (none: as
    /// `seek_ns`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_seek_ns: Option<u64>,
    /// Fixed cost of every request (command, interrupt, completion), in ns.
    pub request_overhead_ns: u64,
    /// Sustained transfer rate in bytes per second.
    pub bandwidth: u64,
    /// /sys/block/*/queue/nr_requests.
    pub nr_requests: u32,
    /// /sys/block/*/queue/max_sectors_kb.
    pub max_sectors_kb: u32,
    /// Size of the device in bytes (the file systems and swap on it share it).
    pub size: crate::config::size::Bytes,
}

impl Default for DeviceModel {
    fn default() -> Self {
        DeviceModel {
            seek_ns: 8_000_000,
            write_seek_ns: None,
            request_overhead_ns: 50_000,
            bandwidth: 100_000_000,
            nr_requests: 128,
            max_sectors_kb: 512,
            size: crate::config::size::Bytes(2 << 40),
        }
    }
}

/// A bio: one I/O of contiguous sectors carrying page frames in sector order.
#[derive(Clone, Debug)]
pub struct Bio {
    pub dir: Dir,
    pub sector: u64,
    pub pages: Vec<Pfn>,
}

/// A request: merged bios, contiguous on the device.
#[derive(Clone, Debug)]
pub struct Request {
    pub dir: Dir,
    pub sector: u64,
    pub nr_sectors: u64,
    pub pages: Vec<Pfn>,
    /// Bios merged into this request.
    pub nr_bios: u32,
}

impl Request {
    fn end(&self) -> u64 {
        self.sector + self.nr_sectors
    }
}

/// Per-device counters (diskstats-like; mmtwin's own "why" statistics).
#[derive(Clone, Debug, Default)]
pub struct DiskStats {
    pub requests: [u64; 2],
    pub sectors: [u64; 2],
    pub merges: [u64; 2],
    pub seeks: u64,
    /// Time the device was busy, in ns.
    pub busy_ns: u64,
}

/// A block device with its request queue (struct request_queue + the device).
#[derive(Clone, Debug)]
pub struct BlockDevice {
    pub name: String,
    pub model: DeviceModel,
    queued: [VecDeque<Request>; 2],
    /// The request the device is working on and when it finishes.
    pub in_flight: Option<(Request, u64)>,
    /// Sector after the last one transferred (head position).
    head: u64,
    /// Reads dispatched in a row while writes waited (deadline's starved counter).
    starved: u32,
    pub congested: [bool; 2],
    pub stats: DiskStats,
    /// Wait queue of submitters waiting for a free request (get_request_wait).
    pub rq_wait: usize,
    /// Wait queue of tasks in congestion_wait.
    pub congestion_wait: usize,
    /// Wait queue the device's flusher thread sleeps on.
    pub flusher_wait: usize,
}

/// deadline's writes_starved default.
const WRITES_STARVED: u32 = 2;

impl BlockDevice {
    pub fn new(name: &str, model: DeviceModel) -> BlockDevice {
        BlockDevice {
            name: name.to_string(),
            model,
            queued: [VecDeque::new(), VecDeque::new()],
            in_flight: None,
            head: 0,
            starved: 0,
            congested: [false; 2],
            stats: DiskStats::default(),
            rq_wait: usize::MAX,
            congestion_wait: usize::MAX,
            flusher_wait: usize::MAX,
        }
    }

    /// Requests waiting in direction `dir`.
    pub fn nr_queued(&self, dir: Dir) -> usize {
        self.queued[dir as usize].len()
    }

    /// Returns true if a submitter in direction `dir` would have to wait for a request.
    pub fn queue_full(&self, dir: Dir) -> bool {
        self.queued[dir as usize].len() >= self.model.nr_requests as usize
    }

    /// bdi_write_congested / bdi_read_congested.
    pub fn is_congested(&self, dir: Dir) -> bool {
        self.congested[dir as usize]
    }

    fn congestion_on(&self) -> usize {
        (self.model.nr_requests as usize * 7 / 8).max(1)
    }

    fn congestion_off(&self) -> usize {
        self.model.nr_requests as usize * 13 / 16
    }

    /// Queues a bio, merging it at the back of a queued request of the same direction when the
    /// sectors are adjacent and the result fits max_sectors. Returns true if the device is idle
    /// and must be kicked (the caller schedules the dispatch).
    pub fn submit_bio(&mut self, bio: Bio) -> bool {
        let d = bio.dir as usize;
        let max = u64::from(self.model.max_sectors_kb) * 2;
        let n = bio.pages.len() as u64 * SECTORS_PER_PAGE;
        if let Some(rq) = self.queued[d].iter_mut().rev().find(|r| r.end() == bio.sector && r.nr_sectors + n <= max) {
            rq.nr_sectors += n;
            rq.pages.extend_from_slice(&bio.pages);
            rq.nr_bios += 1;
            self.stats.merges[d] += 1;
        } else {
            self.queued[d].push_back(Request { dir: bio.dir, sector: bio.sector, nr_sectors: n, pages: bio.pages, nr_bios: 1 });
            if self.queued[d].len() >= self.congestion_on() {
                self.congested[d] = true;
            }
        }
        self.in_flight.is_none()
    }

    /// The next request deadline would dispatch.
    fn pick(&mut self) -> Option<Request> {
        let reads = !self.queued[Dir::Read as usize].is_empty();
        let writes = !self.queued[Dir::Write as usize].is_empty();
        let dir = if reads && (!writes || self.starved < WRITES_STARVED) {
            if writes {
                self.starved += 1;
            }
            Dir::Read
        } else if writes {
            self.starved = 0;
            Dir::Write
        } else {
            return None;
        };
        self.queued[dir as usize].pop_front()
    }

    /// Starts the next request if the device is idle; returns its completion time.
    pub fn dispatch(&mut self, now: u64) -> Option<u64> {
        if self.in_flight.is_some() {
            return None;
        }
        let rq = self.pick()?;
        let d = rq.dir as usize;
        if self.queued[d].len() < self.congestion_off() {
            self.congested[d] = false;
        }
        let mut t = self.model.request_overhead_ns;
        if rq.sector != self.head {
            t += match rq.dir {
                Dir::Write => self.model.write_seek_ns.unwrap_or(self.model.seek_ns),
                Dir::Read => self.model.seek_ns,
            };
            self.stats.seeks += 1;
        }
        t += rq.nr_sectors * 512 * 1_000_000_000 / self.model.bandwidth.max(1);
        self.head = rq.end();
        self.stats.requests[d] += 1;
        self.stats.sectors[d] += rq.nr_sectors;
        self.stats.busy_ns += t;
        let done = now + t;
        self.in_flight = Some((rq, done));
        Some(done)
    }

    /// Ends the request in flight (its completion time has come) and returns it.
    pub fn complete(&mut self) -> Request {
        self.in_flight.take().expect("a completion without a request in flight").0
    }

    /// Simulated time until the queue would drop below the congestion-off mark in `dir` if
    /// nothing else arrived (what congestion_wait effectively waits for), or None if it is not
    /// congested.
    pub fn time_until_uncongested(&self, dir: Dir, now: u64) -> Option<u64> {
        if !self.congested[dir as usize] {
            return None;
        }
        let excess = self.queued[dir as usize].len().saturating_sub(self.congestion_off()) + 1;
        let mut t = self.in_flight.as_ref().map_or(0, |(_, done)| done.saturating_sub(now));
        for rq in self.queued[dir as usize].iter().take(excess) {
            t += self.model.request_overhead_ns + rq.nr_sectors * 512 * 1_000_000_000 / self.model.bandwidth.max(1);
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bio(dir: Dir, sector: u64, pages: &[Pfn]) -> Bio {
        Bio { dir, sector, pages: pages.to_vec() }
    }

    #[test]
    fn adjacent_bios_merge_up_to_max_sectors_and_others_queue_apart() {
        let mut d = BlockDevice::new("sda", DeviceModel { max_sectors_kb: 16, ..Default::default() });
        d.submit_bio(bio(Dir::Write, 0, &[1, 2]));
        d.submit_bio(bio(Dir::Write, 16, &[3, 4])); // adjacent: 32 sectors = 16 KiB, fits
        d.submit_bio(bio(Dir::Write, 32, &[5])); // would exceed 16 KiB
        d.submit_bio(bio(Dir::Write, 1000, &[6]));
        assert_eq!(d.nr_queued(Dir::Write), 3);
        assert_eq!(d.stats.merges[1], 1);
        let done = d.dispatch(0).unwrap();
        let rq = d.complete();
        assert_eq!((rq.sector, rq.nr_sectors, rq.pages.clone()), (0, 32, vec![1, 2, 3, 4]));
        // The first request starts away from the head's sector 0? No: it starts at 0, no seek.
        assert_eq!(done, 50_000 + 32 * 512 * 1_000_000_000 / 100_000_000);
    }

    #[test]
    fn reads_go_first_until_writes_are_starved() {
        let mut d = BlockDevice::new("sda", DeviceModel::default());
        for i in 0..3 {
            d.submit_bio(bio(Dir::Write, 1000 * i, &[i as Pfn]));
        }
        for i in 0..4 {
            d.submit_bio(bio(Dir::Read, 100_000 + 1000 * i, &[10 + i as Pfn]));
        }
        let mut order = Vec::new();
        while d.dispatch(0).is_some() {
            order.push(d.complete().dir);
        }
        use Dir::*;
        assert_eq!(order, vec![Read, Read, Write, Read, Read, Write, Write]);
    }

    #[test]
    fn a_queue_is_congested_near_full_and_clears_below_the_off_mark() {
        let mut d = BlockDevice::new("sda", DeviceModel { nr_requests: 16, ..Default::default() });
        for i in 0..14 {
            d.submit_bio(bio(Dir::Write, 1000 * i, &[i as Pfn]));
        }
        assert!(d.is_congested(Dir::Write));
        assert!(d.time_until_uncongested(Dir::Write, 0).unwrap() > 0);
        while d.nr_queued(Dir::Write) >= 13 {
            d.dispatch(0);
            d.complete();
        }
        assert!(!d.is_congested(Dir::Write));
    }
}
