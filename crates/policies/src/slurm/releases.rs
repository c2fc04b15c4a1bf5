//! The future a backfill cycle plans on, for jobs of packed one-CPU tasks in a partition
//! whose nodes go in index order (SWF logs under `CR_Core`/`CR_CPU`: `-n N`).
//!
//! A node's free CPUs at a later time `t` are its free CPUs now plus those of the running
//! jobs on it expected to end by `t` (`backfill.c` builds its `node_space` map from the
//! same expected ends). Rather than moving node counts per release as
//! [`super::nodes::Nodes`] would, each node's releases are listed, kept as jobs start and
//! end (not listed again at every cycle), the nodes with any CPU free by `t` are kept as a
//! bitset (one OR per job released), and a
//! node's free CPUs are summed only where a plan looks: outside the reservations, with a
//! CPU free. A plan that has counted them adds each release on the nodes outside the
//! reservations as it moves to a later time ([`Releases::count_until`]). A bitmap word
//! whose nodes all have their running jobs' expected ends behind the plan's time is idle
//! then: its free CPUs are its nodes' count times their CPUs, with no node looked at (most
//! of the nodes a reservation far ahead takes). A plan's place is a set of nodes, not
//! what each would run. The answers are those of the node-count map exactly.

use super::nodes::{Held, Nodes, Request};
use sim_core::job::JobId;
use sim_core::time::SimTime;

/// The nodes of `member` outside `blocked` in word `w`.
fn open(member: &[u64], blocked: &[u64], w: u32) -> u64 {
    member[w as usize] & !blocked.get(w as usize).copied().unwrap_or(0)
}

/// A node's first and last expected end, the CPUs its running jobs hold, and, when it
/// has exactly two of them, the CPUs of the first to end (0 otherwise): most nodes a
/// plan finds partly released are shared by two jobs, and need no look at their list.
#[derive(Debug, Clone, Copy)]
struct NodeEnds {
    first: SimTime,
    last: SimTime,
    cpus: u32,
    first_of_two: u32,
}

/// Node `n`'s [`NodeEnds`] in `ends`, from its list in `on_node`.
fn note_ends(ends: &mut Vec<NodeEnds>, on_node: &[Vec<(SimTime, u32)>], n: usize) {
    if ends.len() <= n {
        ends.resize(n + 1, NodeEnds { first: SimTime::MAX, last: SimTime::ZERO, cpus: 0, first_of_two: 0 });
    }
    let list = &on_node[n];
    ends[n] = NodeEnds {
        first: list.first().map_or(SimTime::MAX, |x| x.0),
        last: list.last().map_or(SimTime::ZERO, |x| x.0),
        cpus: list.iter().map(|x| x.1).sum(),
        first_of_two: if list.len() == 2 { list[0].1 } else { 0 },
    };
}

/// A running job's release: its expected end, the job, and the ranges of its nodes in
/// [`Releases::words`] and [`Releases::held`].
#[derive(Debug, Clone, Copy)]
struct Release {
    end: SimTime,
    job: JobId,
    words: (u32, u32),
    held: (u32, u32),
}

impl Release {
    fn words<'a>(&self, r: &'a Releases) -> &'a [(u32, u64)] {
        &r.words[self.words.0 as usize..self.words.1 as usize]
    }
}

/// Each node's releases: those of the running jobs, kept as jobs start and end, and what
/// a backfill cycle reads of them.
#[derive(Debug, Clone, Default)]
pub(super) struct Releases {
    /// Per node, (expected end, CPUs) of the running jobs on it, by expected end.
    on_node: Vec<Vec<(SimTime, u32)>>,
    /// The running jobs by expected end (then id).
    jobs: Vec<Release>,
    /// Each job's nodes, one bit each: (word index, bits).
    words: Vec<(u32, u64)>,
    /// Each job's (node, CPUs), by node.
    held: Vec<(u32, u32)>,
    /// Per entry of `words`: the CPUs on its nodes, and where its nodes begin in `held`.
    word_cpus: Vec<(u64, u32)>,
    /// Entries of `held` left by jobs that ended (the lists are packed again when they
    /// outnumber the live ones).
    garbage: usize,
    /// The nodes with a free CPU when the cycle's first plan was made (and those of jobs
    /// that ended since).
    base: Vec<u64>,
    /// The nodes with a free CPU by `at` (and maybe some with none: a job started since
    /// took their last one).
    avail: Vec<u64>,
    /// How many of `jobs` `avail` includes, and the time it is for (`SimTime::MAX`: to be
    /// made again, the jobs changed).
    applied: usize,
    at: SimTime,
    /// Scratch: the nodes a job takes.
    found: Vec<(u32, u64)>,
    /// Per bitmap word, the latest expected end of the running jobs on its nodes
    /// (`SimTime::ZERO`: none; the latest of its nodes' `ends`): from then on all its nodes
    /// are idle, and a plan reads their free CPUs from [`Nodes::uniform`] without looking
    /// at each.
    idle_from: Vec<SimTime>,
    /// Per node, the first and the last expected end of `on_node` (`SimTime::MAX` and
    /// `SimTime::ZERO`: none) and the CPUs of all its releases, read by
    /// [`Releases::free_at`] before the list: a node a plan looks at mostly releases
    /// nothing by its time or all it holds, and these are read in node order where the
    /// lists are scattered on the heap.
    ends: Vec<NodeEnds>,
    /// The nodes a plan may use (up), one bit each, and the node epoch they are for.
    up: Vec<u64>,
    up_epoch: Option<u64>,
    /// How many jobs were added and removed: while it stays, so do the releases.
    pub changes: u64,
}

impl Releases {
    /// A job started, expected to end at `end`, holding `held`.
    pub fn add_job(&mut self, end: SimTime, job: JobId, held: &[Held]) {
        self.changes += 1;
        let top = held.iter().map(|h| h.node as usize + 1).max().unwrap_or(0);
        if self.on_node.len() < top {
            self.on_node.resize(top, Vec::new());
        }
        let rel = self.add(end, job, held);
        let at = self.jobs.partition_point(|x| (x.end, x.job) < (end, job));
        self.jobs.insert(at, rel);
        for h in held {
            let list = &mut self.on_node[h.node as usize];
            let i = list.partition_point(|x| x.0 <= end);
            list.insert(i, (end, h.cpus));
            note_ends(&mut self.ends, &self.on_node, h.node as usize);
            let w = h.node as usize / 64;
            if self.idle_from.len() <= w {
                self.idle_from.resize(w + 1, SimTime::ZERO);
            }
            self.idle_from[w] = self.idle_from[w].max(end);
        }
        self.at = SimTime::MAX;
    }

    /// A job that was expected to end at `end` no longer runs: its nodes have more free.
    pub fn remove_job(&mut self, end: SimTime, job: JobId) {
        self.changes += 1;
        let Ok(at) = self.jobs.binary_search_by(|x| (x.end, x.job).cmp(&(end, job))) else { return };
        let rel = self.jobs.remove(at);
        for &(n, c) in &self.held[rel.held.0 as usize..rel.held.1 as usize] {
            let list = &mut self.on_node[n as usize];
            if let Some(i) = list.iter().position(|&x| x == (end, c)) {
                list.remove(i);
            }
            note_ends(&mut self.ends, &self.on_node, n as usize);
        }
        for &(w, b) in &self.words[rel.words.0 as usize..rel.words.1 as usize] {
            if let Some(x) = self.base.get_mut(w as usize) {
                *x |= b;
            }
            if self.idle_from[w as usize] == end {
                let (from, to) = ((w as usize * 64).min(self.ends.len()), (w as usize * 64 + 64).min(self.ends.len()));
                self.idle_from[w as usize] = self.ends[from..to].iter().map(|e| e.last).max().unwrap_or(SimTime::ZERO);
            }
        }
        self.at = SimTime::MAX;
        self.garbage += (rel.held.1 - rel.held.0) as usize;
        if self.garbage > self.held.len() / 2 + 4096 {
            self.pack();
        }
    }

    /// The lists again without the entries of jobs that ended.
    fn pack(&mut self) {
        let (words, held, word_cpus) =
            (std::mem::take(&mut self.words), std::mem::take(&mut self.held), std::mem::take(&mut self.word_cpus));
        for rel in &mut self.jobs {
            let (w, h) = (self.words.len() as u32, self.held.len() as u32);
            self.words.extend_from_slice(&words[rel.words.0 as usize..rel.words.1 as usize]);
            self.held.extend_from_slice(&held[rel.held.0 as usize..rel.held.1 as usize]);
            self.word_cpus.extend(
                word_cpus[rel.words.0 as usize..rel.words.1 as usize]
                    .iter()
                    .map(|&(c, from)| (c, from - rel.held.0 + h)),
            );
            (rel.words, rel.held) = ((w, self.words.len() as u32), (h, self.held.len() as u32));
        }
        self.garbage = 0;
    }

    /// A backfill cycle's first plan: the nodes with a free CPU now.
    pub fn begin_cycle(&mut self, nodes: &Nodes) {
        let words = nodes.cpus.len().div_ceil(64);
        if self.idle_from.len() < words {
            self.idle_from.resize(words, SimTime::ZERO);
        }
        self.base.clone_from(&nodes.has_free);
        self.avail.clone_from(&nodes.has_free);
        self.applied = 0;
        self.at = SimTime::ZERO;
    }

    /// Lists the nodes of a job ending at `end` that holds `held`.
    fn add(&mut self, end: SimTime, job: JobId, held: &[Held]) -> Release {
        let (w, h) = (self.words.len() as u32, self.held.len() as u32);
        self.held.extend(held.iter().map(|x| (x.node, x.cpus)));
        if !self.held[h as usize..].is_sorted() {
            self.held[h as usize..].sort_unstable();
        }
        for i in h as usize..self.held.len() {
            let (n, c) = self.held[i];
            let word = n / 64;
            if self.words.len() == w as usize || self.words.last().is_some_and(|x| x.0 != word) {
                self.words.push((word, 0));
                self.word_cpus.push((0, i as u32));
            }
            self.words.last_mut().expect("pushed").1 |= 1u64 << (n % 64);
            self.word_cpus.last_mut().expect("pushed").0 += u64::from(c);
        }
        Release { end, job, words: (w, self.words.len() as u32), held: (h, self.held.len() as u32) }
    }

    /// The CPUs `job` releases on the nodes of `member` outside `blocked`, and whether it
    /// has a node there: whole words summed at once.
    fn released_on(&self, job: &Release, member: &[u64], blocked: &[u64]) -> (u64, bool) {
        let (mut sum, mut any) = (0u64, false);
        for i in job.words.0 as usize..job.words.1 as usize {
            let (w, b) = self.words[i];
            let x = b & open(member, blocked, w);
            if x == 0 {
                continue;
            }
            any = true;
            let (cpus, from) = self.word_cpus[i];
            if x == b {
                sum += cpus;
            } else {
                let to = self.word_cpus.get(i + 1).filter(|_| i + 1 < job.words.1 as usize).map_or(job.held.1, |y| y.1);
                for &(n, c) in &self.held[from as usize..to as usize] {
                    if x & (1u64 << (n % 64)) != 0 {
                        sum += u64::from(c);
                    }
                }
            }
        }
        (sum, any)
    }

    /// The running jobs whose expected end is in (`from`, `to`].
    fn ending(&self, from: SimTime, to: SimTime) -> impl Iterator<Item = &Release> {
        let v = &self.jobs;
        v[v.partition_point(|x| x.end <= from)..v.partition_point(|x| x.end <= to)].iter()
    }

    /// The CPUs that the jobs ending after `from` up to `to` release on the nodes of
    /// `member` outside `blocked`.
    pub fn released_between(&self, from: SimTime, to: SimTime, member: &[u64], blocked: &[u64]) -> u64 {
        self.ending(from, to).map(|job| self.released_on(job, member, blocked).0).sum()
    }

    /// The free CPUs at `t` of the nodes of `member` set in `bits` (one word's).
    pub fn free_in_word(&self, nodes: &Nodes, w: usize, bits: u64, member: &[u64], t: SimTime) -> u64 {
        let mut x = bits & member[w];
        if let Some(c) = self.idle_cpus(nodes, w, t) {
            return u64::from(x.count_ones()) * c;
        }
        let mut sum = 0u64;
        while x != 0 {
            let n = w * 64 + x.trailing_zeros() as usize;
            x &= x - 1;
            sum += u64::from(self.free_at(nodes, n, t));
        }
        sum
    }

    /// The first expected end after `t` and before `before` at which a job releases a
    /// CPU on a node of `member` outside `blocked`. Until then (no reservation ending,
    /// so the blocked nodes only grow) the CPUs free outside the reservations do not
    /// grow, and a plan that failed at `t` fails again at every release in between.
    pub fn next_release(
        &self,
        t: SimTime,
        before: Option<SimTime>,
        member: &[u64],
        blocked: &[u64],
    ) -> Option<SimTime> {
        self.after(t)
            .take_while(|job| before.is_none_or(|b| job.end < b))
            .find(|job| job.words(self).iter().any(|&(w, b)| b & open(member, blocked, w) != 0))
            .map(|job| job.end)
    }

    /// Adds to `free` the CPUs that the jobs ending after `t` and before `before` release
    /// on the nodes of `member` outside `blocked`, in order of end, until it reaches
    /// `need`: the time of the release that gets it there (with every release at that
    /// time counted), or `None` (all of them counted).
    pub fn count_until(
        &self,
        t: SimTime,
        before: Option<SimTime>,
        (member, blocked): (&[u64], &[u64]),
        free: &mut u64,
        need: u64,
    ) -> Option<SimTime> {
        let mut reached: Option<SimTime> = None;
        for job in self.after(t) {
            if before.is_some_and(|b| job.end >= b) || reached.is_some_and(|r| job.end > r) {
                break;
            }
            let (cpus, any) = self.released_on(job, member, blocked);
            if any {
                *free += cpus;
                if *free >= need && reached.is_none() {
                    reached = Some(job.end);
                }
            }
        }
        reached
    }

    /// Each running job's expected end and the CPUs it releases on the nodes of
    /// `member`, by end.
    pub fn per_job(&self, member: &[u64]) -> impl Iterator<Item = (SimTime, u64)> {
        self.jobs.iter().map(move |job| (job.end, self.released_on(job, member, &[]).0))
    }

    /// The running jobs that end after `t`, by end.
    fn after(&self, t: SimTime) -> impl Iterator<Item = &Release> {
        self.jobs[self.jobs.partition_point(|x| x.end <= t)..].iter()
    }

    /// Makes `avail` the nodes with a CPU free by `t`.
    fn advance(&mut self, t: SimTime) {
        if t < self.at {
            self.avail.clone_from(&self.base);
            self.applied = 0;
        }
        while let Some(job) = self.jobs.get(self.applied).filter(|x| x.end <= t) {
            // Its nodes have more free from now on.
            for &(w, b) in &self.words[job.words.0 as usize..job.words.1 as usize] {
                self.avail[w as usize] |= b;
            }
            self.applied += 1;
        }
        self.at = t;
    }

    /// The nodes of `count` nodes that [`Releases::place`] may use: those `up` says are,
    /// read again when `epoch` (the view's node epoch) changes.
    pub fn note_up(&mut self, epoch: u64, count: usize, up: impl Fn(u32) -> bool) {
        if self.up_epoch == Some(epoch) && self.up.len() == count.div_ceil(64) {
            return;
        }
        self.up = vec![0; count.div_ceil(64)];
        for n in (0..count).filter(|&n| up(n as u32)) {
            self.up[n / 64] |= 1u64 << (n % 64);
        }
        self.up_epoch = Some(epoch);
    }

    /// The free CPUs at `t` of each node of word `w`, when all its nodes are idle by then
    /// and have as many CPUs each.
    fn idle_cpus(&self, nodes: &Nodes, w: usize, t: SimTime) -> Option<u64> {
        let c = nodes.uniform.get(w).copied().filter(|&c| c > 0)?;
        let idle = self.idle_from[w] <= t;
        if cfg!(debug_assertions) && idle {
            for n in w * 64..(w * 64 + 64).min(nodes.cpus.len()) {
                debug_assert_eq!(self.free_at(nodes, n, t), c, "idle node {n} at {t:?} counted apart");
            }
        }
        idle.then_some(u64::from(c))
    }

    /// Node `n`'s free CPUs at `t` (at least just after now).
    pub fn free_at(&self, nodes: &Nodes, n: usize, t: SimTime) -> u32 {
        let mut free = nodes.free_cpus[n];
        let Some(e) = self.ends.get(n) else { return free };
        // Nothing released by `t`, or all: no branch on which (it is not foreseeable).
        if e.first > t || e.last <= t {
            return free + e.cpus * u32::from(e.last <= t);
        }
        // Two jobs, the first ended by `t` and the last not.
        if e.first_of_two > 0 {
            return free + e.first_of_two;
        }
        for &(end, cpus) in &self.on_node[n] {
            if end > t {
                break;
            }
            free += cpus;
        }
        free
    }

    /// The free CPUs at `t` on partition `p`'s nodes outside `blocked` (debug builds'
    /// checks).
    pub fn free_outside(&mut self, nodes: &Nodes, p: usize, t: SimTime, blocked: &[u64]) -> u64 {
        self.advance(t);
        let mut sum = 0u64;
        for (w, &a) in self.avail.iter().enumerate() {
            sum += self.free_in_word(nodes, w, a & !blocked.get(w).copied().unwrap_or(0), &nodes.member_bits[p], t);
        }
        sum
    }

    /// The nodes `r` (packed one-CPU tasks) takes at `t` on partition `p`'s nodes outside
    /// `blocked` that are up ([`Releases::note_up`]), in node order, as (word index,
    /// bits) (`None`: it does not fit), and, when it does not fit, the free CPUs there
    /// (when it fits, those up to its last node). The nodes of [`Nodes::place_outside`]
    /// on the nodes as they are at `t`: a reservation needs only which nodes (the tasks
    /// on each are counted again when the job starts).
    pub fn place(
        &mut self,
        nodes: &Nodes,
        p: usize,
        r: &Request,
        t: SimTime,
        blocked: &[u64],
    ) -> (u64, Option<Vec<(u32, u64)>>) {
        self.advance(t);
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        let (mut sum, mut left) = (0u64, u64::from(r.tasks));
        for (w, (&m, &a)) in nodes.member_bits[p].iter().zip(&self.avail).enumerate() {
            let mut x = m & a & !blocked.get(w).copied().unwrap_or(0);
            if x == 0 {
                continue;
            }
            let up = self.up.get(w).copied().unwrap_or(0);
            // A word of idle nodes that does not complete the job: all of it, at once.
            if let Some(c) = self.idle_cpus(nodes, w, t)
                && u64::from((x & up).count_ones()) * c < left
            {
                sum += u64::from(x.count_ones()) * c;
                left -= u64::from((x & up).count_ones()) * c;
                if x & up != 0 {
                    found.push((w as u32, x & up));
                }
                continue;
            }
            let mut bits = 0u64;
            while x != 0 && left > 0 {
                let i = x.trailing_zeros();
                x &= x - 1;
                let f = u64::from(self.free_at(nodes, w * 64 + i as usize, t));
                // Taken when up and with a free CPU; no branch on either.
                let take = u64::from(f > 0) & (up >> i) & 1;
                sum += f;
                left -= f.min(left) * take;
                bits |= take << i;
            }
            if bits != 0 {
                found.push((w as u32, bits));
            }
            // It fits once its tasks are placed (the nodes after need no look).
            if left == 0 {
                break;
            }
        }
        // The nodes go out in the scratch buffer itself ([`Releases::recycle`] gives it back).
        if left == 0 {
            return (sum, Some(found));
        }
        self.found = found;
        (sum, None)
    }

    /// The scratch buffer of [`Releases::place`], empty, to give out as it does.
    pub fn buffer(&mut self) -> Vec<(u32, u64)> {
        let mut b = std::mem::take(&mut self.found);
        b.clear();
        b
    }

    /// Gives back the buffer a fitting [`Releases::place`] gave out, once read.
    pub fn recycle(&mut self, buffer: Vec<(u32, u64)>) {
        if buffer.capacity() > self.found.capacity() {
            self.found = buffer;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::conf::SlurmConf;

    fn held(node: u32, cpus: u32) -> Held {
        Held { node, tasks: cpus, cpus, mem: 0, gpus: 0 }
    }

    #[test]
    fn reads_each_nodes_free_cpus_at_a_later_time() {
        let conf = SlurmConf::parse("NodeName=n[1-3] CPUs=4\nPartitionName=p Nodes=ALL\n", "t").unwrap();
        let mut nodes = Nodes::new(&conf);
        // Job a holds all of n1 and 2 CPUs of n2 until 100; job b the rest of n2 until 200.
        let (a, b) = (vec![held(0, 4), held(1, 2)], vec![held(1, 2)]);
        a.iter().chain(&b).for_each(|h| nodes.take(h));
        let mut rel = Releases::default();
        rel.add_job(SimTime(100), JobId(0), &a);
        rel.add_job(SimTime(200), JobId(1), &b);
        rel.begin_cycle(&nodes);
        rel.note_up(0, 3, |_| true);
        let r = |tasks| Request { tasks, cpus: 1, mem: Some(0), gpus: 0, one_per_node: false, whole_nodes: false };
        let none = [0u64];
        // At 50 only n3 is free: 4 CPUs.
        assert_eq!(rel.place(&nodes, 0, &r(5), SimTime(50), &none), (4, None));
        // The nodes taken, in order.
        let at = |v: (u64, Option<Vec<(u32, u64)>>)| {
            v.1.map(|v| {
                v.iter()
                    .flat_map(|&(w, b)| (0..64).filter(move |i| b & (1u64 << i) != 0).map(move |i| w * 64 + i))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(at(rel.place(&nodes, 0, &r(4), SimTime(50), &none)), Some(vec![2]));
        // At 100 n1 and half of n2 are free too, lowest index first.
        assert_eq!(at(rel.place(&nodes, 0, &r(7), SimTime(100), &none)), Some(vec![0, 1, 2]));
        // n1 reserved: 6 CPUs outside it; back in time, the bitset is rebuilt.
        assert_eq!(rel.place(&nodes, 0, &r(7), SimTime(150), &[0b001]), (6, None));
        assert_eq!(rel.place(&nodes, 0, &r(1), SimTime(50), &[0b100]), (0, None));
        assert_eq!(at(rel.place(&nodes, 0, &r(8), SimTime(200), &[0b001])), Some(vec![1, 2]));
        // A job started now on n3 until 300 takes its CPUs until then.
        let c = vec![held(2, 3)];
        c.iter().for_each(|h| nodes.take(h));
        rel.add_job(SimTime(300), JobId(2), &c);
        assert_eq!(at(rel.place(&nodes, 0, &r(2), SimTime(250), &[0b011])), None);
        assert_eq!(at(rel.place(&nodes, 0, &r(4), SimTime(300), &[0b011])), Some(vec![2]));
        // The releases that can help a plan with n1 reserved: b's on n2 at 200 (a's at
        // 100 touches n2 too), none before a reservation ending at 150 when n1 and n2 are.
        let member = &nodes.member_bits[0].clone();
        assert_eq!(rel.next_release(SimTime(0), None, member, &[0b001]), Some(SimTime(100)));
        assert_eq!(rel.next_release(SimTime(100), None, member, &[0b011]), Some(SimTime(300)));
        assert_eq!(rel.next_release(SimTime(100), Some(SimTime(150)), member, &[0b001]), None);
        assert_eq!(rel.next_release(SimTime(100), None, member, &[0b001]), Some(SimTime(200)));
        // Job a ends early: its CPUs are free now, not released later.
        a.iter().for_each(|h| nodes.give(h));
        rel.remove_job(SimTime(100), JobId(0));
        assert_eq!(rel.place(&nodes, 0, &r(8), SimTime(50), &none), (7, None));
        assert_eq!(at(rel.place(&nodes, 0, &r(7), SimTime(50), &none)), Some(vec![0, 1, 2]));
        assert_eq!(rel.next_release(SimTime(0), None, member, &[0b001]), Some(SimTime(200)));
        // By 400 every job has ended: the word's nodes are all idle, counted at once.
        assert_eq!(rel.place(&nodes, 0, &r(13), SimTime(400), &none), (12, None));
        assert_eq!(at(rel.place(&nodes, 0, &r(12), SimTime(400), &none)), Some(vec![0, 1, 2]));
        // n2 down: not taken, its CPUs still counted free.
        rel.note_up(1, 3, |n| n != 1);
        assert_eq!(rel.place(&nodes, 0, &r(9), SimTime(400), &none), (12, None));
        assert_eq!(at(rel.place(&nodes, 0, &r(8), SimTime(400), &none)), Some(vec![0, 2]));
    }
}
