//! A run of the scheduling queue's pods that share their queue state, kept as one unit so
//! that a pass over a long queue costs what the pods that can still fit cost, not what
//! the queue's length costs.
//!
//! Pods that have failed at least as often as it takes their back-off to reach its
//! maximum, that failed together at one pass, one after the other, and that have one
//! priority and no constraints share everything kube-scheduler's queue reads of them: one
//! timestamp (their last failure) with consecutive sequence numbers, one back-off end,
//! one place (activeQ, backoffQ or among the unschedulable pods). They stay together:
//! moved together by events, tried one after the other, and, failing, they fail in the
//! order they were tried. Trying them one by one, a pass skips every pod whose type
//! already fit nowhere; here the pods are grouped by class — pod type, whether its tasks
//! are held a pod at a time, tasks needed, on which that skip depends — so the pass tries
//! only the first pod of each class and, while they fit, the next ones, in the block's
//! order (a property test checks the schedules against the queue without blocks).

use super::sched_queue::{Place, PodFacts};
use sim_core::SimTime;
use sim_core::job::JobId;
use std::collections::{BTreeMap, VecDeque};

/// The class of a pod: what a failed placement of a pod of the same class in the pass
/// decides for it.
pub type Class = (u32, bool, u32);

/// The class of `facts`.
pub fn class_of(facts: &PodFacts) -> Class {
    (facts.ty, facts.holds_parts, facts.needed)
}

/// A block of pods sharing their queue state.
#[derive(Clone, Debug)]
pub struct Block {
    /// Their priority.
    pub priority: i64,
    /// Members in queue order, `None` once bound.
    members: VecDeque<Option<(JobId, PodFacts)>>,
    /// The position of `members[0]`.
    front: i64,
    /// Each class's live members' positions, in order.
    classes: BTreeMap<Class, VecDeque<i64>>,
    /// Members not bound.
    live: usize,
    /// Where they are.
    pub place: Place,
    /// Their queue timestamp.
    pub timestamp: SimTime,
    /// The sequence number of the first live member; the others follow it.
    pub seq: u64,
    /// Failed attempts (at least the number whose back-off is the maximum).
    pub attempts: u32,
    /// When their back-off ends.
    pub backoff_end: SimTime,
}

impl Block {
    /// A block of `members` (in order) sharing the rest.
    pub fn new(priority: i64, members: Vec<(JobId, PodFacts)>, shared: (Place, SimTime, u64, u32, SimTime)) -> Self {
        let (place, timestamp, seq, attempts, backoff_end) = shared;
        let mut b = Block {
            priority,
            members: VecDeque::new(),
            front: 0,
            classes: BTreeMap::new(),
            live: 0,
            place,
            timestamp,
            seq,
            attempts,
            backoff_end,
        };
        for m in members {
            b.push_back(m);
        }
        b
    }

    /// Live members.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether every member was bound.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Appends a member (it failed just after the block, in the same pass).
    pub fn push_back(&mut self, m: (JobId, PodFacts)) {
        let pos = self.front + self.members.len() as i64;
        self.classes.entry(class_of(&m.1)).or_default().push_back(pos);
        self.members.push_back(Some(m));
        self.live += 1;
    }

    /// Prepends a member (it failed just before the block, in the same pass).
    pub fn push_front(&mut self, m: (JobId, PodFacts)) {
        self.front -= 1;
        self.classes.entry(class_of(&m.1)).or_default().push_front(self.front);
        self.members.push_front(Some(m));
        self.live += 1;
        self.seq -= 1;
    }

    /// The classes present.
    pub fn classes(&self) -> Vec<Class> {
        self.classes.keys().copied().collect()
    }

    /// The position of the `k`-th live member of `class`.
    pub fn class_pos(&self, class: Class, k: usize) -> Option<i64> {
        self.classes.get(&class).and_then(|v| v.get(k)).copied()
    }

    /// The member at `pos`.
    pub fn member(&self, pos: i64) -> (JobId, PodFacts) {
        self.members[(pos - self.front) as usize].expect("a live member")
    }

    /// The position of the last live member.
    pub fn last(&self) -> Option<i64> {
        let back = self.members.iter().rev().position(Option::is_some)?;
        Some(self.front + (self.members.len() - 1 - back) as i64)
    }

    /// The `k`-th live member of `class` was bound: it leaves the block.
    pub fn bound(&mut self, class: Class, k: usize) {
        let v = self.classes.get_mut(&class).expect("a class of the block");
        let pos = v.remove(k).expect("a live member");
        if v.is_empty() {
            self.classes.remove(&class);
        }
        self.members[(pos - self.front) as usize] = None;
        self.live -= 1;
    }

    /// Drops the bound members once they are most of the block (positions change: not
    /// while a pass goes through it).
    pub fn tidy(&mut self) {
        if self.members.len() > 64 && self.live * 2 < self.members.len() {
            self.compact();
        }
    }

    /// Drops the bound members (positions start again at 0).
    fn compact(&mut self) {
        let live: Vec<(JobId, PodFacts)> = self.members.drain(..).flatten().collect();
        self.front = 0;
        self.classes.clear();
        self.live = 0;
        for m in live {
            self.push_back(m);
        }
    }

    /// The live members in order.
    pub fn live_members(&self) -> impl Iterator<Item = (JobId, PodFacts)> + '_ {
        self.members.iter().flatten().copied()
    }

    /// Takes the members out (the block is dissolved).
    pub fn into_members(self) -> Vec<(JobId, PodFacts)> {
        self.members.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(ty: u32) -> PodFacts {
        PodFacts { priority: 0, ty, only_restricts: true, holds_parts: false, needed: 1, constrained: false }
    }

    #[test]
    fn classes_keep_order_through_binds_joins_and_tidying() {
        // 100 pods of two types, alternating; 10 more in front, 10 behind.
        let members: Vec<(JobId, PodFacts)> = (0..100).map(|i| (JobId(100 + i), facts(i % 2))).collect();
        let shared = (Place::Unschedulable, SimTime::ZERO, 1000, 5, SimTime::ZERO);
        let mut b = Block::new(0, members, shared);
        for i in 0..10 {
            b.push_front((JobId(99 - i), facts(i % 2)));
            b.push_back((JobId(200 + i), facts(i % 2)));
        }
        assert_eq!((b.len(), b.seq), (120, 990));
        // Bind 70 pods of type 0's front, then type 1's second, a pass at a time.
        let t0 = (0, false, 1);
        for _ in 0..55 {
            b.bound(t0, 0);
        }
        b.bound((1, false, 1), 1);
        let before: Vec<JobId> = b.live_members().map(|m| m.0).collect();
        let firsts: Vec<JobId> = [t0, (1, false, 1)].iter().map(|&c| b.member(b.class_pos(c, 0).unwrap()).0).collect();
        b.tidy();
        // Positions change, order and classes do not.
        assert_eq!(b.live_members().map(|m| m.0).collect::<Vec<_>>(), before);
        let after: Vec<JobId> = [t0, (1, false, 1)].iter().map(|&c| b.member(b.class_pos(c, 0).unwrap()).0).collect();
        assert_eq!(firsts, after);
        assert_eq!(b.len(), 120 - 56);
        assert_eq!(b.last().map(|p| b.member(p).0), Some(JobId(209)));
    }
}
