//! The block layer (block/blk-core.c, block/elevator.c, block/deadline-iosched.c): bios from the
//! page cache and swap are merged into requests on a per-device queue, dispatched one at a time
//! to a device model, and completed with a callback into the memory manager.
//!
//! * Building a bio (bio_add_page): pages join a bio while their sectors follow on, the bio
//!   stays within max_sectors and its physical segments within max_segments. A page whose frame
//!   directly follows the previous page's frame continues that page's segment
//!   (BIOVEC_PHYS_MERGEABLE: forward adjacency only) while the segment stays within
//!   max_segment_size and the queue clusters (QUEUE_FLAG_CLUSTER).
//! * Merging: a bio whose first sector follows the last sector of a queued request in the same
//!   direction is appended to it (a back merge, as elv_merge finds through the last-merge hint
//!   and the request hash), up to `max_sectors_kb` and `max_segments` (ll_back_merge_fn →
//!   ll_new_hw_segment, 2.6.32–3.x: the bio's segments are added without crediting a join).
//!   `deadline` also merges a bio that ends where a request starts (a front merge through its
//!   sector-sorted tree, front_merges = 1). A request that grew until it touches its neighbour
//!   in sector order is merged with it (attempt_back_merge / attempt_front_merge →
//!   ll_merge_requests_fn, crediting a physically contiguous join), and under deadline keeps the older
//!   of the two FIFO deadlines (deadline_merged_requests; noop leaves it in place).
//! * Dispatch, `deadline` (block/deadline-iosched.c, 2.6.32–3.x): requests sit in a FIFO and in
//!   a sector-sorted tree per direction. A batch of up to `fifo_batch` (16) requests goes out
//!   in ascending sector order, each the successor of the last (next_rq); a new batch prefers
//!   reads unless writes have been passed over `writes_starved` (2) times, and starts at the
//!   oldest request when its deadline (read_expire 500 ms, write_expire 5 s) has passed or the
//!   sweep ran out of higher sectors, otherwise where the sweep left off. `noop` is one FIFO.
//!   `cfq` (3.0's default) serves per-task sync queues and a shared async queue in time slices
//!   (`cfq_iosched`); under it a bio merges only into requests of its own queue.
//!   The scatterlist of a dispatched request (blk_rq_map_sg) joins physically adjacent pages
//!   across bio boundaries under the same rules; its length is the request's segment count.
//! * Queue depth: two pools of `nr_requests` requests each (`Pool`, 2.6.32–4.x struct
//!   request_list): reads and REQ_SYNC writes (the journal's, O_DIRECT's) take from the sync
//!   pool, writeback and reclaim from the async one, queued or held in plugs; a submitter
//!   finding its pool used up sleeps on the pool's request wait queue (get_request_wait). A
//!   pool is congested above 7/8 of `nr_requests` and uncongested again below 13/16
//!   (blk_queue_congestion_threshold); bdi_write_congested reports the async pool's state,
//!   bdi_read_congested the sync pool's. Every async request completed with its pool below
//!   13/16 wakes the tasks in congestion_wait(BLK_RW_ASYNC), congested before or not
//!   (`blk_complete`). The scheduler sorts by direction only, sync writes among the others.
//! * Plugging (`blk_core`): 2.6.32's queues plug themselves when a request finds them empty;
//!   2.6.39+ tasks hold their requests in an on-stack plug around writepages, the journal's
//!   writes, readahead and direct I/O (and 6.x reclaim and swap readahead), merging later bios
//!   into them, until the plug is flushed into the queue with back merges.
//! * The device serves one request at a time: a seek when the request does not start where the
//!   previous one ended (a short forward skip costs only the time the skipped sectors take to
//!   pass), a fixed per-request overhead, a per-segment cost (the controller fetching one
//!   DMA descriptor per scatterlist entry), then the transfer at the device bandwidth.
//! * The legacy request queue (2.6.x–4.x) runs scsi_request_fn, which takes the next request
//!   from the scheduler (blk_peek_request) before it asks whether the device has room: while
//!   the device is busy one more request waits on the dispatch list (`peeked`), chosen then,
//!   no longer mergeable, and counted by the scheduler as in flight. blk-mq asks the
//!   scheduler only when the device can take a request.
//!
//! * A flash device with erase blocks (`erase_block_kb`) pays no seek for a write; its flash
//!   translation layer (`ftl`) charges the copies it makes to close an erase block instead.
//!
//! Device models are chosen by name (`model = "sata-2011" | "ssd" | "s390-fcp" | "virtio-tcg" |
//! "usb-key-2011"`, see `DevicePreset`); every parameter can be overridden next to the name.

pub mod blk_core;
pub mod cfq_iosched;
mod ftl;
pub use blk_core::PlugSite;
pub use ftl::{FtlStats, MAX_ERASE_BLOCK_KB};

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

/// One of a queue's two request pools (rl->count[BLK_RW_SYNC] and rl->count[BLK_RW_ASYNC],
/// 2.6.32–4.x; rw_is_sync: a read, or a write with REQ_SYNC). Each has `nr_requests`, its own
/// congestion bit and its own waiters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// Reads and REQ_SYNC writes (WRITE_SYNC of jbd's commits and checkpoints, WRITE_ODIRECT).
    Sync = 0,
    /// Writes without REQ_SYNC: page cache writeback (WB_SYNC_NONE), reclaim's pageout, swap.
    Async = 1,
}

/// The I/O scheduler of a queue (/sys/block/*/queue/scheduler).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// deadline: reads first, writes after `writes_starved` read batches.
    #[default]
    Deadline,
    /// noop: one FIFO, merging only.
    Noop,
    /// cfq: per-task sync queues and a shared async queue served in time slices, sync before
    /// async, idling for a sync task's next request (`cfq_iosched`).
    Cfq,
}

/// Named device models: what each describes and where its figures come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DevicePreset {
    /// A 2011 7200 rpm SATA disk (average seek plus half a rotation about 8 ms, 100 MB/s
    /// sequential) behind a 3.x SCSI queue: nr_requests 128, max_sectors_kb 512, 128 segments
    /// of at most 64 KiB (blkdev.h defaults), clustering on, AHCI's PRD fetch per segment
    /// negligible.
    #[default]
    #[serde(rename = "sata-2011")]
    Sata2011,
    /// A 2011 SATA SSD: no seek, 100 µs to reach a random block, 250 MB/s, 20 µs per command.
    Ssd,
    /// An FCP SCSI LUN of a DS8000 behind FICON Express4 on System z, as zfcp (2.6.32) sets it
    /// up: max_sectors_kb 512 (hw 2152), max_phys_segments 128 (no ARCH_HAS_SG_CHAIN on s390),
    /// max_segment_size 64 KiB, clustering on, nr_requests 128; 100 MB/s per LUN streaming
    /// from the storage server's prefetch, 5 ms for a read that misses it, 150 µs per request
    /// through the channel. zfcp cuts every scatterlist entry into 4 KiB SBALEs, so the
    /// adapter's work does not depend on the number of segments (segment cost 0). The
    /// throughput and latency figures are assumptions (IBM's published per-channel figures
    /// bound them), not measurements.
    S390Fcp,
    /// A virtio-blk disk of a QEMU/TCG guest backed by a raw file on the host with
    /// cache=unsafe (the oracle's guests, docs/oracle.md): the guest's queue as 6.1 sets it up
    /// and reports it (/sys/block/vda/queue: mq-deadline, nr_requests 256, max_sectors_kb 1280,
    /// max_segments 254, max_segment_size 4 GiB); no seek, since the host serves the file from
    /// its page cache. The per-request time and the bandwidth are fitted to the real guests'
    /// reads (docs/calibration.md).
    VirtioTcg,
    /// A 2011 USB 2.0 flash key behind usb-storage (3.0): max_sectors 240 (120 KiB, the
    /// driver's default for high-speed devices), 1 ms to reach a new place to read, no seek
    /// for writes, which go through a flash translation layer with 4 MiB erase blocks and two
    /// of them open at once (the typical figures of the 2011 Linaro flash survey and
    /// flashbench's --open-au test; see `erase_block_kb`). 17 MB/s sequential writes.
    #[serde(rename = "usb-key-2011")]
    UsbKey2011,
}

/// A device's performance model and queue limits (see `DevicePreset` for the named ones).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DiskSpec")]
pub struct DeviceModel {
    /// The preset this model started from.
    pub model: DevicePreset,
    /// Time to move the head to a non-adjacent sector (seek + rotational latency), in ns.
    pub seek_ns: u64,
    /// What a write that does not continue the previous request costs instead of `seek_ns`,
    /// if different: on a flash key, the rewrite of a partly written erase block (none: as
    /// `seek_ns`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_seek_ns: Option<u64>,
    /// Flash translation layer: the erase block (allocation unit) in KiB, 0 for a device
    /// without one. A cheap key's FTL keeps a few erase blocks open for writing (their new
    /// pages go to a log block) and, to open another, closes the least recently written one:
    /// it copies every page of that erase block the host did not rewrite into the log block
    /// (garbage collection). Writes then cost no seek; what they cost is those copies.
    #[serde(skip_serializing_if = "is_zero")]
    pub erase_block_kb: u32,
    /// Erase blocks the FTL keeps open at once (flashbench --open-au); with `erase_block_kb`.
    #[serde(skip_serializing_if = "is_zero")]
    pub open_erase_blocks: u32,
    /// A forward gap up to this many sectors is skipped by letting it pass (no seek).
    pub skip_sectors: u64,
    /// Fixed cost of every request (command, interrupt, completion), in ns.
    pub request_overhead_ns: u64,
    /// Cost of every scatterlist segment of a request (descriptor fetch), in ns.
    pub segment_ns: u64,
    /// Sustained transfer rate in bytes per second.
    pub bandwidth: u64,
    /// What all disks of the machine share on the way to memory (host adapters, FCP channels),
    /// in bytes per second; 0: no shared limit. Transfers take turns on it in dispatch order.
    pub host_bandwidth: u64,
    /// /sys/block/*/queue/nr_requests.
    pub nr_requests: u32,
    /// /sys/block/*/queue/max_sectors_kb.
    pub max_sectors_kb: u32,
    /// /sys/block/*/queue/max_segments (min of max_phys_segments and max_hw_segments in 2.6.32).
    pub max_segments: u32,
    /// /sys/block/*/queue/max_segment_size in bytes.
    pub max_segment_size: u32,
    /// QUEUE_FLAG_CLUSTER: physically adjacent pages may share a segment.
    pub clustering: bool,
    pub scheduler: Scheduler,
    /// /sys/block/*/queue/read_ahead_kb: the largest readahead window of a file on the device
    /// (bdi->ra_pages; VM_MAX_READAHEAD, 128, unless a preset or the scenario sets it).
    pub read_ahead_kb: u32,
    /// Size of the device in bytes (the file systems and swap on it share it).
    pub size: crate::config::size::Bytes,
}

impl DevicePreset {
    /// The full model of this preset.
    pub fn model(self) -> DeviceModel {
        let sata = DeviceModel {
            model: self,
            seek_ns: 8_000_000,
            write_seek_ns: None,
            erase_block_kb: 0,
            open_erase_blocks: 0,
            skip_sectors: 256,
            request_overhead_ns: 50_000,
            segment_ns: 0,
            bandwidth: 100_000_000,
            host_bandwidth: 0,
            nr_requests: 128,
            max_sectors_kb: 512,
            max_segments: 128,
            max_segment_size: 65536,
            clustering: true,
            scheduler: Scheduler::Deadline,
            read_ahead_kb: crate::mm::filemap::VM_MAX_READAHEAD_KB,
            size: crate::config::size::Bytes(2 << 40),
        };
        match self {
            DevicePreset::Sata2011 => sata,
            DevicePreset::Ssd => DeviceModel { seek_ns: 100_000, request_overhead_ns: 20_000, bandwidth: 250_000_000, skip_sectors: 0, ..sata },
            DevicePreset::S390Fcp => DeviceModel { seek_ns: 5_000_000, request_overhead_ns: 150_000, bandwidth: 100_000_000, skip_sectors: 64, ..sata },
            DevicePreset::VirtioTcg => DeviceModel {
                seek_ns: 0,
                skip_sectors: 0,
                request_overhead_ns: 50_000,
                bandwidth: 485_000_000,
                nr_requests: 256,
                max_sectors_kb: 1280,
                max_segments: 254,
                max_segment_size: u32::MAX,
                ..sata
            },
            DevicePreset::UsbKey2011 => DeviceModel {
                seek_ns: 1_000_000,
                skip_sectors: 0,
                bandwidth: 17_000_000,
                max_sectors_kb: 120,
                erase_block_kb: 4096,
                open_erase_blocks: 2,
                ..sata
            },
        }
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Default for DeviceModel {
    fn default() -> Self {
        DevicePreset::Sata2011.model()
    }
}

/// `[machine.disk]` as written: a preset name and any parameter to override.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    #[serde(default)]
    model: DevicePreset,
    seek_ns: Option<u64>,
    write_seek_ns: Option<u64>,
    erase_block_kb: Option<u32>,
    open_erase_blocks: Option<u32>,
    skip_sectors: Option<u64>,
    request_overhead_ns: Option<u64>,
    segment_ns: Option<u64>,
    bandwidth: Option<u64>,
    host_bandwidth: Option<u64>,
    nr_requests: Option<u32>,
    max_sectors_kb: Option<u32>,
    max_segments: Option<u32>,
    max_segment_size: Option<u32>,
    clustering: Option<bool>,
    scheduler: Option<Scheduler>,
    read_ahead_kb: Option<u32>,
    size: Option<crate::config::size::Bytes>,
}

impl TryFrom<DiskSpec> for DeviceModel {
    type Error = String;
    fn try_from(s: DiskSpec) -> Result<DeviceModel, String> {
        let mut m = s.model.model();
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = s.$f { m.$f = v; } )* };
        }
        set!(seek_ns, skip_sectors, request_overhead_ns, segment_ns, bandwidth, host_bandwidth, nr_requests, max_sectors_kb, max_segments, max_segment_size, clustering, scheduler, read_ahead_kb, size, erase_block_kb, open_erase_blocks);
        if s.write_seek_ns.is_some() {
            m.write_seek_ns = s.write_seek_ns;
        }
        if m.bandwidth == 0 {
            return Err("bandwidth must be above 0 bytes per second".into());
        }
        if m.nr_requests < 4 {
            return Err(format!("nr_requests must be at least 4 (the kernel's BLKDEV_MIN_RQ), not {}", m.nr_requests));
        }
        if m.max_sectors_kb < 4 {
            return Err(format!("max_sectors_kb must hold at least one 4 KiB page, not {}", m.max_sectors_kb));
        }
        if m.max_segments == 0 {
            return Err("max_segments must be at least 1".into());
        }
        if m.max_segment_size < 4096 {
            return Err(format!("max_segment_size must be at least one page (4096), not {}", m.max_segment_size));
        }
        if m.erase_block_kb > 0 {
            if m.erase_block_kb % 4 != 0 || m.erase_block_kb > MAX_ERASE_BLOCK_KB {
                return Err(format!("erase_block_kb must be a multiple of 4 up to {MAX_ERASE_BLOCK_KB}, not {}", m.erase_block_kb));
            }
            if m.open_erase_blocks == 0 {
                return Err("open_erase_blocks must be at least 1 when erase_block_kb is set".into());
            }
            if m.write_seek_ns.is_some() {
                return Err("write_seek_ns and erase_block_kb both set what a write away from the last costs; give one".into());
            }
        }
        if m.read_ahead_kb < 4 || m.read_ahead_kb % 4 != 0 || m.read_ahead_kb > 65536 {
            return Err(format!("read_ahead_kb must be a multiple of 4 from 4 to 65536, not {}", m.read_ahead_kb));
        }
        Ok(m)
    }
}

impl DeviceModel {
    /// Pages a bio may carry (bio_get_nr_vecs: max_sectors and max_segments).
    pub fn bio_max_pages(&self) -> usize {
        (self.max_sectors_kb as usize / 4).min(self.max_segments as usize).min(BIO_MAX_PAGES)
    }

    /// Returns true if page `next` continues the segment ending with page `prev` (same
    /// segment in blk_rq_map_sg / BIOVEC_PHYS_MERGEABLE), given the segment's current bytes.
    #[inline]
    pub fn phys_mergeable(&self, prev: Pfn, next: Pfn, seg_bytes: u64) -> bool {
        self.clustering
            && next == prev + 1
            && seg_bytes + crate::mm::PAGE_SIZE <= u64::from(self.max_segment_size)
            // seg_boundary_mask 0xffffffff: a segment may not cross a 4 GiB boundary.
            && (u64::from(next) * crate::mm::PAGE_SIZE) % (1 << 32) != 0
    }

    /// Physical segments of a run of pages (__blk_recalc_rq_segments).
    pub fn phys_segments(&self, pages: &[Pfn]) -> u32 {
        let mut segs = 0;
        let mut seg_bytes = 0;
        let mut prev: Option<Pfn> = None;
        for &p in pages {
            match prev {
                Some(q) if self.phys_mergeable(q, p, seg_bytes) => seg_bytes += crate::mm::PAGE_SIZE,
                _ => {
                    segs += 1;
                    seg_bytes = crate::mm::PAGE_SIZE;
                }
            }
            prev = Some(p);
        }
        segs
    }
}

/// BIO_MAX_PAGES.
pub const BIO_MAX_PAGES: usize = 256;

/// A bio: one I/O of contiguous sectors carrying page frames in sector order.
#[derive(Clone, Debug)]
pub struct Bio {
    pub dir: Dir,
    pub sector: u64,
    pub pages: Vec<Pfn>,
    /// Physical segments (bi_phys_segments).
    pub segments: u32,
    /// Bytes in the last segment.
    seg_bytes: u64,
    /// Direct I/O: the id of the dio it belongs to (0: page cache or swap).
    pub dio: u32,
    /// A write with REQ_SYNC (WRITE_SYNC, WRITE_ODIRECT): it takes its request from the sync
    /// pool (`Pool`). Reads are sync whatever this says.
    pub sync: bool,
    /// REQ_NOIDLE (WRITE_SYNC has it, WRITE_ODIRECT not): CFQ does not idle for more of its
    /// task's I/O after it.
    pub noidle: bool,
    /// The task that submitted it (its pid; CFQ queues sync bios by task).
    pub owner: u32,
}

impl Bio {
    /// A bio of one page.
    pub fn new(dir: Dir, sector: u64, pfn: Pfn) -> Bio {
        Bio { dir, sector, pages: vec![pfn], segments: 1, seg_bytes: crate::mm::PAGE_SIZE, dio: 0, sync: false, noidle: false, owner: 0 }
    }

    /// The bio submitted WRITE_SYNC (REQ_SYNC | REQ_NOIDLE: the journal's writes).
    pub fn req_sync(mut self) -> Bio {
        self.sync = true;
        self.noidle = true;
        self
    }

    /// The CFQ queue a request made of this bio belongs to (`Request::cfqq`): its task's for
    /// a sync bio (a read or a REQ_SYNC write), the shared async queue (0) otherwise.
    pub fn cfqq(&self) -> u32 {
        if self.dir == Dir::Read || self.sync { self.owner + 1 } else { 0 }
    }

    /// The sector after the bio's last.
    pub fn end(&self) -> u64 {
        self.sector + self.pages.len() as u64 * SECTORS_PER_PAGE
    }

    /// Returns true if the bio holds as many pages as the queue lets one bio carry.
    pub fn is_full(&self, q: &DeviceModel) -> bool {
        self.pages.len() >= q.bio_max_pages()
    }

    /// bio_add_page: appends page `pfn` at sector `sector` if it follows on and the queue's
    /// limits (pages, sectors, segments) allow; false means submit this bio and start another.
    pub fn add_page(&mut self, q: &DeviceModel, sector: u64, pfn: Pfn) -> bool {
        if sector != self.end() || self.pages.len() >= q.bio_max_pages() {
            return false;
        }
        let last = *self.pages.last().expect("a bio has a page");
        if q.phys_mergeable(last, pfn, self.seg_bytes) {
            self.seg_bytes += crate::mm::PAGE_SIZE;
        } else {
            if self.segments >= q.max_segments {
                return false;
            }
            self.segments += 1;
            self.seg_bytes = crate::mm::PAGE_SIZE;
        }
        self.pages.push(pfn);
        true
    }
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
    /// Physical segments as merging counted them (nr_phys_segments).
    pub nr_phys_segments: u32,
    /// Direct I/O id of its bios (0: page cache or swap); bios of different dios do not merge.
    pub dio: u32,
    /// REQ_SYNC of the bio it was made from (a merged bio does not change it).
    pub sync: bool,
    /// REQ_NOIDLE of the bio it was made from.
    pub noidle: bool,
    /// Its CFQ queue (`Bio::cfqq`).
    pub cfqq: u32,
    /// Arrival order (noop's FIFO) and identity (deadline's next_rq).
    seq: u64,
    /// When deadline or CFQ must serve it (rq_fifo_time), ns.
    fifo_time: u64,
}

impl Request {
    fn end(&self) -> u64 {
        self.sector + self.nr_sectors
    }

    /// A request made of one bio (get_request + init_request_from_bio); its place in the
    /// scheduler's FIFO is set when it is queued.
    pub fn from_bio(bio: Bio) -> Request {
        let cfqq = bio.cfqq();
        Request {
            dir: bio.dir,
            sector: bio.sector,
            nr_sectors: bio.pages.len() as u64 * SECTORS_PER_PAGE,
            nr_phys_segments: bio.segments,
            pages: bio.pages,
            nr_bios: 1,
            dio: bio.dio,
            sync: bio.sync,
            noidle: bio.noidle,
            cfqq,
            seq: 0,
            fifo_time: 0,
        }
    }

    /// Appends request `b` that follows this one on the device; `segs` is the joined segment
    /// count `BlockDevice::requests_fit` worked out.
    fn append(&mut self, b: &Request, segs: u32) {
        self.nr_sectors += b.nr_sectors;
        self.nr_bios += b.nr_bios;
        self.nr_phys_segments = segs;
        self.pages.extend_from_slice(&b.pages);
    }

    /// Appends (`back`) or prepends a bio already checked by `BlockDevice::bio_merge_check`.
    fn add_bio(&mut self, bio: &Bio, back: bool) {
        self.nr_sectors += bio.pages.len() as u64 * SECTORS_PER_PAGE;
        self.nr_bios += 1;
        self.nr_phys_segments += bio.segments;
        if back {
            self.pages.extend_from_slice(&bio.pages);
        } else {
            self.sector = bio.sector;
            self.pages.splice(0..0, bio.pages.iter().copied());
        }
    }
}

/// Whether a bio may join a request (elv_try_merge + ll_back_merge_fn / ll_front_merge_fn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BioMerge {
    /// It may.
    Fits,
    /// Not adjacent on the device, another direction, or another direct I/O.
    NotAdjacent,
    /// Adjacent, but the request would exceed max_sectors.
    TooLarge,
    /// Adjacent, but the request would exceed max_segments.
    TooManySegments,
}

/// How many requests a task's plug holds before it is flushed to make room for another
/// (BLK_MAX_REQUEST_COUNT: 16 in 3.x, 32 in 6.x).
pub const BLK_MAX_REQUEST_COUNT_3X: usize = 16;
pub const BLK_MAX_REQUEST_COUNT_6X: usize = 32;
/// 6.x blk_add_rq_to_plug: a plug whose last request reached this size is flushed before it
/// takes another (BLK_PLUG_FLUSH_SIZE).
pub const BLK_PLUG_FLUSH_SIZE_SECTORS: u64 = 128 * 1024 / 512;

/// A task's on-stack plug (struct blk_plug, 2.6.39+): requests built from the task's bios that
/// no queue has seen yet, each with its device, in submission order.
#[derive(Clone, Debug, Default)]
pub struct Plug {
    pub list: Vec<(usize, Request)>,
}

/// Histogram buckets of request sizes: ≤4K, ≤8K, …, ≤512K, more.
pub const RQ_SIZE_BUCKETS: usize = 9;
/// Histogram buckets of scatterlist segments per request: 1, 2–3, 4–7, …, 64–127, ≥128.
pub const RQ_SEG_BUCKETS: usize = 8;

/// Per-device counters (diskstats-like; mmtwin's own "why" statistics).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DiskStats {
    pub requests: [u64; 2],
    pub sectors: [u64; 2],
    pub merges: [u64; 2],
    pub seeks: u64,
    /// Seeks by the distance the head moved: under 1 MiB, under 16 MiB, under 256 MiB,
    /// farther (every seek costs the model's `seek_ns` whatever its distance; this says what
    /// kind of disorder the requests had).
    pub seek_dist_hist: [u64; SEEK_DIST_BUCKETS],
    /// Of `busy_ns`, the time spent reaching each request's first sector: seeks, and forward
    /// gaps up to `skip_sectors` let pass under the head. A flash device's erase block copies
    /// are in `ftl` instead.
    pub seek_ns: u64,
    /// Time the device was busy, in ns.
    pub busy_ns: u64,
    /// Scatterlist segments of dispatched requests, by direction.
    pub segments: [u64; 2],
    /// Back merges refused because the segments would exceed max_segments.
    pub merge_refused_segments: u64,
    /// Dispatched requests by size (log2 buckets from 4 KiB), by direction.
    pub rq_size_hist: [[u64; RQ_SIZE_BUCKETS]; 2],
    /// Dispatched requests by scatterlist segments (log2 buckets), by direction.
    pub rq_seg_hist: [[u64; RQ_SEG_BUCKETS]; 2],
    /// Journal commits of the file system on this device, the blocks they wrote to the log
    /// (descriptors, metadata copies, commit blocks), the metadata blocks checkpointed home,
    /// and data pages the commits wrote (data=ordered).
    pub journal_commits: u64,
    pub journal_blocks: u64,
    pub checkpoint_blocks: u64,
    pub ordered_data_pages: u64,
    /// Times a task needing write access to a metadata buffer found its copy being written to
    /// the log and slept (BJ_Shadow), and the time commits' log writes kept buffers shadowed
    /// (ns).
    pub shadow_waits: u64,
    pub shadow_ns: u64,
    /// What the device's flash translation layer copied (devices with `erase_block_kb`).
    pub ftl: ftl::FtlStats,
    /// What CFQ did (devices it schedules; `BlockDevice::disk_stats` fills it in).
    pub cfq: cfq_iosched::CfqStats,
    /// Pages of the device's page cache (its file system's metadata blocks, /proc/meminfo's
    /// Buffers) when the run ended: a level, not a count.
    pub buffers_pages: u64,
    /// Metadata blocks read from the device because they were not cached (sb_bread of an
    /// ext2/ext3 indirect block on the read path, ext4_bread of a directory block by a lookup,
    /// the inode table block of an inode read back after the shrinkers evicted it).
    pub metadata_reads: u64,
    /// Of those, directory blocks (dx_root and htree leaves read by lookups).
    pub dir_reads: u64,
    /// Times a task creating a file on the device's file system found the directory's i_mutex
    /// held and slept, and the time those tasks waited for it (ns).
    pub i_mutex_waits: u64,
    pub i_mutex_wait_ns: u64,
}

impl DiskStats {
    /// Adds another device's counters (for machine totals).
    pub fn add(&mut self, o: &DiskStats) {
        for d in 0..2 {
            self.requests[d] += o.requests[d];
            self.sectors[d] += o.sectors[d];
            self.merges[d] += o.merges[d];
            self.segments[d] += o.segments[d];
            for b in 0..RQ_SIZE_BUCKETS {
                self.rq_size_hist[d][b] += o.rq_size_hist[d][b];
            }
            for b in 0..RQ_SEG_BUCKETS {
                self.rq_seg_hist[d][b] += o.rq_seg_hist[d][b];
            }
        }
        self.seeks += o.seeks;
        for b in 0..SEEK_DIST_BUCKETS {
            self.seek_dist_hist[b] += o.seek_dist_hist[b];
        }
        self.seek_ns += o.seek_ns;
        self.busy_ns += o.busy_ns;
        self.merge_refused_segments += o.merge_refused_segments;
        self.journal_commits += o.journal_commits;
        self.journal_blocks += o.journal_blocks;
        self.checkpoint_blocks += o.checkpoint_blocks;
        self.ordered_data_pages += o.ordered_data_pages;
        self.shadow_waits += o.shadow_waits;
        self.shadow_ns += o.shadow_ns;
        self.ftl.gc_copies += o.ftl.gc_copies;
        self.ftl.gc_copied_pages += o.ftl.gc_copied_pages;
        self.cfq.add(&o.cfq);
        self.buffers_pages += o.buffers_pages;
        self.metadata_reads += o.metadata_reads;
        self.dir_reads += o.dir_reads;
        self.i_mutex_waits += o.i_mutex_waits;
        self.i_mutex_wait_ns += o.i_mutex_wait_ns;
    }
}

/// Buckets of `DiskStats::seek_dist_hist`.
pub const SEEK_DIST_BUCKETS: usize = 4;

/// The bucket of a seek of `sectors` (512-byte sectors): under 1 MiB, under 16 MiB, under
/// 256 MiB, farther.
fn seek_dist_bucket(sectors: u64) -> usize {
    let bytes = sectors * 512;
    [1u64 << 20, 16 << 20, 256 << 20].iter().position(|&lim| bytes < lim).unwrap_or(SEEK_DIST_BUCKETS - 1)
}

fn log2_bucket(v: u64, buckets: usize) -> usize {
    if v <= 1 {
        return 0;
    }
    ((64 - (v - 1).leading_zeros()) as usize).min(buckets - 1)
}

/// BLK_BATCH_REQ (q->nr_batching): requests a batcher may allocate.
pub const BLK_BATCH_REQ: u32 = 32;

/// A task's block-layer io_context (struct io_context): its request batch. A task becomes a
/// batcher when its allocation fills a queue's pool, and after each sleep in get_request_wait
/// (`RequestAlloc::Batching`).
#[derive(Clone, Copy, Debug, Default)]
pub struct IoContext {
    /// Requests left in the batch (ioc->nr_batch_requests).
    pub nr_batch_requests: u32,
    /// When the batch began, in jiffies (ioc->last_waited).
    pub last_waited: u64,
    /// The task went to sleep in get_request_wait and has not looked for a request since.
    pub slept: bool,
}

/// A bio its task holds across get_request_wait (`Mm::submit_bio_or_sleep`): its pages are
/// under writeback, and it is queued when the task has its request.
#[derive(Clone, Debug)]
pub struct HeldBio {
    pub dev: usize,
    pub bio: Bio,
    /// Its writer goes on adding pages to it once it has the request (ext3's page-by-page
    /// writers, whose next pages merge into that request in the task's plug).
    pub open: bool,
    /// The task was woken and has the request.
    pub granted: bool,
}

/// A block device with its request queue (struct request_queue + the device).
#[derive(Clone, Debug)]
pub struct BlockDevice {
    pub name: String,
    pub model: DeviceModel,
    queued: [VecDeque<Request>; 2],
    /// The request the device is working on and when it finishes.
    pub in_flight: Option<(Request, u64)>,
    /// The request taken from the scheduler while the device was busy (`request_fn_peeks`):
    /// next to start, no longer mergeable, still counted in its pool.
    pub peeked: Option<Request>,
    /// 2.6.x/3.x scsi_request_fn takes the next request from the elevator
    /// (blk_peek_request, which activates it in the scheduler) before it asks whether the
    /// device can take one (scsi_dev_queue_ready): on a device that works on one request at
    /// a time, the scheduler chooses each request while the one before it is in flight.
    /// blk-mq asks the scheduler only when the device has room (its dispatch budget).
    pub request_fn_peeks: bool,
    /// Sector after the last one transferred (head position).
    head: u64,
    /// Reads dispatched in a row while writes waited (deadline's starved counter).
    starved: u32,
    /// deadline's next_rq per direction: the request after the last dispatched one in sector
    /// order (by seq), and the requests dispatched in the current batch.
    next_rq: [Option<u64>; 2],
    batching: u32,
    seq: u64,
    /// Queued requests of each pool (`Pool`).
    pool_queued: [usize; 2],
    /// Each pool's congestion bit (BDI_sync_congested, BDI_async_congested).
    pub congested: [bool; 2],
    /// Requests of each pool held in tasks' plugs (counted against nr_requests like queued
    /// ones: the kernel allocates them before plugging).
    pub plugged: [usize; 2],
    /// Whether REQ_SYNC writes take from the sync pool (the request lists of 2.6.32–4.x).
    /// blk-mq's tags (`request_alloc = "tags"`) are modelled with reads and writes apart, as
    /// before the pools were split by REQ_SYNC.
    pub sync_pool: bool,
    /// 2.6.32 queue plugging (`BlkPlugPolicy::QueuePlug`): the queue holds its requests back
    /// until unplugged (blk_plug_device / blk_remove_plug), at the latest at `unplug_at` (the
    /// unplug timer, re-armed by each plugging).
    pub queue_plugged: bool,
    pub unplug_at: u64,
    pub stats: DiskStats,
    /// Wait queues of submitters waiting for a free request of each pool (rl->wait[sync],
    /// get_request_wait): exclusive, so each freed request wakes the longest waiter only.
    pub rq_wait: [usize; 2],
    /// Wait queue of writers waiting for any of the device's I/O to end (woken by every
    /// completion; the flusher when nothing it could write was left unlocked).
    pub io_wait: usize,
    /// Wait queue the device's flusher thread sleeps on.
    pub flusher_wait: usize,
    /// The flash translation layer, for a device with erase blocks.
    ftl: Option<ftl::Ftl>,
    /// CFQ's state, when it is the queue's scheduler.
    cfq: Option<cfq_iosched::Cfq>,
    /// The CFQ idle timer expiry last handed to the event queue (`cfq_timer_to_arm`).
    cfq_timer_armed: Option<u64>,
}

/// deadline's writes_starved default.
const WRITES_STARVED: u32 = 2;
/// deadline's fifo_batch default: requests dispatched in sector order before a new choice.
const FIFO_BATCH: u32 = 16;
/// deadline's read_expire (HZ / 2) and write_expire (5 * HZ), in ns.
const EXPIRE_NS: [u64; 2] = [500_000_000, 5_000_000_000];

impl BlockDevice {
    pub fn new(name: &str, model: DeviceModel) -> BlockDevice {
        let ftl = (model.erase_block_kb > 0).then(|| ftl::Ftl::new(model.erase_block_kb, model.open_erase_blocks));
        BlockDevice {
            ftl,
            cfq: (model.scheduler == Scheduler::Cfq).then(cfq_iosched::Cfq::default),
            cfq_timer_armed: None,
            name: name.to_string(),
            model,
            queued: [VecDeque::new(), VecDeque::new()],
            in_flight: None,
            peeked: None,
            request_fn_peeks: false,
            head: 0,
            starved: 0,
            next_rq: [None; 2],
            batching: 0,
            seq: 0,
            pool_queued: [0; 2],
            congested: [false; 2],
            plugged: [0; 2],
            sync_pool: true,
            queue_plugged: false,
            unplug_at: 0,
            stats: DiskStats::default(),
            rq_wait: [usize::MAX; 2],
            io_wait: usize::MAX,
            flusher_wait: usize::MAX,
        }
    }

    /// Requests waiting in direction `dir`.
    pub fn nr_queued(&self, dir: Dir) -> usize {
        self.queued[dir as usize].len()
    }

    /// The pool a request of direction `dir` with REQ_SYNC `sync` takes from (rw_is_sync).
    pub fn pool(&self, dir: Dir, sync: bool) -> Pool {
        if dir == Dir::Read || (sync && self.sync_pool) { Pool::Sync } else { Pool::Async }
    }

    /// The pool of bio `bio`.
    pub fn bio_pool(&self, bio: &Bio) -> Pool {
        self.pool(bio.dir, bio.sync)
    }

    fn rq_pool(&self, rq: &Request) -> Pool {
        self.pool(rq.dir, rq.sync)
    }

    /// Returns true if a submitter from pool `p` would have to wait for a request.
    pub fn queue_full(&self, p: Pool) -> bool {
        self.allocated(p) >= self.model.nr_requests as usize
    }

    /// Requests of pool `p` in use: queued or held in a plug (rl->count, less the request in
    /// flight, which the model does not count).
    pub fn allocated(&self, p: Pool) -> usize {
        self.pool_queued[p as usize] + self.plugged[p as usize]
    }

    /// Pool `p`'s congestion bit: bdi_write_congested reads the async pool's,
    /// bdi_read_congested the sync pool's.
    pub fn is_congested(&self, p: Pool) -> bool {
        self.congested[p as usize]
    }

    fn congestion_on(&self) -> usize {
        (self.model.nr_requests as usize * 7 / 8).max(1)
    }

    fn congestion_off(&self) -> usize {
        self.model.nr_requests as usize * 13 / 16
    }

    /// Whether `bio` may join request `rq` at its back (or front): the request ends where the
    /// bio starts (starts where it ends), in the same direction and direct I/O, and together
    /// they stay within max_sectors and max_segments (ll_back_merge_fn / ll_front_merge_fn,
    /// 2.6.32–3.x: the bio's segments are added without crediting a join).
    fn bio_merge_check(&self, rq: &Request, bio: &Bio, back: bool) -> BioMerge {
        let adjacent = if back { rq.end() == bio.sector } else { rq.sector == bio.end() };
        if rq.dir != bio.dir || rq.dio != bio.dio || !adjacent {
            return BioMerge::NotAdjacent;
        }
        if rq.nr_sectors + bio.pages.len() as u64 * SECTORS_PER_PAGE > u64::from(self.model.max_sectors_kb) * 2 {
            return BioMerge::TooLarge;
        }
        if rq.nr_phys_segments + bio.segments > self.model.max_segments {
            return BioMerge::TooManySegments;
        }
        BioMerge::Fits
    }

    /// Queues a bio at time `now`: merges it into a queued request (`queue_merge`) or makes a
    /// new request of it. Returns true if the device is idle and must be kicked (the caller
    /// schedules the dispatch).
    pub fn submit_bio(&mut self, bio: Bio, now: u64) -> bool {
        if let Err(bio) = self.queue_merge(bio) {
            self.add_request(Request::from_bio(bio), now);
        }
        self.wants_run()
    }

    /// Whether running the queue now may start or peek a request: the device is idle, or
    /// busy with no request peeked yet (`request_fn_peeks`).
    fn wants_run(&self) -> bool {
        self.in_flight.is_none() || (self.request_fn_peeks && self.peeked.is_none())
    }

    /// elv_queue_empty: no request queued in the scheduler or on the dispatch list.
    pub fn elv_queue_empty(&self) -> bool {
        self.queued[0].is_empty() && self.queued[1].is_empty() && self.peeked.is_none()
    }

    /// elv_merge and bio_attempt_back_merge / bio_attempt_front_merge: the bio joins the back
    /// of a queued request of its direction whose last sector it follows, or (deadline) the
    /// front of one it ends against, when the result fits max_sectors and max_segments; the
    /// grown request then merges with its sector neighbour if they now touch. Gives the bio
    /// back if no request took it.
    pub fn queue_merge(&mut self, bio: Bio) -> Result<(), Bio> {
        let d = bio.dir as usize;
        let (target, refused) = self.queue_merge_target(&bio);
        let Some((i, back)) = target else {
            if refused {
                self.stats.merge_refused_segments += 1;
            }
            return Err(bio);
        };
        self.queued[d][i].add_bio(&bio, back);
        self.stats.merges[d] += 1;
        self.attempt_merge(d, i, back);
        Ok(())
    }

    /// Whether `queue_merge` would take `bio` into a queued request.
    pub fn would_queue_merge(&self, bio: &Bio) -> bool {
        self.queue_merge_target(bio).0.is_some()
    }

    /// The queued request `queue_merge` puts `bio` into, and at which end (true: its back):
    /// the latest queued request the bio touches, at its back first. Also whether a request
    /// it touches refused it for its segments.
    fn queue_merge_target(&self, bio: &Bio) -> (Option<(usize, bool)>, bool) {
        let d = bio.dir as usize;
        let front_merges = self.model.scheduler != Scheduler::Noop;
        let mut refused = false;
        for back in [true, false] {
            if !back && !front_merges {
                break;
            }
            let hit = self.queued[d].iter().rposition(|r| self.bio_merge_check(r, bio, back) != BioMerge::NotAdjacent);
            let Some(i) = hit else { continue };
            // cfq_allow_merge: only into a request of the queue the bio would join.
            if self.cfq.is_some() && self.queued[d][i].cfqq != bio.cfqq() {
                continue;
            }
            match self.bio_merge_check(&self.queued[d][i], bio, back) {
                BioMerge::Fits => return (Some((i, back)), refused),
                BioMerge::TooManySegments => refused = true,
                _ => {}
            }
        }
        (None, refused)
    }

    /// attempt_plug_merge for one plugged request of this queue: the bio joins it at its back
    /// or its front if the limits allow (elv_try_merge, bio_attempt_back_merge /
    /// bio_attempt_front_merge). Counted as a merge, as the kernel's diskstats do.
    pub fn plug_merge(&mut self, rq: &mut Request, bio: &Bio) -> bool {
        let Some(back) = self.plug_merge_end(rq, bio) else { return false };
        rq.add_bio(bio, back);
        self.stats.merges[bio.dir as usize] += 1;
        true
    }

    /// The end of plugged request `rq` that `bio` would join (true: its back), if either.
    pub fn plug_merge_end(&self, rq: &Request, bio: &Bio) -> Option<bool> {
        if self.cfq.is_some() && rq.cfqq != bio.cfqq() {
            return None;
        }
        [true, false].into_iter().find(|&back| self.bio_merge_check(rq, bio, back) == BioMerge::Fits)
    }

    /// Takes a request for a task's plug from the pool (get_request); the caller keeps it.
    pub fn plug_request(&mut self, bio: Bio) -> Request {
        let p = self.bio_pool(&bio);
        self.plugged[p as usize] += 1;
        self.set_congestion(p);
        Request::from_bio(bio)
    }

    /// Inserts a request from a task's plug at time `now` (blk_flush_plug_list with
    /// ELEVATOR_INSERT_SORT_MERGE): it joins the back of a queued request that ends where it
    /// starts if the two fit the queue's limits together (elv_attempt_insert_merge →
    /// attempt_merge), else it is queued. Returns true if the device is idle and must be kicked.
    pub fn insert_request(&mut self, rq: Request, now: u64) -> bool {
        let d = rq.dir as usize;
        self.plugged[self.rq_pool(&rq) as usize] -= 1;
        let hit = self.queued[d].iter().rposition(|q| q.end() == rq.sector && q.dio == rq.dio);
        match hit.and_then(|i| Some((i, self.requests_fit(&self.queued[d][i], &rq)?))) {
            Some((i, segs)) => {
                self.queued[d][i].append(&rq, segs);
                self.stats.merges[d] += 1;
            }
            None => self.add_request(rq, now),
        }
        self.wants_run()
    }

    /// ll_merge_requests_fn: the segments of `a` followed by `b` if they fit max_sectors and
    /// max_segments together (a physically contiguous join counts once).
    fn requests_fit(&self, a: &Request, b: &Request) -> Option<u32> {
        let join = self.model.phys_mergeable(*a.pages.last().expect("pages"), b.pages[0], 0);
        let segs = a.nr_phys_segments + b.nr_phys_segments - u32::from(join);
        (a.nr_sectors + b.nr_sectors <= u64::from(self.model.max_sectors_kb) * 2 && segs <= self.model.max_segments).then_some(segs)
    }

    /// Queues a new request (elv_add_request): the scheduler's FIFO deadline starts now.
    fn add_request(&mut self, mut rq: Request, now: u64) {
        let d = rq.dir as usize;
        let p = self.rq_pool(&rq);
        self.seq += 1;
        rq.seq = self.seq;
        rq.fifo_time = match self.cfq {
            Some(_) => now + cfq_iosched::FIFO_EXPIRE_NS[usize::from(rq.dir == Dir::Read || rq.sync)],
            None => now + EXPIRE_NS[d],
        };
        self.queued[d].push_back(rq);
        self.pool_queued[p as usize] += 1;
        self.set_congestion(p);
        if let Some(cfq) = self.cfq.as_mut() {
            cfq.insert(self.seq, &self.queued, now);
        }
    }

    /// blk_set_queue_congested when pool `p`'s use reaches the congestion-on mark.
    fn set_congestion(&mut self, p: Pool) {
        if self.allocated(p) >= self.congestion_on() {
            self.congested[p as usize] = true;
        }
    }

    /// attempt_back_merge / attempt_front_merge: request `i` of direction `d` grew at its back
    /// (or front); if it now touches the next (previous) request in sector order and the two
    /// fit the queue's limits together (ll_merge_requests_fn), they become one request; under
    /// deadline it takes the older FIFO place and deadline.
    fn attempt_merge(&mut self, d: usize, i: usize, back: bool) {
        let r = &self.queued[d][i];
        // Under CFQ the neighbour is looked for in the request's own queue (elv_rb_latter_request).
        let mine = |o: &Request| self.cfq.is_none() || o.cfqq == r.cfqq;
        let other = if back {
            self.queued[d].iter().position(|o| o.sector == r.end() && o.dio == r.dio && mine(o))
        } else {
            self.queued[d].iter().position(|o| o.end() == r.sector && o.dio == r.dio && mine(o))
        };
        let Some(j) = other else { return };
        let (first, second) = if back { (i, j) } else { (j, i) };
        let Some(segs) = self.requests_fit(&self.queued[d][first], &self.queued[d][second]) else { return };
        let b = self.queued[d].remove(second).expect("queued");
        // __blk_put_request of the merged-away request frees it to its own pool.
        self.pool_queued[self.rq_pool(&b) as usize] -= 1;
        let first = if second < first { first - 1 } else { first };
        let older = (b.fifo_time, b.seq) < (self.queued[d][first].fifo_time, self.queued[d][first].seq);
        let a = &mut self.queued[d][first];
        a.append(&b, segs);
        if self.next_rq[d] == Some(b.seq) {
            self.next_rq[d] = Some(a.seq);
        }
        let a_seq = a.seq;
        if let Some(cfq) = self.cfq.as_mut() {
            cfq.merged(&b, a_seq);
        }
        if older && self.model.scheduler != Scheduler::Noop {
            // deadline_merged_requests, cfq_merged_requests: the merged request takes the older
            // one's place in the FIFO (noop_merged_requests leaves it where it was).
            a.fifo_time = b.fifo_time;
            let a = self.queued[d].remove(first).expect("queued");
            let at = self.queued[d].iter().position(|r| r.fifo_time > b.fifo_time).unwrap_or(self.queued[d].len());
            self.queued[d].insert(at, a);
        }
        self.stats.merges[d] += 1;
    }

    /// The next request the scheduler would dispatch at `now` (noop: the oldest of either
    /// direction; deadline: deadline_dispatch_requests, see the module comment).
    fn pick(&mut self, now: u64) -> Option<Request> {
        let dir = match self.model.scheduler {
            Scheduler::Noop => match (self.queued[0].front(), self.queued[1].front()) {
                (Some(r), Some(w)) => if r.seq < w.seq { Dir::Read } else { Dir::Write },
                (Some(_), None) => Dir::Read,
                (None, Some(_)) => Dir::Write,
                (None, None) => return None,
            },
            Scheduler::Deadline => return self.deadline_pick(now),
            Scheduler::Cfq => {
                let cfq = self.cfq.as_mut().expect("CFQ's state");
                let seq = cfq.dispatch(&self.queued, now)?;
                let (d, i) = (0..2).find_map(|d| self.queued[d].iter().position(|r| r.seq == seq).map(|i| (d, i))).expect("queued");
                return self.queued[d].remove(i);
            }
        };
        self.queued[dir as usize].pop_front()
    }

    /// deadline_dispatch_requests: continue the batch along next_rq while it lasts, else pick
    /// a direction and start at the expired FIFO head or where the sweep left off.
    fn deadline_pick(&mut self, now: u64) -> Option<Request> {
        let reads = !self.queued[Dir::Read as usize].is_empty();
        let writes = !self.queued[Dir::Write as usize].is_empty();
        let find = |q: &VecDeque<Request>, seq: Option<u64>| seq.and_then(|s| q.iter().position(|r| r.seq == s));
        let batch = [Dir::Write, Dir::Read].into_iter().find_map(|dir| find(&self.queued[dir as usize], self.next_rq[dir as usize]).map(|i| (dir, i)));
        let (dir, i) = match batch {
            Some(b) if self.batching < FIFO_BATCH => b,
            _ => {
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
                let q = &self.queued[dir as usize];
                let expired = q.front().is_some_and(|r| r.fifo_time <= now);
                let i = match find(q, self.next_rq[dir as usize]) {
                    Some(i) if !expired => i,
                    _ => 0,
                };
                self.batching = 0;
                (dir, i)
            }
        };
        self.batching += 1;
        let d = dir as usize;
        let rq = self.queued[d].remove(i).expect("queued");
        // deadline_move_request: the next request in sector order; the other direction's
        // sweep ends.
        self.next_rq[d] = self.queued[d].iter().filter(|r| r.sector > rq.sector).min_by_key(|r| r.sector).map(|r| r.seq);
        self.next_rq[1 - d] = None;
        Some(rq)
    }

    /// Runs the queue (request_fn): starts the next request if the device is idle, the one
    /// peeked before if there is one, and returns its completion time; with
    /// `request_fn_peeks`, then takes the request after it from the scheduler. `host_free_at`
    /// is when the shared host path (see `host_bandwidth`) is next free; a transfer waits for
    /// it and then holds it for bytes / host_bandwidth.
    pub fn dispatch(&mut self, now: u64, host_free_at: &mut u64) -> Option<u64> {
        if self.queue_plugged {
            return None;
        }
        if self.in_flight.is_some() {
            if self.request_fn_peeks && self.peeked.is_none() {
                self.peeked = self.pick(now);
            }
            return None;
        }
        let rq = match self.peeked.take() {
            Some(rq) => rq,
            None => self.pick(now)?,
        };
        let done = self.start(rq, now, host_free_at);
        if self.request_fn_peeks {
            self.peeked = self.pick(now);
        }
        Some(done)
    }

    /// The device takes request `rq` at `now`: returns its completion time.
    fn start(&mut self, rq: Request, now: u64, host_free_at: &mut u64) -> u64 {
        let d = rq.dir as usize;
        let p = self.rq_pool(&rq);
        self.pool_queued[p as usize] -= 1;
        debug_assert_eq!(self.pool_queued.iter().sum::<usize>(), self.queued[0].len() + self.queued[1].len(), "pool counts");
        if self.allocated(p) < self.congestion_off() {
            self.congested[p as usize] = false;
        }
        // blk_rq_map_sg: the scatterlist joins adjacent pages across bio boundaries too.
        let sg = u64::from(self.model.phys_segments(&rq.pages));
        let mut t = self.model.request_overhead_ns + sg * self.model.segment_ns;
        if let (Dir::Write, Some(ftl)) = (rq.dir, self.ftl.as_mut()) {
            // Flash: no head to move; the FTL may first have to close an erase block.
            let copied = ftl.write(rq.sector / SECTORS_PER_PAGE, rq.nr_sectors.div_ceil(SECTORS_PER_PAGE), &mut self.stats.ftl);
            t += copied * crate::mm::PAGE_SIZE * 1_000_000_000 / self.model.bandwidth.max(1);
        } else if rq.sector != self.head {
            let positioning = if rq.sector > self.head && rq.sector - self.head <= self.model.skip_sectors {
                (rq.sector - self.head) * 512 * 1_000_000_000 / self.model.bandwidth.max(1)
            } else {
                self.stats.seeks += 1;
                self.stats.seek_dist_hist[seek_dist_bucket(rq.sector.abs_diff(self.head))] += 1;
                match rq.dir {
                    Dir::Write => self.model.write_seek_ns.unwrap_or(self.model.seek_ns),
                    Dir::Read => self.model.seek_ns,
                }
            };
            t += positioning;
            self.stats.seek_ns += positioning;
        }
        let bytes = rq.nr_sectors * 512;
        let mut done = now + t + bytes * 1_000_000_000 / self.model.bandwidth.max(1);
        if self.model.host_bandwidth > 0 {
            let start = (now + t).max(*host_free_at);
            *host_free_at = start + bytes * 1_000_000_000 / self.model.host_bandwidth;
            done = done.max(*host_free_at);
        }
        let t = done - now;
        self.head = rq.end();
        self.stats.requests[d] += 1;
        self.stats.sectors[d] += rq.nr_sectors;
        self.stats.segments[d] += sg;
        self.stats.rq_size_hist[d][log2_bucket(rq.nr_sectors / SECTORS_PER_PAGE, RQ_SIZE_BUCKETS)] += 1;
        self.stats.rq_seg_hist[d][((63 - sg.max(1).leading_zeros()) as usize).min(RQ_SEG_BUCKETS - 1)] += 1;
        self.stats.busy_ns += t;
        self.in_flight = Some((rq, done));
        done
    }

    /// Ends the request in flight (its completion time has come, `now`) and returns it.
    pub fn complete(&mut self, now: u64) -> Request {
        let rq = self.in_flight.take().expect("a completion without a request in flight").0;
        if let Some(cfq) = self.cfq.as_mut() {
            cfq.completed(&rq, now);
        }
        rq
    }

    /// CFQ's idle timer if it is armed at a time not handed out yet: the caller schedules an
    /// event then (`cfq_timer_fired`).
    pub fn cfq_timer_to_arm(&mut self) -> Option<u64> {
        let t = self.cfq.as_ref()?.idle_timer?;
        (self.cfq_timer_armed != Some(t)).then(|| {
            self.cfq_timer_armed = Some(t);
            t
        })
    }

    /// An event for CFQ's idle timer at `now`: runs cfq_idle_slice_timer if the timer is still
    /// armed for this time (it may have been deleted or re-armed since). Returns whether the
    /// queue should be run.
    pub fn cfq_timer_fired(&mut self, now: u64) -> bool {
        match self.cfq.as_mut() {
            Some(cfq) if cfq.idle_timer.is_some_and(|t| t <= now) => cfq.idle_timer_fired(now),
            _ => false,
        }
    }

    /// CFQ's counters, for a device it schedules.
    pub fn cfq_stats(&self) -> Option<cfq_iosched::CfqStats> {
        self.cfq.as_ref().map(|c| c.stats)
    }

    /// The device's counters, its scheduler's included.
    pub fn disk_stats(&self) -> DiskStats {
        DiskStats { cfq: self.cfq_stats().unwrap_or_default(), ..self.stats.clone() }
    }

    /// Whether a request freed now leaves pool `p` below the congestion-off mark
    /// (__freed_request's test before it calls blk_clear_queue_congested).
    pub fn below_congestion_off(&self, p: Pool) -> bool {
        self.allocated(p) < self.congestion_off()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bio(dir: Dir, sector: u64, pages: &[Pfn]) -> Bio {
        let q = DeviceModel::default();
        let mut b = Bio::new(dir, sector, pages[0]);
        for (i, &p) in pages.iter().enumerate().skip(1) {
            assert!(b.add_page(&q, sector + i as u64 * SECTORS_PER_PAGE, p));
        }
        b
    }

    #[test]
    fn adjacent_bios_merge_up_to_max_sectors_and_others_queue_apart() {
        let mut d = BlockDevice::new("sda", DeviceModel { max_sectors_kb: 16, ..Default::default() });
        d.submit_bio(bio(Dir::Write, 0, &[1, 2]), 0);
        d.submit_bio(bio(Dir::Write, 16, &[3, 4]), 0); // adjacent: 32 sectors = 16 KiB, fits
        d.submit_bio(bio(Dir::Write, 32, &[5]), 0); // would exceed 16 KiB
        d.submit_bio(bio(Dir::Write, 1000, &[6]), 0);
        assert_eq!(d.nr_queued(Dir::Write), 3);
        assert_eq!(d.stats.merges[1], 1);
        let done = d.dispatch(0, &mut 0).unwrap();
        let rq = d.complete(0);
        assert_eq!((rq.sector, rq.nr_sectors, rq.pages.clone()), (0, 32, vec![1, 2, 3, 4]));
        // The first request starts away from the head's sector 0? No: it starts at 0, no seek.
        assert_eq!(done, 50_000 + 32 * 512 * 1_000_000_000 / 100_000_000);
    }

    #[test]
    fn deadline_batches_in_sector_order_and_serves_writes_after_two_read_batches() {
        let mut d = BlockDevice::new("sda", DeviceModel::default());
        for i in 0..3 {
            d.submit_bio(bio(Dir::Write, 1000 * i, &[i as Pfn]), 0);
        }
        // Reads arrive at descending sectors: each batch ends at once (no higher sector).
        for i in 0..4 {
            d.submit_bio(bio(Dir::Read, 103_000 - 1000 * i, &[10 + i as Pfn]), 0);
        }
        let mut order = Vec::new();
        while d.dispatch(0, &mut 0).is_some() {
            let rq = d.complete(0);
            order.push((rq.dir, rq.sector));
        }
        use Dir::*;
        // Two read batches, then the writes (starved twice) as one batch in ascending order.
        assert_eq!(order, vec![(Read, 103_000), (Read, 102_000), (Write, 0), (Write, 1000), (Write, 2000), (Read, 101_000), (Read, 100_000)]);
    }

    #[test]
    fn deadline_continues_the_sweep_upward_until_the_oldest_request_expires() {
        let mut d = BlockDevice::new("sda", DeviceModel::default());
        for s in [5000, 9000, 1000, 7000] {
            d.submit_bio(bio(Dir::Write, s, &[s as Pfn]), 0);
        }
        let mut order = Vec::new();
        // Before write_expire: the oldest first, then upward from it; 1000 waits for the next
        // batch, which starts at the FIFO head.
        while d.dispatch(1_000_000, &mut 0).is_some() {
            order.push(d.complete(0).sector);
        }
        assert_eq!(order, vec![5000, 7000, 9000, 1000]);
        // Past the deadline of the oldest request a new batch starts from it, not from the
        // sweep's next sector.
        for s in [5000, 9000, 1000] {
            d.submit_bio(bio(Dir::Write, s, &[s as Pfn]), 0);
        }
        d.batching = FIFO_BATCH;
        d.next_rq[1] = d.queued[1].iter().find(|r| r.sector == 9000).map(|r| r.seq);
        d.dispatch(EXPIRE_NS[1] + 1, &mut 0);
        assert_eq!(d.complete(0).sector, 5000);
    }

    #[test]
    fn deadline_front_merges_and_a_filled_gap_joins_two_requests() {
        let mut d = BlockDevice::new("sda", DeviceModel::default());
        d.submit_bio(bio(Dir::Write, 16, &[3, 4]), 0);
        d.submit_bio(bio(Dir::Write, 0, &[1, 2]), 0); // ends where the first starts: front merge
        assert_eq!(d.nr_queued(Dir::Write), 1);
        d.submit_bio(bio(Dir::Write, 48, &[7]), 0);
        d.submit_bio(bio(Dir::Write, 32, &[5, 6]), 0); // fills the gap: back merge, then join
        assert_eq!(d.nr_queued(Dir::Write), 1);
        assert_eq!(d.stats.merges[1], 3);
        d.dispatch(0, &mut 0);
        let rq = d.complete(0);
        assert_eq!((rq.sector, rq.nr_sectors, rq.pages), (0, 56, vec![1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(d.stats.segments[1], 1, "physically adjacent across all three bios");
    }

    #[test]
    fn a_queue_is_congested_near_full_and_clears_below_the_off_mark() {
        let mut d = BlockDevice::new("sda", DeviceModel { nr_requests: 16, ..Default::default() });
        for i in 0..14 {
            d.submit_bio(bio(Dir::Write, 1000 * i, &[i as Pfn]), 0);
        }
        assert!(d.is_congested(Pool::Async));
        assert!(!d.below_congestion_off(Pool::Async));
        while d.nr_queued(Dir::Write) >= 13 {
            d.dispatch(0, &mut 0);
            d.complete(0);
        }
        assert!(!d.is_congested(Pool::Async));
        assert!(d.below_congestion_off(Pool::Async));
    }

    #[test]
    fn sync_writes_take_from_the_pool_reads_use_and_leave_the_writeback_pool_uncongested() {
        // 3.x request lists: 14 WRITE_SYNC requests (the journal's) of a 16-request queue
        // congest the sync pool, which bdi_read_congested reports; writeback's async pool stays
        // free. An async write merging into a sync request leaves it in the sync pool.
        let mut d = BlockDevice::new("sda", DeviceModel { nr_requests: 16, ..Default::default() });
        for i in 0..14 {
            d.submit_bio(bio(Dir::Write, 1000 * i, &[i as Pfn]).req_sync(), 0);
        }
        assert!(d.is_congested(Pool::Sync) && !d.is_congested(Pool::Async));
        assert_eq!((d.allocated(Pool::Sync), d.allocated(Pool::Async)), (14, 0));
        d.submit_bio(bio(Dir::Write, 8, &[100]), 0);
        assert_eq!((d.allocated(Pool::Sync), d.allocated(Pool::Async)), (14, 0), "merged");
        d.submit_bio(bio(Dir::Write, 500, &[101]), 0);
        assert_eq!(d.allocated(Pool::Async), 1);
        // The scheduler serves the writes of both pools in one sector-sorted direction.
        let mut sectors = Vec::new();
        while d.dispatch(0, &mut 0).is_some() {
            sectors.push(d.complete(0).sector);
        }
        assert_eq!(&sectors[..3], &[0, 500, 1000]);
        assert_eq!((d.allocated(Pool::Sync), d.allocated(Pool::Async)), (0, 0));
    }
}
