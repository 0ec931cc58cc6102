//! Floating proportions with periods counted in events (lib/proportions.c, 2.6.24–3.4): the
//! share of one kind of event (a device's writeback completions, a task's dirtied pages) in
//! all events of that class, with a history that halves every half period.
//!
//! A class (`PropGlobal`, struct prop_descriptor) counts all its events and has a period of
//! 2^shift events. Each member (`PropLocal`, prop_local_percpu / prop_local_single) counts its
//! own events and remembers the half period it last saw; when the class has moved on by k half
//! periods, the member's count is halved k times before it is read or added to (prop_norm_*).
//! A member's fraction is its count over 2^(shift−1) plus the events of the class's current
//! half period (prop_fraction_*): with one member only, it starts near 0 at boot and
//! approaches 1 after a few periods.
//!
//! page-writeback.c sizes the period from the dirty threshold at boot (calc_period_shift:
//! 2 + ilog2(dirty threshold − 1)), so a half period is between one and two dirty thresholds
//! of events; it is recomputed only when the dirty sysctls are written.

/// A member's count and the class's event count, masked to whole half periods, when it was
/// last normalised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PropLocal {
    pub events: u64,
    pub period: u64,
}

/// One class of events (prop_global of a prop_descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropGlobal {
    pub shift: u32,
    pub events: u64,
}

impl Default for PropGlobal {
    fn default() -> PropGlobal {
        PropGlobal::new(1)
    }
}

/// calc_period_shift: the period of the writeback proportions for a dirty threshold of
/// `dirty_total` pages.
pub fn calc_period_shift(dirty_total: u64) -> u32 {
    2 + (dirty_total.saturating_sub(1).max(1)).ilog2()
}

impl PropGlobal {
    /// prop_descriptor_init: no events yet, a period of 2^shift events.
    pub fn new(shift: u32) -> PropGlobal {
        PropGlobal { shift: shift.max(1), events: 0 }
    }

    fn period_2(&self) -> u64 {
        1 << (self.shift - 1)
    }

    /// prop_norm_single / prop_norm_percpu: halves the member's count once per half period
    /// the class has completed since the member was last looked at.
    pub fn norm(&self, pl: &mut PropLocal) {
        let global_period = self.events & !(self.period_2() - 1);
        if pl.period == global_period {
            return;
        }
        let missed = (global_period - pl.period) >> (self.shift - 1);
        pl.events = if missed < 64 { pl.events >> missed } else { 0 };
        pl.period = global_period;
    }

    /// prop_inc_single / __prop_inc_percpu (no max_prop_frac cap: every device's max_ratio is
    /// 100): one event of member `pl`.
    pub fn inc(&mut self, pl: &mut PropLocal) {
        self.norm(pl);
        pl.events += 1;
        self.events += 1;
    }

    /// prop_fraction_single / prop_fraction_percpu: the member's share as (numerator,
    /// denominator).
    pub fn fraction(&self, pl: &mut PropLocal) -> (u64, u64) {
        self.norm(pl);
        let p2 = self.period_2();
        (pl.events, p2 + (self.events & (p2 - 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_shift_follows_the_dirty_threshold() {
        // 2 + ilog2(threshold - 1): a half period of one to two thresholds.
        assert_eq!(calc_period_shift(8192), 2 + 12);
        assert_eq!(calc_period_shift(8193), 2 + 13);
        assert_eq!(calc_period_shift(1), 2);
    }

    #[test]
    fn a_lone_member_grows_towards_the_whole_and_a_silent_one_halves_per_half_period() {
        let mut g = PropGlobal::new(4); // half period of 8 events
        let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
        for _ in 0..4 {
            g.inc(&mut a);
        }
        // 4 events out of a half period of 8 plus the 4 of this half period.
        assert_eq!(g.fraction(&mut a), (4, 12));
        for _ in 0..4 {
            g.inc(&mut a);
        }
        // A half period completed: a's 8 are halved.
        assert_eq!(g.fraction(&mut a), (4, 8));
        for _ in 0..200 {
            g.inc(&mut a);
        }
        // At a half-period boundary the halvings (rounded down) leave it one event short.
        let (n, d) = g.fraction(&mut a);
        assert_eq!((n, d), (7, 8), "a lone member approaches the whole");
        g.inc(&mut a);
        assert_eq!(g.fraction(&mut a), (8, 9));
        // b takes over; a's count halves per half period of b's events.
        for _ in 0..8 {
            g.inc(&mut b);
        }
        let (n1, _) = g.fraction(&mut a);
        for _ in 0..8 {
            g.inc(&mut b);
        }
        let (n2, _) = g.fraction(&mut a);
        assert_eq!(n2, n1 / 2);
        for _ in 0..8 * 70 {
            g.inc(&mut b);
        }
        assert_eq!(g.fraction(&mut a).0, 0);
    }
}
