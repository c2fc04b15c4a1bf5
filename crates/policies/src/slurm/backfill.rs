//! One cycle of Slurm's backfill scheduler (`src/plugins/sched/backfill/backfill.c`,
//! `_attempt_backfill`): pending jobs in priority order, each started now if it fits
//! without overlapping a reservation, else given a whole-node reservation at its
//! earliest start within `bf_window`.
//!
//! What a cycle decides is which jobs start now; a reservation matters only in that it
//! keeps a later job off its nodes. So the reservation of a job that cannot start now
//! (more CPUs than its partition has free, or than it has free outside the reservations
//! planned so far) is planned only when a later job might start now, in order, before
//! that job is tested, and only until those planned leave that job too few CPUs free
//! now (then it waits unplanned too): no job starts before every job ahead of it is
//! planned, so the starts are those of planning every job.

use super::blocked::{Blocking, Reserved};
use super::nodes::{Held, Request, add_node};
use super::{By, Slurm};
use sim_core::job::JobId;
use sim_core::policy::{Decision, SchedView, WaitReason};
use sim_core::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// The cycle's reservations of nodes for pending jobs, and the state its plans read
/// the future from.
#[derive(Debug, Clone, Default)]
pub(super) struct Plan {
    /// The reservations, by id.
    res: Vec<Reservation>,
    /// Their nodes, one bit each: (word index, bits), each reservation's a range.
    words: Vec<(u32, u64)>,
    /// (begin, reservation), in order.
    by_begin: Vec<(SimTime, u32)>,
    /// (end, reservation), in order.
    by_end: Vec<(SimTime, u32)>,
    /// The nodes of the reservations that overlap a job's window from now (the test of
    /// whether it starts now) and from a later time (its plan), kept apart so that each
    /// moves only by the reservations that join or leave it.
    now: Blocking,
    later: Blocking,
    /// Whether `Slurm::future` holds this cycle's nodes (copied at the first plan).
    future: bool,
    /// Whether `Slurm::releases` has begun this cycle (at the first plan that reads it).
    releases: bool,
    /// The releases applied to `Slurm::future`: the running jobs' whose expected end
    /// (at least `soonest`) is at most this.
    cursor: SimTime,
    /// Each partition's free CPUs when the cycle began.
    part_free: Vec<u64>,
    /// Per partition, built at its first plan: (time, CPUs of the partition released by
    /// then) over the running jobs' expected ends, an upper bound of what is free at each
    /// time (jobs started since count as free, reservations as open).
    released: Vec<Option<Vec<(SimTime, u64)>>>,
    /// Per partition, its reservations' (begin, CPUs of those beginning by then) and
    /// (begin plus time limit, CPUs of those whose job would have ended by then), in order.
    cpus_by: Vec<(Cumulative, Cumulative)>,
    /// The packed plans made so far, most recent last.
    done: Vec<Done>,
    /// Of those that found none, the (partition, CPUs, time limit) that no other of them
    /// is at most in both.
    beyond: Vec<(usize, u64, SimDuration)>,
    /// Just after now: a job past its time limit (limits not enforced) is expected to end
    /// any moment, never before (its resources are still held).
    soonest: SimTime,
    /// This cycle's plans and the last cycle's, for this one to take over ([`Carry`]).
    carry: Carry,
    /// The walk's lists, kept between cycles for their buffers (scratch): see
    /// [`Slurm::backfill`].
    walk: Walk,
}

/// The lists a cycle's walk keeps (see [`Slurm::backfill`]).
#[derive(Debug, Clone, Default)]
struct Walk {
    no_room: Vec<(usize, u64, SimDuration)>,
    unplanned: Vec<JobId>,
    kept: Vec<u64>,
    ahead: Vec<super::Key>,
}

/// The plans of a cycle in order, kept for the next cycle to take over while they stay
/// exact. When no job starts or ends and no node changes after a cycle until the next,
/// each plan of the next is the one before again as long as those before it were: the
/// nodes are as they were, and the plans see the same releases at every time after now (a
/// running job past its expected end counts at just after now in each). A job reserved
/// at `b` in the first cycle fitted nowhere before `b` clear of the same reservations,
/// and fits nowhere now either, where the reservations that block a window from now are
/// those of before and more (all begin after now): so, where `b` is after now, it is
/// reserved at `b` on the same nodes again.
///
/// A job the first cycle started (now, clear of the reservations that overlap its run)
/// runs in the second: a plan made before it started sees its CPUs held there. Where the
/// plans are packed (one-CPU tasks on the nodes in index order, a job fitting where
/// enough CPUs are free and taking the first nodes with one free), that changes none:
/// before `b` the job fitted nowhere with more CPUs free; at `b` either the started job
/// has ended, or the reservation overlaps its run and so holds none of its nodes, and
/// every node before the reservation's last had no CPU free or was kept off, as it still
/// is. A cycle with another kind of plan and a start carries nothing.
///
/// A plan that found no start may find one in the later window, and a job that starts
/// now changes the nodes for the plans after it: those are made again, and the chain
/// goes on only while they come out as before.
/// What a cycle's plans are made on ([`Slurm::state`]): the changes of the nodes and of
/// the running jobs, and the node epoch.
type Made = (u64, u64, u64);

#[derive(Debug, Clone, Default)]
struct Carry {
    /// Per plan of the cycle before: its job, the begin of its reservation
    /// (`SimTime::MAX`: none), and where its nodes are in `words`.
    before: Vec<(JobId, SimTime, (u32, u32))>,
    words: Vec<(u32, u64)>,
    /// This cycle's plans, as `before`, with their nodes in [`Plan::words`].
    now: Vec<(JobId, SimTime, (u32, u32))>,
    /// What the cycle before left (the changes of the nodes and of the running jobs, and
    /// the node epoch), if its plans carry.
    made_on: Option<Made>,
    /// How many of `before` this cycle took over or made again alike (`None`: the chain
    /// broke, or the cycle before does not carry).
    next: Option<usize>,
    /// Whether this cycle started a job, and made a plan that is not packed.
    started: bool,
    unpacked: bool,
}

impl Carry {
    /// A new cycle on `state`: the plans of the one before carry when it left the same.
    fn begin(&mut self, state: Made, words: &mut Vec<(u32, u64)>) {
        self.next = (self.made_on == Some(state)).then_some(0);
        std::mem::swap(&mut self.before, &mut self.now);
        std::mem::swap(&mut self.words, words);
        self.now.clear();
        words.clear();
        (self.started, self.unpacked) = (false, false);
    }

    /// The cycle ended, leaving `state`: whether its plans carry.
    fn end(&mut self, state: Made) {
        self.made_on = (!self.started || !self.unpacked).then_some(state);
    }

    /// The reservation of `j` taken over from the cycle before, if its plan there is next
    /// in the chain and reserved it after `now`.
    fn take(&mut self, j: JobId, now: SimTime) -> Option<(SimTime, &[(u32, u64)])> {
        let i = self.next?;
        let &(job, begin, (from, to)) = self.before.get(i)?;
        if job != j || begin == SimTime::MAX || begin <= now {
            return None;
        }
        self.next = Some(i + 1);
        Some((begin, &self.words[from as usize..to as usize]))
    }

    /// `j`'s plan made again: the chain goes on when it is as before (the next plan
    /// before, or no reservation where it is another job's).
    fn made(&mut self, j: JobId, got: Option<(SimTime, &[(u32, u64)])>) {
        let Some(i) = self.next else { return };
        let same = match (self.before.get(i), got) {
            (Some(&(job, begin, (from, to))), Some((t, nodes))) if job == j => {
                begin == t && self.words[from as usize..to as usize] == *nodes
            }
            (Some(&(job, begin, _)), None) if job == j => begin == SimTime::MAX,
            (_, None) => {
                self.next = Some(i);
                return;
            }
            _ => false,
        };
        self.next = same.then_some(i + 1);
    }

    /// A job started during the cycle: the plans after it are made again.
    fn started(&mut self) {
        self.started = true;
        self.next = None;
    }
}

/// A packed plan made: its job's partition, CPUs and time limit (µs), and the start it
/// found (µs; 0: none within the window, as no start is at 0), compact for
/// [`Slurm::no_start_before`]'s scan.
#[derive(Debug, Clone, Copy)]
struct Done {
    need: u64,
    limit: u64,
    at: u64,
    part: u32,
}

/// Where a plan places its job.
#[derive(Debug, PartialEq, Eq)]
enum Place {
    /// Now: what it takes on each node.
    Now(Vec<Held>),
    /// Later, a reservation: its nodes, (word index, bits).
    Later(Vec<(u32, u64)>),
}

/// The nodes of `held` as (word index, bits).
fn words_of(held: &[Held]) -> Vec<(u32, u64)> {
    let mut words = Vec::new();
    held.iter().for_each(|h| add_node(&mut words, 0, h.node));
    words
}

/// (time, a sum of what was added up to then), in order of time.
type Cumulative = Vec<(SimTime, u64)>;

/// A pending job's reservation of nodes.
#[derive(Debug, Clone)]
pub(super) struct Reservation {
    /// Its nodes, one bit each: where in [`Plan::words`] its (word index, bits) are, for
    /// the words with a node set (a reservation holds few of the machine's nodes).
    pub nodes: (u32, u32),
    pub begin: SimTime,
    /// Its begin plus the job's time limit, rounded up to `bf_resolution`.
    pub end: SimTime,
    /// The job's partition and CPUs.
    pub part: usize,
    pub cpus: u64,
    /// Its begin plus the job's time limit, before rounding: until when the job would run.
    pub until: SimTime,
}

/// Adds (partition, CPUs, time limit) `x` to `v`, a list of them of which none is at
/// most another in both, unless one is already at most it.
fn note_least(v: &mut Vec<(usize, u64, SimDuration)>, x: (usize, u64, SimDuration)) {
    let (p, need, limit) = x;
    if !v.iter().any(|&(q, n, l)| q == p && n <= need && l <= limit) {
        v.retain(|&(q, n, l)| !(q == p && n >= need && l >= limit));
        v.push(x);
    }
}

/// Adds `cpus` at time `t` to `v`, (time, CPUs added by then) in order.
fn add_cumulative(v: &mut Vec<(SimTime, u64)>, t: SimTime, cpus: u64) {
    let at = v.partition_point(|x| x.0 <= t);
    v.insert(at, (t, sum_by(v, t) + cpus));
    v[at + 1..].iter_mut().for_each(|x| x.1 += cpus);
}

/// What `v`, (time, sum of what was added by then) in order, has added by `t`.
fn sum_by(v: &[(SimTime, u64)], t: SimTime) -> u64 {
    v.partition_point(|x| x.0 <= t).checked_sub(1).map_or(0, |i| v[i].1)
}

/// Inserts `x` into the sorted `v`.
fn insert_sorted(v: &mut Vec<(SimTime, u32)>, x: (SimTime, u32)) {
    let at = v.partition_point(|y| *y <= x);
    v.insert(at, x);
}

impl Reservation {
    /// Its nodes, (word index, bits), in the plan's `words`.
    pub fn node_words<'a>(&self, words: &'a [(u32, u64)]) -> &'a [(u32, u64)] {
        &words[self.nodes.0 as usize..self.nodes.1 as usize]
    }
}

impl Plan {
    /// A packed plan made for a job of `need` CPUs for `limit` on partition `p`, and the
    /// start it found, for [`Slurm::no_start_before`].
    fn note_done(&mut self, (p, need, limit): (usize, u64, SimDuration), at: Option<SimTime>) {
        let at = at.map_or(0, |t| t.as_micros());
        self.done.push(Done { need, limit: limit.as_micros(), at, part: p as u32 });
        if at == 0 {
            note_least(&mut self.beyond, (p, need, limit));
        }
    }

    /// The nodes blocked for a job of `limit` starting now (`now`), moved there.
    fn block_now(&mut self, now: SimTime, limit: SimDuration) -> &[u64] {
        self.block(false, (now, limit), None)
    }

    /// The nodes blocked for a job of `limit` starting at `t`, when the plan's blocked
    /// nodes are moved there; `changed` hears each change (as [`Blocking::move_to`]).
    fn block_later(&mut self, t: SimTime, limit: SimDuration, changed: Option<&mut dyn FnMut(usize, u64, bool)>) {
        self.block(true, (t, limit), changed);
    }

    /// The blocked nodes from now (`later` false) or of the plan, moved to the window of a
    /// job of `limit` from `t` (debug builds check them against every reservation).
    fn block(
        &mut self,
        later: bool,
        (t, limit): (SimTime, SimDuration),
        changed: Option<&mut dyn FnMut(usize, u64, bool)>,
    ) -> &[u64] {
        let r = Reserved { res: &self.res, words: &self.words, by_begin: &self.by_begin, by_end: &self.by_end };
        let blocking = if later { &mut self.later } else { &mut self.now };
        blocking.move_to(&r, (t, t + limit), changed);
        if cfg!(debug_assertions) {
            let mut exact = vec![0; blocking.bits().len()];
            r.blocked_into((t, limit), &mut exact);
            debug_assert_eq!(exact, blocking.bits(), "the blocked nodes at {t:?} (later: {later}) kept apart");
        }
        blocking.bits()
    }

    /// A new cycle's empty plan at `now` on `state`, for partitions with `part_free` CPUs
    /// free and `words` bitmap words of nodes (the buffers of the last cycle's kept).
    fn reset(&mut self, now: SimTime, part_free: &[u64], words: usize, state: Made) {
        let parts = part_free.len();
        self.res.clear();
        self.carry.begin(state, &mut self.words);
        self.by_begin.clear();
        self.by_end.clear();
        self.now.reset(words);
        self.later.reset(words);
        self.future = false;
        self.releases = false;
        self.cursor = now;
        self.part_free.clear();
        self.part_free.extend_from_slice(part_free);
        self.released.clear();
        self.released.resize(parts, None);
        self.cpus_by.resize_with(parts, Default::default);
        for (begun, ended) in &mut self.cpus_by {
            begun.clear();
            ended.clear();
        }
        self.done.clear();
        self.beyond.clear();
        self.soonest = now + SimDuration(1);
    }
}

impl Slurm {
    /// One backfill cycle.
    pub(super) fn backfill(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let s = &self.conf.sched;
        let (max_test, max_user, horizon) = (s.bf_max_job_test, s.bf_max_job_user, view.now() + s.bf_window);
        let mut plan = std::mem::take(&mut self.bf_plan);
        plan.reset(view.now(), &self.nodes.part_free, self.nodes.cpus.len().div_ceil(64), self.state(view));
        let mut per_user: BTreeMap<u32, u32> = BTreeMap::new();
        let Walk { mut no_room, mut unplanned, mut kept, mut ahead } = std::mem::take(&mut plan.walk);
        // The (partition, CPUs, time limit) of jobs found unable to start now, but for
        // those another is at most in both.
        no_room.clear();
        // Jobs tested that cannot start now, whose reservations are not planned yet.
        unplanned.clear();
        // `kept`: the nodes the reservations planned so far block for the job tested now.
        let (mut tested, mut at) = (0u32, None);
        // The next pending jobs, read ahead of the walk (a cycle removes from the queue
        // only the jobs it starts, none after the one it tests).
        ahead.clear();
        let mut next = 0;
        while tested < max_test {
            if next == ahead.len() {
                self.read_ahead(at, &mut ahead);
                next = 0;
            }
            let Some(&k) = ahead.get(next) else { break };
            next += 1;
            at = Some(k);
            if max_user > 0 {
                let n = per_user.entry(view.job(k.job).user()).or_default();
                if *n >= max_user {
                    continue;
                }
                *n += 1;
            }
            tested += 1;
            let p = self.partition(view, k.job);
            if !self.conf.partitions[p].up {
                continue;
            }
            let r = self.request(view, k.job);
            if self.limit_reason(view, k.job, &r).is_some() {
                continue;
            }
            if r.total_cpus() > self.nodes.part_free[p] {
                unplanned.push(k.job);
                continue;
            }
            // The reservations planned so far are some of those it will meet: when even
            // they leave too few CPUs free now, it cannot start now either, and neither
            // its reservation nor those before it are needed yet.
            // So does a job of no more CPUs for no longer that could not (the reservations
            // only grow and the nodes only lose free CPUs during a cycle).
            let (need, limit) = (r.total_cpus(), self.limit(view, k.job));
            if no_room.iter().any(|&(q, n, l)| q == p && n <= need && l <= limit) {
                unplanned.push(k.job);
                continue;
            }
            let room = self.nodes.free_outside(p, plan.block_now(view.now(), limit));
            if room < need {
                note_least(&mut no_room, (p, need, limit));
                unplanned.push(k.job);
                continue;
            }
            if !unplanned.is_empty() {
                kept.clear();
                kept.extend_from_slice(plan.now.bits());
                let ahead = (&mut unplanned, &mut kept[..]);
                if !self.plan_ahead(view, &mut plan, ahead, (p, need, limit, room), horizon, out) {
                    note_least(&mut no_room, (p, need, limit));
                    unplanned.push(k.job);
                    continue;
                }
            }
            self.backfill_job(view, (k.job, false), &mut plan, horizon, out);
        }
        if view.logging() {
            for &j in &unplanned {
                self.backfill_job(view, (j, true), &mut plan, horizon, out);
            }
        }
        plan.walk = Walk { no_room, unplanned, kept, ahead };
        plan.carry.end(self.state(view));
        self.bf_plan = plan;
    }

    /// What a cycle's plans are made on, as [`Carry`] compares it: the changes of the
    /// nodes and of the running jobs, and the node epoch.
    fn state(&self, view: &SchedView<'_>) -> Made {
        (self.nodes.changes, self.releases.changes, view.node_epoch())
    }

    /// Whether `r` on partition `p` is planned packed: one-CPU tasks asking nothing else,
    /// on nodes in index order, read from the per-node releases ([`Slurm::releases`]).
    fn packed(&self, p: usize, r: &Request) -> bool {
        r.fungible() && self.nodes.order_is_index[p]
    }

    /// The next 64 pending jobs after `at` (from the first: `None`) into `ahead`.
    fn read_ahead(&self, at: Option<super::Key>, ahead: &mut Vec<super::Key>) {
        use std::ops::Bound::{Excluded, Unbounded};
        ahead.clear();
        match at {
            None => ahead.extend(self.queue.iter().take(64).copied()),
            Some(a) => ahead.extend(self.queue.range((Excluded(a), Unbounded)).take(64).copied()),
        }
    }

    /// Plans the reservations of the jobs `unplanned` ahead of a job that might start now
    /// (on partition `p`, asking `need` CPUs for `limit`, with `room` CPUs free outside the
    /// nodes `kept` off it so far), one at a time, in order: once those planned leave it too
    /// few CPUs free now, the rest can wait as it does. Whether it still might start now;
    /// the jobs planned leave `unplanned`.
    fn plan_ahead(
        &mut self,
        view: &SchedView<'_>,
        plan: &mut Plan,
        (unplanned, kept): (&mut Vec<JobId>, &mut [u64]),
        (p, need, limit, mut room): (usize, u64, SimDuration, u64),
        horizon: SimTime,
        out: &mut Vec<Decision>,
    ) -> bool {
        let mut done = 0;
        let mut fits = true;
        while done < unplanned.len() {
            let begin = self.backfill_job(view, (unplanned[done], true), plan, horizon, out);
            done += 1;
            if begin.is_some_and(|b| b <= view.now() + limit) {
                // The free CPUs of the nodes it newly keeps off leave the room.
                for &(w, b) in plan.res.last().expect("just reserved").node_words(&plan.words) {
                    let w = w as usize;
                    let new = b & !kept[w];
                    kept[w] |= b;
                    let mut x = new & self.nodes.member_bits[p][w] & self.nodes.has_free[w];
                    while x != 0 {
                        room -= u64::from(self.nodes.free_cpus[w * 64 + x.trailing_zeros() as usize]);
                        x &= x - 1;
                    }
                }
                debug_assert_eq!(room, self.nodes.free_outside(p, kept), "room counted apart");
                if room < need {
                    fits = false;
                    break;
                }
            }
        }
        unplanned.drain(..done);
        fits
    }

    /// Finds `j`'s earliest start; starts it now or reserves its nodes. The begin of the
    /// reservation it made, if it made one. `not_now`: `j` was found unable to start now
    /// earlier in the cycle (a job left unplanned), so it is not tested now again: the
    /// reservations only grow and the nodes only lose free CPUs during a cycle.
    fn backfill_job(
        &mut self,
        view: &SchedView<'_>,
        (j, not_now): (JobId, bool),
        plan: &mut Plan,
        horizon: SimTime,
        out: &mut Vec<Decision>,
    ) -> Option<SimTime> {
        let now = view.now();
        let p = self.partition(view, j);
        let r = self.request(view, j);
        let limit = self.limit(view, j);
        match self.plan_of(view, (j, p, &r, limit, not_now), plan, horizon) {
            Some((_, Place::Now(held))) => {
                plan.carry.started();
                if plan.future {
                    // The future state holds it too, unless its end is already applied.
                    let soonest = now + SimDuration(1);
                    if (now + limit).max(soonest) > plan.cursor {
                        held.iter().for_each(|h| self.future.take(h));
                    }
                }
                self.start(view, j, &r, held, By::Backfill, out);
                None
            }
            Some((t, Place::Later(nodes))) => {
                let end = round_up(t + limit, self.conf.sched.bf_resolution);
                let id = plan.res.len() as u32;
                let from = plan.words.len() as u32;
                plan.words.extend_from_slice(&nodes);
                self.releases.recycle(nodes);
                let nodes = (from, plan.words.len() as u32);
                plan.carry.now.push((j, t, nodes));
                plan.res.push(Reservation { nodes, begin: t, end, part: p, cpus: r.total_cpus(), until: t + limit });
                let cpus = r.total_cpus();
                add_cumulative(&mut plan.cpus_by[p].0, t, cpus);
                add_cumulative(&mut plan.cpus_by[p].1, t + limit, cpus);
                insert_sorted(&mut plan.by_begin, (t, id));
                insert_sorted(&mut plan.by_end, (end, id));
                if view.logging() {
                    out.push(Decision::Wait { job: j, reason: WaitReason::Reserved { at: t } });
                }
                Some(t)
            }
            None => {
                plan.carry.now.push((j, SimTime::MAX, (0, 0)));
                None
            }
        }
    }

    /// [`Slurm::earliest`] for job `j`, or its reservation taken over from the cycle
    /// before ([`Carry`]).
    fn plan_of(
        &mut self,
        view: &SchedView<'_>,
        (j, p, r, limit, not_now): (JobId, usize, &Request, SimDuration, bool),
        plan: &mut Plan,
        horizon: SimTime,
    ) -> Option<(SimTime, Place)> {
        let packed = self.packed(p, r);
        plan.carry.unpacked |= !packed;
        if let Some((t, nodes)) = plan.carry.take(j, view.now()) {
            let mut found = self.releases.buffer();
            found.extend_from_slice(nodes);
            if cfg!(debug_assertions) {
                // Made again (and recorded as `earliest` records it), it is the same.
                let made = self.earliest(view, (p, r, limit, not_now), plan, horizon);
                debug_assert_eq!(made, Some((t, Place::Later(found.clone()))), "{j:?}'s plan taken over differs");
            } else if packed {
                plan.note_done((p, r.total_cpus(), limit), Some(t));
            }
            return Some((t, Place::Later(found)));
        }
        let got = self.earliest(view, (p, r, limit, not_now), plan, horizon);
        match &got {
            Some((t, Place::Later(nodes))) => plan.carry.made(j, Some((*t, nodes))),
            Some((_, Place::Now(_))) => {}
            None => plan.carry.made(j, None),
        }
        got
    }

    /// The earliest `t` in [now, horizon] at which `r` fits for `limit` on partition `p`
    /// clear of every reservation, and where. Now is tested on the nodes as they are;
    /// later times on [`Slurm::future`], the nodes with the releases up to the plan's
    /// cursor applied (for packed one-CPU tasks on nodes in index order, on
    /// [`Slurm::releases`]: the same free CPUs, read per node where a plan looks), from
    /// the first running job's expected end at which the partition
    /// could hold the job at all (before it, it fits nowhere): a sweep over the expected
    /// ends and the reservations' ends, testing the nodes where the free CPUs outside
    /// the reservations that overlap the job's window could hold it. A job found unable to
    /// start now earlier in the cycle (`not_now`) is not tested now again.
    ///
    /// Packed plans start where an earlier plan of the cycle found its job's start, for a
    /// job of the same partition asking at most as many CPUs for at most as long: until
    /// then that job fitted nowhere, and this one, facing the same reservations and more
    /// (the nodes only lose free CPUs during a cycle, and its window overlaps every
    /// reservation that job's did), fits nowhere either.
    fn earliest(
        &mut self,
        view: &SchedView<'_>,
        (p, r, limit, not_now): (usize, &Request, SimDuration, bool),
        plan: &mut Plan,
        horizon: SimTime,
    ) -> Option<(SimTime, Place)> {
        // Packed one-CPU tasks on nodes in index order: the releases listed per node;
        // otherwise the node counts moved to `t`.
        // A job known unable to start now is planned from just after now.
        let later = not_now.then_some(plan.soonest);
        if !self.packed(p, r) {
            return self.earliest_from(view, (p, r, limit), plan, horizon, later);
        }
        let need = r.total_cpus();
        let from = match Self::no_start_before(plan, p, need, limit) {
            Some(None) => Some(None),
            from => later.max(from.flatten()).map(Some),
        };
        let got = match from {
            Some(None) => None,
            from => self.earliest_from(view, (p, r, limit), plan, horizon, from.flatten()),
        };
        if cfg!(debug_assertions) && from.is_some() {
            let full = self.earliest_from(view, (p, r, limit), plan, horizon, None);
            debug_assert_eq!(full, got, "a plan started from {from:?} differs from the whole sweep");
        }
        plan.note_done((p, need, limit), got.as_ref().map(|x| x.0));
        got
    }

    /// What the cycle's earlier packed plans tell of a job of `need` CPUs for `limit` on
    /// partition `p`: `Some(None)` when one of no more CPUs for no longer found no start
    /// within the window, else the latest start such plans found (the last 64 plans
    /// looked at), before which it cannot start either.
    fn no_start_before(plan: &Plan, p: usize, need: u64, limit: SimDuration) -> Option<Option<SimTime>> {
        let within = |&(q, n, l): &(usize, u64, SimDuration)| q == p && n <= need && l <= limit;
        if plan.beyond.iter().any(within) {
            return Some(None);
        }
        let (p, limit) = (p as u32, limit.as_micros());
        let latest = plan.done[plan.done.len().saturating_sub(64)..]
            .iter()
            .map(|d| if d.part == p && d.need <= need && d.limit <= limit { d.at } else { 0 })
            .max()
            .unwrap_or(0);
        (latest > 0).then_some(Some(SimTime(latest)))
    }

    /// [`Slurm::earliest`] from `from` on (`None`: from now).
    fn earliest_from(
        &mut self,
        view: &SchedView<'_>,
        (p, r, limit): (usize, &Request, SimDuration),
        plan: &mut Plan,
        horizon: SimTime,
        from: Option<SimTime>,
    ) -> Option<(SimTime, Place)> {
        let now = view.now();
        let need = r.total_cpus();
        if from.is_none_or(|f| f <= now)
            && let Some(held) = self.fits_now(view, (p, r, limit), plan)
        {
            return Some((now, Place::Now(held)));
        }
        // The first expected end by which enough CPUs could be free in the partition.
        let mut t = self.first_possible(p, need, plan)?.max(from.unwrap_or(SimTime::ZERO));
        if t > horizon {
            return None;
        }
        let packed = self.packed(p, r);
        // Debug builds check the per-node releases against the node counts.
        let check = cfg!(debug_assertions);
        self.prepare_future(view, packed, plan);
        let soonest = now + SimDuration(1);
        let mut ib = plan.by_end.partition_point(|&(e, _)| e <= t);
        plan.block_later(t, limit, None);
        // Packed: the CPUs free at `t` outside the blocked nodes, once counted, kept up to
        // date as `t` moves on, so the nodes are scanned only where the job could fit.
        let mut free: Option<u64> = None;
        loop {
            if packed {
                // Until the nodes are first scanned, a bound from the partition's CPUs.
                let bound = match free {
                    Some(f) => f,
                    None => self.free_bound(plan, p, t),
                };
                if bound >= need {
                    let (sum, got) = self.releases.place(&self.nodes, p, r, t, plan.later.bits());
                    if check {
                        self.check_packed(view, (p, r, t), plan, got.as_ref());
                    }
                    if let Some(nodes) = got {
                        return Some((t, Place::Later(nodes)));
                    }
                    free = Some(sum);
                } else if check {
                    let counted = self.releases.free_outside(&self.nodes, p, t, plan.later.bits());
                    debug_assert!(bound >= counted, "CPUs free at {t:?} counted short");
                }
            } else {
                // Releases up to `t`.
                self.move_cursor(now, t, plan);
                // Enough CPUs on the unblocked nodes: the only place worth a node scan.
                let blocked = plan.later.bits();
                if self.future.free_outside(p, blocked) >= need
                    && let Some(held) = self.future.place_outside(p, r, blocked, |n| Self::node_up(view, n))
                {
                    return Some((t, Place::Later(words_of(&held))));
                }
            }
            // The next time the job may fit: an expected end or a reservation's end
            // (`t` is at least `soonest`, so an expected end after it is one after
            // `soonest`).
            let next_end = plan.by_end.get(ib).map(|x| x.0);
            // The time up to which `free` counts the releases.
            let mut counted = t;
            let next_release = if packed {
                let (next, c) = self.next_packed((p, r, t), plan, next_end, free.as_mut());
                counted = c;
                next
            } else {
                self.ends.range((t + SimDuration(1), JobId(0))..).next().map(|x| x.0.max(soonest))
            };
            match [next_release, next_end].into_iter().flatten().min() {
                Some(n) if n <= horizon => t = n,
                _ => return None,
            }
            ib = plan.by_end.partition_point(|&(e, _)| e <= t);
            self.move_plan(plan, (p, limit), (counted, t), free.as_mut());
        }
    }

    /// Where `r` (for `limit`, on partition `p`) starts now clear of the reservations, if
    /// it does.
    fn fits_now(
        &self,
        view: &SchedView<'_>,
        (p, r, limit): (usize, &Request, SimDuration),
        plan: &mut Plan,
    ) -> Option<Vec<Held>> {
        let need = r.total_cpus();
        if self.nodes.part_free[p] < need {
            return None;
        }
        let blocked = plan.block_now(view.now(), limit);
        if self.nodes.free_outside(p, blocked) < need {
            return None;
        }
        self.nodes.place_outside(p, r, blocked, |n| Self::node_up(view, n))
    }

    /// What a cycle's later plans read, made at its first: the per-node releases for
    /// packed plans, else (and in debug builds, to check them) a copy of the nodes.
    fn prepare_future(&mut self, view: &SchedView<'_>, packed: bool, plan: &mut Plan) {
        let now = view.now();
        if packed && !plan.releases {
            self.releases.begin_cycle(&self.nodes);
            self.releases.note_up(view.node_epoch(), self.nodes.cpus.len(), |n| Self::node_up(view, n));
            plan.releases = true;
        }
        if (!packed || cfg!(debug_assertions)) && !plan.future {
            self.future.copy_free_from(&self.nodes);
            plan.future = true;
            plan.cursor = now;
        }
    }

    /// A packed plan that failed at `t`: the next release that may make it fit before the
    /// next reservation's end `next_end` (only one on a node outside the reservations;
    /// once the CPUs free are counted in `free`, only one that brings them to what it
    /// asks), and the time up to which `free` then counts the releases.
    fn next_packed(
        &mut self,
        at: (usize, &Request, SimTime),
        plan: &Plan,
        next_end: Option<SimTime>,
        free: Option<&mut u64>,
    ) -> (Option<SimTime>, SimTime) {
        let (p, r, t) = at;
        let on = (&self.nodes.member_bits[p][..], plan.later.bits());
        let (next, counted) = match free {
            Some(f) => {
                let next = self.releases.count_until(t, next_end, on, f, r.total_cpus());
                (next, next.or(next_end.map(|e| SimTime(e.as_micros() - 1))).unwrap_or(t))
            }
            None => (self.releases.next_release(t, next_end, on.0, on.1), t),
        };
        if cfg!(debug_assertions) {
            self.check_skipped(at, plan, next.or(next_end));
        }
        (next, counted)
    }

    /// A plan's window moved to `t` (on partition `p`, for a job of `limit`), and, once a
    /// packed plan counted them, `free`, the CPUs free outside the blocked nodes counting
    /// the releases up to `counted`, brought to `t`: the CPUs free on the nodes that leave
    /// the blocked ones join the count, those on the nodes that join them leave it.
    fn move_plan(
        &self,
        plan: &mut Plan,
        (p, limit): (usize, SimDuration),
        (counted, t): (SimTime, SimTime),
        free: Option<&mut u64>,
    ) {
        let member = &self.nodes.member_bits[p];
        let Some(f) = free else {
            plan.block_later(t, limit, None);
            return;
        };
        let (releases, nodes) = (&self.releases, &self.nodes);
        let mut changed = |w: usize, bits: u64, joined: bool| {
            let cpus = releases.free_in_word(nodes, w, bits, member, counted);
            if joined {
                *f -= cpus;
            } else {
                *f += cpus;
            }
        };
        plan.block_later(t, limit, Some(&mut changed));
        *f += self.releases.released_between(counted, t, member, plan.later.bits());
    }

    /// Debug builds: a packed plan's test at `t` (`got`) is the node counts' answer.
    fn check_packed(
        &mut self,
        view: &SchedView<'_>,
        at: (usize, &Request, SimTime),
        plan: &mut Plan,
        got: Option<&Vec<(u32, u64)>>,
    ) {
        let (p, r, t) = at;
        self.move_cursor(view.now(), t, plan);
        let blocked = plan.later.bits();
        let want = (self.future.free_outside(p, blocked) >= r.total_cpus())
            .then(|| self.future.place_outside(p, r, blocked, |n| Self::node_up(view, n)))
            .flatten()
            .map(|held| words_of(&held));
        debug_assert_eq!(got, want.as_ref(), "packed plan at {t:?} differs from the node counts");
    }

    /// Debug builds: a packed plan that failed at `t` fails at every expected end it
    /// skips before `next`.
    fn check_skipped(&mut self, at: (usize, &Request, SimTime), plan: &Plan, next: Option<SimTime>) {
        let (p, r, t) = at;
        let skipped: Vec<SimTime> = self
            .ends
            .range((t + SimDuration(1), JobId(0))..)
            .map(|x| x.0)
            .take_while(|&e| next.is_none_or(|n| e < n))
            .collect();
        for e in skipped {
            let fit = self.releases.place(&self.nodes, p, r, e, plan.later.bits()).1;
            debug_assert!(fit.is_none(), "a release skipped at {e:?} lets the job fit");
        }
    }

    /// The first running job's expected end (at least just after now) by which
    /// partition `p` could have `need` CPUs free, counting every CPU free when the cycle
    /// began and every release since: no job of `need` CPUs fits there before.
    fn first_possible(&mut self, p: usize, need: u64, plan: &mut Plan) -> Option<SimTime> {
        let have = plan.part_free[p];
        if have >= need {
            return Some(plan.soonest);
        }
        let v = self.released_of(p, plan);
        let i = v.partition_point(|&(_, c)| have + c < need);
        v.get(i).map(|x| x.0)
    }

    /// Partition `p`'s (time, CPUs released by then) over the running jobs' expected ends
    /// (at least just after now), built at the first call of the cycle.
    fn released_of<'a>(&self, p: usize, plan: &'a mut Plan) -> &'a [(SimTime, u64)] {
        if plan.released[p].is_none() {
            let mut sum = 0u64;
            let v = self
                .releases
                .per_job(&self.nodes.member_bits[p])
                .map(|(e, cpus)| {
                    sum += cpus;
                    (e.max(plan.soonest), sum)
                })
                .collect();
            plan.released[p] = Some(v);
        }
        plan.released[p].as_deref().expect("just built")
    }

    /// An upper bound of the CPUs free at `t` on partition `p` outside the reservations
    /// that block the window: every CPU free when the cycle began or released by `t`, less
    /// the CPUs of the partition's reservations whose job would be running at `t` (from
    /// its begin to its begin plus its time limit). Each of those blocked the windows of
    /// those planned after it, so their nodes are distinct, and from its begin on a
    /// reservation's nodes have at least its CPUs free (nodes only gain free CPUs later; a
    /// job started in the cycle keeps off the reservations it would overlap).
    fn free_bound(&self, plan: &mut Plan, p: usize, t: SimTime) -> u64 {
        let total = plan.part_free[p] + sum_by(self.released_of(p, plan), t);
        let (begun, ended) = &plan.cpus_by[p];
        let held = sum_by(begun, t) - sum_by(ended, t);
        if cfg!(debug_assertions) {
            let running = plan.res.iter().filter(|x| x.part == p && x.begin <= t && x.until > t);
            debug_assert_eq!(held, running.map(|x| x.cpus).sum::<u64>(), "reserved CPUs at {t:?} summed apart");
        }
        total.saturating_sub(held)
    }

    /// Moves the cursor of `Slurm::future` to `to`: the releases of the running jobs
    /// whose expected end (at least just after `now`) is after it are taken back, those
    /// up to it applied.
    fn move_cursor(&mut self, now: SimTime, to: SimTime, plan: &mut Plan) {
        let soonest = now + SimDuration(1);
        let applied = |c: SimTime| if c < soonest { None } else { Some(c) };
        let (from_c, to_c) = (applied(plan.cursor), applied(to));
        // Expected ends (as keys of `ends`) in (lo, hi]: those below `soonest` count as
        // `soonest`, so a bound under `soonest` is no bound.
        let span = |lo: Option<SimTime>, hi: SimTime| {
            let lo = lo.map_or(SimTime::ZERO, |c| c + SimDuration(1));
            self.ends.range((lo, JobId(0))..).take_while(move |x| x.0.max(soonest) <= hi).map(|x| x.1)
        };
        match (from_c, to_c) {
            (a, Some(b)) if a.is_none_or(|a| a < b) => {
                for j in span(a, b) {
                    self.running[&j].held.iter().for_each(|h| self.future.give(h));
                }
            }
            (Some(a), b) if b.is_none_or(|b| b < a) => {
                for j in span(b, a) {
                    self.running[&j].held.iter().for_each(|h| self.future.take(h));
                }
            }
            _ => {}
        }
        plan.cursor = to;
    }
}

/// `t` rounded up to a multiple of `step`.
fn round_up(t: SimTime, step: SimDuration) -> SimTime {
    let s = step.as_micros().max(1);
    SimTime(t.as_micros().div_ceil(s).saturating_mul(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE: Made = (7, 3, 1);

    /// A cycle that planned `plans` (job, begin or none, nodes) on `STATE`.
    fn cycle(carry: &mut Carry, words: &mut Vec<(u32, u64)>, plans: &[(u32, Option<u64>, u64)]) {
        carry.begin(STATE, words);
        for &(j, begin, bits) in plans {
            match begin {
                Some(b) => {
                    let from = words.len() as u32;
                    words.push((0, bits));
                    carry.now.push((JobId(j), SimTime(b), (from, words.len() as u32)));
                }
                None => carry.now.push((JobId(j), SimTime::MAX, (0, 0))),
            }
        }
        carry.end(STATE);
    }

    #[test]
    fn plans_carry_in_order_while_nothing_changed() {
        let (mut carry, mut words) = (Carry::default(), Vec::new());
        cycle(&mut carry, &mut words, &[(1, Some(100), 0b11), (2, None, 0), (3, Some(200), 0b100)]);
        carry.begin(STATE, &mut words);
        // Taken over in order: a job out of turn is not, nor is one whose plan began by now.
        assert_eq!(carry.take(JobId(2), SimTime(50)), None);
        assert_eq!(carry.take(JobId(1), SimTime(100)), None);
        assert_eq!(carry.take(JobId(1), SimTime(50)), Some((SimTime(100), &[(0u32, 0b11u64)][..])));
        // A plan that found no start is made again; found none again, the chain goes on.
        assert_eq!(carry.take(JobId(2), SimTime(50)), None);
        carry.made(JobId(2), None);
        // Another job found no start either: nothing reserved, the chain goes on.
        carry.made(JobId(9), None);
        assert_eq!(carry.take(JobId(3), SimTime(50)), Some((SimTime(200), &[(0u32, 0b100u64)][..])));
    }

    #[test]
    fn the_chain_breaks_where_a_plan_differs_or_a_job_starts() {
        let (mut carry, mut words) = (Carry::default(), Vec::new());
        let plans = [(1, None, 0), (2, Some(300), 0b1)];
        cycle(&mut carry, &mut words, &plans);
        carry.begin(STATE, &mut words);
        carry.made(JobId(1), Some((SimTime(120), &[(0, 0b10)])));
        assert_eq!(carry.take(JobId(2), SimTime(50)), None);
        cycle(&mut carry, &mut words, &plans);
        carry.begin(STATE, &mut words);
        carry.made(JobId(1), None);
        carry.started();
        assert_eq!(carry.take(JobId(2), SimTime(50)), None);
    }

    #[test]
    fn nothing_carries_after_a_change_or_a_start_beside_unpacked_plans() {
        let (mut carry, mut words) = (Carry::default(), Vec::new());
        cycle(&mut carry, &mut words, &[(1, Some(100), 0b1)]);
        carry.begin((8, 3, 1), &mut words);
        assert_eq!(carry.take(JobId(1), SimTime(50)), None);
        // A start among packed plans keeps them; beside a plan not packed, it does not.
        cycle(&mut carry, &mut words, &[(1, Some(100), 0b1)]);
        carry.started = true;
        carry.end(STATE);
        carry.begin(STATE, &mut words);
        assert!(carry.take(JobId(1), SimTime(50)).is_some());
        cycle(&mut carry, &mut words, &[(1, Some(100), 0b1)]);
        (carry.started, carry.unpacked) = (true, true);
        carry.end(STATE);
        carry.begin(STATE, &mut words);
        assert_eq!(carry.take(JobId(1), SimTime(50)), None);
    }
}
