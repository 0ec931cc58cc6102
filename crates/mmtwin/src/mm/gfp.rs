//! Allocation flags (include/linux/gfp.h, gfp_types.h, mm/internal.h ALLOC_*).
//!
//! Bits are this project's own numbering; names and meanings are the kernel's. 3.x's `__GFP_WAIT`
//! is `DIRECT_RECLAIM` here, and 3.x's "!__GFP_NO_KSWAPD" is `KSWAPD_RECLAIM` (the 6.x split).

use super::mmzone::{MigrateType, ZoneType};

/// A gfp mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Gfp(pub u32);

impl Gfp {
    pub const DMA: Gfp = Gfp(1 << 0);
    pub const HIGHMEM: Gfp = Gfp(1 << 1);
    pub const DMA32: Gfp = Gfp(1 << 2);
    pub const MOVABLE: Gfp = Gfp(1 << 3);
    pub const RECLAIMABLE: Gfp = Gfp(1 << 4);
    /// __GFP_HIGH: may use part of the min reserve.
    pub const HIGH: Gfp = Gfp(1 << 5);
    pub const IO: Gfp = Gfp(1 << 6);
    pub const FS: Gfp = Gfp(1 << 7);
    /// 3.x __GFP_COLD: the page will not be touched soon (readahead); taken from a pcp tail.
    pub const COLD: Gfp = Gfp(1 << 8);
    pub const NOWARN: Gfp = Gfp(1 << 9);
    pub const RETRY_MAYFAIL: Gfp = Gfp(1 << 10);
    pub const NOFAIL: Gfp = Gfp(1 << 11);
    pub const NORETRY: Gfp = Gfp(1 << 12);
    pub const COMP: Gfp = Gfp(1 << 13);
    pub const ZERO: Gfp = Gfp(1 << 14);
    /// __GFP_THISNODE: no fallback to other nodes.
    pub const THISNODE: Gfp = Gfp(1 << 15);
    /// __GFP_WRITE: the page will be dirtied (3.2+ per-zone dirty limits).
    pub const WRITE: Gfp = Gfp(1 << 16);
    pub const HARDWALL: Gfp = Gfp(1 << 17);
    /// __GFP_DIRECT_RECLAIM (3.x __GFP_WAIT).
    pub const DIRECT_RECLAIM: Gfp = Gfp(1 << 18);
    /// __GFP_KSWAPD_RECLAIM (3.x: absence of __GFP_NO_KSWAPD).
    pub const KSWAPD_RECLAIM: Gfp = Gfp(1 << 19);
    pub const MEMALLOC: Gfp = Gfp(1 << 20);

    pub const RECLAIM: Gfp = Gfp(Self::DIRECT_RECLAIM.0 | Self::KSWAPD_RECLAIM.0);
    pub const GFP_ATOMIC: Gfp = Gfp(Self::HIGH.0 | Self::KSWAPD_RECLAIM.0);
    pub const GFP_NOWAIT: Gfp = Gfp(Self::KSWAPD_RECLAIM.0);
    pub const GFP_NOIO: Gfp = Gfp(Self::RECLAIM.0);
    pub const GFP_NOFS: Gfp = Gfp(Self::RECLAIM.0 | Self::IO.0);
    pub const GFP_KERNEL: Gfp = Gfp(Self::RECLAIM.0 | Self::IO.0 | Self::FS.0);
    pub const GFP_USER: Gfp = Gfp(Self::GFP_KERNEL.0 | Self::HARDWALL.0);
    pub const GFP_HIGHUSER: Gfp = Gfp(Self::GFP_USER.0 | Self::HIGHMEM.0);
    pub const GFP_HIGHUSER_MOVABLE: Gfp = Gfp(Self::GFP_HIGHUSER.0 | Self::MOVABLE.0);
    /// GFP_TRANSHUGE_LIGHT: no reclaim, no kswapd.
    pub const GFP_TRANSHUGE_LIGHT: Gfp = Gfp(
        (Self::GFP_HIGHUSER_MOVABLE.0 | Self::COMP.0 | Self::NOWARN.0) & !Self::RECLAIM.0,
    );
    pub const GFP_TRANSHUGE: Gfp = Gfp(Self::GFP_TRANSHUGE_LIGHT.0 | Self::DIRECT_RECLAIM.0);

    #[inline(always)]
    pub const fn has(self, f: Gfp) -> bool {
        self.0 & f.0 != 0
    }

    #[inline(always)]
    pub const fn with(self, f: Gfp) -> Gfp {
        Gfp(self.0 | f.0)
    }

    #[inline(always)]
    pub const fn without(self, f: Gfp) -> Gfp {
        Gfp(self.0 & !f.0)
    }

    /// The highest zone this mask may use (gfp_zone).
    #[inline(always)]
    pub fn gfp_zone(self) -> ZoneType {
        if self.has(Gfp::DMA) {
            ZoneType::Dma
        } else if self.has(Gfp::DMA32) {
            ZoneType::Dma32
        } else if self.has(Gfp::MOVABLE) && self.has(Gfp::HIGHMEM) {
            ZoneType::Movable
        } else {
            ZoneType::Normal
        }
    }

    /// The migratetype of the request (gfp_migratetype / allocflags_to_migratetype).
    #[inline(always)]
    pub fn migratetype(self) -> MigrateType {
        if self.has(Gfp::MOVABLE) {
            MigrateType::Movable
        } else if self.has(Gfp::RECLAIMABLE) {
            MigrateType::Reclaimable
        } else {
            MigrateType::Unmovable
        }
    }

    /// Whether the caller may sleep in direct reclaim (gfpflags_allow_blocking).
    #[inline(always)]
    pub fn allow_blocking(self) -> bool {
        self.has(Gfp::DIRECT_RECLAIM)
    }
}

/// Internal allocation flags (mm/internal.h ALLOC_*). The low two bits index the watermark.
pub type AllocFlags = u32;
pub const ALLOC_WMARK_MIN: AllocFlags = 0;
pub const ALLOC_WMARK_LOW: AllocFlags = 1;
pub const ALLOC_WMARK_HIGH: AllocFlags = 2;
pub const ALLOC_WMARK_MASK: AllocFlags = 3;
pub const ALLOC_NO_WATERMARKS: AllocFlags = 1 << 2;
/// 6.x ALLOC_OOM.
pub const ALLOC_OOM: AllocFlags = 1 << 3;
/// 3.x ALLOC_HARDER / 6.x ALLOC_NON_BLOCK: the caller cannot block (a further −¼ of the mark).
pub const ALLOC_HARDER: AllocFlags = 1 << 4;
/// 3.x ALLOC_HIGH / 6.x ALLOC_MIN_RESERVE: __GFP_HIGH (half the mark).
pub const ALLOC_HIGH: AllocFlags = 1 << 5;
pub const ALLOC_CPUSET: AllocFlags = 1 << 6;
pub const ALLOC_CMA: AllocFlags = 1 << 7;
/// 6.x: avoid fragmenting fallbacks and remote nodes on the first pass.
pub const ALLOC_NOFRAGMENT: AllocFlags = 1 << 8;
/// 6.x: may use and create MIGRATE_HIGHATOMIC reserves.
pub const ALLOC_HIGHATOMIC: AllocFlags = 1 << 9;
pub const ALLOC_KSWAPD: AllocFlags = 1 << 10;
/// The reserve-granting flags (ALLOC_RESERVES).
pub const ALLOC_RESERVES: AllocFlags = ALLOC_HARDER | ALLOC_HIGH | ALLOC_HIGHATOMIC | ALLOC_OOM;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfp_zone_and_migratetype_follow_the_kernel_tables() {
        assert_eq!(Gfp::GFP_KERNEL.gfp_zone(), ZoneType::Normal);
        assert_eq!(Gfp::GFP_HIGHUSER_MOVABLE.gfp_zone(), ZoneType::Movable);
        assert_eq!(Gfp::GFP_KERNEL.with(Gfp::DMA32).gfp_zone(), ZoneType::Dma32);
        assert_eq!(Gfp::GFP_KERNEL.with(Gfp::DMA).gfp_zone(), ZoneType::Dma);
        assert_eq!(Gfp::GFP_HIGHUSER_MOVABLE.migratetype(), MigrateType::Movable);
        assert_eq!(Gfp::GFP_KERNEL.with(Gfp::RECLAIMABLE).migratetype(), MigrateType::Reclaimable);
        assert_eq!(Gfp::GFP_ATOMIC.migratetype(), MigrateType::Unmovable);
        assert!(!Gfp::GFP_TRANSHUGE_LIGHT.allow_blocking());
        assert!(Gfp::GFP_TRANSHUGE.allow_blocking());
    }
}
