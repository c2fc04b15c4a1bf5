//! Sets of schedulable units (processors/cores), kept as ordered ranges.

use std::collections::BTreeMap;

/// A set of units as sorted, disjoint, non-adjacent `(first, len)` ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitSet {
    ranges: Vec<(u32, u32)>,
}

impl UnitSet {
    /// The empty set.
    pub fn new() -> Self {
        UnitSet { ranges: Vec::new() }
    }

    /// `first..first+len`.
    pub fn range(first: u32, len: u32) -> Self {
        let mut s = UnitSet::new();
        if len > 0 {
            s.ranges.push((first, len));
        }
        s
    }

    /// From unit numbers in increasing order.
    pub fn from_sorted(units: impl IntoIterator<Item = u32>) -> Self {
        let mut s = UnitSet::new();
        for u in units {
            s.push_unit(u);
        }
        s
    }

    /// Appends a unit larger than every unit already in the set.
    pub fn push_unit(&mut self, u: u32) {
        if let Some(last) = self.ranges.last_mut() {
            debug_assert!(u >= last.0 + last.1, "units must be pushed in increasing order");
            if last.0 + last.1 == u {
                last.1 += 1;
                return;
            }
        }
        self.ranges.push((u, 1));
    }

    /// Appends a range above every unit already in the set.
    pub fn push_range(&mut self, first: u32, len: u32) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.ranges.last_mut()
            && last.0 + last.1 == first
        {
            last.1 += len;
            return;
        }
        self.ranges.push((first, len));
    }

    /// Number of units.
    pub fn len(&self) -> u64 {
        self.ranges.iter().map(|r| r.1 as u64).sum()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The ranges.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// Every unit, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|&(a, n)| a..a + n)
    }

    /// Whether `u` is in the set.
    pub fn contains(&self, u: u32) -> bool {
        let i = self.ranges.partition_point(|r| r.0 + r.1 <= u);
        self.ranges.get(i).is_some_and(|r| r.0 <= u)
    }

    /// Compact text, `0-3 8 10-11`: Batsim's interval-set syntax (the `intervalset`
    /// library's `to_string_hyphen(" ", "-")`, used for `allocated_resources` in Batsim's
    /// `_jobs.csv`): ranges separated by spaces, so the text is one CSV field unquoted.
    pub fn to_interval_string(&self) -> String {
        let mut s = String::new();
        for (i, &(a, n)) in self.ranges.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            if n == 1 {
                s.push_str(&a.to_string());
            } else {
                s.push_str(&format!("{}-{}", a, a + n - 1));
            }
        }
        s
    }
}

/// The free units of a machine, for fast lowest-first allocation and release.
///
/// A pool made by [`FreePool::counted`] tracks only how many units are free, not which:
/// the engine uses it when nothing needs unit identities (count-based policies, no node
/// events, no per-job allocation output), since a 93,312-processor machine's free set
/// fragments into thousands of ranges.
#[derive(Clone, Debug, Default)]
pub struct FreePool {
    ranges: BTreeMap<u32, u32>,
    count: u64,
    counted: bool,
}

impl FreePool {
    /// Units `0..n` all free.
    pub fn all_free(n: u32) -> Self {
        let mut p = FreePool::default();
        if n > 0 {
            p.ranges.insert(0, n);
            p.count = n as u64;
        }
        p
    }

    /// `n` free units, counted only.
    pub fn counted(n: u32) -> Self {
        FreePool { ranges: BTreeMap::new(), count: n as u64, counted: true }
    }

    /// Whether this pool only counts.
    pub fn is_counted(&self) -> bool {
        self.counted
    }

    /// Returns `n` units to a counted pool.
    pub fn give_count(&mut self, n: u64) {
        debug_assert!(self.counted, "give_count on a tracking pool");
        self.count += n;
    }

    /// Free units.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether `u` is free.
    pub fn contains(&self, u: u32) -> bool {
        self.ranges.range(..=u).next_back().is_some_and(|(&a, &n)| u < a + n)
    }

    /// Whether every unit of `set` is free.
    pub fn contains_all(&self, set: &UnitSet) -> bool {
        set.ranges().iter().all(|&(a, n)| self.ranges.range(..=a).next_back().is_some_and(|(&b, &m)| a + n <= b + m))
    }

    /// Free ranges in increasing order.
    pub fn ranges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.ranges.iter().map(|(&a, &n)| (a, n))
    }

    /// Takes the `k` lowest-numbered free units. `None` (and nothing taken) when fewer
    /// are free.
    pub fn take_lowest(&mut self, k: u64) -> Option<UnitSet> {
        if k > self.count {
            return None;
        }
        let mut out = UnitSet::new();
        if self.counted {
            self.count -= k;
            return Some(out);
        }
        let mut left = k;
        while left > 0 {
            let (a, n) = self.ranges.pop_first().expect("count says units are free");
            if (n as u64) <= left {
                out.push_range(a, n);
                left -= n as u64;
            } else {
                let used = left as u32;
                out.push_range(a, used);
                self.ranges.insert(a + used, n - used);
                left = 0;
            }
        }
        self.count -= k;
        Some(out)
    }

    /// Takes exactly `set`. Returns false (and takes nothing) unless all of it is free.
    pub fn take(&mut self, set: &UnitSet) -> bool {
        if self.counted || !self.contains_all(set) {
            return false;
        }
        for &(a, n) in set.ranges() {
            let (&b, &m) = self.ranges.range(..=a).next_back().expect("checked");
            self.ranges.remove(&b);
            if a > b {
                self.ranges.insert(b, a - b);
            }
            if a + n < b + m {
                self.ranges.insert(a + n, b + m - (a + n));
            }
        }
        self.count -= set.len();
        true
    }

    /// Returns units to the pool. They must not be free already.
    pub fn give(&mut self, first: u32, len: u32) {
        if len == 0 {
            return;
        }
        debug_assert!(!self.contains(first) && !self.contains(first + len - 1), "double free of units");
        let mut a = first;
        let mut n = len;
        if let Some((&b, &m)) = self.ranges.range(..a).next_back()
            && b + m == a
        {
            self.ranges.remove(&b);
            a = b;
            n += m;
        }
        if let Some(&m) = self.ranges.get(&(a + n)) {
            self.ranges.remove(&(a + n));
            n += m;
        }
        self.ranges.insert(a, n);
        self.count += len as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_and_give_round_trip() {
        let mut p = FreePool::all_free(10);
        let a = p.take_lowest(3).unwrap();
        assert_eq!(a.ranges(), &[(0, 3)]);
        let b = p.take_lowest(4).unwrap();
        assert_eq!(b.ranges(), &[(3, 4)]);
        for &(f, n) in a.ranges() {
            p.give(f, n);
        }
        assert_eq!(p.count(), 6);
        let c = p.take_lowest(5).unwrap();
        assert_eq!(c.ranges(), &[(0, 3), (7, 2)]);
        assert!(p.take_lowest(2).is_none());
        assert!(p.take(&UnitSet::range(9, 1)));
        assert_eq!(p.count(), 0);
        p.give(5, 1);
        p.give(3, 2);
        p.give(6, 1);
        assert_eq!(p.ranges().collect::<Vec<_>>(), vec![(3, 4)]);
        assert!(!p.take(&UnitSet::range(2, 2)));
        assert!(p.take(&UnitSet::from_sorted([4, 6])));
        assert_eq!(p.ranges().collect::<Vec<_>>(), vec![(3, 1), (5, 1)]);
        assert_eq!(UnitSet::from_sorted([0, 1, 2, 5, 7, 8]).to_interval_string(), "0-2 5 7-8");
    }
}
