//! Floating proportions with periods in time (lib/flex_proportions.c, 3.5+; read from 6.12):
//! a device's share of the machine's recent writeback completions.
//!
//! The class (`FpropGlobal`, struct fprop_global in the wb_domain) counts all events; every
//! VM_COMPLETIONS_PERIOD_LEN (3 s) a timer declares a new period, which halves that count
//! (fprop_new_period). A member (`PropLocal`, fprop_local_percpu) remembers the period it last
//! saw and halves its own count once per period missed before it is read or added to
//! (fprop_reflect_period_percpu). Its fraction is its count over the class's, never above 1.
//! The timer (writeout_period) stops once the class's count has decayed to at most 1 event,
//! and the next completion starts it again 3 s ahead (wb_domain_writeout_add): the model runs
//! the firings that are due whenever the class is used, which is the same sequence.

use super::proportions::PropLocal;

/// The completions of one writeback domain and its period timer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpropGlobal {
    pub events: u64,
    pub period: u64,
    /// When the period timer fires next, in jiffies; 0 while it is stopped.
    pub period_time: u64,
}

impl FpropGlobal {
    /// fprop_new_period: ages the class by `periods`; false (and nothing done) when at most
    /// one event is left.
    fn new_period(&mut self, periods: u64) -> bool {
        if self.events <= 1 {
            return false;
        }
        self.events = if periods < 64 { self.events >> periods } else { 0 };
        self.period += periods;
        true
    }

    /// The writeout_period timer firings due at `jiffies`, in order.
    pub fn run_timer(&mut self, jiffies: u64, period_len: u64) {
        while self.period_time != 0 && jiffies >= self.period_time {
            if self.new_period(1) {
                self.period_time = (self.period_time + period_len).max(1);
            } else {
                self.period_time = 0;
            }
        }
    }

    /// fprop_reflect_period_percpu.
    fn reflect(&self, pl: &mut PropLocal) {
        if pl.period >= self.period {
            return;
        }
        let missed = self.period - pl.period;
        pl.events = if missed < 64 { pl.events >> missed } else { 0 };
        pl.period = self.period;
    }

    /// wb_domain_writeout_add: `nr` completions of member `pl` at `jiffies`; the first after
    /// the timer stopped starts it again.
    pub fn writeout_add(&mut self, pl: &mut PropLocal, nr: u64, jiffies: u64, period_len: u64) {
        self.run_timer(jiffies, period_len);
        self.reflect(pl);
        pl.events += nr;
        self.events += nr;
        if self.period_time == 0 {
            self.period_time = (jiffies + period_len).max(1);
        }
    }

    /// fprop_fraction_percpu: (numerator, denominator), the fraction at most 1 and the
    /// denominator at least 1.
    pub fn fraction(&mut self, pl: &mut PropLocal, jiffies: u64, period_len: u64) -> (u64, u64) {
        self.run_timer(jiffies, period_len);
        self.reflect(pl);
        let (num, mut den) = (pl.events, self.events);
        if den <= num {
            den = num.max(1);
        }
        (num, den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_halve_every_period_and_the_timer_stops_when_nothing_is_left() {
        let mut g = FpropGlobal::default();
        let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
        for _ in 0..64 {
            g.writeout_add(&mut a, 1, 10, 300);
        }
        assert_eq!(g.period_time, 310);
        assert_eq!(g.fraction(&mut a, 20, 300), (64, 64));
        // One period later b writes as much: a's 64 became 32, the class's 64 + 64 → 32 + 64.
        for _ in 0..64 {
            g.writeout_add(&mut b, 1, 310, 300);
        }
        assert_eq!(g.period, 1);
        assert_eq!(g.fraction(&mut a, 311, 300), (32, 96));
        assert_eq!(g.fraction(&mut b, 311, 300), (64, 96));
        // Silence: the class decays to one event and the timer stops.
        let _ = g.fraction(&mut a, 310 + 300 * 20, 300);
        assert_eq!(g.period_time, 0);
        assert!(g.events <= 1);
        // The next completion restarts it 3 s (here 300 jiffies) ahead.
        g.writeout_add(&mut b, 1, 9000, 300);
        assert_eq!(g.period_time, 9300);
    }
}
