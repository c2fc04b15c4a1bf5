//! Per-job tables indexed by [`crate::job::JobId`] that hold only a window of the ids.
//!
//! A replay of a whole trace read at once keeps every job from id 0 ([`JobTable::base`]
//! stays 0). A streamed replay ([`crate::JobSource`]) adds each job as it is read and
//! drops the oldest once its record is written, so a table holds the ids from the oldest
//! job still in the system to the newest read: memory follows what is in the system,
//! not the trace. A job still in the system when the window moves past it (a long run
//! while thousands of later jobs come and go) is kept aside ([`JobTable::keep_first`]),
//! so the window follows the jobs that come and go, not the longest run.

use std::collections::BTreeMap;

/// A table of `T` for the job ids `base..base + len`, and some before kept aside.
#[derive(Clone, Debug)]
pub struct JobTable<T> {
    /// The id of `items[0]`.
    base: usize,
    /// `items`' leading entries out of the window (ids `base..first`): dropped, or kept
    /// aside ([`JobTable::kept`]); freed in bulk (amortised O(1) per job).
    dead: usize,
    /// `base + dead`: the window's first id.
    first: usize,
    items: Vec<T>,
    /// The ids of `base..first` kept aside, ascending: their entries stay in `items`
    /// (reached as before) until the dead entries are freed, then move to `early`.
    kept: Vec<usize>,
    /// Entries of ids before `base` kept aside.
    early: BTreeMap<usize, T>,
}

impl<T> Default for JobTable<T> {
    fn default() -> Self {
        Self::from_vec(Vec::new())
    }
}

impl<T> JobTable<T> {
    /// A table of ids `0..items.len()`.
    pub fn from_vec(items: Vec<T>) -> Self {
        JobTable { base: 0, dead: 0, first: 0, items, kept: Vec::new(), early: BTreeMap::new() }
    }

    /// One past the newest id held: the number of ids seen so far.
    #[inline]
    pub fn end(&self) -> usize {
        self.base + self.items.len()
    }

    /// The oldest id of the window (older ones may be kept aside).
    #[inline]
    pub fn first(&self) -> usize {
        self.first
    }

    /// How many entries the window holds.
    pub fn window(&self) -> usize {
        self.items.len() - self.dead
    }

    /// Adds the entry of id [`JobTable::end`].
    #[inline]
    pub fn push(&mut self, t: T) {
        self.items.push(t);
    }

    /// Entry `i`, if held (an entry dropped but not yet freed may still be returned).
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        match self.items.get(i.wrapping_sub(self.base)) {
            Some(t) => Some(t),
            None if self.early.is_empty() => None,
            None => self.early.get(&i),
        }
    }

    /// Entry `i`, if held (as [`JobTable::get`]).
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        match self.items.get_mut(i.wrapping_sub(self.base)) {
            Some(t) => Some(t),
            None => self.early.get_mut(&i),
        }
    }

    /// Drops the window's oldest entry (the window then begins at the next id).
    pub fn drop_first(&mut self) {
        debug_assert!(self.dead < self.items.len(), "nothing to drop");
        self.dead += 1;
        self.first += 1;
        self.compact();
    }

    /// Keeps the window's oldest entry aside and moves the window on.
    pub fn keep_first(&mut self) {
        self.kept.push(self.first);
        self.drop_first();
    }

    /// Drops the entry of id `i` kept aside.
    pub fn drop_early(&mut self, i: usize) {
        if i < self.base {
            self.early.remove(&i);
        } else if let Ok(k) = self.kept.binary_search(&i) {
            self.kept.remove(k);
        }
    }

    /// Entry `i`, kept aside (out of the way of the window's accesses).
    #[cold]
    #[inline(never)]
    fn early_at(&self, i: usize) -> &T {
        &self.early[&i]
    }

    #[cold]
    #[inline(never)]
    fn early_at_mut(&mut self, i: usize) -> &mut T {
        self.early.get_mut(&i).expect("an id held")
    }

    /// Frees the dead entries in bulk once they are the larger part; those kept aside
    /// move to `early`.
    fn compact(&mut self) {
        if self.dead >= 1024 && self.dead * 2 >= self.items.len() {
            let mut kept = self.kept.drain(..).peekable();
            for (k, t) in self.items.drain(..self.dead).enumerate() {
                if kept.next_if_eq(&(self.base + k)).is_some() {
                    self.early.insert(self.base + k, t);
                }
            }
            self.base += self.dead;
            self.dead = 0;
        }
    }

    /// The ids kept aside, in order.
    pub fn early_ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.early.keys().copied().chain(self.kept.iter().copied())
    }

    /// The ids held with their entries, oldest first (those kept aside, then the
    /// window's).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        let first = self.first;
        let window = self.items[self.dead..].iter().enumerate().map(move |(k, t)| (first + k, t));
        let kept = self.kept.iter().map(|&i| (i, &self.items[i - self.base]));
        self.early.iter().map(|(&i, t)| (i, t)).chain(kept).chain(window)
    }

    /// A read-only view of the entries held.
    #[inline]
    pub fn view(&self) -> Ids<'_, T> {
        Ids { base: self.base, items: &self.items, early: Some(&self.early) }
    }

    /// Takes every entry out, leaving the table empty at the same ids.
    pub fn take(&mut self) -> Vec<T> {
        let end = self.end();
        let mut v = std::mem::take(&mut self.items);
        v.drain(..self.dead);
        // The ids taken stay counted: `end` is where it was.
        (self.base, self.dead, self.first) = (end, 0, end);
        self.kept.clear();
        v
    }
}

impl<T> std::ops::Index<usize> for JobTable<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        // One comparison for the entries in `items` (ids before them wrap past its length).
        match self.items.get(i.wrapping_sub(self.base)) {
            Some(t) => t,
            None => self.early_at(i),
        }
    }
}

impl<T> std::ops::IndexMut<usize> for JobTable<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let base = self.base;
        if i.wrapping_sub(base) < self.items.len() { &mut self.items[i - base] } else { self.early_at_mut(i) }
    }
}

/// A read-only view of a [`JobTable`].
#[derive(Debug)]
pub struct Ids<'a, T> {
    base: usize,
    items: &'a [T],
    /// The table's entries kept aside (`None`: a plain slice).
    early: Option<&'a BTreeMap<usize, T>>,
}

impl<T> Clone for Ids<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Ids<'_, T> {}

impl<'a, T> Ids<'a, T> {
    /// The entries of ids `0..items.len()`.
    pub fn all(items: &'a [T]) -> Self {
        Ids { base: 0, items, early: None }
    }
    /// Entry `i`, if held.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&'a T> {
        match self.items.get(i.wrapping_sub(self.base)) {
            Some(t) => Some(t),
            None => self.early.and_then(|m| m.get(&i)),
        }
    }
    /// Entry `i`, held (panics otherwise, as a slice index does).
    #[inline]
    pub fn at(&self, i: usize) -> &'a T {
        // One comparison for the window (ids before it wrap past its length).
        match self.items.get(i.wrapping_sub(self.base)) {
            Some(t) => t,
            None => self.early_at(i),
        }
    }

    #[cold]
    #[inline(never)]
    fn early_at(&self, i: usize) -> &'a T {
        &self.early.expect("an id held")[&i]
    }
}

impl<'a, T> std::ops::Index<usize> for Ids<'a, T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        self.at(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_keeps_its_ids_across_drops_and_compaction() {
        let mut t = JobTable::default();
        for i in 0..5000u32 {
            t.push(i);
        }
        for _ in 0..3000 {
            t.drop_first();
        }
        // Freed in bulk at 2,500 dropped: those are gone, the later ones not yet.
        assert_eq!((t.first(), t.end(), t.window()), (3000, 5000, 2000));
        assert_eq!(t[3000], 3000);
        assert_eq!(t.get(2499), None);
        assert_eq!(t.get(4999), Some(&4999));
        assert_eq!(t.view()[4000], 4000);
        assert_eq!(t.iter().next(), Some((3000, &3000)));
        t.push(5000);
        assert_eq!(t[5000], 5000);
        let rest = t.take();
        assert_eq!((rest.len(), t.end(), t.get(4000)), (2001, 5001, None));
    }

    #[test]
    fn entries_kept_aside_stay_reachable_through_compaction_until_dropped() {
        let mut t = JobTable::default();
        for i in 0..3000u32 {
            t.push(i);
        }
        // Every tenth id of the first 2,000 kept aside, the others dropped.
        for i in 0..2000 {
            if i % 10 == 0 { t.keep_first() } else { t.drop_first() }
        }
        assert_eq!(t.first(), 2000);
        let kept: Vec<usize> = t.early_ids().collect();
        assert_eq!(kept, (0..2000).step_by(10).collect::<Vec<_>>());
        assert!(kept.iter().all(|&i| t[i] == i as u32 && t.view()[i] == i as u32 && t.get(i) == Some(&(i as u32))));
        t[10] = 7;
        assert_eq!(t.view().at(10), &7);
        t.drop_early(10);
        t.drop_early(1990);
        assert_eq!(t.early_ids().count(), 198);
        assert_eq!(t.iter().map(|(i, _)| i).take(3).collect::<Vec<_>>(), [0, 20, 30]);
        assert_eq!(t.iter().count(), 198 + 1000);
    }
}
