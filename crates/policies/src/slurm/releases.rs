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
//! reservations as it moves to a later time ([`Releases::count_until`]). The answers are
//! those of the node-count map exactly.

use super::nodes::{Held, Nodes, Request};
use sim_core::job::JobId;
use sim_core::time::SimTime;

/// The nodes of `member` outside `blocked` in word `w`.
fn open(member: &[u64], blocked: &[u64], w: u32) -> u64 {
    member[w as usize] & !blocked.get(w as usize).copied().unwrap_or(0)
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
    /// Scratch: where a job goes.
    found: Vec<Held>,
}

impl Releases {
    /// A job started, expected to end at `end`, holding `held`.
    pub fn add_job(&mut self, end: SimTime, job: JobId, held: &[Held]) {
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
        }
        self.at = SimTime::MAX;
    }

    /// A job that was expected to end at `end` no longer runs: its nodes have more free.
    pub fn remove_job(&mut self, end: SimTime, job: JobId) {
        let Ok(at) = self.jobs.binary_search_by(|x| (x.end, x.job).cmp(&(end, job))) else { return };
        let rel = self.jobs.remove(at);
        for &(n, c) in &self.held[rel.held.0 as usize..rel.held.1 as usize] {
            let list = &mut self.on_node[n as usize];
            if let Some(i) = list.iter().position(|&x| x == (end, c)) {
                list.remove(i);
            }
        }
        for &(w, b) in &self.words[rel.words.0 as usize..rel.words.1 as usize] {
            if let Some(x) = self.base.get_mut(w as usize) {
                *x |= b;
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

    /// Node `n`'s free CPUs at `t` (at least just after now).
    pub fn free_at(&self, nodes: &Nodes, n: usize, t: SimTime) -> u32 {
        let mut free = nodes.free_cpus[n];
        for &(end, cpus) in self.on_node.get(n).map_or(&[][..], Vec::as_slice) {
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

    /// Where `r` (packed one-CPU tasks) goes at `t` on partition `p`'s nodes outside
    /// `blocked` that `usable` allows, in node order (`None`: it does not fit), and, when
    /// it does not fit, the free CPUs there (when it fits, those up to its last node).
    /// The answer of [`Nodes::place_outside`] on the nodes as they are at `t`.
    pub fn place(
        &mut self,
        nodes: &Nodes,
        p: usize,
        r: &Request,
        t: SimTime,
        blocked: &[u64],
        mut usable: impl FnMut(u32) -> bool,
    ) -> (u64, Option<Vec<Held>>) {
        self.advance(t);
        let mut held = std::mem::take(&mut self.found);
        held.clear();
        let (mut sum, mut left) = (0u64, r.tasks);
        'scan: for (w, (&m, &a)) in nodes.member_bits[p].iter().zip(&self.avail).enumerate() {
            let mut x = m & a & !blocked.get(w).copied().unwrap_or(0);
            while x != 0 {
                if left == 0 {
                    break 'scan;
                }
                let n = w * 64 + x.trailing_zeros() as usize;
                x &= x - 1;
                let f = self.free_at(nodes, n, t);
                if f > 0 {
                    sum += u64::from(f);
                    if usable(n as u32) {
                        let k = f.min(left);
                        left -= k;
                        held.push(Held { node: n as u32, tasks: k, cpus: k, mem: 0, gpus: 0 });
                    }
                }
            }
        }
        // It fits once its tasks are placed (the nodes after need no look).
        let out = (left == 0).then(|| held.clone());
        self.found = held;
        (sum, out)
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
        let r = |tasks| Request { tasks, cpus: 1, mem: Some(0), gpus: 0, one_per_node: false, whole_nodes: false };
        let none = [0u64];
        // At 50 only n3 is free: 4 CPUs.
        assert_eq!(rel.place(&nodes, 0, &r(5), SimTime(50), &none, |_| true), (4, None));
        let at = |v: (u64, Option<Vec<Held>>)| v.1.map(|v| v.iter().map(|h| (h.node, h.cpus)).collect::<Vec<_>>());
        assert_eq!(at(rel.place(&nodes, 0, &r(4), SimTime(50), &none, |_| true)), Some(vec![(2, 4)]));
        // At 100 n1 and half of n2 are free too, lowest index first.
        assert_eq!(at(rel.place(&nodes, 0, &r(7), SimTime(100), &none, |_| true)), Some(vec![(0, 4), (1, 2), (2, 1)]));
        // n1 reserved: 6 CPUs outside it; back in time, the bitset is rebuilt.
        assert_eq!(rel.place(&nodes, 0, &r(7), SimTime(150), &[0b001], |_| true), (6, None));
        assert_eq!(rel.place(&nodes, 0, &r(1), SimTime(50), &[0b100], |_| true), (0, None));
        assert_eq!(at(rel.place(&nodes, 0, &r(8), SimTime(200), &[0b001], |_| true)), Some(vec![(1, 4), (2, 4)]));
        // A job started now on n3 until 300 takes its CPUs until then.
        let c = vec![held(2, 3)];
        c.iter().for_each(|h| nodes.take(h));
        rel.add_job(SimTime(300), JobId(2), &c);
        assert_eq!(at(rel.place(&nodes, 0, &r(2), SimTime(250), &[0b011], |_| true)), None);
        assert_eq!(at(rel.place(&nodes, 0, &r(4), SimTime(300), &[0b011], |_| true)), Some(vec![(2, 4)]));
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
        assert_eq!(rel.place(&nodes, 0, &r(8), SimTime(50), &none, |_| true), (7, None));
        assert_eq!(at(rel.place(&nodes, 0, &r(7), SimTime(50), &none, |_| true)), Some(vec![(0, 4), (1, 2), (2, 1)]));
        assert_eq!(rel.next_release(SimTime(0), None, member, &[0b001]), Some(SimTime(200)));
    }
}
