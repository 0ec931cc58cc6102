//! Small numeric helpers the kernel has too.

/// Integer square root, rounded down (lib/math/int_sqrt.c).
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// Asks the CPU to bring `*p` into its caches ahead of use (a hint; no effect on results). The
/// hot loops over page frames (a request's pages at completion, a writeback walk) touch frames
/// last used long before, so each is a cache miss; issuing the next frames' loads early
/// overlaps them.
#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, and `p` is a valid reference.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>((p as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    #[test]
    fn int_sqrt_rounds_down() {
        for (x, r) in [(0, 0), (1, 1), (3, 1), (4, 2), (16 << 20, 4096), (u32::MAX as u64, 65535)] {
            assert_eq!(super::int_sqrt(x), r);
        }
    }
}
