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

/// The running jobs' releases `(expected end, +units)` in time order, from the engine's
/// index by requested end (for plans with requested times): an end already past (an
/// overrun) counts from one microsecond after `now`, as [`overrun_clamp`] says.
pub fn requested_releases(view: &SchedView<'_>) -> Vec<(SimTime, i64)> {
    let now = view.now();
    let mut out = Vec::with_capacity(view.running_count() + 1);
    let mut past = 0i64;
    let mut past_out = false;
    for (end, units) in view.requested_ends() {
        if end < now {
            past += units as i64;
            continue;
        }
        if !past_out && end > now {
            if past > 0 {
                out.push((now.next_tick(), past));
            }
            past_out = true;
        }
        out.push((end, units as i64));
    }
    if !past_out && past > 0 {
        out.push((now.next_tick(), past));
    }
    out
}

/// Two lists of `(time, delta)` in time order merged into one.
pub fn merge_sorted(a: &[(SimTime, i64)], b: impl Iterator<Item = (SimTime, i64)>) -> Vec<(SimTime, i64)> {
    let mut out = Vec::with_capacity(a.len() + b.size_hint().0);
    let mut i = 0;
    for x in b {
        while i < a.len() && a[i].0 <= x.0 {
            out.push(a[i]);
            i += 1;
        }
        out.push(x);
    }
    out.extend_from_slice(&a[i..]);
    out
}

/// Searches for a start that found nothing in a profile that has not changed since:
/// `(units, length, latest start)`. With at least as many units, at least as long, by
/// no later a start, nothing fits either (each window holds the one that failed), so
/// the waiting jobs revisited after one another, most of which cannot move, are mostly
/// answered without a scan. Cleared whenever the profile changes.
#[derive(Debug, Clone, Default)]
pub struct NoGaps {
    failed: Vec<(i64, sim_core::SimDuration, SimTime)>,
}

/// Failed searches kept (the oldest go first).
const NO_GAPS_KEPT: usize = 16;

impl NoGaps {
    /// The profile changed: nothing known holds.
    pub fn clear(&mut self) {
        self.failed.clear();
    }

    fn rule_out(&self, need: i64, len: sim_core::SimDuration, last: SimTime) -> bool {
        self.failed.iter().any(|&(n, l, t)| n <= need && l <= len && t >= last)
    }

    fn note(&mut self, need: i64, len: sim_core::SimDuration, last: SimTime) {
        if self.failed.len() == NO_GAPS_KEPT {
            self.failed.remove(0);
        }
        self.failed.push((need, len, last));
    }
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
        Self::from_sorted_deltas(origin, free, deltas.len(), deltas)
    }

    /// As [`StepProfile::from_deltas`], from deltas already in time order (`hint`: about
    /// how many).
    pub fn from_sorted_deltas(
        origin: SimTime,
        free: i64,
        hint: usize,
        deltas: impl IntoIterator<Item = (SimTime, i64)>,
    ) -> Self {
        let mut steps = Vec::with_capacity(hint + 1);
        let mut v = free;
        steps.push((origin, v));
        for (t, d) in deltas {
            debug_assert!(t >= origin && steps.last().is_none_or(|l: &(SimTime, i64)| l.0 <= t));
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

    /// The start of the first step.
    pub fn origin(&self) -> SimTime {
        self.steps[0].0
    }

    /// Moves the origin on to `now` (>= the origin): what was planned before it is past.
    pub fn advance(&mut self, now: SimTime) {
        let i = self.steps.partition_point(|s| s.0 <= now);
        debug_assert!(i > 0, "advancing to before the origin");
        self.steps.drain(..i - 1);
        self.steps[0].0 = now;
    }

    /// Adds `delta` free units over `[from, to)`.
    ///
    /// Only the two ends can make or merge a breakpoint (the steps between keep their
    /// differences), so the steps after `to` move at most once: conservative backfilling
    /// reserves and lifts at every release, and the profile is long.
    pub fn add(&mut self, from: SimTime, to: SimTime, delta: i64) {
        if from >= to || delta == 0 {
            return;
        }
        let s = &mut self.steps;
        // Steps a - 1 and b - 1 are in force at `from` and at `to`.
        let a = s.partition_point(|x| x.0 <= from);
        debug_assert!(a > 0, "time before the profile's origin");
        let b = if to == SimTime::MAX { s.len() } else { a + s[a..].partition_point(|x| x.0 <= to) };
        let from_new = s[a - 1].0 != from;
        let to_new = to != SimTime::MAX && s[b - 1].0 != to;
        // Where `to`'s step is, if it already is a breakpoint: it keeps its value.
        let to_old = (to != SimTime::MAX && !to_new).then_some(b - 1);
        let (first, past) = (if from_new { a } else { a - 1 }, to_old.unwrap_or(b));
        let at_to = s[b - 1].1;
        let before_from = s[a - 1].1;
        for x in &mut s[first..past] {
            x.1 += delta;
        }
        // A breakpoint at `from` merges into the step before when they are now equal;
        // one at `to` merges into the step before it (inside the range, or new at `from`).
        let drop_from = !from_new && a >= 2 && s[a - 2].1 == s[a - 1].1;
        let drop_to = to_old.is_some_and(|k| {
            let prev = if k > first { s[k - 1].1 } else { before_from + delta };
            prev == s[k].1
        });
        let ins_from = from_new.then_some((from, before_from + delta));
        let ins_to = to_new.then_some((to, at_to));
        match (ins_from, ins_to, drop_from, drop_to) {
            (None, None, false, false) => {}
            (Some(f), None, _, false) => s.insert(a, f),
            (None, Some(t), false, _) => s.insert(b, t),
            (None, None, true, false) => {
                s.remove(a - 1);
            }
            (None, None, false, true) => {
                s.remove(b - 1);
            }
            (Some(f), Some(t), _, _) => {
                // Both ends new: the tail moves by two, the range by one.
                let n = s.len();
                s.extend_from_slice(&[t, t]);
                s.copy_within(b..n, b + 2);
                s[b + 1] = t;
                s.copy_within(a..b, a + 1);
                s[a] = f;
            }
            (Some(f), None, _, true) => {
                // New at `from`, merged at `to`: the range moves right over `to`'s step.
                let k = b - 1;
                s.copy_within(a..k, a + 1);
                s[a] = f;
            }
            (None, Some(t), true, _) => {
                // Merged at `from`, new at `to`: the range moves left over `from`'s step.
                s.copy_within(a..b, a - 1);
                s[b - 1] = t;
            }
            (None, None, true, true) => {
                // Both merged: the range moves left by one, the tail by two.
                let (k, n) = (b - 1, s.len());
                s.copy_within(a..k, a - 1);
                s.copy_within(b..n, k - 1);
                s.truncate(n - 2);
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
        self.first_fit(units as i64, len, SimTime::MAX)
    }

    /// [`StepProfile::earliest_fit`] among the candidates that start by `last` (a bound
    /// checked as they are scanned, not searched for: most scans stop early).
    fn first_fit(&self, need: i64, len: sim_core::SimDuration, last: SimTime) -> Option<SimTime> {
        let n = self.steps.len();
        let mut cand = 0;
        'outer: while cand < n && self.steps[cand].0 <= last {
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

    /// Where a reservation of `units` over `[from, from + len)` would move if it were
    /// lifted: [`StepProfile::earlier_fit`] for a reservation as long as the job, with two
    /// shortcuts that decide most cases. Without the reservation the profile is unchanged
    /// before `from`, so a start `t < from` fits only if at least `units` are free over
    /// `[t, min(from, t + len))`. If fewer are free just before `from`, every window that
    /// reaches `from` fails: the job moves only into a gap of at least `len` that ends by
    /// `from`, and not at all when `from` is less than `len` from the origin.
    pub fn earlier_start(&self, units: u64, len: sim_core::SimDuration, from: SimTime) -> Option<SimTime> {
        self.look_earlier(units, len, from, &mut NoGaps::default()).0
    }

    /// [`StepProfile::earlier_start`], and how many units are lacking just before `from`
    /// (0 when the reservation moves or starts at the origin).
    /// `no_gaps` holds searches that found nothing in this profile as it is now.
    pub fn look_earlier(
        &self,
        units: u64,
        len: sim_core::SimDuration,
        from: SimTime,
        no_gaps: &mut NoGaps,
    ) -> (Option<SimTime>, i64) {
        let need = units as i64;
        let before = self.steps.partition_point(|s| s.0 < from);
        if before == 0 || from <= self.origin() {
            return (None, 0);
        }
        let lacking = need - self.steps[before - 1].1;
        if lacking <= 0 {
            return (self.earlier_fit(units, len, from, from.saturating_add(len)), 0);
        }
        if from.saturating_since(self.origin()) < len {
            return (None, lacking);
        }
        // Starts `t` with `t + len <= from` (and `t < from`, for a zero length).
        // (`last` < `from`: only steps before `from` are candidates.)
        let last = SimTime(from.0 - len.0).min(SimTime(from.0 - 1));
        (self.gap_by(need, len, last, no_gaps), lacking)
    }

    /// [`StepProfile::earlier_start`] for a reservation known to have fewer than `units`
    /// free just before it, in a profile that gained free units since that was last
    /// found only before `latest`: it can move only into a gap of at least `len` that
    /// ends by `from` and starts before `latest`.
    pub fn earlier_gap(
        &self,
        units: u64,
        len: sim_core::SimDuration,
        from: SimTime,
        latest: SimTime,
        no_gaps: &mut NoGaps,
    ) -> Option<SimTime> {
        let origin = self.origin();
        if from <= origin || from.saturating_since(origin) < len || latest <= origin {
            return None;
        }
        let last = SimTime(from.0 - len.0).min(SimTime(latest.0 - 1));
        self.gap_by(units as i64, len, last, no_gaps)
    }

    /// [`StepProfile::first_fit`] up to `last`, answered from `no_gaps` when a search that
    /// asked no more (fewer units, no longer, up to a later start) found nothing.
    fn gap_by(&self, need: i64, len: sim_core::SimDuration, last: SimTime, no_gaps: &mut NoGaps) -> Option<SimTime> {
        if no_gaps.rule_out(need, len, last) {
            return None;
        }
        let found = self.first_fit(need, len, last);
        if found.is_none() {
            no_gaps.note(need, len, last);
        }
        found
    }

    /// Where a reservation `[from, to)` of `units` would move if it were lifted: the
    /// earliest start before `from` at which `units` fit for `len` in the profile without
    /// it, or `None` when none does (lifted, it would be put back at `from`). The answer
    /// is [`StepProfile::earliest_fit`]'s after `unreserve(from, to, units)`, found
    /// without changing the profile: conservative backfilling revisits every waiting job
    /// at every release, and most cannot move.
    pub fn earlier_fit(&self, units: u64, len: sim_core::SimDuration, from: SimTime, to: SimTime) -> Option<SimTime> {
        let need = units as i64;
        let credit = |t: SimTime| if from <= t && t < to { units as i64 } else { 0 };
        let at = |t: SimTime| self.steps[self.steps.partition_point(|s| s.0 <= t).max(1) - 1].1;
        let is_break = |t: SimTime| self.steps.binary_search_by_key(&t, |s| s.0).is_ok();
        let n = self.steps.len();
        // Candidates are the steps before `from` (they see no credit themselves).
        let before = self.steps.partition_point(|s| s.0 < from);
        let mut cand = 0;
        'outer: while cand < before {
            cand += self.steps[cand..before].iter().position(|s| s.1 >= need)?;
            let t = self.steps[cand].0;
            let end = t.saturating_add(len);
            let mut k = cand + 1;
            while k < n && self.steps[k].0 < end {
                if self.steps[k].1 + credit(self.steps[k].0) < need {
                    cand = k + 1;
                    continue 'outer;
                }
                k += 1;
            }
            // The lifted reservation's own ends are changes of the function too.
            let short_at = |p: SimTime, v: i64| t < p && p < end && !is_break(p) && v < need;
            if short_at(from, at(from) + units as i64) || short_at(to, at(to)) {
                // Past the short point: the next candidate is the first step after it.
                let p = if short_at(from, at(from) + units as i64) { from } else { to };
                cand = self.steps.partition_point(|s| s.0 <= p);
                continue;
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

    /// Free units at `t` of `base` from `origin` changed by each `(from, to, delta)`.
    fn brute(origin: SimTime, base: i64, ops: &[(SimTime, SimTime, i64)], t: SimTime) -> i64 {
        assert!(t >= origin);
        base + ops.iter().filter(|(a, b, _)| *a <= t && t < *b).map(|o| o.2).sum::<i64>()
    }

    /// The reference answer: candidate starts are every time the function may change, in
    /// order; a start fits when the function is high enough at it and at every change
    /// point inside the window.
    fn brute_fit(origin: SimTime, base: i64, ops: &[(SimTime, SimTime, i64)], need: i64, len: u64) -> Option<SimTime> {
        let mut pts: Vec<SimTime> = vec![origin];
        pts.extend(ops.iter().flat_map(|o| [o.0, o.1]).filter(|&t| t >= origin && t != SimTime::MAX));
        pts.sort();
        pts.dedup();
        let f = |t| brute(origin, base, ops, t);
        pts.iter().copied().find(|&t| {
            let end = t.saturating_add(SimDuration(len));
            f(t) >= need && pts.iter().filter(|&&p| p > t && p < end).all(|&p| f(p) >= need)
        })
    }

    proptest::proptest! {
        /// The profile answers as the function it represents: values, canonical
        /// breakpoints, earliest fits and feasibility, over many reserves and releases
        /// .
        #[test]
        fn profile_matches_its_function(
            base in 0i64..20,
            ops in proptest::collection::vec((0u64..400, 1u64..100, -6i64..7), 0..300),
            queries in proptest::collection::vec((0i64..25, 1u64..200), 1..20),
        ) {
            let origin = SimTime(10);
            let mut p = StepProfile::new(origin, base);
            let mut applied = Vec::new();
            for (from, dur, delta) in ops {
                // A length of 99 stands for a change with no end (a running job's release).
                let b = if dur == 99 { SimTime::MAX } else { SimTime(10 + from + dur) };
                let a = SimTime(10 + from);
                p.add(a, b, delta);
                applied.push((a, b, delta));
            }
            let steps = p.steps().to_vec();
            proptest::prop_assert_eq!(steps[0].0, origin);
            for w in steps.windows(2) {
                proptest::prop_assert!(w[0].0 < w[1].0 && w[0].1 != w[1].1, "not canonical: {:?}", w);
            }
            for &(t, v) in &steps {
                proptest::prop_assert_eq!(v, brute(origin, base, &applied, t));
            }
            for (need, len) in queries {
                let want = brute_fit(origin, base, &applied, need, len);
                proptest::prop_assert_eq!(p.earliest_fit(need.max(0) as u64, SimDuration(len)), if need < 0 { Some(origin) } else { want });
            }
            proptest::prop_assert_eq!(p.feasible(), steps.iter().all(|s| s.1 >= 0));
        }

        /// Where a lifted reservation would go, found without lifting it, is where
        /// lifting it and searching again puts it.
        #[test]
        fn earlier_fit_is_lifting_and_searching(
            base in 0i64..20,
            ops in proptest::collection::vec((0u64..300, 1u64..80, -4i64..5), 0..60),
            (from, dur, units, len) in (0u64..300, 1u64..120, 1u64..8, 1u64..150),
        ) {
            let origin = SimTime(10);
            let mut p = StepProfile::new(origin, base + 8);
            for (a, d, delta) in ops {
                p.add(SimTime(10 + a), SimTime(10 + a + d), delta);
            }
            let (f, t) = (SimTime(10 + from), SimTime(10 + from + dur));
            p.reserve(f, t, units);
            let quick = p.earlier_fit(units, SimDuration(len), f, t);
            let mut lifted = p.clone();
            lifted.unreserve(f, t, units);
            let slow = lifted.earliest_fit(units, SimDuration(len)).filter(|&x| x < f);
            proptest::prop_assert_eq!(quick, slow);
            // The same for a reservation as long as the job (conservative's case).
            let mut same = lifted.clone();
            same.reserve(f, f + SimDuration(len), units);
            let mut same_lifted = same.clone();
            same_lifted.unreserve(f, f + SimDuration(len), units);
            let want = same_lifted.earliest_fit(units, SimDuration(len)).filter(|&x| x < f);
            proptest::prop_assert_eq!(same.earlier_start(units, SimDuration(len), f), want);
        }

        /// Failed searches remembered in an unchanged profile answer later ones as a
        /// fresh search would.
        #[test]
        fn remembered_failures_answer_as_a_search_would(
            base in 0i64..8,
            ops in proptest::collection::vec((0u64..300, 1u64..80, -4i64..5), 0..60),
            queries in proptest::collection::vec((0i64..12, 1u64..120, 0u64..400), 1..40),
        ) {
            let mut p = StepProfile::new(SimTime(10), base);
            for (from, dur, delta) in ops {
                p.add(SimTime(10 + from), SimTime(10 + from + dur), delta);
            }
            let mut no_gaps = NoGaps::default();
            for (need, len, last) in queries {
                let (len, last) = (SimDuration(len), SimTime(10 + last));
                proptest::prop_assert_eq!(p.gap_by(need, len, last, &mut no_gaps), p.first_fit(need, len, last));
            }
        }
    }
}
