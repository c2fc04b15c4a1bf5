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

/// A table of `T` for the job ids `base..base + len`.
#[derive(Clone, Debug)]
pub struct JobTable<T> {
    /// The id of `items[0]`.
    base: usize,
    /// Leading entries already dropped, freed in bulk (amortised O(1) per job).
    dead: usize,
    items: Vec<T>,
    /// Entries of ids before [`JobTable::first`] kept aside.
    early: BTreeMap<usize, T>,
}

impl<T> Default for JobTable<T> {
    fn default() -> Self {
        JobTable { base: 0, dead: 0, items: Vec::new(), early: BTreeMap::new() }
    }
}

impl<T> JobTable<T> {
    /// A table of ids `0..items.len()`.
    pub fn from_vec(items: Vec<T>) -> Self {
        JobTable { base: 0, dead: 0, items, early: BTreeMap::new() }
    }

    /// One past the newest id held: the number of ids seen so far.
    #[inline]
    pub fn end(&self) -> usize {
        self.base + self.items.len()
    }

    /// The oldest id of the window (older ones may be kept aside).
    #[inline]
    pub fn first(&self) -> usize {
        self.base + self.dead
    }

    /// How many entries the window holds.
    pub fn window(&self) -> usize {
        self.items.len() - self.dead
    }

    /// Whether nothing was ever added (a table the run does not use).
    pub fn unused(&self) -> bool {
        self.end() == 0
    }

    /// Adds the entry of id [`JobTable::end`].
    #[inline]
    pub fn push(&mut self, t: T) {
        self.items.push(t);
    }

    /// Entry `i`, if held.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        match i.checked_sub(self.first()) {
            Some(k) => self.items.get(self.dead + k),
            None => self.early.get(&i),
        }
    }

    /// Entry `i`, if held.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        match i.checked_sub(self.first()) {
            Some(k) => self.items.get_mut(self.dead + k),
            None => self.early.get_mut(&i),
        }
    }

    /// Drops the window's oldest entry (the window then begins at the next id).
    pub fn drop_first(&mut self) {
        debug_assert!(self.dead < self.items.len(), "nothing to drop");
        self.dead += 1;
        self.compact();
    }

    /// Keeps the window's oldest entry aside and moves the window on.
    pub fn keep_first(&mut self)
    where
        T: Clone,
    {
        let first = self.first();
        self.early.insert(first, self.items[self.dead].clone());
        self.drop_first();
    }

    /// Drops the entry of id `i` kept aside.
    pub fn drop_early(&mut self, i: usize) {
        self.early.remove(&i);
    }

    /// Frees the dropped entries in bulk once they are the larger part.
    fn compact(&mut self) {
        // Freed in bulk once the dropped are the larger part.
        if self.dead >= 1024 && self.dead * 2 >= self.items.len() {
            self.items.drain(..self.dead);
            self.base += self.dead;
            self.dead = 0;
        }
    }

    /// The ids held with their entries, oldest first (those kept aside, then the
    /// window's).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        let first = self.first();
        let window = self.items[self.dead..].iter().enumerate().map(move |(k, t)| (first + k, t));
        self.early.iter().map(|(&i, t)| (i, t)).chain(window)
    }

    /// The ids kept aside, in order.
    pub fn early_ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.early.keys().copied()
    }

    /// A read-only view of the entries held.
    #[inline]
    pub fn view(&self) -> Ids<'_, T> {
        Ids { first: self.first(), items: &self.items[self.dead..], early: Some(&self.early) }
    }

    /// Takes every entry out, leaving the table empty at the same ids.
    pub fn take(&mut self) -> Vec<T> {
        let end = self.end();
        let mut v = std::mem::take(&mut self.items);
        v.drain(..self.dead);
        // The ids taken stay counted: `end` is where it was.
        (self.base, self.dead) = (end, 0);
        v
    }
}

impl<T> std::ops::Index<usize> for JobTable<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        if i < self.base + self.dead { &self.early[&i] } else { &self.items[i - self.base] }
    }
}

impl<T> std::ops::IndexMut<usize> for JobTable<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        if i < self.base + self.dead {
            self.early.get_mut(&i).expect("an id held")
        } else {
            &mut self.items[i - self.base]
        }
    }
}

/// A read-only window of a [`JobTable`]: the entries of ids `first..first + len`.
#[derive(Debug)]
pub struct Ids<'a, T> {
    first: usize,
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
        Ids { first: 0, items, early: None }
    }
    /// Entry `i`, if held.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&'a T> {
        match i.checked_sub(self.first) {
            Some(k) => self.items.get(k),
            None => self.early.and_then(|m| m.get(&i)),
        }
    }
    /// Entry `i`, held (panics otherwise, as a slice index does).
    #[inline]
    pub fn at(&self, i: usize) -> &'a T {
        if i < self.first { &self.early.expect("an id held")[&i] } else { &self.items[i - self.first] }
    }
    /// One past the newest id held.
    pub fn end(&self) -> usize {
        self.first + self.items.len()
    }
    /// The ids held with their entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &'a T)> + 'a {
        let first = self.first;
        let window = self.items.iter().enumerate().map(move |(k, t)| (first + k, t));
        self.early.into_iter().flatten().map(|(&i, t)| (i, t)).chain(window)
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
        assert_eq!((t.first(), t.end()), (3000, 5000));
        assert_eq!(t[3000], 3000);
        assert_eq!(t.get(2999), None);
        assert_eq!(t.get(4999), Some(&4999));
        assert_eq!(t.view()[4000], 4000);
        assert_eq!(t.iter().next(), Some((3000, &3000)));
        t.push(5000);
        assert_eq!(t[5000], 5000);
        let rest = t.take();
        assert_eq!((rest.len(), t.end(), t.get(4000)), (2001, 5001, None));
    }
}
