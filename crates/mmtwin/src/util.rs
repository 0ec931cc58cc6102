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

#[cfg(test)]
mod tests {
    #[test]
    fn int_sqrt_rounds_down() {
        for (x, r) in [(0, 0), (1, 1), (3, 1), (4, 2), (16 << 20, 4096), (u32::MAX as u64, 65535)] {
            assert_eq!(super::int_sqrt(x), r);
        }
    }
}
