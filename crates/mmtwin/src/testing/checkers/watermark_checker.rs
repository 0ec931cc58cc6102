//! Watermarks are consistent with the zone: min ≤ low ≤ high ≤ managed pages, and the pcp
//! batch is at least 1. (high_min ≤ high_max is not an invariant: 6.x zone_highsize takes
//! high_min from the low watermark and high_max from managed / 8, and in a zone of a few
//! hundred pages the low watermark can be more than an eighth of it.)

use crate::mm::mmzone::{WMARK_HIGH, WMARK_LOW, WMARK_MIN};
use crate::mm::policy::PageCountBasis;
use crate::mm::Mm;

pub fn check(mm: &Mm) -> Result<(), String> {
    for z in mm.zones.iter().filter(|z| z.populated()) {
        let w = &z.watermark;
        let name = format!("node {} zone {}", z.node, z.zone_type.name());
        if !(w[WMARK_MIN] <= w[WMARK_LOW] && w[WMARK_LOW] <= w[WMARK_HIGH]) {
            return Err(format!("{name}: watermarks out of order: min {} low {} high {}", w[WMARK_MIN], w[WMARK_LOW], w[WMARK_HIGH]));
        }
        // The watermarks are a share of the pages the era counts (3.x present, later managed).
        let pages = match mm.policy.page_count_basis {
            PageCountBasis::Present => z.present_pages,
            PageCountBasis::Managed => z.managed_pages,
        };
        if w[WMARK_HIGH] > pages {
            return Err(format!("{name}: high watermark {} above the zone's {pages} pages", w[WMARK_HIGH]));
        }
        if z.managed_pages > z.present_pages || z.present_pages > z.spanned_pages {
            return Err(format!("{name}: managed {} ≤ present {} ≤ spanned {} does not hold", z.managed_pages, z.present_pages, z.spanned_pages));
        }
        for (cpu, p) in z.pcp.iter().enumerate() {
            if p.batch == 0 {
                return Err(format!("{name} cpu {cpu}: pcp batch {} high_min {} high_max {}", p.batch, p.high_min, p.high_max));
            }
        }
    }
    Ok(())
}
