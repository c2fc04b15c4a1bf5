//! Where a carried availability profile gained free units, and what each waiting job
//! knew when it last looked for an earlier start: conservative backfilling revisits every
//! waiting job at every release, and a job that could not move when it last looked can
//! only move into room made since.

use sim_core::SimTime;

/// The intervals over which the profile gained free units, in the order they were
/// gained: their ends, and a running sum of the units gained.
#[derive(Debug, Clone)]
pub struct RaiseLog {
    /// Sequence number of `raises[0]`.
    base: u64,
    /// Units gained before `raises[0]`.
    gained_before: i64,
    /// `(end, units gained up to and including this raise)`.
    raises: Vec<(SimTime, i64)>,
    /// The raises that end later than every raise after them, as `(index, end)`: ends
    /// strictly falling, so the latest end from any raise on is one binary search away.
    latest: Vec<(usize, SimTime)>,
    /// The last answer of [`RaiseLog::since`]'s search, `(from index, latest end)`, kept up
    /// to date by later raises: the jobs revisited in one pass mostly looked together.
    last: Option<(usize, SimTime)>,
}

/// What a job knew when it last looked: the sequence number of the next raise then
/// (0: never looked), and how many units it lacked just before its reservation (0 when
/// not known).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    seq: u64,
    lacking: i64,
}

impl Seen {
    /// How many units it lacked just before its reservation when it looked (0 when not
    /// known).
    pub fn lacking(&self) -> i64 {
        self.lacking
    }
}

/// Room made since a job last looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Since {
    /// The latest end of the intervals gained: `SimTime::ZERO` when none, `SimTime::MAX`
    /// when not known.
    pub latest: SimTime,
    /// How many units the job still lacks at least just before its reservation (0 when
    /// not known).
    pub lacking: i64,
}

impl Since {
    /// Nothing is known.
    pub const UNKNOWN: Since = Since { latest: SimTime::MAX, lacking: 0 };
}

/// Raises kept before everything is forgotten (each job then looks in full once).
const KEPT: usize = 4096;

impl Default for RaiseLog {
    fn default() -> Self {
        RaiseLog { base: 1, gained_before: 0, raises: Vec::new(), latest: Vec::new(), last: None }
    }
}

impl RaiseLog {
    /// The profile gained `units` free units over an interval ending at `end`.
    pub fn raised(&mut self, end: SimTime, units: i64) {
        if self.raises.len() >= KEPT {
            self.forget();
        }
        let gained = self.gained() + units;
        while self.latest.last().is_some_and(|l| l.1 <= end) {
            self.latest.pop();
        }
        self.latest.push((self.raises.len(), end));
        if let Some(l) = &mut self.last {
            l.1 = l.1.max(end);
        }
        self.raises.push((end, gained));
    }

    fn gained(&self) -> i64 {
        self.raises.last().map_or(self.gained_before, |r| r.1)
    }

    /// The profile changed in ways not told: every job must look in full again.
    pub fn forget(&mut self) {
        self.base += self.raises.len() as u64 + 1;
        self.gained_before = self.gained();
        self.raises.clear();
        self.latest.clear();
        self.last = None;
    }

    /// A job looks at the profile as it is now, and lacks at least `lacking` units just
    /// before its reservation (0 if not known).
    pub fn mark(&self, lacking: i64) -> Seen {
        Seen { seq: self.base + self.raises.len() as u64, lacking: lacking.max(0) }
    }

    /// The room made since a job looked and saw `seen`.
    pub fn since(&mut self, seen: Seen) -> Since {
        if seen.seq < self.base {
            return Since::UNKNOWN;
        }
        let k = (seen.seq - self.base) as usize;
        let before = if k == 0 { self.gained_before } else { self.raises[k - 1].1 };
        let latest = match self.last {
            Some((at, latest)) if at == k => latest,
            _ => {
                let latest = self.latest.get(self.latest.partition_point(|l| l.0 < k)).map_or(SimTime::ZERO, |l| l.1);
                self.last = Some((k, latest));
                latest
            }
        };
        Since { latest, lacking: (seen.lacking - (self.gained() - before)).max(0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_made_since_a_look() {
        let mut log = RaiseLog::default();
        assert_eq!(log.since(Seen::default()), Since::UNKNOWN, "never looked");
        let a = log.mark(10);
        assert_eq!(log.since(a), Since { latest: SimTime::ZERO, lacking: 10 });
        log.raised(SimTime(50), 4);
        let b = log.mark(3);
        log.raised(SimTime(20), 2);
        assert_eq!(log.since(a), Since { latest: SimTime(50), lacking: 4 });
        assert_eq!(log.since(b), Since { latest: SimTime(20), lacking: 1 });
        log.raised(SimTime(30), 5);
        assert_eq!(log.since(b), Since { latest: SimTime(30), lacking: 0 });
        log.forget();
        assert_eq!(log.since(a), Since::UNKNOWN);
        let a = log.mark(1);
        assert_eq!(log.since(a), Since { latest: SimTime::ZERO, lacking: 1 });
    }

    proptest::proptest! {
        #[test]
        fn latest_end_since_any_look_is_the_max_after_it(
            ends in proptest::collection::vec(0u64..50, 0..60),
            looks in proptest::collection::vec(0usize..60, 1..8),
        ) {
            let mut log = RaiseLog::default();
            let mut seen = Vec::new();
            for (i, &e) in ends.iter().enumerate() {
                for &l in looks.iter().filter(|&&l| l == i) {
                    seen.push((l, log.mark(1)));
                }
                log.raised(SimTime(e), 1);
                // Asked between raises too, as a revisit pass does.
                for &(l, s) in &seen {
                    let want = ends[l..=i].iter().copied().max().map_or(SimTime::ZERO, SimTime);
                    proptest::prop_assert_eq!(log.since(s).latest, want);
                }
            }
        }
    }
}
