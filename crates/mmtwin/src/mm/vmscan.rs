//! Page reclaim (mm/vmscan.c): scanning the LRU lists, freeing clean page cache, writing dirty
//! pages, swapping anonymous pages, shrinking slab caches; kswapd, direct reclaim and
//! zone_reclaim.
//!
//! Each function models the kernel function of the same name in the era the profile selects:
//! 3.x reclaims per zone (LRU lists in the zone, `zone->pages_scanned`/`all_unreclaimable`,
//! per-zone pgscan/pgsteal counters); 6.x per node (LRU lists in the node, `reclaim_idx`,
//! `kswapd_failures`, node-wide counters). Every page looked at costs simulated CPU time from
//! the cost table, charged to whoever reclaims: kswapd, or the allocating task in direct
//! reclaim and zone_reclaim.

use crate::sim::{After, Step, Task, TaskCx};

use super::gfp::Gfp;
use super::mm_types::*;
use super::mmzone::{LruList, ZoneStat, ZoneType, MAX_NR_ZONES, ZONE_RECLAIM_ACTIVE};
use super::page_alloc::Mm;
use super::policy::{ActiveFileAging, KswapdSleep, LruOwner, ReclaimWait, ReclaimWriteback, ScanBatch, ShrinkerPolicy};
use super::vmstat::{Era, VmStat};
use super::{Pfn, SWAP_CLUSTER_MAX};
use crate::fs::Writepage;

/// The first and lowest scan priority (DEF_PRIORITY): an LRU is scanned in 1/2^priority slices.
pub const DEF_PRIORITY: i32 = 12;
/// zone_reclaim's starting priority (ZONE_RECLAIM_PRIORITY): 1/16 of the zone per pass.
pub const ZONE_RECLAIM_PRIORITY: i32 = 4;
/// kswapd balances a zone to its high watermark plus min(low, present/100) (3.x).
pub const KSWAPD_ZONE_BALANCE_GAP_RATIO: u64 = 100;
/// 6.x: kswapd gives up on a node after this many fruitless balance runs.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// HZ/10 in ns: congestion_wait's and kswapd's nap.
pub const HZ_10_NS: u64 = 100_000_000;
/// One jiffy at HZ=250 (Debian's and most distributions' kernels): reclaim_throttle's short
/// timeout.

/// Who is reclaiming: decides which counters move and, in places, what may be done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reclaimer {
    Kswapd,
    /// Direct reclaim and zone_reclaim: the allocating task itself.
    Direct,
}

/// Who called congestion_wait: the allocator's slow path outside reclaim (its retry after
/// reclaim made progress, per-zone dirty limits' wait), direct reclaim (and zone_reclaim), or
/// kswapd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionSite {
    Allocator = 0,
    DirectReclaim = 1,
    Kswapd = 2,
}

/// struct scan_control.
#[derive(Clone, Debug)]
pub struct ScanControl {
    /// Stop once this many pages are reclaimed (direct reclaim: SWAP_CLUSTER_MAX).
    pub nr_to_reclaim: u64,
    /// Pages scanned in the current priority pass (also the slab shrinkers' pressure).
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub gfp: Gfp,
    pub order: usize,
    pub priority: i32,
    pub may_writepage: bool,
    pub may_unmap: bool,
    pub may_swap: bool,
    pub swappiness: u64,
    pub who: Reclaimer,
    /// 6.x: the highest zone whose pages may be reclaimed (reclaim_idx); 3.x reclaims one zone
    /// at a time and leaves this at the top.
    pub reclaim_idx: usize,
    /// The task may write to queues that are congested (PF_SWAPWRITE: kswapd, zone_reclaim).
    pub swapwrite: bool,
    /// What shrink_page_list met, for throttling decisions.
    pub nr_dirty: u64,
    pub nr_congested: u64,
    pub nr_immediate: u64,
    /// 6.x: pages isolated, pages met dirty or under writeback, and pages under writeback
    /// kept for the flusher (nr.taken, nr.dirty, nr.writeback of shrink_node's reclaim_stat).
    pub nr_taken: u64,
    pub nr_dirty_or_writeback: u64,
    pub nr_writeback: u64,
    /// 5.16+: kswapd must now wait in reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK).
    pub throttle_writeback: bool,
}

impl ScanControl {
    pub fn new(who: Reclaimer, gfp: Gfp, order: usize, nr_to_reclaim: u64, swappiness: u64) -> ScanControl {
        ScanControl {
            nr_to_reclaim,
            nr_scanned: 0,
            nr_reclaimed: 0,
            gfp,
            order,
            priority: DEF_PRIORITY,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            swappiness,
            who,
            reclaim_idx: MAX_NR_ZONES - 1,
            swapwrite: who == Reclaimer::Kswapd,
            nr_dirty: 0,
            nr_congested: 0,
            nr_immediate: 0,
            nr_taken: 0,
            nr_dirty_or_writeback: 0,
            nr_writeback: 0,
            throttle_writeback: false,
        }
    }
}

/// page_check_references' verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageRef {
    Activate,
    Keep,
    Reclaim,
    /// Reclaim only if the page is clean.
    ReclaimClean,
}

/// pageout's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pageout {
    /// Could not write now (congested queue, no writepage).
    Keep,
    Activate,
    /// Writeback started.
    Success,
    /// The page turned out clean.
    Clean,
}

/// zone_reclaim's answers (mm/internal.h ZONE_RECLAIM_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneReclaim {
    /// Did not scan (−2).
    NoScan,
    /// Nothing worth scanning, or the zone is unreclaimable (−1).
    Full,
    /// Scanned but reclaimed less than the request (0).
    Some,
    /// Reclaimed enough (1).
    Success,
}

/// zone_reclaim_mode bits.
pub const RECLAIM_ZONE: u32 = 1;
pub const RECLAIM_WRITE: u32 = 2;
pub const RECLAIM_SWAP: u32 = 4;

/// The LRU type index of a page: 0 anon, 1 file (page_is_file_cache).
#[inline(always)]
pub(crate) fn lru_type(flags: u32) -> usize {
    usize::from(flags & PG_SWAPBACKED == 0)
}

impl Mm {
    // ------------------------------------------------------------------------------------------
    // Sizes.

    /// The zone a 3.x lruvec belongs to, or None for a 6.x node lruvec.
    #[inline(always)]
    fn lruvec_zone(&self, lv: usize) -> Option<usize> {
        match self.policy.lru_owner {
            LruOwner::PerZone => Some(lv),
            LruOwner::PerNode => None,
        }
    }

    /// Pages on one LRU list of a lruvec.
    #[inline(always)]
    pub fn lru_size(&self, lv: usize, lru: LruList) -> u64 {
        self.lruvecs[lv].size(lru)
    }

    /// Pages reclaim could free in a zone (zone_reclaimable_pages): the file LRU, plus the anon
    /// LRU while swap space is left. With 6.x node lruvecs, the zone's own file (and anon) page
    /// counts stand for its share of the node's lists.
    pub fn zone_reclaimable_pages(&self, zid: usize) -> u64 {
        let swap = self.nr_swap_pages() > 0;
        match self.lruvec_zone(zid) {
            Some(lv) => {
                let v = &self.lruvecs[lv];
                let mut n = v.size(LruList::InactiveFile) + v.size(LruList::ActiveFile);
                if swap {
                    n += v.size(LruList::InactiveAnon) + v.size(LruList::ActiveAnon);
                }
                n
            }
            None => {
                let z = &self.zones[zid];
                z.page_state(ZoneStat::NrFilePages) + if swap { z.page_state(ZoneStat::NrAnonPages) } else { 0 }
            }
        }
    }

    /// zone_reclaimable: reclaim has not yet scanned six times what could be freed (3.x).
    pub fn zone_reclaimable(&self, zid: usize) -> bool {
        self.zones[zid].pages_scanned < self.zone_reclaimable_pages(zid) * 6
    }

    /// File pages zone_reclaim could free in a zone (zone_pagecache_reclaimable): all file
    /// pages with RECLAIM_SWAP, otherwise the unmapped ones; dirty ones are not counted unless
    /// RECLAIM_WRITE.
    pub fn zone_pagecache_reclaimable(&self, zid: usize) -> u64 {
        let z = &self.zones[zid];
        let mode = self.sysctl.zone_reclaim_mode.unwrap_or(0);
        let file_lru = match self.lruvec_zone(zid) {
            Some(lv) => self.lru_size(lv, LruList::InactiveFile) + self.lru_size(lv, LruList::ActiveFile),
            None => z.page_state(ZoneStat::NrFilePages),
        };
        let mut n = if mode & RECLAIM_SWAP != 0 {
            z.page_state(ZoneStat::NrFilePages)
        } else {
            file_lru.saturating_sub(z.page_state(ZoneStat::NrFileMapped))
        };
        if mode & RECLAIM_WRITE == 0 {
            n = n.saturating_sub(z.page_state(ZoneStat::NrFileDirty));
        }
        n
    }

    /// Reclaimable slab pages of a zone (NR_SLAB_RECLAIMABLE).
    pub fn zone_slab_reclaimable(&self, zid: usize) -> u64 {
        self.zones[zid].page_state(ZoneStat::NrSlabReclaimable)
    }

    /// 3.x inactive_anon_is_low: inactive × inactive_ratio < active (ratio = sqrt(10 × GB)).
    fn inactive_anon_is_low(&self, lv: usize) -> bool {
        let inactive = self.lru_size(lv, LruList::InactiveAnon);
        let active = self.lru_size(lv, LruList::ActiveAnon);
        let ratio = super::vmstat::inactive_ratio(inactive + active);
        inactive * ratio < active
    }

    /// inactive_file_is_low: 3.x active > inactive; 6.x inactive × ratio < active with the ratio
    /// from the size of the file lists (inactive_is_low).
    fn inactive_file_is_low(&self, lv: usize) -> bool {
        let inactive = self.lru_size(lv, LruList::InactiveFile);
        let active = self.lru_size(lv, LruList::ActiveFile);
        match self.era {
            Era::Linux3 => active > inactive,
            Era::Linux6 => inactive * super::vmstat::inactive_ratio(inactive + active) < active,
        }
    }

    fn inactive_list_is_low(&self, lv: usize, file: bool) -> bool {
        if file {
            self.inactive_file_is_low(lv)
        } else {
            self.inactive_anon_is_low(lv)
        }
    }

    // ------------------------------------------------------------------------------------------
    // Counting.

    /// Counts scanned pages where the era does: 3.x pgscan_{kswapd,direct}_<zone>; 6.x
    /// pgscan_{kswapd,direct} and pgscan_{anon,file}.
    fn count_scan(&mut self, zt: ZoneType, file: bool, n: u64) {
        match self.era {
            Era::Linux3 => {
                let first = if self.current_is_kswapd() { VmStat::PgscanKswapdDma } else { VmStat::PgscanDirectDma };
                self.events.count(VmStat::for_zone(first, zt), n);
            }
            Era::Linux6 => {
                let item = if self.current_is_kswapd() { VmStat::PgscanKswapd } else { VmStat::PgscanDirect };
                self.events.count(item, n);
                self.events.count(if file { VmStat::PgscanFile } else { VmStat::PgscanAnon }, n);
            }
        }
    }

    /// Counts reclaimed pages: 3.x pgsteal_<zone> and kswapd_steal; 6.x pgsteal_{kswapd,direct}
    /// and pgsteal_{anon,file}.
    fn count_steal(&mut self, zt: ZoneType, file: bool, n: u64) {
        match self.era {
            Era::Linux3 => {
                self.events.count(VmStat::for_zone(VmStat::PgstealDma, zt), n);
                if self.current_is_kswapd() {
                    self.events.count(VmStat::KswapdSteal, n);
                }
            }
            Era::Linux6 => {
                let item = if self.current_is_kswapd() { VmStat::PgstealKswapd } else { VmStat::PgstealDirect };
                self.events.count(item, n);
                self.events.count(if file { VmStat::PgstealFile } else { VmStat::PgstealAnon }, n);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // The LRU scan.

    /// Takes up to `nr_to_scan` pages off the tail of list `lru` (isolate_lru_pages). 6.x skips
    /// pages of zones above `reclaim_idx` (they go back to the head, counted in pgskip_<zone>)
    /// and, as 4.8–6.12 do, reports them as scanned (total_scan) although only isolated pages
    /// count towards `nr_to_scan`. Returns the isolated pages and the number scanned.
    fn isolate_lru_pages(&mut self, lv: usize, lru: LruList, nr_to_scan: u64, sc: &ScanControl) -> (Vec<Pfn>, u64) {
        let mut taken = Vec::with_capacity(nr_to_scan as usize);
        let mut skipped = Vec::new();
        while (taken.len() as u64) < nr_to_scan {
            let pfn = self.lruvecs[lv].lists[lru as usize].tail;
            if pfn == NIL {
                break;
            }
            list_del(&mut self.pages, &mut self.lruvecs[lv].lists[lru as usize], pfn);
            self.cost_ns += self.costs.lru_op_ns;
            if self.lruvec_zone(lv).is_none() {
                let zt = self.zones[self.page_zone(pfn)].zone_type;
                if zt as usize > sc.reclaim_idx {
                    self.events.count(VmStat::for_zone(VmStat::PgskipDma, zt), 1);
                    skipped.push(pfn);
                    continue;
                }
            }
            self.pages[pfn as usize].flags &= !PG_LRU;
            taken.push(pfn);
        }
        let scanned = (taken.len() + skipped.len()) as u64;
        for pfn in skipped.into_iter().rev() {
            list_add(&mut self.pages, &mut self.lruvecs[lv].lists[lru as usize], pfn);
        }
        let item = if lru.is_file() { ZoneStat::NrIsolatedFile } else { ZoneStat::NrIsolatedAnon };
        for &pfn in &taken {
            self.mod_page_state(pfn, item, 1);
        }
        (taken, scanned)
    }

    /// Puts isolated pages back on the lists their flags name (putback_lru_pages /
    /// move_pages_to_lru).
    fn putback_lru_pages(&mut self, pages: &[Pfn]) {
        for &pfn in pages {
            let item = if self.pages[pfn as usize].flags & PG_SWAPBACKED == 0 { ZoneStat::NrIsolatedFile } else { ZoneStat::NrIsolatedAnon };
            self.mod_page_state(pfn, item, -1);
            self.add_page_to_lru_list(pfn);
        }
    }

    /// page_referenced: how many page table entries mapping the page were young since the last
    /// look (one mapper is modelled); clears them. Walking the rmap costs time.
    fn page_referenced(&mut self, pfn: Pfn) -> u32 {
        let p = &mut self.pages[pfn as usize];
        if p.flags & PG_MAPPED == 0 {
            return 0;
        }
        self.cost_ns += self.costs.rmap_walk_ns;
        let young = p.flags & PG_YOUNG != 0;
        p.flags &= !PG_YOUNG;
        u32::from(young)
    }

    /// page_check_references: what to do with an inactive page given its accessed bits.
    fn page_check_references(&mut self, pfn: Pfn) -> PageRef {
        let referenced_ptes = self.page_referenced(pfn);
        let p = &mut self.pages[pfn as usize];
        let referenced_page = p.flags & PG_REFERENCED != 0;
        p.flags &= !PG_REFERENCED;
        let anon = p.flags & PG_SWAPBACKED != 0;
        if referenced_ptes > 0 {
            if anon && self.era == Era::Linux3 {
                return PageRef::Activate;
            }
            p.flags |= PG_REFERENCED;
            if referenced_page || referenced_ptes > 1 || p.flags & PG_EXEC_MAPPED != 0 {
                return PageRef::Activate;
            }
            return PageRef::Keep;
        }
        if referenced_page && !anon {
            return PageRef::ReclaimClean;
        }
        PageRef::Reclaim
    }

    /// pageout: starts writeback of a dirty page from reclaim. 2.6.32-3.x may_write_to_queue: a
    /// task without PF_SWAPWRITE does not write to a congested queue, unless it is the queue of
    /// the file its buffered write() is writing (current->backing_dev_info) or the reclaim is
    /// for a costly order; the swap device never reports congestion. 5.18+ (6.x) pageout has
    /// no congestion test. A reclaimer whose earlier write in this step found the request pool
    /// used up is asleep in get_request_wait (`Mm::rq_wait_owed`, set when its bio asked for a
    /// request): it writes nothing more in the step, and the dirty pages it meets are kept for
    /// its next look, as on a congested queue.
    fn pageout(&mut self, pfn: Pfn, sc: &mut ScanControl) -> Pageout {
        let anon = self.pages[pfn as usize].flags & PG_SWAPBACKED != 0;
        let dev = if anon { self.swap_bdev() } else { self.page_bdev(pfn) };
        let Some(dev) = dev else { return Pageout::Activate };
        if self.rq_wait_owed.is_some() {
            return Pageout::Keep;
        }
        let may_write_to_queue = sc.swapwrite
            || self.era == Era::Linux6
            || anon
            || self.current_bdi == Some(dev)
            || sc.order > super::PAGE_ALLOC_COSTLY_ORDER
            || !self.bdevs[dev].is_congested(crate::block::Pool::Async);
        if !may_write_to_queue {
            sc.nr_congested += 1;
            return Pageout::Keep;
        }
        // SetPageReclaim, ->writepage; the write is counted whatever the file system did
        // with it, and a page not under writeback afterwards loses PG_reclaim.
        self.pages[pfn as usize].flags |= PG_RECLAIM;
        let res = if anon {
            if self.swap_writepage(pfn) { Writepage::Submitted } else { Writepage::Redirtied }
        } else {
            self.writepage(pfn)
        };
        if res == Writepage::Clean {
            self.pages[pfn as usize].flags &= !PG_RECLAIM;
            return Pageout::Clean;
        }
        if res == Writepage::Done {
            // PAGE_SUCCESS with the page neither dirty nor under writeback: a synchronous
            // write, counted, and the page is freed now.
            self.pages[pfn as usize].flags &= !PG_RECLAIM;
            self.mod_page_state(pfn, ZoneStat::NrVmscanWrite, 1);
            return Pageout::Clean;
        }
        if self.pages[pfn as usize].flags & PG_WRITEBACK == 0 {
            self.pages[pfn as usize].flags &= !PG_RECLAIM;
        }
        self.mod_page_state(pfn, ZoneStat::NrVmscanWrite, 1);
        if res == Writepage::Redirtied {
            return Pageout::Keep;
        }
        Pageout::Success
    }

    /// shrink_page_list: decides the fate of each isolated inactive page: activate, keep, write
    /// back, or free. Returns the pages left over (to put back) and the number freed.
    fn shrink_page_list(&mut self, pages: Vec<Pfn>, sc: &mut ScanControl) -> (Vec<Pfn>, u64) {
        let mut survivors = Vec::with_capacity(pages.len());
        let mut freed = Vec::with_capacity(pages.len());
        let mut pgactivate = 0;
        'pages: for pfn in pages {
            self.cost_ns += self.costs.shrink_page_ns;
            let flags = self.pages[pfn as usize].flags;
            let mut activate = false;
            'decide: {
                if flags & PG_LOCKED != 0 {
                    break 'decide; // trylock_page failed: kept, and not counted as scanned
                }
                sc.nr_scanned += 1;
                if !sc.may_unmap && flags & PG_MAPPED != 0 {
                    break 'decide;
                }
                // Double the slab pressure for mapped and swap cache pages (3.x; a mapped page
                // zone_reclaim may not unmap was counted once, above).
                if flags & (PG_MAPPED | PG_SWAPCACHE) != 0 && self.era == Era::Linux3 {
                    sc.nr_scanned += 1;
                }
                if self.era == Era::Linux6 {
                    // folio_check_dirty_writeback: what the node-level throttling decisions
                    // count; a page back at the tail still under writeback with PG_reclaim
                    // means the LRU is cycling faster than the disk writes.
                    if flags & (PG_DIRTY | PG_WRITEBACK) != 0 {
                        sc.nr_dirty_or_writeback += 1;
                    }
                    if flags & PG_WRITEBACK != 0 && flags & PG_RECLAIM != 0 {
                        sc.nr_congested += 1;
                    }
                }
                if flags & PG_WRITEBACK != 0 {
                    if self.era == Era::Linux6 {
                        // Case 1: kswapd meets it again while the node is PGDAT_WRITEBACK;
                        // case 2: mark it for immediate reclaim. Both activate it.
                        if sc.who == Reclaimer::Kswapd && flags & PG_RECLAIM != 0 && self.nodes[self.page_to_nid(pfn)].pgdat_writeback {
                            sc.nr_immediate += 1;
                        } else {
                            self.pages[pfn as usize].flags |= PG_RECLAIM;
                            sc.nr_writeback += 1;
                        }
                        activate = true;
                    }
                    break 'decide;
                }
                let references = self.page_check_references(pfn);
                match references {
                    PageRef::Activate => {
                        activate = true;
                        break 'decide;
                    }
                    PageRef::Keep => break 'decide,
                    _ => {}
                }
                let anon = flags & PG_SWAPBACKED != 0;
                if anon && flags & PG_SWAPCACHE == 0 {
                    if !sc.gfp.has(Gfp::IO) {
                        break 'decide;
                    }
                    if !self.add_to_swap(pfn) {
                        activate = true;
                        break 'decide;
                    }
                }
                if self.pages[pfn as usize].flags & PG_MAPPED != 0 {
                    self.try_to_unmap(pfn);
                }
                let may_enter_fs = sc.gfp.has(Gfp::FS) || (anon && sc.gfp.has(Gfp::IO));
                if self.pages[pfn as usize].flags & PG_DIRTY != 0 {
                    sc.nr_dirty += 1;
                    match self.policy.reclaim_writeback {
                        ReclaimWriteback::PgdatDirty if !anon => {
                            // 6.x: only kswapd writes file pages, and only ones it has met
                            // before (PG_reclaim) while the node is flagged dirty; otherwise
                            // mark them for immediate reclaim and let the flushers clean them.
                            let seen = self.pages[pfn as usize].flags & PG_RECLAIM != 0;
                            if !(sc.who == Reclaimer::Kswapd && seen && self.node_dirty_flag(pfn)) {
                                self.pages[pfn as usize].flags |= PG_RECLAIM;
                                self.mod_page_state(pfn, ZoneStat::NrVmscanImmediate, 1);
                                activate = true;
                                break 'decide;
                            }
                        }
                        ReclaimWriteback::Lesskswapd if !anon => {
                            // Direct reclaim never writes file pages, kswapd only once its
                            // priority is high: the page waits for the flusher with PG_reclaim
                            // set, so the end of its writeback moves it to the inactive tail.
                            if sc.who != Reclaimer::Kswapd || sc.priority >= DEF_PRIORITY - 2 {
                                self.pages[pfn as usize].flags |= PG_RECLAIM;
                                self.mod_page_state(pfn, ZoneStat::NrVmscanImmediate, 1);
                                break 'decide;
                            }
                        }
                        _ => {}
                    }
                    if references == PageRef::ReclaimClean || !may_enter_fs || !sc.may_writepage {
                        break 'decide;
                    }
                    match self.pageout(pfn, sc) {
                        Pageout::Keep => break 'decide,
                        Pageout::Activate => {
                            activate = true;
                            break 'decide;
                        }
                        Pageout::Success => break 'decide, // under writeback now; freed later
                        Pageout::Clean => {}
                    }
                }
                // try_to_release_page: the journal does not let go of a buffer it holds.
                if !anon && self.page_has_buffers(pfn) && self.bdev_page_pinned(pfn) {
                    activate = true;
                    break 'decide;
                }
                // __remove_mapping.
                if anon {
                    self.delete_from_swap_cache_for_reclaim(pfn);
                } else {
                    self.delete_from_page_cache(pfn, self.reclaim_cpu);
                }
                self.cost_ns += self.costs.remove_mapping_ns;
                freed.push(pfn);
                continue 'pages;
            }
            if activate {
                self.pages[pfn as usize].flags |= PG_ACTIVE;
                pgactivate += 1;
                let t = lru_type(self.pages[pfn as usize].flags);
                let lv = self.page_lruvec(pfn);
                self.lruvecs[lv].reclaim_stat.recent_rotated[t] += 1;
            }
            survivors.push(pfn);
        }
        self.events.count(VmStat::Pgactivate, pgactivate);
        let n = freed.len() as u64;
        for pfn in freed {
            let item = if self.pages[pfn as usize].flags & PG_SWAPBACKED == 0 { ZoneStat::NrIsolatedFile } else { ZoneStat::NrIsolatedAnon };
            self.mod_page_state(pfn, item, -1);
            // free_hot_cold_page_list(&free_pages, 1): reclaimed pages are freed cold.
            self.free_pages_hint(pfn, 0, self.reclaim_cpu, true);
        }
        (survivors, n)
    }

    /// shrink_inactive_list: isolates a batch from an inactive list, counts the scan, frees what
    /// it can and puts the rest back. Returns the pages reclaimed.
    fn shrink_inactive_list(&mut self, lv: usize, file: bool, nr_to_scan: u64, sc: &mut ScanControl) -> u64 {
        let lru = if file { LruList::InactiveFile } else { LruList::InactiveAnon };
        let (pages, nr_scanned) = self.isolate_lru_pages(lv, lru, nr_to_scan, sc);
        let t = usize::from(file);
        self.lruvecs[lv].reclaim_stat.recent_scanned[t] += pages.len() as u64;
        let zt = self.lruvec_zone_type(lv);
        if let Some(zid) = self.lruvec_zone(lv) {
            self.zones[zid].pages_scanned += nr_scanned;
        }
        self.count_scan(zt, file, nr_scanned);
        if pages.is_empty() {
            return 0;
        }
        let nr_taken = pages.len() as u64;
        sc.nr_taken += nr_taken;
        let (dirty0, congested0, immediate0) = (sc.nr_dirty, sc.nr_congested, sc.nr_immediate);
        let (survivors, reclaimed) = self.shrink_page_list(pages, sc);
        let (nr_dirty, nr_congested) = (sc.nr_dirty - dirty0, sc.nr_congested - congested0);
        match self.lruvec_zone(lv) {
            // 3.x: every dirty page met a congested queue → the zone is congested.
            Some(zid) => {
                if nr_dirty > 0 && nr_dirty == nr_congested {
                    self.zones[zid].congested = true;
                }
            }
            // 6.x: every isolated file page was dirty and not queued for I/O → PGDAT_DIRTY.
            None => {
                if file && nr_dirty > 0 && nr_dirty == nr_taken && sc.nr_immediate == immediate0 {
                    self.nodes[lv].pgdat_dirty = true;
                }
                // 5.16+: every isolated page dirty and unqueued → nudge the flushers.
                if self.policy.reclaim_wait == ReclaimWait::ReclaimThrottle && file && nr_dirty == nr_taken {
                    self.wakeup_flusher_threads(nr_taken);
                }
            }
        }
        self.count_steal(zt, file, reclaimed);
        self.putback_lru_pages(&survivors);
        // lesskswapd: throttle when the batch was mostly dirty, the more so the higher the
        // priority (nr_dirty >= nr_taken >> (DEF_PRIORITY - priority)).
        if self.policy.reclaim_writeback == ReclaimWriteback::Lesskswapd && nr_dirty > 0 {
            let shift = (DEF_PRIORITY - sc.priority).clamp(0, 63) as u32;
            if nr_dirty >= nr_taken >> shift {
                if let Some(zid) = self.lruvec_zone(lv) {
                    self.wait_iff_congested(zid, HZ_10_NS);
                }
            }
        }
        reclaimed
    }

    /// shrink_active_list: moves pages from the tail of an active list to the inactive list,
    /// keeping referenced executable file pages active (and, in 3.x, referenced anon ones are
    /// deactivated too: only VM_EXEC file pages get another round).
    fn shrink_active_list(&mut self, lv: usize, file: bool, nr_to_scan: u64, sc: &mut ScanControl) {
        let lru = if file { LruList::ActiveFile } else { LruList::ActiveAnon };
        let (pages, nr_scanned) = self.isolate_lru_pages(lv, lru, nr_to_scan, sc);
        let t = usize::from(file);
        self.lruvecs[lv].reclaim_stat.recent_scanned[t] += pages.len() as u64;
        if let Some(zid) = self.lruvec_zone(lv) {
            self.zones[zid].pages_scanned += nr_scanned;
        }
        match self.era {
            Era::Linux3 => {
                let zt = self.lruvec_zone_type(lv);
                self.events.count(VmStat::for_zone(VmStat::PgrefillDma, zt), nr_scanned);
            }
            Era::Linux6 => self.events.count(VmStat::Pgrefill, nr_scanned),
        }
        let mut rotated = 0;
        let mut deactivated = 0;
        for &pfn in &pages {
            self.cost_ns += self.costs.shrink_page_ns / 2;
            if self.page_referenced(pfn) > 0 {
                rotated += 1;
                if file && self.pages[pfn as usize].flags & PG_EXEC_MAPPED != 0 {
                    continue;
                }
            }
            self.pages[pfn as usize].flags &= !PG_ACTIVE;
            deactivated += 1;
        }
        self.lruvecs[lv].reclaim_stat.recent_rotated[t] += rotated;
        self.putback_lru_pages(&pages);
        self.events.count(VmStat::Pgdeactivate, deactivated);
    }

    /// The zone type whose counters a lruvec's scanning moves (3.x); 6.x counters are node-wide.
    fn lruvec_zone_type(&self, lv: usize) -> ZoneType {
        match self.lruvec_zone(lv) {
            Some(zid) => self.zones[zid].zone_type,
            None => ZoneType::Normal,
        }
    }

    /// get_scan_count: how many pages of each evictable list to scan at this priority. Anon
    /// lists are left alone without swap space; in 3.x a zone whose file and free pages are
    /// down to its high watermark has its anon lists scanned alone; otherwise swappiness and
    /// the recent rotated/scanned ratios balance anon against file.
    fn get_scan_count(&mut self, lv: usize, sc: &ScanControl) -> [u64; 4] {
        let anon = self.lru_size(lv, LruList::ActiveAnon) + self.lru_size(lv, LruList::InactiveAnon);
        let file = self.lru_size(lv, LruList::ActiveFile) + self.lru_size(lv, LruList::InactiveFile);
        let noswap = !sc.may_swap || self.nr_swap_pages() == 0;
        // 3.x: a zone with almost no page cache left (file + free at most its high watermark)
        // has its anon lists scanned alone.
        let file_starved = self.era == Era::Linux3
            && self.lruvec_zone(lv).is_some_and(|zid| file + self.zones[zid].nr_free_pages_vmstat().max(0) as u64 <= self.zones[zid].high_wmark_pages());
        let (fraction, denominator) = if noswap {
            ([0u64, 1], 1u64)
        } else if file_starved {
            ([1u64, 0], 1u64)
        } else {
            let rs = &mut self.lruvecs[lv].reclaim_stat;
            // Decay the history so it follows the workload.
            for t in 0..2 {
                let size = if t == 0 { anon } else { file };
                if rs.recent_scanned[t] > size / 4 {
                    rs.recent_scanned[t] /= 2;
                    rs.recent_rotated[t] /= 2;
                }
            }
            let anon_prio = sc.swappiness;
            let file_prio = 200 - sc.swappiness.min(200);
            let ap = (anon_prio + 1) * (rs.recent_scanned[0] + 1) / (rs.recent_rotated[0] + 1);
            let fp = (file_prio + 1) * (rs.recent_scanned[1] + 1) / (rs.recent_rotated[1] + 1);
            ([ap, fp], ap + fp + 1)
        };
        let saved_scan = self.era == Era::Linux3 && self.policy.scan_batch == ScanBatch::SavedScan;
        let (fraction, denominator) = if saved_scan && !noswap {
            // 2.6.32 get_scan_ratio hands shrink_zone whole percentages.
            let anon_percent = 100 * fraction[0] / denominator;
            ([anon_percent, 100 - anon_percent], 100)
        } else {
            (fraction, denominator)
        };
        // kswapd scans at least a batch of a list whose share rounds to zero (force_scan): in
        // 3.0 only in a zone that is small at this priority, in 3.1 in every zone; 6.x never.
        let force = sc.who == Reclaimer::Kswapd
            && match self.policy.scan_batch {
                ScanBatch::SavedScan | ScanBatch::NoForceScan => false,
                ScanBatch::ForceScanSmallZone => (anon + file) >> sc.priority < SWAP_CLUSTER_MAX,
                ScanBatch::ForceScan => true,
            };
        let mut nr = [0u64; 4];
        for (i, lru) in [LruList::InactiveAnon, LruList::ActiveAnon, LruList::InactiveFile, LruList::ActiveFile].into_iter().enumerate() {
            let t = usize::from(lru.is_file());
            let mut scan = self.lru_size(lv, lru);
            if sc.priority > 0 || noswap {
                scan >>= sc.priority;
                scan = scan * fraction[t] / denominator;
            }
            if scan == 0 && force {
                scan = SWAP_CLUSTER_MAX * fraction[t] / denominator;
            }
            if saved_scan {
                scan = self.nr_scan_try_batch(lv, lru, scan);
            }
            nr[i] = scan;
        }
        nr
    }

    /// nr_scan_try_batch (2.6.29–2.6.38): deposits a list's share of this pass in the lruvec's
    /// nr_saved_scan and returns what to scan now — nothing until the deposits reach
    /// SWAP_CLUSTER_MAX, then all of them. The deposits are the zone's, so kswapd and every
    /// direct reclaimer add to, and empty, the same count.
    fn nr_scan_try_batch(&mut self, lv: usize, lru: LruList, scan: u64) -> u64 {
        let saved = &mut self.lruvecs[lv].reclaim_stat.nr_saved_scan[lru as usize];
        *saved += scan;
        if *saved >= SWAP_CLUSTER_MAX {
            std::mem::take(saved)
        } else {
            0
        }
    }

    /// shrink_zone (3.x) / shrink_lruvec (6.x): scans the lists of one lruvec in batches of
    /// SWAP_CLUSTER_MAX until the priority's share is done or, below DEF_PRIORITY, enough is
    /// reclaimed; then ages the anon list if it is out of balance.
    pub fn shrink_lruvec(&mut self, lv: usize, sc: &mut ScanControl) {
        let mut nr = self.get_scan_count(lv, sc);
        let plugged = self.blk_start_plug(crate::block::PlugSite::Reclaim);
        let mut reclaimed = 0;
        let lists = [(false, false), (false, true), (true, false), (true, true)]; // (file, active)
        while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
            for (i, &(file, active)) in lists.iter().enumerate() {
                if nr[i] == 0 {
                    continue;
                }
                let n = nr[i].min(SWAP_CLUSTER_MAX);
                nr[i] -= n;
                if active {
                    let always = file && self.policy.active_file_aging == ActiveFileAging::Proportional;
                    if always || self.inactive_list_is_low(lv, file) {
                        self.shrink_active_list(lv, file, n, sc);
                    }
                } else {
                    reclaimed += self.shrink_inactive_list(lv, file, n, sc);
                }
            }
            // 3.x stops at the target below DEF_PRIORITY. 6.x stops at it except for direct
            // reclaim at DEF_PRIORITY, which does a whole batch (proportional_reclaim; the
            // proportional nudge of the other LRU type is not modelled).
            let stop = match self.era {
                Era::Linux3 => sc.priority < DEF_PRIORITY,
                Era::Linux6 => sc.who == Reclaimer::Kswapd || sc.priority < DEF_PRIORITY,
            };
            if reclaimed >= sc.nr_to_reclaim && stop {
                break;
            }
        }
        self.blk_finish_plug(plugged);
        sc.nr_reclaimed += reclaimed;
        // 6.x shrink_node: progress on a node revives a kswapd that gave up on it.
        if reclaimed > 0 && self.policy.lru_owner == LruOwner::PerNode {
            self.nodes[lv].kswapd_failures = 0;
        }
        if self.nr_swap_pages() > 0 && self.inactive_anon_is_low(lv) {
            self.shrink_active_list(lv, false, SWAP_CLUSTER_MAX, sc);
        }
    }

    /// shrink_zone for zone `zid`: its own lruvec in 3.x; in 6.x the node's, limited to zones up
    /// to `zid`'s type.
    pub fn shrink_zone(&mut self, zid: usize, sc: &mut ScanControl) {
        match self.policy.lru_owner {
            LruOwner::PerZone => self.shrink_lruvec(zid, sc),
            LruOwner::PerNode => {
                sc.reclaim_idx = self.zones[zid].zone_type as usize;
                let nid = self.zones[zid].node;
                self.shrink_lruvec(nid, sc)
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Slab.

    /// shrink_slab (2.6.32–3.x): asks every shrinker to scan a share of its objects proportional
    /// to the share of LRU pages just scanned (scanned / lru_pages, ×4 / seeks), in batches (the
    /// shrinker's own or SHRINK_BATCH), keeping what is less than a batch for later; from 3.1
    /// deferred work is clamped unless this call's share is large. Returns the objects freed
    /// (the drop in the shrinkers' counts, which move in steps of vfs_cache_pressure).
    pub fn shrink_slab(&mut self, scanned: u64, lru_pages: u64, sc: &ScanControl) -> u64 {
        let scanned = if scanned == 0 { SWAP_CLUSTER_MAX } else { scanned };
        let mut ret = 0;
        let n = self.nr_shrinkers();
        if self.shrinker_deferred.len() < n {
            self.shrinker_deferred.resize(n, 0);
        }
        for s in 0..n {
            let max_pass = self.shrinker_count(s);
            if max_pass == 0 {
                continue;
            }
            let seeks = self.shrinker_seeks(s);
            let deferred = std::mem::take(&mut self.shrinker_deferred[s]);
            let mut delta = 4 * scanned / seeks;
            delta = delta * max_pass / (lru_pages + 1);
            let mut total_scan = deferred + delta;
            if self.policy.shrinker == ShrinkerPolicy::PerSuperblock && delta < max_pass / 4 {
                total_scan = total_scan.min(max_pass / 2);
            }
            total_scan = total_scan.min(max_pass * 2);
            let batch = self.shrinker_batch(s);
            while total_scan >= batch {
                let before = self.shrinker_count(s);
                match self.shrinker_scan(s, batch, sc) {
                    None => break,
                    Some(after) => {
                        if after < before {
                            ret += before - after;
                        }
                    }
                }
                self.events.count(VmStat::SlabsScanned, batch);
                total_scan -= batch;
            }
            self.shrinker_deferred[s] += total_scan;
        }
        ret
    }

    /// drop_slab (echo 2 or 3 > /proc/sys/vm/drop_caches, 2.6.32–3.x): shrink_slab as if
    /// 1,000 pages of 1,000 had been scanned, with GFP_KERNEL, until a pass frees 10 objects
    /// or fewer. Unused dentries and inodes are pruned (the files stay on disk, to be read back
    /// by the next lookup) until fewer than 100 of each are left, which the shrinkers count as
    /// 0. Run by a task on `cpu`, not by reclaim.
    pub fn drop_slab(&mut self, cpu: usize) {
        let sc = ScanControl::new(Reclaimer::Direct, Gfp::GFP_KERNEL, 0, SWAP_CLUSTER_MAX, self.sysctl.swappiness);
        let saved = self.reclaim_cpu;
        self.reclaim_cpu = cpu;
        while self.shrink_slab(1000, 1000, &sc) > 10 {}
        self.reclaim_cpu = saved;
    }

    // ------------------------------------------------------------------------------------------
    // zone_reclaim.

    /// 3.x zone_reclaim: decides whether reclaiming from this zone before falling back to
    /// another node is worth it, and does it.
    ///
    /// FULL when the zone's reclaimable page cache is at most min_unmapped_ratio% of the zone and
    /// its reclaimable slab at most min_slab_ratio%, or the zone is unreclaimable; NOSCAN for
    /// callers that cannot sleep, zones of another node with CPUs, or a zone another task is
    /// still reclaiming (the CPU time of its reclaim has not passed yet); otherwise
    /// __zone_reclaim's verdict, counting zone_reclaim_failed when it fell short.
    pub fn zone_reclaim(&mut self, zid: usize, gfp: Gfp, order: usize, cpu: usize) -> ZoneReclaim {
        let z = &self.zones[zid];
        let min_unmapped_pages = z.present_pages * self.sysctl.min_unmapped_ratio / 100;
        let min_slab_pages = z.present_pages * self.sysctl.min_slab_ratio / 100;
        if self.zone_pagecache_reclaimable(zid) <= min_unmapped_pages && self.zone_slab_reclaimable(zid) <= min_slab_pages {
            return ZoneReclaim::Full;
        }
        if self.zones[zid].all_unreclaimable {
            return ZoneReclaim::Full;
        }
        if !gfp.allow_blocking() || gfp.has(Gfp::MEMALLOC) || self.in_reclaim {
            return ZoneReclaim::NoScan;
        }
        let node = self.zones[zid].node;
        if node != self.cpu_to_node[cpu] && !self.nodes[node].cpus.is_empty() {
            return ZoneReclaim::NoScan;
        }
        // zone_test_and_set_flag(ZONE_RECLAIM_LOCKED): held from this task's point in its
        // step (the step's start plus what it has been charged so far) for as long as the
        // reclaim's charges take.
        if self.now_ns + self.cost_ns < self.zones[zid].reclaim_locked_until {
            return ZoneReclaim::NoScan;
        }
        self.zones[zid].reclaim_locked_until = u64::MAX;
        let ok = self.__zone_reclaim(zid, gfp, order, cpu, min_unmapped_pages, min_slab_pages);
        self.zones[zid].reclaim_locked_until = self.now_ns + self.cost_ns;
        if ok {
            ZoneReclaim::Success
        } else {
            self.events.count(VmStat::ZoneReclaimFailed, 1);
            ZoneReclaim::Some
        }
    }

    /// __zone_reclaim: shrinks the zone from ZONE_RECLAIM_PRIORITY down until 2^order pages are
    /// freed (writing and unmapping only as zone_reclaim_mode allows), then its slab until the
    /// zone's reclaimable slab has shrunk by 2^order pages. True if 2^order pages were freed.
    fn __zone_reclaim(&mut self, zid: usize, gfp: Gfp, order: usize, cpu: usize, min_unmapped: u64, min_slab: u64) -> bool {
        let mode = self.sysctl.zone_reclaim_mode.unwrap_or(0);
        let nr_pages = 1u64 << order;
        let mut sc = ScanControl::new(Reclaimer::Direct, gfp, order, nr_pages.max(SWAP_CLUSTER_MAX), self.sysctl.swappiness);
        sc.may_writepage = mode & RECLAIM_WRITE != 0;
        sc.may_unmap = mode & RECLAIM_SWAP != 0;
        sc.swapwrite = true;
        let saved = self.enter_reclaim(Reclaimer::Direct, cpu);
        if self.zone_pagecache_reclaimable(zid) > min_unmapped {
            sc.priority = ZONE_RECLAIM_PRIORITY;
            loop {
                self.shrink_zone(zid, &mut sc);
                sc.priority -= 1;
                if sc.priority < 0 || sc.nr_reclaimed >= nr_pages {
                    break;
                }
            }
        }
        let slab0 = self.zone_slab_reclaimable(zid);
        if slab0 > min_slab {
            loop {
                let lru_pages = self.zone_reclaimable_pages(zid);
                if self.shrink_slab(sc.nr_scanned, lru_pages, &sc) == 0 {
                    break;
                }
                if self.zone_slab_reclaimable(zid) + nr_pages <= slab0 {
                    break;
                }
            }
            let slab1 = self.zone_slab_reclaimable(zid);
            if slab1 < slab0 {
                sc.nr_reclaimed += slab0 - slab1;
            }
        }
        self.leave_reclaim(saved);
        sc.nr_reclaimed >= nr_pages
    }

    // ------------------------------------------------------------------------------------------
    // Direct reclaim.

    /// Marks the start of reclaim by `who` on `cpu` (current_is_kswapd, PF_MEMALLOC and the
    /// reclaim_state); returns what to restore.
    pub(crate) fn enter_reclaim(&mut self, who: Reclaimer, cpu: usize) -> (Reclaimer, bool, usize, u64) {
        let saved = (self.reclaimer, self.in_reclaim, self.reclaim_cpu, self.reclaimed_slab);
        self.reclaimer = who;
        self.in_reclaim = true;
        self.reclaim_cpu = cpu;
        self.reclaimed_slab = 0;
        saved
    }

    pub(crate) fn leave_reclaim(&mut self, saved: (Reclaimer, bool, usize, u64)) {
        (self.reclaimer, self.in_reclaim, self.reclaim_cpu, self.reclaimed_slab) = saved;
    }

    /// try_to_free_pages / do_try_to_free_pages: direct reclaim for an allocation that failed at
    /// the min watermark. Scans the zonelist's zones at falling priority (skipping unreclaimable
    /// zones below DEF_PRIORITY), shrinks slab, wakes the flushers and allows writeback once
    /// much has been scanned, and waits on congestion at low priorities. Returns the pages
    /// reclaimed, or 1 when nothing was freed but some zone is still reclaimable (so the caller
    /// retries), 0 otherwise.
    pub fn try_to_free_pages(&mut self, zones: &[usize], gfp: Gfp, order: usize, cpu: usize) -> u64 {
        let mut sc = ScanControl::new(Reclaimer::Direct, gfp, order, SWAP_CLUSTER_MAX, self.sysctl.swappiness);
        sc.swapwrite = false;
        let saved = self.enter_reclaim(Reclaimer::Direct, cpu);
        match self.era {
            Era::Linux3 => self.events.count(VmStat::Allocstall, 1),
            // 5.x+: counted under sc->reclaim_idx = gfp_zone(gfp), so page cache and user
            // pages stall as allocstall_movable even on a machine without a Movable zone.
            Era::Linux6 => self.events.count(VmStat::for_zone(VmStat::AllocstallDma, gfp.gfp_zone()), 1),
        }
        let mut total_scanned = 0;
        let mut done = false;
        for priority in (0..=DEF_PRIORITY).rev() {
            sc.priority = priority;
            sc.nr_scanned = 0;
            let mut seen_nodes = Vec::new();
            for &zid in zones {
                if !self.zones[zid].populated() {
                    continue;
                }
                if self.era == Era::Linux3 {
                    if self.zones[zid].all_unreclaimable && priority != DEF_PRIORITY {
                        continue;
                    }
                } else {
                    // 6.x shrink_zones: once per node, up to the request's highest zone.
                    let nid = self.zones[zid].node;
                    if seen_nodes.contains(&nid) || self.nodes[nid].kswapd_failures >= MAX_RECLAIM_RETRIES {
                        continue;
                    }
                    seen_nodes.push(nid);
                }
                let (scanned0, reclaimed0) = (sc.nr_scanned, sc.nr_reclaimed);
                self.shrink_zone(zid, &mut sc);
                if self.policy.reclaim_wait == ReclaimWait::ReclaimThrottle {
                    let nid = self.zones[zid].node;
                    self.direct_reclaim_throttle(nid, &sc, sc.nr_scanned - scanned0, sc.nr_reclaimed - reclaimed0);
                }
            }
            let lru_pages: u64 = zones.iter().map(|&z| self.zone_reclaimable_pages(z)).sum();
            self.shrink_slab(sc.nr_scanned, lru_pages, &sc);
            sc.nr_reclaimed += std::mem::take(&mut self.reclaimed_slab);
            total_scanned += sc.nr_scanned;
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                done = true;
                break;
            }
            if self.policy.reclaim_wait == ReclaimWait::ReclaimThrottle {
                // 5.16+: no flusher wakeup or congestion wait here; writepage is allowed
                // once the priority drops (laptop_mode aside).
                if priority < DEF_PRIORITY - 2 {
                    sc.may_writepage = true;
                }
                continue;
            }
            // Try to write back as many pages as were just scanned.
            let writeback_threshold = sc.nr_to_reclaim + sc.nr_to_reclaim / 2;
            if total_scanned > writeback_threshold {
                self.wakeup_flusher_threads(total_scanned);
                sc.may_writepage = true;
            }
            if sc.nr_scanned > 0 && priority < DEF_PRIORITY - 2 {
                self.wait_iff_congested(zones[0], HZ_10_NS);
            }
        }
        let reclaimed = sc.nr_reclaimed;
        self.leave_reclaim(saved);
        if done || reclaimed > 0 {
            return reclaimed;
        }
        // all_unreclaimable: some zone can still be reclaimed → report progress so the caller
        // retries rather than declaring OOM.
        let any = zones.iter().any(|&z| self.zones[z].populated() && !self.zones[z].all_unreclaimable && self.zone_reclaimable(z));
        u64::from(any)
    }

    /// Whether the current task owes a sleep after its step (a throttling pause, a
    /// congestion_wait, or a wait for a request): a task doing a run of page operations stops
    /// there.
    pub fn owes_sleep(&self) -> bool {
        self.sleep_ns > 0 || self.congestion_sleep.is_some() || self.rq_wait_owed.is_some()
    }

    /// Whether the step ends in the wait for a request it owes (no other sleep comes first).
    pub fn owes_request_wait(&self) -> bool {
        self.rq_wait_owed.is_some() && self.sleep_ns == 0 && self.congestion_sleep.is_none()
    }

    /// congestion_wait(BLK_RW_ASYNC, timeout): sleeps the current task on congestion_wqh until
    /// an async (write) request is freed on some queue below its congestion-off mark, or until
    /// `timeout_ns`, ended at a tick, passes. The queue need not have been congested: 2.6.32
    /// to 5.x's __freed_request calls clear_bdi_congested, which wakes the waiters, for every
    /// such request, so while writes complete the sleep is short and while nothing is written
    /// it runs its full timeout. Called inside the allocator or reclaim, it becomes a sleep
    /// after the step (the engine's). The call is counted under its caller (`CongestionSite`)
    /// now, the time slept when it ends.
    pub fn congestion_wait(&mut self, timeout_ns: u64) {
        let timeout = self.schedule_timeout_ns(timeout_ns);
        let site = match (self.in_reclaim, self.reclaimer) {
            (false, _) => CongestionSite::Allocator,
            (true, Reclaimer::Direct) => CongestionSite::DirectReclaim,
            (true, Reclaimer::Kswapd) => CongestionSite::Kswapd,
        };
        self.congestion_waits[site as usize] += 1;
        self.congestion_sleep.get_or_insert((0, site)).0 += timeout;
    }

    /// wait_iff_congested(zone, BLK_RW_ASYNC, timeout): sleeps like congestion_wait, but only
    /// if some device's write queue is congested and reclaim of the zone met congestion.
    pub fn wait_iff_congested(&mut self, zid: usize, timeout_ns: u64) {
        if self.policy.reclaim_wait == super::policy::ReclaimWait::CongestionWait {
            // 2.6.32's callers call congestion_wait itself.
            self.congestion_wait(timeout_ns);
            return;
        }
        let any = self.bdevs.iter().any(|d| d.is_congested(crate::block::Pool::Async));
        if any && self.zones[zid].congested {
            self.congestion_wait(timeout_ns);
        }
    }

    /// 5.16+ throttling of direct reclaim after it shrank node `nid` (the end of shrink_node,
    /// then consider_reclaim_throttle): a jiffy's sleep when kswapd flagged the node's lruvec
    /// congested, and when a priority-1 pass reclaimed nothing — unless the node is nearly
    /// out of reclaimable pages that are not being written (skip_throttle_noprogress). The
    /// sleep runs its timeout (the early wakeups on progress are not modelled).
    fn direct_reclaim_throttle(&mut self, nid: usize, sc: &ScanControl, scanned: u64, reclaimed: u64) {
        if self.nodes[nid].lruvec_congested && !self.skip_throttle_noprogress(nid) {
            self.sleep_ns += self.schedule_timeout_ns(self.sched.jiffy_ns);
        }
        if reclaimed > scanned >> 3 {
            return;
        }
        if sc.priority == 1 && sc.nr_reclaimed == 0 && !self.skip_throttle_noprogress(nid) {
            self.sleep_ns += self.schedule_timeout_ns(self.sched.jiffy_ns);
        }
    }

    /// skip_throttle_noprogress: do not throttle when kswapd gave up on the node, or when no
    /// more than half its reclaimable pages are dirty or under writeback.
    fn skip_throttle_noprogress(&self, nid: usize) -> bool {
        if self.nodes[nid].kswapd_failures >= MAX_RECLAIM_RETRIES {
            return true;
        }
        let first = nid * MAX_NR_ZONES;
        let (mut reclaimable, mut write_pending) = (0, 0);
        for zid in first..first + MAX_NR_ZONES {
            if self.zones[zid].managed_pages == 0 {
                continue;
            }
            reclaimable += self.zone_reclaimable_pages(zid);
            write_pending += self.zones[zid].page_state(ZoneStat::NrFileDirty) + self.zones[zid].page_state(ZoneStat::NrWriteback);
        }
        2 * write_pending <= reclaimable
    }

    /// 6.x PGDAT_DIRTY: reclaim found the node's inactive file pages all dirty and unqueued.
    fn node_dirty_flag(&self, pfn: Pfn) -> bool {
        self.nodes[self.page_to_nid(pfn)].pgdat_dirty
    }

    /// Who is reclaiming right now.
    #[inline(always)]
    pub fn current_is_kswapd(&self) -> bool {
        self.reclaimer == Reclaimer::Kswapd && self.in_reclaim
    }
}


// ----------------------------------------------------------------------------------------------
// kswapd.

/// What kswapd is doing between steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KswapdState {
    /// Asleep until woken.
    Idle,
    /// In balance_pgdat at this priority.
    Balance { priority: i32 },
    /// Napping HZ/10 before sleeping for good (kswapd_try_to_sleep).
    Nap,
}

/// The kswapd thread of one node: one balance_pgdat priority pass per step, then the
/// try-to-sleep dance.
#[derive(Debug)]
pub struct Kswapd {
    pub nid: usize,
    name: String,
    state: KswapdState,
    order: usize,
    classzone_idx: usize,
    /// balance_pgdat's scan control across its priority passes.
    sc: Option<ScanControl>,
    total_scanned: u64,
    /// The wait queue of its HZ/10 nap (only wakeup_kswapd ends it early).
    nap_wq: usize,
    /// 6.x: the watermark boosts this balance_pgdat run found (zone_boosts), and how much of
    /// their sum is still to be reclaimed before boosting ends (nr_boost_reclaim).
    zone_boosts: [u64; MAX_NR_ZONES],
    nr_boost_reclaim: u64,
    /// 5.16+: it is waiting in reclaim_throttle (counted in the node's nr_writeback_throttled).
    throttled: bool,
}

impl Kswapd {
    /// The order it balances for (balance_pgdat's order).
    pub fn order(&self) -> usize {
        self.order
    }

    pub fn new(nid: usize, nap_wq: usize) -> Kswapd {
        Kswapd {
            nid,
            name: format!("kswapd{nid}"),
            state: KswapdState::Idle,
            order: 0,
            classzone_idx: 0,
            sc: None,
            total_scanned: 0,
            nap_wq,
            zone_boosts: [0; MAX_NR_ZONES],
            nr_boost_reclaim: 0,
            throttled: false,
        }
    }

    /// After kswapd_try_to_sleep returned without a full sleep (the node unbalanced again, or
    /// a wakeup during the nap): kswapd() reads the order and zone anew from the pending
    /// request, order 0 if there is none (3.0: `order = pgdat->kswapd_max_order`; 6.x:
    /// `alloc_order = READ_ONCE(pgdat->kswapd_order)`), where the last run's order stood.
    fn take_new_request(&mut self, mm: &mut Mm) {
        let node = &mut mm.nodes[self.nid];
        node.kswapd_wait_pending = false;
        self.order = std::mem::take(&mut node.kswapd_order);
        let hz = std::mem::take(&mut node.kswapd_highest_zoneidx);
        if hz > 0 {
            self.classzone_idx = hz;
        }
    }

    /// Takes the request left by wakeup_kswapd (kswapd_max_order, classzone_idx).
    fn take_request(&mut self, mm: &mut Mm) {
        let node = &mut mm.nodes[self.nid];
        node.kswapd_wait_pending = false;
        self.order = self.order.max(std::mem::take(&mut node.kswapd_order));
        let hz = std::mem::take(&mut node.kswapd_highest_zoneidx);
        self.classzone_idx = if self.state == KswapdState::Idle { hz } else { self.classzone_idx.max(hz) };
    }

    /// Enters balance_pgdat: counts the run, and in 6.x notes the node's watermark boosts up
    /// to the request's zone and marks those zones ZONE_RECLAIM_ACTIVE.
    fn start_balance(&mut self, mm: &mut Mm) {
        mm.events.count(VmStat::Pageoutrun, 1);
        if mm.era == Era::Linux6 {
            let first = self.nid * MAX_NR_ZONES;
            self.zone_boosts = [0; MAX_NR_ZONES];
            for i in 0..=self.classzone_idx {
                let z = &mm.zones[first + i];
                if z.managed_pages > 0 {
                    self.zone_boosts[i] = z.watermark_boost;
                }
            }
            self.nr_boost_reclaim = self.zone_boosts.iter().sum();
            self.set_reclaim_active(mm, true);
        }
        let mut sc = ScanControl::new(Reclaimer::Kswapd, Gfp::GFP_KERNEL, self.order, u64::MAX, mm.sysctl.swappiness);
        sc.may_writepage = true; // !laptop_mode
        self.sc = Some(sc);
        self.total_scanned = 0;
        self.state = KswapdState::Balance { priority: DEF_PRIORITY };
    }
}

impl Task for Kswapd {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_workload(&self) -> bool {
        false
    }

    fn step(&mut self, cx: &mut TaskCx) -> Step {
        let mm = &mut *cx.mm;
        let cost0 = mm.costs.kswapd_pass_ns;
        match self.state {
            KswapdState::Idle => {
                // kswapd_try_to_sleep, woken: the pressure threshold while awake.
                mm.set_pgdat_percpu_threshold(self.nid, true);
                self.take_request(mm);
                self.start_balance(mm);
                Step { user_ns: 0, system_ns: cost0, after: After::Continue }
            }
            KswapdState::Balance { priority } => {
                if std::mem::take(&mut self.throttled) {
                    mm.nodes[self.nid].nr_writeback_throttled -= 1;
                }
                if mm.nodes[self.nid].kswapd_wait_pending {
                    self.take_request(mm);
                }
                let saved = mm.enter_reclaim(Reclaimer::Kswapd, cx.cpu);
                let outcome = match mm.era {
                    Era::Linux3 => mm.balance_pgdat_pass_3x(self.nid, self.order, self.classzone_idx, priority, self.sc.as_mut().unwrap(), &mut self.total_scanned),
                    Era::Linux6 => mm.balance_pgdat_pass_6x(self.nid, self.classzone_idx, priority, self.sc.as_mut().unwrap(), &mut self.nr_boost_reclaim),
                };
                mm.leave_reclaim(saved);
                let wait = std::mem::take(&mut mm.sleep_ns);
                // Already ended at its tick (congestion_wait).
                let mut after = if wait > 0 { After::SleepExact(wait) } else { After::Continue };
                if let Some(sc) = self.sc.as_mut().filter(|sc| sc.throttle_writeback) {
                    // reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK): HZ/10 at most, ended early
                    // by acct_reclaim_writeback.
                    sc.throttle_writeback = false;
                    self.throttled = true;
                    after = After::WaitTimeout(mm.nodes[self.nid].reclaim_wait_writeback, HZ_10_NS);
                }
                match outcome {
                    PassOutcome::Continue { priority } => self.state = KswapdState::Balance { priority },
                    PassOutcome::Restart if mm.era == Era::Linux3 => {
                        // Not balanced after reclaiming a batch (or at priority 0): go again
                        // from the top; a high order that got nowhere falls back to order 0.
                        if self.sc.as_ref().unwrap().nr_reclaimed < SWAP_CLUSTER_MAX {
                            self.order = 0;
                        }
                        self.start_balance(mm);
                    }
                    PassOutcome::Restart => {
                        // balance_pgdat ran out of priorities (or a boost made no progress)
                        // without balancing the node. kswapd() goes round: the order it ended
                        // at, no sleep since the node is unbalanced, and a new run — unless
                        // MAX_RECLAIM_RETRIES runs in a row reclaimed nothing.
                        let sc = self.sc.as_ref().unwrap();
                        self.order = sc.order;
                        if sc.nr_reclaimed == 0 {
                            mm.nodes[self.nid].kswapd_failures += 1;
                        }
                        self.finish(mm);
                        if mm.nodes[self.nid].kswapd_failures >= MAX_RECLAIM_RETRIES {
                            if std::mem::take(&mut self.throttled) {
                                mm.nodes[self.nid].nr_writeback_throttled -= 1;
                            }
                            self.state = KswapdState::Idle;
                            mm.set_pgdat_percpu_threshold(self.nid, false);
                            return Step { user_ns: 0, system_ns: cost0, after: After::Block };
                        }
                        mm.events.count(VmStat::KswapdHighWmarkHitQuickly, 1);
                        self.start_balance(mm);
                    }
                    PassOutcome::Balanced => {
                        if mm.era == Era::Linux6 {
                            self.order = self.sc.as_ref().unwrap().order;
                            // prepare_kswapd_sleep → clear_pgdat_congested.
                            let node = &mut mm.nodes[self.nid];
                            node.lruvec_congested = false;
                            node.pgdat_dirty = false;
                            node.pgdat_writeback = false;
                        }
                        self.finish(mm);
                        if mm.policy.kswapd_sleep == KswapdSleep::AtOnce {
                            // ≤2.6.32 kswapd(): straight back to sleep; only a wakeup that
                            // asked for a higher order meanwhile keeps it awake.
                            if mm.nodes[self.nid].kswapd_order > self.order {
                                self.take_request(mm);
                                self.start_balance(mm);
                                return Step { user_ns: 0, system_ns: cost0, after };
                            }
                            return self.go_to_sleep(mm, cost0);
                        }
                        self.state = KswapdState::Nap;
                        // kswapd_try_to_sleep: nap HZ/10 unless the node is already
                        // unbalanced again.
                        if mm.kswapd_sleeping_prematurely(self.nid, self.order, self.classzone_idx) {
                            // Not napped (remaining 0): counted as the high watermark's.
                            mm.events.count(VmStat::KswapdHighWmarkHitQuickly, 1);
                            self.take_new_request(mm);
                            self.start_balance(mm);
                            return Step { user_ns: 0, system_ns: cost0, after };
                        }
                        return Step { user_ns: 0, system_ns: cost0, after: After::WaitTimeout(self.nap_queue(), HZ_10_NS) };
                    }
                }
                Step { user_ns: 0, system_ns: cost0, after }
            }
            KswapdState::Nap => {
                if !cx.timed_out || mm.nodes[self.nid].kswapd_wait_pending {
                    // Woken during the nap: the watermark was hit quickly.
                    mm.events.count(VmStat::KswapdLowWmarkHitQuickly, 1);
                    self.take_new_request(mm);
                    self.start_balance(mm);
                    return Step { user_ns: 0, system_ns: cost0, after: After::Continue };
                }
                if mm.kswapd_sleeping_prematurely(self.nid, self.order, self.classzone_idx) {
                    mm.events.count(VmStat::KswapdHighWmarkHitQuickly, 1);
                    self.take_new_request(mm);
                    self.start_balance(mm);
                    return Step { user_ns: 0, system_ns: cost0, after: After::Continue };
                }
                self.go_to_sleep(mm, 0)
            }
        }
    }
}

impl Kswapd {
    /// Sleeps on kswapd_wait until woken: kswapd_try_to_sleep's schedule(), at the normal
    /// per-CPU threshold, or ≤2.6.32 kswapd()'s schedule() right after balance_pgdat.
    fn go_to_sleep(&mut self, mm: &mut Mm, system_ns: u64) -> Step {
        self.state = KswapdState::Idle;
        self.order = 0;
        self.classzone_idx = 0;
        mm.set_pgdat_percpu_threshold(self.nid, false);
        Step { user_ns: 0, system_ns, after: After::Block }
    }

    /// Leaves balance_pgdat. 6.x clears ZONE_RECLAIM_ACTIVE and takes off each zone's boost
    /// what it was when the run began (boosts raised meanwhile stay for the next run).
    fn finish(&mut self, mm: &mut Mm) {
        let first = self.nid * MAX_NR_ZONES;
        match mm.era {
            Era::Linux3 => {
                for z in &mut mm.zones[first..first + MAX_NR_ZONES] {
                    z.watermark_boost = 0;
                }
            }
            Era::Linux6 => {
                self.set_reclaim_active(mm, false);
                for (i, z) in mm.zones[first..first + MAX_NR_ZONES].iter_mut().enumerate() {
                    z.watermark_boost -= z.watermark_boost.min(self.zone_boosts[i]);
                }
                self.zone_boosts = [0; MAX_NR_ZONES];
                self.nr_boost_reclaim = 0;
            }
        }
        self.sc = None;
    }

    /// 6.x set_reclaim_active / clear_reclaim_active (5.13+): while kswapd balances the node,
    /// its managed zones up to the request's highest zone carry ZONE_RECLAIM_ACTIVE, which
    /// keeps their pcp lists short (nr_pcp_high) so freed pages reach the buddy lists.
    fn set_reclaim_active(&self, mm: &mut Mm, active: bool) {
        let first = self.nid * MAX_NR_ZONES;
        // Cleared on every zone of the node: a request taken mid-balance may have raised
        // classzone_idx since the flags were set.
        let last = if active { first + self.classzone_idx } else { first + MAX_NR_ZONES - 1 };
        for z in &mut mm.zones[first..=last] {
            if z.managed_pages == 0 {
                continue;
            }
            if active {
                z.flags |= ZONE_RECLAIM_ACTIVE;
            } else {
                z.flags &= !ZONE_RECLAIM_ACTIVE;
            }
        }
    }

    fn nap_queue(&self) -> usize {
        self.nap_wq
    }
}

/// What one balance_pgdat priority pass concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassOutcome {
    /// Go on at this priority (3.x: always one lower; 6.x: lower only when the pass scanned
    /// less than it was asked to reclaim or reclaimed nothing).
    Continue { priority: i32 },
    /// 3.x: start again from DEF_PRIORITY (loop_again). 6.x: balance_pgdat returned with the
    /// node unbalanced; kswapd calls it again.
    Restart,
    /// Every zone is balanced: try to sleep.
    Balanced,
}

impl Mm {
    /// Returns true if `zid` meets `mark` for `order` against `classzone` (zone_watermark_ok_safe).
    fn wmark_ok_safe(&self, zid: usize, order: usize, mark: u64, classzone: usize) -> bool {
        self.zone_watermark_ok_safe(zid, order, mark, classzone, 0)
    }

    /// One priority pass of 3.x balance_pgdat over node `nid`: finds the highest zone below its
    /// high watermark, shrinks every zone up to it that is below high + balance gap, shrinks
    /// slab, marks zones unreclaimable, and decides whether to go on, restart or stop.
    pub fn balance_pgdat_pass_3x(&mut self, nid: usize, order: usize, classzone_idx: usize, priority: i32, sc: &mut ScanControl, total_scanned: &mut u64) -> PassOutcome {
        let first = nid * MAX_NR_ZONES;
        sc.priority = priority;
        let mut end_zone = None;
        for i in (0..MAX_NR_ZONES).rev() {
            let zid = first + i;
            if !self.zones[zid].populated() {
                continue;
            }
            if self.zones[zid].all_unreclaimable && priority != DEF_PRIORITY {
                continue;
            }
            if self.nr_swap_pages() > 0 && self.inactive_anon_is_low(zid) {
                self.shrink_active_list(zid, false, SWAP_CLUSTER_MAX, sc);
            }
            if !self.wmark_ok_safe(zid, order, self.zones[zid].high_wmark_pages(), 0) {
                end_zone = Some(i);
                break;
            }
            self.zones[zid].congested = false;
        }
        let Some(end_zone) = end_zone else { return PassOutcome::Balanced };
        let lru_pages: u64 = (0..=end_zone).map(|i| self.zone_reclaimable_pages(first + i)).sum();
        let mut all_zones_ok = true;
        let mut under_min = false;
        let mut balanced = 0;
        for i in 0..=end_zone {
            let zid = first + i;
            if !self.zones[zid].populated() || (self.zones[zid].all_unreclaimable && priority != DEF_PRIORITY) {
                continue;
            }
            sc.nr_scanned = 0;
            let z = &self.zones[zid];
            let balance_gap = z.low_wmark_pages().min(z.present_pages.div_ceil(KSWAPD_ZONE_BALANCE_GAP_RATIO));
            if !self.wmark_ok_safe(zid, order, self.zones[zid].high_wmark_pages() + balance_gap, end_zone) {
                self.shrink_zone(zid, sc);
            }
            self.reclaimed_slab = 0;
            let nr_slab = self.shrink_slab(sc.nr_scanned, lru_pages, sc);
            sc.nr_reclaimed += std::mem::take(&mut self.reclaimed_slab);
            *total_scanned += sc.nr_scanned;
            if self.zones[zid].all_unreclaimable {
                continue;
            }
            if nr_slab == 0 && !self.zone_reclaimable(zid) {
                self.zones[zid].all_unreclaimable = true;
            }
            if *total_scanned > SWAP_CLUSTER_MAX * 2 && *total_scanned > sc.nr_reclaimed + sc.nr_reclaimed / 2 {
                sc.may_writepage = true;
            }
            if !self.wmark_ok_safe(zid, order, self.zones[zid].high_wmark_pages(), end_zone) {
                all_zones_ok = false;
                if !self.wmark_ok_safe(zid, order, self.zones[zid].min_wmark_pages(), end_zone) {
                    under_min = true;
                }
            } else {
                self.zones[zid].congested = false;
                if i <= classzone_idx {
                    balanced += self.zones[zid].present_pages;
                }
            }
        }
        if all_zones_ok || (order > 0 && self.pgdat_balanced_3x(nid, balanced, classzone_idx)) {
            return PassOutcome::Balanced;
        }
        if *total_scanned > 0 && priority < DEF_PRIORITY - 2 {
            if under_min && self.policy.reclaim_wait == super::policy::ReclaimWait::WaitIffCongested {
                self.events.count(VmStat::KswapdSkipCongestionWait, 1);
            } else {
                self.congestion_wait(HZ_10_NS);
            }
        }
        if sc.nr_reclaimed >= SWAP_CLUSTER_MAX || priority == 0 {
            return PassOutcome::Restart;
        }
        PassOutcome::Continue { priority: priority - 1 }
    }

    /// 3.x pgdat_balanced for order > 0: zones meeting the high watermark hold at least a
    /// quarter of the node's present pages up to `classzone_idx`.
    fn pgdat_balanced_3x(&self, nid: usize, balanced: u64, classzone_idx: usize) -> bool {
        let first = nid * MAX_NR_ZONES;
        let present: u64 = (0..=classzone_idx).map(|i| self.zones[first + i].present_pages).sum();
        balanced > present / 4
    }

    /// One iteration of 6.x balance_pgdat's priority loop (read from 6.1): a boosted run that
    /// finds the node unbalanced drops the boost and starts over at DEF_PRIORITY; a balanced
    /// node without a boost to work off ends the run; otherwise reclaim the node
    /// (kswapd_shrink_node, nr_to_reclaim = Σ max(high, SWAP_CLUSTER_MAX), slab included)
    /// without writeback or swap while boosting, and lower the priority only if the pass
    /// scanned less than nr_to_reclaim or reclaimed nothing (boosting stops at DEF_PRIORITY - 2).
    pub fn balance_pgdat_pass_6x(&mut self, nid: usize, highest_zoneidx: usize, priority: i32, sc: &mut ScanControl, nr_boost_reclaim: &mut u64) -> PassOutcome {
        let mut priority = priority;
        let balanced = self.pgdat_balanced(nid, sc.order, highest_zoneidx);
        if !balanced && *nr_boost_reclaim > 0 {
            *nr_boost_reclaim = 0;
            priority = DEF_PRIORITY;
        }
        if *nr_boost_reclaim == 0 && balanced {
            return PassOutcome::Balanced;
        }
        let mut raise_priority = !(*nr_boost_reclaim > 0 && priority == DEF_PRIORITY - 2);
        sc.may_writepage = *nr_boost_reclaim == 0;
        sc.may_swap = *nr_boost_reclaim == 0;
        if priority < DEF_PRIORITY - 2 {
            sc.may_writepage = true;
        }
        let first = nid * MAX_NR_ZONES;
        sc.priority = priority;
        sc.reclaim_idx = highest_zoneidx;
        sc.nr_to_reclaim = (0..=highest_zoneidx)
            .map(|i| &self.zones[first + i])
            .filter(|z| z.managed_pages > 0)
            .map(|z| z.high_wmark_pages().max(SWAP_CLUSTER_MAX))
            .sum();
        let before = sc.nr_reclaimed;
        sc.nr_scanned = 0;
        let stat0 = (sc.nr_taken, sc.nr_writeback, sc.nr_dirty_or_writeback, sc.nr_congested, sc.nr_immediate);
        self.shrink_lruvec(nid, sc);
        let lru_pages: u64 = (0..=highest_zoneidx).map(|i| self.zone_reclaimable_pages(first + i)).sum();
        self.shrink_slab(sc.nr_scanned, lru_pages, sc);
        sc.nr_reclaimed += std::mem::take(&mut self.reclaimed_slab);
        if self.policy.reclaim_wait == ReclaimWait::ReclaimThrottle {
            self.kswapd_shrink_node_flags(nid, sc, stat0);
        }
        // Fragmentation may keep a high order out of reach: after twice its size, order 0.
        if sc.order > 0 && sc.nr_reclaimed >= 2u64 << sc.order {
            sc.order = 0;
        }
        if sc.nr_scanned >= sc.nr_to_reclaim {
            raise_priority = false;
        }
        let reclaimed = sc.nr_reclaimed - before;
        *nr_boost_reclaim -= (*nr_boost_reclaim).min(reclaimed);
        if *nr_boost_reclaim > 0 && reclaimed == 0 {
            return PassOutcome::Restart;
        }
        if raise_priority || reclaimed == 0 {
            priority -= 1;
        }
        if priority < 1 {
            return PassOutcome::Restart;
        }
        PassOutcome::Continue { priority }
    }

    /// The end of 5.16+ shrink_node for kswapd: flag the node PGDAT_WRITEBACK when all it
    /// isolated was under writeback, its lruvec congested when every dirty or writeback page
    /// was one already marked for immediate reclaim, and ask kswapd to wait for writeback
    /// (reclaim_throttle) when it met such pages again while the node was PGDAT_WRITEBACK.
    fn kswapd_shrink_node_flags(&mut self, nid: usize, sc: &mut ScanControl, stat0: (u64, u64, u64, u64, u64)) {
        let taken = sc.nr_taken - stat0.0;
        let writeback = sc.nr_writeback - stat0.1;
        let dirty = sc.nr_dirty_or_writeback - stat0.2;
        let congested = sc.nr_congested - stat0.3;
        let immediate = sc.nr_immediate - stat0.4;
        let node = &mut self.nodes[nid];
        if writeback > 0 && writeback == taken {
            node.pgdat_writeback = true;
        }
        if dirty > 0 && dirty == congested {
            node.lruvec_congested = true;
        }
        if immediate > 0 {
            node.nr_writeback_throttled += 1;
            if node.nr_writeback_throttled == 1 {
                node.nr_reclaim_start = node.throttled_written;
            }
            sc.throttle_writeback = true;
        }
    }

    /// kswapd's sleeping_prematurely / prepare_kswapd_sleep: would the node still need work?
    pub fn kswapd_sleeping_prematurely(&self, nid: usize, order: usize, classzone_idx: usize) -> bool {
        match self.era {
            Era::Linux3 => {
                let first = nid * MAX_NR_ZONES;
                let mut all_ok = true;
                let mut balanced = 0;
                for i in 0..=classzone_idx {
                    let zid = first + i;
                    let z = &self.zones[zid];
                    if !z.populated() {
                        continue;
                    }
                    if z.all_unreclaimable {
                        balanced += z.present_pages;
                        continue;
                    }
                    if !self.wmark_ok_safe(zid, order, z.high_wmark_pages(), i) {
                        all_ok = false;
                    } else {
                        balanced += z.present_pages;
                    }
                }
                if order > 0 {
                    !self.pgdat_balanced_3x(nid, balanced, classzone_idx)
                } else {
                    !all_ok
                }
            }
            Era::Linux6 => self.nodes[nid].kswapd_failures < MAX_RECLAIM_RETRIES && !self.pgdat_balanced(nid, order, classzone_idx),
        }
    }
}
