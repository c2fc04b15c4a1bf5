//! Availability profiles: free units over future time, for planning reservations.

use sim_core::SimTime;
use sim_core::policy::SchedView;

/// The expected end of a running job for planning: `end` itself, unless it is already
/// in the past (the job overran its estimate and still runs), then one microsecond from
/// now. With `due_now_is_past`, an end exactly at `now` also counts as past: use it when
/// the plan may start jobs on the job's units at once (EASY), since with `pass=per-event`
/// its end may not have been processed yet.
pub fn overrun_clamp(end: SimTime, now: SimTime, due_now_is_past: bool) -> SimTime {
    if end < now || (due_now_is_past && end == now) { now.next_tick() } else { end }
}

/// Each running job's units as a release `(expected end, +units)`, the end from `end_of`
/// (already clamped by the caller, see [`overrun_clamp`]) and never before now.
pub fn running_releases(
    view: &SchedView<'_>,
    end_of: impl Fn(&sim_core::policy::RunningJob) -> SimTime,
) -> Vec<(SimTime, i64)> {
    let now = view.now();
    view.running().map(|r| (end_of(r).max(now), r.count as i64)).collect()
}

/// Free units as a step function of time from an origin (`now`) to infinity.
///
/// `steps[i] = (t_i, free_i)`: from `t_i` until `t_{i+1}` (or forever for the last step),
/// `free_i` units are free. The first step starts at the origin.
#[derive(Debug, Clone)]
pub struct StepProfile {
    steps: Vec<(SimTime, i64)>,
}

impl StepProfile {
    /// `free` units from `origin` on.
    pub fn new(origin: SimTime, free: i64) -> Self {
        StepProfile { steps: vec![(origin, free)] }
    }

    /// The profile of running jobs: free units now, plus each running job's units from its
    /// expected end on. `end_of` gives a running job's expected end, already clamped by the
    /// caller (see [`overrun_clamp`]); an end at `now` counts from now.
    pub fn of_running(view: &SchedView<'_>, end_of: impl Fn(&sim_core::policy::RunningJob) -> SimTime) -> Self {
        Self::from_deltas(view.now(), view.free_units() as i64, running_releases(view, end_of))
    }

    /// `free` units from `origin` on, changed by each `(time, delta)` (times >= origin).
    pub fn from_deltas(origin: SimTime, free: i64, mut deltas: Vec<(SimTime, i64)>) -> Self {
        deltas.sort_unstable_by_key(|d| d.0);
        let mut steps = Vec::with_capacity(deltas.len() + 1);
        let mut v = free;
        steps.push((origin, v));
        for (t, d) in deltas {
            debug_assert!(t >= origin);
            v += d;
            match steps.last_mut() {
                Some(last) if last.0 == t => last.1 = v,
                _ => steps.push((t, v)),
            }
        }
        // Drop steps that do not change the value.
        steps.dedup_by(|b, a| a.1 == b.1);
        StepProfile { steps }
    }

    /// The steps.
    pub fn steps(&self) -> &[(SimTime, i64)] {
        &self.steps
    }

    /// Index of the step in force at `t` (t >= origin), inserting a breakpoint at `t`.
    fn split_at(&mut self, t: SimTime) -> usize {
        let i = self.steps.partition_point(|s| s.0 <= t);
        debug_assert!(i > 0, "time before the profile's origin");
        if self.steps[i - 1].0 == t {
            i - 1
        } else {
            let v = self.steps[i - 1].1;
            self.steps.insert(i, (t, v));
            i
        }
    }

    /// Adds `delta` free units over `[from, to)`.
    pub fn add(&mut self, from: SimTime, to: SimTime, delta: i64) {
        if from >= to || delta == 0 {
            return;
        }
        let a = self.split_at(from);
        let b = if to == SimTime::MAX { self.steps.len() } else { self.split_at(to) };
        for s in &mut self.steps[a..b] {
            s.1 += delta;
        }
        // Merge equal neighbours around the touched range to keep the profile short.
        let hi = (b + 1).min(self.steps.len());
        let lo = a.saturating_sub(1);
        let mut k = hi;
        while k > lo + 1 {
            k -= 1;
            if k < self.steps.len() && self.steps[k].1 == self.steps[k - 1].1 {
                self.steps.remove(k);
            }
        }
    }

    /// Takes `units` over `[from, to)`.
    pub fn reserve(&mut self, from: SimTime, to: SimTime, units: u64) {
        self.add(from, to, -(units as i64));
    }

    /// Gives back `units` over `[from, to)`.
    pub fn unreserve(&mut self, from: SimTime, to: SimTime, units: u64) {
        self.add(from, to, units as i64);
    }

    /// The earliest start `t >= origin` such that at least `units` are free during all of
    /// `[t, t + len)`. Candidates are the origin and the profile's breakpoints; the first
    /// feasible one is the earliest feasible time. `None` if never.
    pub fn earliest_fit(&self, units: u64, len: sim_core::SimDuration) -> Option<SimTime> {
        let need = units as i64;
        let n = self.steps.len();
        let mut cand = 0;
        'outer: while cand < n {
            if self.steps[cand].1 < need {
                cand += 1;
                continue;
            }
            let t = self.steps[cand].0;
            let end = t.saturating_add(len);
            let mut k = cand + 1;
            while k < n && self.steps[k].0 < end {
                if self.steps[k].1 < need {
                    cand = k + 1;
                    continue 'outer;
                }
                k += 1;
            }
            return Some(t);
        }
        None
    }

    /// Whether no step has fewer than zero free units (no reservation is over-booked).
    pub fn feasible(&self) -> bool {
        self.steps.iter().all(|s| s.1 >= 0)
    }

    /// Whether at least `units` are free during all of `[t, t + len)`.
    pub fn fits(&self, t: SimTime, units: u64, len: sim_core::SimDuration) -> bool {
        let need = units as i64;
        let i = self.steps.partition_point(|s| s.0 <= t).max(1) - 1;
        let end = t.saturating_add(len);
        self.steps[i..].iter().take_while(|s| s.0 < end).all(|s| s.1 >= need)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::SimDuration;

    #[test]
    fn reserve_and_fit() {
        let t = SimTime::from_secs;
        let d = SimDuration::from_secs;
        let mut p = StepProfile::new(t(0), 2);
        p.add(t(10), SimTime::MAX, 3); // a 3-unit job ends at 10
        assert_eq!(p.earliest_fit(2, d(100)), Some(t(0)));
        assert_eq!(p.earliest_fit(4, d(5)), Some(t(10)));
        p.reserve(t(10), t(20), 4);
        assert_eq!(p.steps(), &[(t(0), 2), (t(10), 1), (t(20), 5)]);
        assert_eq!(p.earliest_fit(2, d(11)), Some(t(20)));
        assert_eq!(p.earliest_fit(1, d(100)), Some(t(0)));
        assert_eq!(p.earliest_fit(2, d(10)), Some(t(0)));
        assert_eq!(p.earliest_fit(6, d(1)), None);
        p.unreserve(t(10), t(20), 4);
        assert_eq!(p.steps(), &[(t(0), 2), (t(10), 5)]);
        assert!(p.fits(t(10), 5, d(1000)));
        assert!(!p.fits(t(5), 5, d(10)));
    }
}
