//! The nodes that a backfill cycle's reservations keep off a job's window, moved from one
//! window to the next by the reservations that join or leave it.
//!
//! A reservation blocks a window [`t`, `t` + limit] when it begins by `t` + limit and ends
//! after `t` (Slurm's `node_space` test in `backfill.c`: one beginning exactly when the job
//! ends overlaps it). A node stays blocked while any reservation that blocks the window
//! holds it, so each node's count of them is kept, bit-sliced per bitmap word (bit `k` of
//! 64 nodes' counts in one `u64`): a reservation joins or leaves in what its own words cost,
//! where a set of bits alone would have to look at every other reservation on its nodes.

use super::backfill::Reservation;
use sim_core::time::{SimDuration, SimTime};

/// Per node, how many reservations hold it (bit-sliced), and the nodes held by any.
#[derive(Debug, Clone, Default)]
pub(super) struct NodeCounts {
    /// The nodes whose count is not 0.
    bits: Vec<u64>,
    /// Bit `k` of the counts of word `w`'s nodes at `w * planes + k`: a word's counts
    /// lie together.
    counts: Vec<u64>,
    /// How many bits each count has (as many as the largest count so far needs).
    planes: usize,
}

impl NodeCounts {
    /// No node held, over `words` bitmap words.
    fn reset(&mut self, words: usize) {
        self.bits.clear();
        self.bits.resize(words, 0);
        self.counts.clear();
        self.counts.resize(words, 0);
        self.planes = 1;
    }

    /// One more bit per count.
    fn widen(&mut self) {
        let (k, words) = (self.planes, self.bits.len());
        let mut wider = vec![0; words * (k + 1)];
        for w in 0..words {
            wider[w * (k + 1)..w * (k + 1) + k].copy_from_slice(&self.counts[w * k..w * k + k]);
        }
        self.counts = wider;
        self.planes = k + 1;
    }

    /// One more reservation holds nodes `b` of word `w`: those no other held.
    #[inline(always)]
    fn add(&mut self, w: usize, b: u64) -> u64 {
        let k = self.planes;
        let new = b & !self.bits[w];
        self.bits[w] |= b;
        // Mostly nodes whose count is even (most of them 0): no carry.
        if self.counts[w * k] & b == 0 {
            self.counts[w * k] |= b;
        } else {
            self.carry_in(w, b);
        }
        new
    }

    /// [`NodeCounts::add`] where a count's low bit carries (out of line: the common case
    /// stays small enough to inline).
    #[inline(never)]
    fn carry_in(&mut self, w: usize, b: u64) {
        let k = self.planes;
        let mut carry = b;
        for p in &mut self.counts[w * k..w * k + k] {
            let next = *p & carry;
            *p ^= carry;
            carry = next;
            if carry == 0 {
                break;
            }
        }
        if carry != 0 {
            self.widen();
            self.counts[w * self.planes + k] = carry;
        }
    }

    /// One reservation fewer holds nodes `b` of word `w`: those no other holds.
    #[inline]
    fn remove(&mut self, w: usize, b: u64) -> u64 {
        debug_assert_eq!(b & !self.bits[w], 0, "nodes of word {w} left that no reservation held");
        let k = self.planes;
        // Counts of one bit: each of these nodes was held once.
        if k == 1 {
            self.counts[w] &= !b;
            self.bits[w] &= !b;
            return b;
        }
        let counts = &mut self.counts[w * k..w * k + k];
        let mut borrow = b;
        for p in counts.iter_mut() {
            let next = !*p & borrow;
            *p ^= borrow;
            borrow = next;
            if borrow == 0 {
                break;
            }
        }
        let held = counts.iter().fold(0, |a, &p| a | p);
        let gone = b & !held;
        self.bits[w] &= !gone;
        gone
    }
}

/// The reservations a [`Blocking`] reads: by id, their nodes' (word index, bits), and
/// (begin, id) and (end, id) in order.
pub(super) struct Reserved<'a> {
    pub res: &'a [Reservation],
    pub words: &'a [(u32, u64)],
    pub by_begin: &'a [(SimTime, u32)],
    pub by_end: &'a [(SimTime, u32)],
}

impl Reserved<'_> {
    fn nodes(&self, id: usize) -> &[(u32, u64)] {
        self.res[id].node_words(self.words)
    }

    /// The nodes blocked for a job of `limit` from `t` into `out`, from every reservation
    /// (debug builds' checks), as Slurm's `node_space` test reads it: a reservation blocks
    /// its nodes when its begin less the job's limit is at most `t` and its end after `t`.
    pub fn blocked_into(&self, (t, limit): (SimTime, SimDuration), out: &mut [u64]) {
        let opens = |begin: SimTime| SimTime(begin.as_micros().saturating_sub(limit.as_micros()));
        out.iter_mut().for_each(|w| *w = 0);
        for &(_, id) in self.by_begin.iter().take_while(|x| opens(x.0) <= t) {
            if self.res[id as usize].end > t {
                for &(w, b) in self.nodes(id as usize) {
                    out[w as usize] |= b;
                }
            }
        }
    }
}

/// The nodes blocked for the window from `t` by the reservations beginning by `open`
/// (`t` plus the job's time limit) and ending after `t`, of the first `seen` made.
#[derive(Debug, Clone, Default)]
pub(super) struct Blocking {
    counts: NodeCounts,
    t: SimTime,
    open: SimTime,
    seen: usize,
}

impl Blocking {
    /// None blocked, none seen, over `words` bitmap words.
    pub fn reset(&mut self, words: usize) {
        self.counts.reset(words);
        (self.t, self.open, self.seen) = (SimTime::ZERO, SimTime::ZERO, 0);
    }

    /// The blocked nodes, one bit each.
    pub fn bits(&self) -> &[u64] {
        &self.counts.bits
    }

    /// Whether reservation `id` blocks the window from `t` of those beginning by `open`.
    fn blocks(r: &Reserved<'_>, id: usize, (t, open): (SimTime, SimTime)) -> bool {
        let x = &r.res[id];
        x.begin <= open && x.end > t
    }

    /// Reservation `id` joins (`join`) or leaves; `changed` hears each word whose blocked
    /// nodes change: (word, those nodes, whether they joined).
    fn apply(&mut self, r: &Reserved<'_>, id: usize, join: bool, changed: &mut impl FnMut(usize, u64, bool)) {
        for &(w, b) in r.nodes(id) {
            let w = w as usize;
            let moved = if join { self.counts.add(w, b) } else { self.counts.remove(w, b) };
            if moved != 0 {
                changed(w, moved, join);
            }
        }
    }

    /// Moves to the window from `t` of the reservations beginning by `open`, taking in
    /// those made since; `changed` hears each change of the blocked nodes (`None`: none
    /// listens, and the nodes may be counted again from the reservations when fewer
    /// block the new window than change).
    pub fn move_to(
        &mut self,
        r: &Reserved<'_>,
        (t, open): (SimTime, SimTime),
        mut changed: Option<&mut dyn FnMut(usize, u64, bool)>,
    ) {
        let listening = changed.is_some();
        let mut tell = |w: usize, b: u64, join: bool| {
            if let Some(c) = changed.as_deref_mut() {
                c(w, b, join);
            }
        };
        let was = (self.t, self.open);
        for id in self.seen..r.res.len() {
            if Self::blocks(r, id, was) {
                self.apply(r, id, true, &mut tell);
            }
        }
        self.seen = r.res.len();
        if was == (t, open) {
            return;
        }
        let (lo, hi) = (was.1.min(open), was.1.max(open));
        let begins = r.by_begin.partition_point(|x| x.0 <= lo)..r.by_begin.partition_point(|x| x.0 <= hi);
        let (lo_t, hi_t) = (was.0.min(t), was.0.max(t));
        let ends = r.by_end.partition_point(|x| x.0 <= lo_t)..r.by_end.partition_point(|x| x.0 <= hi_t);
        let fresh = r.by_begin.partition_point(|x| x.0 <= open);
        (self.t, self.open) = (t, open);
        if !listening && begins.len() + ends.len() > fresh {
            self.count_again(r, fresh);
            return;
        }
        // A reservation whose begin is in the range moved is seen there only.
        let in_begins = |id: usize| r.res[id].begin > lo && r.res[id].begin <= hi;
        let moved = r.by_begin[begins].iter().map(|x| x.1 as usize);
        for id in moved.chain(r.by_end[ends].iter().map(|x| x.1 as usize).filter(|&id| !in_begins(id))) {
            let (before, after) = (Self::blocks(r, id, was), Self::blocks(r, id, (t, open)));
            if before != after {
                self.apply(r, id, after, &mut tell);
            }
        }
    }

    /// The counts again from the reservations, the first `fresh` by begin those that
    /// begin by `open`.
    fn count_again(&mut self, r: &Reserved<'_>, fresh: usize) {
        self.counts.reset(self.counts.bits.len());
        for &(_, id) in &r.by_begin[..fresh] {
            if r.res[id as usize].end > self.t {
                self.apply(r, id as usize, true, &mut |_, _, _| {});
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reservations as a plan holds them, and the nodes that block the window from `t`
    /// of those beginning by `open`, from all of them.
    #[derive(Default)]
    struct Book {
        res: Vec<Reservation>,
        words: Vec<(u32, u64)>,
        by_begin: Vec<(SimTime, u32)>,
        by_end: Vec<(SimTime, u32)>,
    }

    impl Book {
        fn add(&mut self, begin: u64, len: u64, nodes: &[(u32, u64)]) {
            let id = self.res.len() as u32;
            let from = self.words.len() as u32;
            self.words.extend_from_slice(nodes);
            let (begin, end) = (SimTime(begin), SimTime(begin + len));
            let nodes = (from, self.words.len() as u32);
            self.res.push(Reservation { nodes, begin, end, part: 0, cpus: 1, until: end });
            let at = self.by_begin.partition_point(|x| *x <= (begin, id));
            self.by_begin.insert(at, (begin, id));
            let at = self.by_end.partition_point(|x| *x <= (end, id));
            self.by_end.insert(at, (end, id));
        }

        fn reserved(&self) -> Reserved<'_> {
            Reserved { res: &self.res, words: &self.words, by_begin: &self.by_begin, by_end: &self.by_end }
        }

        fn exact(&self, t: SimTime, open: SimTime, words: usize) -> Vec<u64> {
            let mut out = vec![0; words];
            for x in self.res.iter().filter(|x| x.begin <= open && x.end > t) {
                for &(w, b) in &self.words[x.nodes.0 as usize..x.nodes.1 as usize] {
                    out[w as usize] |= b;
                }
            }
            out
        }
    }

    /// A step: a reservation made (begin, length, nodes of three words) or a move to a
    /// window (from, length), heard or not.
    #[derive(Debug, Clone)]
    enum Step {
        Reserve(u64, u64, [u64; 3]),
        Move(u64, u64, bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (1..50u64, 1..30u64, any::<[u64; 3]>()).prop_map(|(b, l, n)| Step::Reserve(b, l, n.map(|x| x & 0xff0f))),
            (0..60u64, 0..40u64, any::<bool>()).prop_map(|(t, l, heard)| Step::Move(t, l, heard)),
        ]
    }

    proptest! {
        /// Moved any way, with reservations made between, the blocked nodes are those of
        /// every reservation that blocks the window, and the changes heard add up to them.
        #[test]
        fn moves_keep_the_blocked_nodes_of_the_window(steps in proptest::collection::vec(step(), 1..60)) {
            let mut book = Book::default();
            let mut b = Blocking::default();
            b.reset(3);
            let mut heard = [0u64; 3];
            for s in steps {
                match s {
                    Step::Reserve(begin, len, n) => {
                        let nodes: Vec<(u32, u64)> =
                            n.iter().enumerate().filter(|x| *x.1 != 0).map(|(w, &x)| (w as u32, x)).collect();
                        book.add(begin, len, &nodes);
                    }
                    Step::Move(t, len, listen) => {
                        let (t, open) = (SimTime(t), SimTime(t + len));
                        if listen {
                            heard.copy_from_slice(b.bits());
                            let mut tell = |w: usize, bits: u64, joined: bool| {
                                assert_eq!(heard[w] & bits, if joined { 0 } else { bits });
                                heard[w] ^= bits;
                            };
                            b.move_to(&book.reserved(), (t, open), Some(&mut tell));
                            prop_assert_eq!(&heard[..], b.bits());
                        } else {
                            b.move_to(&book.reserved(), (t, open), None);
                        }
                        prop_assert_eq!(book.exact(t, open, 3), b.bits().to_vec());
                    }
                }
            }
        }
    }

    #[test]
    fn a_node_stays_counted_until_its_last_holder_leaves() {
        let mut c = NodeCounts::default();
        c.reset(2);
        assert_eq!(c.add(1, 0b0110), 0b0110);
        assert_eq!(c.add(1, 0b0011), 0b0001);
        assert_eq!(c.add(1, 0b0010), 0);
        assert_eq!(c.bits, vec![0, 0b0111]);
        assert_eq!(c.remove(1, 0b0110), 0b0100);
        assert_eq!(c.remove(1, 0b0010), 0);
        assert_eq!(c.remove(1, 0b0011), 0b0011);
        assert_eq!(c.bits, vec![0, 0]);
        assert!(c.counts.iter().all(|&p| p == 0));
    }

    #[test]
    fn counts_carry_past_many_holders() {
        let mut c = NodeCounts::default();
        c.reset(1);
        for _ in 0..300 {
            c.add(0, 1 << 5);
        }
        for i in 0..300 {
            let gone = c.remove(0, 1 << 5);
            assert_eq!(gone, if i == 299 { 1 << 5 } else { 0 });
        }
    }
}
