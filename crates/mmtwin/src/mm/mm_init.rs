//! Boot: building nodes and zones from the machine, handing free memory to the buddy allocator,
//! zonelists, min_free_kbytes, watermarks, lowmem_reserve and the per-cpu page sets
//! (mm/mm_init.c, mm/page_alloc.c: free_area_init, memblock_free_all, build_all_zonelists,
//! init_per_zone_wmark_min, setup_per_zone_wmarks, setup_per_zone_lowmem_reserve,
//! calculate_totalreserve_pages, zone_pcp_update; 3.x setup_zone_migrate_reserve).

use super::mm_types::{Page, PageState};
use super::mmzone::*;
use super::page_alloc::Mm;
use super::policy::*;
use super::gfp::Gfp;
use super::vmstat::{Era, VmEvents};
use super::{Pfn, PAGE_SIZE, SWAP_CLUSTER_MAX};
use crate::config::machine::{MachineLayout, STRUCT_PAGE_SIZE};
use crate::config::profile::Profile;
use crate::config::scenario::RunConfig;
use crate::util::int_sqrt;

/// 3.x RECLAIM_DISTANCE: above it, boot turns zone_reclaim_mode on.
pub const RECLAIM_DISTANCE_3X: u32 = 20;
/// The node_load scale of find_next_best_node (MAX_NUMNODES on a typical config).
const MAX_NUMNODES: u64 = 64;

impl Mm {
    /// Boots the memory manager of `cfg`'s machine and kernel.
    pub fn boot(cfg: &RunConfig) -> Mm {
        let layout = cfg.machine.layout().expect("validated machine");
        let mut mm = Mm::empty(&layout, cfg);
        mm.sched.jiffy_ns = 1_000_000_000 / u64::from(cfg.kernel.hz);
        mm.build_all_zonelists(&layout);
        mm.memblock_free_all();
        mm.init_per_zone_wmark_min(cfg.kernel.profile);
        if mm.era == Era::Linux3 && mm.sysctl.zone_reclaim_mode.is_none() {
            let far = layout.distance.iter().flatten().any(|&d| d > RECLAIM_DISTANCE_3X);
            mm.sysctl.zone_reclaim_mode = Some(u32::from(far));
        }
        if mm.sysctl.zone_reclaim_mode.is_none() {
            mm.sysctl.zone_reclaim_mode = Some(0);
        }
        mm.mount_root(&cfg.machine.disk, cfg.machine.swap.0, cfg.machine.fs);
        for i in 1..cfg.machine.disks as usize {
            mm.mount_disk(i, &cfg.machine.disk, cfg.machine.fs);
        }
        mm.page_writeback_init();
        mm.cost_ns = 0;
        mm.events = VmEvents::default();
        mm
    }

    /// The machine's disk: a swap partition of `swap` bytes first (swapon, if any), then one
    /// file system (the root file system). The slab caches the model allocates from are made
    /// here, shaped by SLUB for this machine's CPUs: the file system's inode cache, dentries,
    /// buffer heads and page-cache tree nodes (`inode_cache`, `dentry_cache`, `BH_CACHE`,
    /// `RADIX_CACHE` ids in that order).
    fn mount_root(&mut self, disk: &crate::block::DeviceModel, swap: u64, fs_type: crate::fs::FsType) {
        use super::slab::{KmemCache, BUFFER_HEAD_SIZE, DENTRY_SIZE, RADIX_TREE_NODE_SIZE_3X, RADIX_TREE_NODE_SIZE_6X};
        let (nodes, cpus, era) = (self.nodes.len(), self.cpu_to_node.len(), self.era);
        let (iname, isize, igfp) = fs_type.inode_cache(era);
        self.slab_caches.push(KmemCache::new(iname, isize, true, igfp, era, cpus, nodes));
        self.slab_caches.push(KmemCache::new("dentry", DENTRY_SIZE, true, Gfp::GFP_KERNEL, era, cpus, nodes));
        // alloc_buffer_head(GFP_NOFS); bh_cachep is SLAB_RECLAIM_ACCOUNT.
        self.slab_caches.push(KmemCache::new("buffer_head", BUFFER_HEAD_SIZE, true, Gfp::GFP_NOFS, era, cpus, nodes));
        let rsize = if era == Era::Linux3 { RADIX_TREE_NODE_SIZE_3X } else { RADIX_TREE_NODE_SIZE_6X };
        self.slab_caches.push(KmemCache::new("radix_tree_node", rsize, true, Gfp::GFP_KERNEL, era, cpus, nodes));
        self.radix_preload = vec![Vec::new(); cpus];
        // Partitions start at 1 MiB (sector 2048) and are MiB-aligned.
        let mut fs_start = 2048;
        if swap > 0 {
            self.swap = Some(super::swapfile::SwapInfo::new(0, 2048, swap));
            fs_start = 2048 + swap.div_ceil(1 << 20) * 2048;
        }
        self.add_disk(0, disk, fs_type, fs_start);
    }

    /// Disk `dev` (sdb, sdc, …) with one file system of its own, sharing the inode and dentry
    /// caches of the first.
    fn mount_disk(&mut self, dev: usize, disk: &crate::block::DeviceModel, fs_type: crate::fs::FsType) {
        self.add_disk(dev, disk, fs_type, 2048);
    }

    /// Adds block device `dev` and a superblock of `fs_type` starting at `fs_start`.
    fn add_disk(&mut self, dev: usize, disk: &crate::block::DeviceModel, fs_type: crate::fs::FsType, fs_start: u64) {
        let mut bdev = crate::block::BlockDevice::new(&disk_name(dev), disk.clone());
        bdev.sync_pool = self.policy.request_alloc != crate::mm::policy::RequestAlloc::Tags;
        // The legacy request queue's scsi_request_fn peeks; blk-mq (tags) does not.
        bdev.request_fn_peeks = bdev.sync_pool;
        self.bdevs.push(bdev);
        self.bdi_stat.push(crate::fs::fs_writeback::BdiStat::new());
        self.bdi_work.push(Default::default());
        self.flusher_busy.push(false);
        // mke2fs puts the journal at the start of the middle block group.
        let blocks = (disk.size.0 / 512).saturating_sub(fs_start) / crate::block::SECTORS_PER_PAGE;
        let jblocks = if fs_type.journaled() { crate::fs::jbd::default_journal_blocks(blocks) } else { 0 };
        let groups = blocks.div_ceil(crate::fs::jbd::BLOCKS_PER_GROUP);
        let jfirst = groups / 2 * crate::fs::jbd::BLOCKS_PER_GROUP + fs_type.group_meta_blocks(groups / 2);
        let (free, fs_groups, dirs) = crate::fs::ialloc::mkfs(fs_type, blocks, (jfirst, jblocks));
        let journal = (jblocks > 0).then(|| {
            self.journals.push(crate::fs::jbd::Journal {
                sb: self.sbs.len(),
                ordered_data: fs_type == crate::fs::FsType::Ext3,
                first: jfirst,
                blocks: jblocks,
                head: 0,
                log: Default::default(),
                log_pending: 0,
                dirty_since: None,
                dirty_key: None,
                commit_interval_ns: crate::fs::jbd::COMMIT_INTERVAL_NS,
                running: Default::default(),
                committing: Default::default(),
                shadow: None,
                shadow_wait: usize::MAX,
                checkpoint: Default::default(),
                wait: usize::MAX,
                tid: 1,
                committing_tid: 0,
                commit_sequence: 0,
                commit_request: 0,
                done_wait: usize::MAX,
                log_io: 0,
                ckpt_io: 0,
            });
            self.journals.len() - 1
        });
        self.sbs.push(crate::fs::SuperBlock {
            blocks,
            journal_area: (jfirst, jblocks),
            journal,
            fs_type,
            dev,
            start_sector: fs_start,
            free,
            rsv: Default::default(),
            groups: fs_groups,
            dirs,
            b_dirty: Default::default(),
            inode_lru: Default::default(),
            dentry_lru: Default::default(),
            seq: 0,
            inode_cache: 0,
            dentry_cache: 1,
            bdev_ino: None,
            meta_hint: [None; 6],
        });
        self.shrinker_deferred.push(0);
    }

    /// Page frames, pageblocks and zones with their spans, present and managed pages; every
    /// present frame starts out reserved.
    fn empty(layout: &MachineLayout, cfg: &RunConfig) -> Mm {
        let max_pfn = layout.max_pfn as usize;
        let mut pages = vec![Page::HOLE; max_pfn];
        for (nid, n) in layout.nodes.iter().enumerate() {
            for &(s, e) in &n.present {
                for (pfn, p) in pages[s as usize..e as usize].iter_mut().enumerate() {
                    let pfn = s + pfn as u64;
                    let zt = ZoneType::ALL.iter().rev().find(|zt| {
                        let (zs, ze) = n.zones[**zt as usize];
                        pfn >= zs && pfn < ze
                    });
                    p.set_state(PageState::Reserved);
                    p.zone = (nid * MAX_NR_ZONES + *zt.expect("present pfn in no zone") as usize) as u8;
                }
            }
        }
        let max_order = layout.arch.max_page_order(cfg.kernel.era);
        let pageblock_order = layout.arch.pageblock_order();
        let nr_blocks = max_pfn.div_ceil(1 << pageblock_order).max(1);
        let pageblock_flags = vec![MigrateType::Movable as u8; nr_blocks];
        let nr_cpus = layout.nr_cpus;
        let mut cpu_to_node = Vec::with_capacity(nr_cpus);
        let mut zones = Vec::new();
        let mut nodes = Vec::new();
        for (nid, n) in layout.nodes.iter().enumerate() {
            let first_cpu = cpu_to_node.len();
            cpu_to_node.extend(std::iter::repeat_n(nid, n.cpus));
            for zt in ZoneType::ALL {
                let (s, e) = n.zones[zt as usize];
                let present = layout.zone_present(nid, zt);
                zones.push(Zone {
                    id: zones.len(),
                    node: nid,
                    zone_type: zt,
                    zone_start_pfn: s as Pfn,
                    spanned_pages: e - s,
                    present_pages: present,
                    managed_pages: 0,
                    watermark: [0; NR_WMARK],
                    watermark_boost: 0,
                    lowmem_reserve: [0; MAX_NR_ZONES],
                    free_area: Default::default(),
                    nr_free_pages: 0,
                    free_diff_sum: 0,
                    free_diff: vec![0; nr_cpus],
                    stat_threshold: 0,
                    percpu_drift_mark: 0,
                    nr_reserved_highatomic: 0,
                    pcp: vec![PerCpuPages::default(); nr_cpus],
                    flags: 0,
                    contiguous: false,
                    vm_stat: [0; NR_ZONE_STAT_ITEMS],
                    pages_scanned: 0,
                    all_unreclaimable: false,
                    reclaim_locked_until: 0,
                    congested: false,
                    numa_stat: [0; NR_NUMA_STAT_ITEMS],
                });
            }
            nodes.push(PglistData {
                node_id: nid,
                first_zone: nid * MAX_NR_ZONES,
                node_start_pfn: n.start_pfn as Pfn,
                node_spanned_pages: n.end_pfn - n.start_pfn,
                node_present_pages: n.present.iter().map(|(a, b)| b - a).sum(),
                cpus: (first_cpu..first_cpu + n.cpus).collect(),
                zonelist: Vec::new(),
                zonelist_nofallback: Vec::new(),
                preferred: [None; MAX_NR_ZONES],
                preferred_nofallback: [None; MAX_NR_ZONES],
                kswapd_order: 0,
                kswapd_highest_zoneidx: 0,
                kswapd_wait_pending: false,
                totalreserve_pages: 0,
                zlc: Default::default(),
                kswapd_failures: 0,
                pgdat_dirty: false,
                pgdat_writeback: false,
                lruvec_congested: false,
                nr_writeback_throttled: 0,
                nr_reclaim_start: 0,
                throttled_written: 0,
                reclaim_wait_writeback: usize::MAX,
            });
        }
        let cpu_to_node_len = cpu_to_node.len();
        let node_cpus: Vec<Vec<usize>> = nodes.iter().map(|n| n.cpus.clone()).collect();
        let mut mm = Mm {
            pages,
            pageblock_flags,
            zones,
            nodes,
            cpu_to_node,
            events: VmEvents::default(),
            policy: cfg.kernel.policy,
            era: cfg.kernel.era,
            max_order,
            pageblock_order,
            sysctl: cfg.kernel.sysctl.clone(),
            min_free_kbytes: 0,
            totalreserve_pages: 0,
            page_group_by_mobility_disabled: false,
            costs: cfg.costs.scaled(cfg.machine.cpu_slowdown),
            cost_ns: 0,
            kswapd_wakeups: Vec::new(),
            sched: crate::sim::sched::SchedState::new(cpu_to_node_len, &node_cpus),
            distance: layout.distance.clone(),
            now_ns: 0,
            lruvecs: Vec::new(),
            mappings: Vec::new(),
            free_mappings: Vec::new(),
            sleep_ns: 0,
            congestion_sleep: None,
            rq_wait_owed: None,
            current_bdi: None,
            held_bio: Vec::new(),
            iocs: Vec::new(),
            alloc_may_defer: false,
            alloc_deferred: false,
            alloc_rebalance: Vec::new(),
            alloc_resume: false,
            pending_readahead: Vec::new(),
            congestion_wqh: 0,
            congestion_waits: [0; 3],
            congestion_wait_ns: [0; 3],
            pcp_diag: Default::default(),
            wakeups: Vec::new(),
            task_wakeups: Vec::new(),
            mutex_wq_base: usize::MAX,
            io_timers: Vec::new(),
            unplug_timers: Vec::new(),
            bw_timers: Vec::new(),
            meta_read_waiters: Vec::new(),
            plug: None,
            bdevs: Vec::new(),
            dios: Vec::new(),
            journals: Vec::new(),
            host_free_at: 0,
            bdi_stat: Vec::new(),
            bdi_work: Vec::new(),
            flusher_busy: Vec::new(),
            sbs: Vec::new(),
            inodes: Vec::new(),
            evicted_inodes: Default::default(),
            truncating: Default::default(),
            slab_caches: Vec::new(),
            radix_preload: Vec::new(),
            radix_nodes: Default::default(),
            shrinker_deferred: Vec::new(),
            swap: None,
            anon_vmas: Vec::new(),
            page_tables: Default::default(),
            last_pte: None,
            reclaimer: super::vmscan::Reclaimer::Direct,
            in_reclaim: false,
            reclaim_cpu: 0,
            reclaimed_slab: 0,
            dirty_props: Default::default(),
            bdp_ratelimits: Vec::new(),
            dirty_throttle_leaks: Vec::new(),
            wb_domain: Default::default(),
        };
        mm.bdp_ratelimits = vec![0; mm.cpu_to_node.len()];
        mm.dirty_throttle_leaks = vec![0; mm.cpu_to_node.len()];
        let nr_lruvecs = match mm.policy.lru_owner {
            LruOwner::PerZone => mm.zones.len(),
            LruOwner::PerNode => mm.nodes.len(),
        };
        mm.lruvecs = vec![Lruvec::default(); nr_lruvecs];
        mm.free_boot_memory(layout);
        mm
    }

    /// Marks the frames that stay reserved after boot and frees the rest: the first MiB of node
    /// 0 (firmware), `boot_reserved` from the start of DMA32 on node 0 (kernel image, initrd,
    /// early page tables), and each node's memmap (64 bytes per page) from the top of the node.
    fn free_boot_memory(&mut self, layout: &MachineLayout) {
        // Every present frame is headed for the buddy lists unless reserved below.
        for p in self.pages.iter_mut().filter(|p| p.state() == PageState::Reserved) {
            p.set_state(PageState::Allocated);
            p.order = 0;
        }
        let pages = &mut self.pages;
        let mut reserve_range = |s: u64, e: u64| {
            for p in &mut pages[s as usize..e as usize] {
                if p.state() != PageState::Hole {
                    p.set_state(PageState::Reserved);
                }
            }
        };
        let n0 = &layout.nodes[0];
        reserve_range(n0.start_pfn, (n0.start_pfn + layout.arch.low_reserved() / PAGE_SIZE).min(n0.end_pfn));
        // The boot reservation from the first present frame at or above 16 MiB on node 0
        // (x86_64; from the first frame where there is no ZONE_DMA below 16M).
        let mut need = layout.boot_reserved_pages;
        for &(s, e) in &n0.present {
            let s = s.max(layout.arch.boot_reserve_from() / PAGE_SIZE);
            if s >= e || need == 0 {
                continue;
            }
            let take = need.min(e - s);
            reserve_range(s, s + take);
            need -= take;
        }
        // The memmap comes from the top of the node's kernel memory: never from ZONE_MOVABLE,
        // which must stay free of unmovable kernel allocations.
        for n in &layout.nodes {
            let present: u64 = n.present.iter().map(|(a, b)| b - a).sum();
            let mut need = (present * STRUCT_PAGE_SIZE).div_ceil(PAGE_SIZE);
            let (ms, me) = n.zones[ZoneType::Movable as usize];
            let kernel_end = if me > ms { ms } else { n.end_pfn };
            for &(s, e) in n.present.iter().rev() {
                let e = e.min(kernel_end);
                if need == 0 || s >= e {
                    continue;
                }
                let take = need.min(e - s);
                reserve_range(e - take, e);
                need -= take;
            }
        }
        // Managed pages are the present ones not reserved.
        for z in self.zones.iter_mut() {
            let (s, e) = (z.zone_start_pfn as usize, z.zone_end_pfn() as usize);
            z.managed_pages = self.pages[s..e].iter().filter(|p| p.state() == PageState::Allocated).count() as u64;
        }
    }

    /// Frees every non-reserved present frame to the buddy lists in the largest aligned blocks
    /// that fit (memblock_free_all → __free_pages_core).
    fn memblock_free_all(&mut self) {
        for zid in 0..self.zones.len() {
            let (s, e) = (self.zones[zid].zone_start_pfn, self.zones[zid].zone_end_pfn());
            let mut pfn = s;
            while pfn < e {
                if self.pages[pfn as usize].state() != PageState::Allocated {
                    pfn += 1;
                    continue;
                }
                let mut end = pfn;
                while end < e && self.pages[end as usize].state() == PageState::Allocated {
                    end += 1;
                }
                let mut p = pfn;
                while p < end {
                    let mut order = (p.trailing_zeros() as usize).min(self.max_order);
                    while p + (1 << order) > end {
                        order -= 1;
                    }
                    self.pages[p as usize].order = order as u8;
                    self.__free_one_page(zid, p, order, MigrateType::Movable);
                    p += 1 << order;
                }
                pfn = end;
            }
            self.zones[zid].contiguous = self.zone_is_contiguous(zid);
        }
    }

    /// Returns true if every pageblock of the zone's span is present and in this zone
    /// (set_zone_contiguous).
    fn zone_is_contiguous(&self, zid: usize) -> bool {
        let z = &self.zones[zid];
        if !z.populated() {
            return false;
        }
        let (s, e) = (z.zone_start_pfn, z.zone_end_pfn());
        (s..e).all(|p| self.pages[p as usize].state() != PageState::Hole && self.pages[p as usize].zone as usize == zid)
    }

    /// 3.x default_zonelist_order: node order when a node lacks Normal memory or DMA/DMA32 is
    /// big; zone order otherwise.
    fn default_zonelist_order(&self) -> NumaZonelistOrder {
        let sizes: Vec<(u64, u64, bool)> = (0..self.nodes.len()).map(|nid| self.node_lowmem(nid)).collect();
        // A node with only low memory: kernel allocations should stay local.
        if sizes.iter().any(|&(_, _, has_normal)| !has_normal) {
            return NumaZonelistOrder::Node;
        }
        let low: u64 = sizes.iter().map(|s| s.0).sum();
        let total: u64 = sizes.iter().map(|s| s.1).sum();
        if low == 0 || low > total / 2 {
            return NumaZonelistOrder::Node;
        }
        let average = total / (self.nodes.len() as u64 + 1);
        for &(low, total, _) in &sizes {
            if low > 0 && total > average && low > total * 70 / 100 {
                return NumaZonelistOrder::Node;
            }
        }
        NumaZonelistOrder::Zone
    }

    /// A node's present pages below ZONE_NORMAL, its present pages in all, and whether its
    /// Normal zone is populated (the sizes default_zonelist_order weighs).
    fn node_lowmem(&self, nid: usize) -> (u64, u64, bool) {
        let first = self.nodes[nid].first_zone;
        let (mut low, mut total) = (0, 0);
        for zt in ZoneType::ALL {
            let z = &self.zones[first + zt as usize];
            if z.populated() {
                if zt < ZoneType::Normal {
                    low += z.present_pages;
                }
                total += z.present_pages;
            }
        }
        (low, total, self.zones[first + ZoneType::Normal as usize].populated())
    }

    /// Builds every node's fallback zonelist (build_all_zonelists / build_zonelists), and
    /// decides page_group_by_mobility_disabled.
    fn build_all_zonelists(&mut self, layout: &MachineLayout) {
        let nn = self.nodes.len();
        let order = match self.policy.zonelist {
            ZonelistPolicy::NodeOrder => NumaZonelistOrder::Node,
            ZonelistPolicy::NumaZonelistOrder => match self.sysctl.numa_zonelist_order {
                NumaZonelistOrder::Default => {
                    if nn == 1 { NumaZonelistOrder::Zone } else { self.default_zonelist_order() }
                }
                o => o,
            },
        };
        let mut node_load = vec![0u64; nn];
        for local in 0..nn {
            let mut used = vec![false; nn];
            let mut node_order = Vec::new();
            let mut prev = local;
            let mut load = nn as u64;
            while let Some(node) = find_next_best_node(local, &mut used, &layout.distance, &node_load, layout) {
                if layout.distance[local][node] != layout.distance[local][prev] {
                    match self.era {
                        Era::Linux3 => node_load[node] = load,
                        Era::Linux6 => node_load[node] += 1,
                    }
                }
                prev = node;
                load = load.saturating_sub(1);
                node_order.push(node);
            }
            let populated = |mm: &Mm, nid: usize, zt: ZoneType| mm.zones[nid * MAX_NR_ZONES + zt as usize].populated();
            let mut list = Vec::new();
            match order {
                NumaZonelistOrder::Zone => {
                    for zt in ZoneType::ALL.iter().rev() {
                        for &nid in &node_order {
                            if populated(self, nid, *zt) {
                                list.push(nid * MAX_NR_ZONES + *zt as usize);
                            }
                        }
                    }
                }
                _ => {
                    for &nid in &node_order {
                        for zt in ZoneType::ALL.iter().rev() {
                            if populated(self, nid, *zt) {
                                list.push(nid * MAX_NR_ZONES + *zt as usize);
                            }
                        }
                    }
                }
            }
            let nofallback: Vec<usize> = ZoneType::ALL.iter().rev().filter(|zt| populated(self, local, **zt)).map(|zt| local * MAX_NR_ZONES + *zt as usize).collect();
            let first = |l: &Vec<usize>, hi: usize| l.iter().copied().find(|&z| self.zones[z].zone_type as usize <= hi);
            let preferred = std::array::from_fn(|hi| first(&list, hi));
            let preferred_nofallback = std::array::from_fn(|hi| first(&nofallback, hi));
            let n = &mut self.nodes[local];
            n.zlc.fullzones = vec![false; list.len()];
            n.zonelist = list;
            n.zonelist_nofallback = nofallback;
            n.preferred = preferred;
            n.preferred_nofallback = preferred_nofallback;
        }
        // Mobility grouping is pointless when there are fewer pages than one pageblock per type.
        let vm_total: u64 = self.zones.iter().map(|z| self.page_count(z)).sum();
        let nr_types = match self.era {
            Era::Linux3 => 5,
            Era::Linux6 => 6,
        };
        self.page_group_by_mobility_disabled = vm_total < self.pageblock_nr_pages() * nr_types;
    }

    fn page_count(&self, z: &Zone) -> u64 {
        match self.policy.page_count_basis {
            PageCountBasis::Present => z.present_pages,
            PageCountBasis::Managed => z.managed_pages,
        }
    }

    /// Computes min_free_kbytes (4·√lowmem_kbytes, clamped) unless set, then the watermarks,
    /// lowmem_reserve and pcp limits (init_per_zone_wmark_min).
    pub fn init_per_zone_wmark_min(&mut self, profile: Profile) {
        if self.sysctl.min_free_kbytes == 0 {
            let lowmem_pages: u64 = self.zones.iter().filter(|z| z.zone_type <= ZoneType::Normal).map(|z| self.page_count(z)).sum();
            let lowmem_kbytes = lowmem_pages * (PAGE_SIZE >> 10);
            self.min_free_kbytes = int_sqrt(lowmem_kbytes * 16).clamp(128, profile.min_free_kbytes_max());
        } else {
            self.min_free_kbytes = self.sysctl.min_free_kbytes;
        }
        self.setup_per_zone_wmarks();
        self.setup_per_zone_lowmem_reserve();
    }

    /// Sets min/low/high (and 6.x promo) for every zone from min_free_kbytes
    /// (setup_per_zone_wmarks / __setup_per_zone_wmarks), then the pcp limits.
    pub fn setup_per_zone_wmarks(&mut self) {
        let pages_min = self.min_free_kbytes >> (super::PAGE_SHIFT - 10);
        let movable_is_lowmem = self.era == Era::Linux3;
        let lowmem_pages: u64 = self
            .zones
            .iter()
            .filter(|z| movable_is_lowmem || z.zone_type != ZoneType::Movable)
            .map(|z| self.page_count(z))
            .sum();
        for zid in 0..self.zones.len() {
            let zpages = self.page_count(&self.zones[zid]);
            let tmp = if lowmem_pages == 0 { 0 } else { pages_min * zpages / lowmem_pages };
            let z = &mut self.zones[zid];
            let min = if z.zone_type == ZoneType::Movable && !movable_is_lowmem {
                (z.managed_pages / 1024).clamp(SWAP_CLUSTER_MAX, 128)
            } else {
                tmp
            };
            z.watermark[WMARK_MIN] = min;
            match self.policy.watermark_setup {
                WatermarkSetup::MinQuarterHalf => {
                    z.watermark[WMARK_LOW] = min + (tmp >> 2);
                    z.watermark[WMARK_HIGH] = min + (tmp >> 1);
                    z.watermark[WMARK_PROMO] = z.watermark[WMARK_HIGH];
                }
                WatermarkSetup::ScaleFactor => {
                    let gap = (tmp >> 2).max(z.managed_pages * self.sysctl.watermark_scale_factor / 10000);
                    z.watermark[WMARK_LOW] = min + gap;
                    z.watermark[WMARK_HIGH] = min + 2 * gap;
                    z.watermark[WMARK_PROMO] = min + 3 * gap;
                }
            }
            z.watermark_boost = 0;
        }
        if matches!(self.policy.atomic_reserve, AtomicReserve::MigrateReserve | AtomicReserve::MigrateReserveUncapped) {
            for zid in 0..self.zones.len() {
                self.setup_zone_migrate_reserve(zid);
            }
        }
        self.calculate_totalreserve_pages();
        for zid in 0..self.zones.len() {
            self.zone_pcp_update(zid);
        }
        self.refresh_zone_stat_thresholds();
    }

    /// refresh_zone_stat_thresholds: each zone's per-CPU counter threshold
    /// (calculate_normal_threshold, on the zone's present pages in 3.x and managed pages in
    /// 6.x) and, with `kswapd-pressure`, its percpu_drift_mark: the high watermark plus the
    /// largest drift, CPUs × threshold, when that drift exceeds the min watermark.
    pub fn refresh_zone_stat_thresholds(&mut self) {
        let cpus = self.cpu_to_node.len() as u64;
        let pressure = self.policy.vmstat_threshold == VmstatThreshold::KswapdPressure;
        for zid in 0..self.zones.len() {
            let t = self.normal_stat_threshold(zid);
            let z = &mut self.zones[zid];
            z.stat_threshold = t as i32;
            let max_drift = cpus * t;
            z.percpu_drift_mark = if pressure && max_drift > z.watermark[WMARK_MIN] { (z.high_wmark_pages() + max_drift) as i64 } else { 0 };
        }
    }

    /// set_pgdat_percpu_threshold: kswapd of node `nid` awake (`pressure`: the pressure
    /// threshold, (low − min) / CPUs within 1..125) or going to sleep (the normal threshold).
    /// Diffs already beyond a lowered threshold are folded at their CPU's next change.
    pub fn set_pgdat_percpu_threshold(&mut self, nid: usize, pressure: bool) {
        if self.policy.vmstat_threshold != VmstatThreshold::KswapdPressure {
            return;
        }
        let cpus = self.cpu_to_node.len() as u64;
        for zid in nid * MAX_NR_ZONES..(nid + 1) * MAX_NR_ZONES {
            let z = &self.zones[zid];
            if !z.populated() {
                continue;
            }
            let t = if pressure {
                ((z.watermark[WMARK_LOW] - z.watermark[WMARK_MIN]) / cpus).clamp(1, 125)
            } else {
                self.normal_stat_threshold(zid)
            };
            self.zones[zid].stat_threshold = t as i32;
        }
    }

    /// calculate_normal_threshold of zone `zid` for this machine's CPUs.
    fn normal_stat_threshold(&self, zid: usize) -> u64 {
        super::vmstat::stat_threshold_3x(self.page_count(&self.zones[zid]), self.cpu_to_node.len() as u64)
    }

    /// setup_zone_migrate_reserve (2.6.24–3.x): label ⌈min_wmark / pageblock⌉ movable pageblocks
    /// MIGRATE_RESERVE from the start of the zone, at most two since 2.6.32 (78986a678f6), and
    /// return any further RESERVE block to MOVABLE.
    fn setup_zone_migrate_reserve(&mut self, zid: usize) {
        let z = &self.zones[zid];
        if !z.populated() {
            return;
        }
        let (start, end) = (z.zone_start_pfn, z.zone_end_pfn());
        let block = self.pageblock_nr_pages();
        let mut reserve = z.watermark[WMARK_MIN].div_ceil(block);
        if self.policy.atomic_reserve == AtomicReserve::MigrateReserve {
            reserve = reserve.min(2);
        }
        let node = z.node;
        let mut pfn = start & !(block as Pfn - 1);
        if pfn < start {
            pfn += block as Pfn;
        }
        while pfn < end {
            let block_end = (pfn + block as Pfn).min(end);
            let valid = self.pfn_valid(pfn) && self.page_to_nid(pfn) == node;
            let has_reserved = (pfn..block_end).any(|p| self.pages[p as usize].state() == PageState::Reserved || self.pages[p as usize].state() == PageState::Hole);
            if valid && !has_reserved {
                let mt = self.get_pageblock_migratetype(pfn);
                if reserve > 0 && mt == MigrateType::Reserve {
                    reserve -= 1;
                } else if reserve > 0 && mt == MigrateType::Movable {
                    self.set_pageblock_migratetype(pfn, MigrateType::Reserve);
                    self.move_freepages_block(zid, pfn, MigrateType::Reserve);
                    reserve -= 1;
                } else if mt == MigrateType::Reserve {
                    self.set_pageblock_migratetype(pfn, MigrateType::Movable);
                    self.move_freepages_block(zid, pfn, MigrateType::Movable);
                }
            }
            pfn += block as Pfn;
        }
    }

    /// Sets lowmem_reserve[] of every zone (setup_per_zone_lowmem_reserve, per era).
    pub fn setup_per_zone_lowmem_reserve(&mut self) {
        for nid in 0..self.nodes.len() {
            let first = nid * MAX_NR_ZONES;
            for i in 0..MAX_NR_ZONES {
                let ratio = self.sysctl.lowmem_reserve_ratio[i];
                let lower_pages = self.page_count(&self.zones[first + i]);
                let mut upper = 0u64;
                self.zones[first + i].lowmem_reserve = [0; MAX_NR_ZONES];
                for j in i + 1..MAX_NR_ZONES {
                    let up = self.page_count(&self.zones[first + j]);
                    upper += up;
                    let v = match self.era {
                        // 3.x: ratios below 1 count as 1; no clearing for empty zones.
                        Era::Linux3 => upper / ratio.max(1),
                        Era::Linux6 => {
                            let empty = up == 0 && self.policy.lowmem_reserve == LowmemReserve::ClearEmpty;
                            if ratio == 0 || lower_pages == 0 || empty {
                                0
                            } else {
                                upper / ratio
                            }
                        }
                    };
                    self.zones[first + i].lowmem_reserve[j] = v;
                }
            }
        }
        self.calculate_totalreserve_pages();
    }

    /// totalreserve_pages: per zone, min(managed, the largest lowmem_reserve + high watermark)
    /// (calculate_totalreserve_pages).
    pub fn calculate_totalreserve_pages(&mut self) {
        let mut total = 0;
        for n in self.nodes.iter_mut() {
            n.totalreserve_pages = 0;
        }
        for z in &self.zones {
            let max = z.lowmem_reserve[z.zone_type as usize..].iter().copied().max().unwrap_or(0) + z.watermark[WMARK_HIGH];
            let max = max.min(z.managed_pages);
            self.nodes[z.node].totalreserve_pages += max;
            total += max;
        }
        self.totalreserve_pages = total;
    }

    /// Sets each CPU's pcp batch and high marks for a zone (zone_pcp_update /
    /// zone_set_pageset_high_and_batch; 3.x setup_pageset).
    pub fn zone_pcp_update(&mut self, zid: usize) {
        let batch = self.zone_batchsize(&self.zones[zid]);
        let (high_min, high_max, batch) = match self.policy.pcp {
            PcpPolicy::Order0HotCold | PcpPolicy::Order0SingleList => {
                let f = self.sysctl.percpu_pagelist_fraction;
                if f > 0 {
                    let high = (self.zones[zid].present_pages / f) as u32;
                    let b = (high / 4).clamp(1, (super::PAGE_SHIFT * 8) as u32);
                    (high, high, b)
                } else {
                    (6 * batch, 6 * batch, batch.max(1))
                }
            }
            PcpPolicy::OrderListsFixedHigh => {
                let h = self.zone_highsize(zid, batch, self.sysctl.percpu_pagelist_high_fraction);
                (h, h, batch)
            }
            PcpPolicy::OrderListsAutotune => {
                let f = self.sysctl.percpu_pagelist_high_fraction;
                if f > 0 {
                    let h = self.zone_highsize(zid, batch, f);
                    (h, h, batch)
                } else {
                    (self.zone_highsize(zid, batch, 0), self.zone_highsize(zid, batch, 8), batch)
                }
            }
        };
        for pcp in self.zones[zid].pcp.iter_mut() {
            pcp.batch = batch;
            pcp.high_min = high_min;
            pcp.high_max = high_max;
            pcp.high = high_min;
        }
    }

    /// 6.x zone_highsize: the low watermark (or managed/fraction) split over the node's CPUs,
    /// at least 4 batches.
    fn zone_highsize(&self, zid: usize, batch: u32, high_fraction: u64) -> u32 {
        let z = &self.zones[zid];
        let total = if high_fraction == 0 { z.low_wmark_pages() } else { z.managed_pages / high_fraction };
        let mut cpus = self.nodes[z.node].cpus.len() as u64;
        if cpus == 0 {
            cpus = self.cpu_to_node.len() as u64;
        }
        ((total / cpus) as u32).max(batch << 2)
    }
}

/// The next node in `local`'s fallback order: nearest first, ties broken against nodes below
/// `local`, nodes with CPUs, and loaded nodes (find_next_best_node).
fn find_next_best_node(local: usize, used: &mut [bool], distance: &[Vec<u32>], node_load: &[u64], layout: &MachineLayout) -> Option<usize> {
    if !used[local] {
        used[local] = true;
        return Some(local);
    }
    let mut best = None;
    let mut min_val = u64::MAX;
    for n in 0..used.len() {
        if used[n] {
            continue;
        }
        let mut val = distance[local][n] as u64;
        val += u64::from(n < local);
        if layout.nodes[n].cpus > 0 {
            val += 1;
        }
        val *= MAX_NUMNODES;
        val += node_load[n];
        if val < min_val {
            min_val = val;
            best = Some(n);
        }
    }
    if let Some(b) = best {
        used[b] = true;
    }
    best
}

/// The name of disk `i`: sda … sdz, sdaa, sdab, … (sd_format_disk_name).
pub fn disk_name(i: usize) -> String {
    let mut n = i + 1;
    let mut s = Vec::new();
    while n > 0 {
        n -= 1;
        s.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    s.reverse();
    format!("sd{}", String::from_utf8(s).expect("ascii"))
}
