//! Job priority: `priority/basic` (submit order) or `priority/multifactor`.
//!
//! Source: `doc/html/priority_multifactor.shtml` and
//! `src/plugins/priority/multifactor/priority_multifactor.c` (Slurm 24.05):
//!
//! ```text
//! priority = W_age·age + W_fairshare·fairshare + W_jobsize·jobsize + W_partition·partition
//!          + W_qos·qos + W_assoc·assoc          (each factor in [0, 1]; at least 1)
//! ```
//!
//! * age: time since submission over `PriorityMaxAge`, at most 1;
//! * job size (`_get_job_size_factor`): the mean of the job's share of the nodes and of
//!   the CPUs (`PriorityFavorSmall=YES`: of what it leaves free);
//! * partition: the partition's `PriorityJobFactor` over the largest one;
//! * fair share: [`super::fairshare`]'s Fair Tree or classic factor of the job's user
//!   under its account, from CPU-seconds of usage decayed with `PriorityDecayHalfLife`;
//! * QOS: the job's QOS `Priority` over the largest QOS priority (0 when all are 0);
//! * association: 0 (the association `Priority` is not read from `--assoc`).
//!
//! The association tree is the `--assoc` file's (`sacctmgr show assoc`), its accounts and
//! users named as the trace's jobs are (`g<group>`, `u<user>`: the runner renames a sacct
//! dump's names so); a job whose association it lacks gets one of share 1 under its
//! account (made under root if missing). Without the file: one account per group, one
//! user association per (group, user), share 1.
//!
//! Factors are recalculated every `PriorityCalcPeriod` (and a job's at its submission),
//! as Slurm's decay thread does; usage is charged then, for the time each running job
//! ran since the last recalculation.

use super::conf::{PriorityConf, SlurmConf};
use super::fairshare::AssocTree;
use sim_core::job::JobId;
use sim_core::policy::SchedView;
use sim_core::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// Every job's priority and what it is computed from.
#[derive(Debug, Clone)]
pub struct Priorities {
    multifactor: bool,
    /// Per job (by index).
    values: Vec<u64>,
    /// When the factors are next recalculated.
    next: Option<SimTime>,
    /// When usage was last charged.
    last: Option<SimTime>,
    /// The association tree: root → one account per group → one user association per
    /// (group, user).
    tree: AssocTree,
    users: BTreeMap<(u32, u32), usize>,
    /// The fair-share factor of each association, from the last recalculation.
    fairshare: Vec<f64>,
}

impl Priorities {
    /// Nothing computed yet.
    pub fn new(conf: &SlurmConf) -> Self {
        Priorities {
            multifactor: conf.priority.multifactor,
            values: Vec::new(),
            next: None,
            last: None,
            tree: conf.assoc.as_ref().map_or_else(AssocTree::new, |a| a.tree.clone()),
            users: BTreeMap::new(),
            fairshare: Vec::new(),
        }
    }

    /// Job `j`'s priority (0 before it was computed; all 0 under `priority/basic`, whose
    /// order is the submit order).
    pub fn of(&self, j: JobId) -> u64 {
        self.values.get(j.idx()).copied().unwrap_or(0)
    }

    /// The association tree.
    pub(super) fn tree(&self) -> &AssocTree {
        &self.tree
    }

    /// Whether a recalculation is due at `now`.
    pub fn recalculate_due(&self, now: SimTime) -> bool {
        self.multifactor && self.next.is_some_and(|t| now >= t)
    }

    /// When the next recalculation is due (`None` under `priority/basic`).
    pub fn next_due(&self) -> Option<SimTime> {
        if self.multifactor { self.next } else { None }
    }

    /// The user association of job `j`: user `u<user>` under account `g<group>` in the
    /// `--assoc` tree, else made when first seen (share 1, Slurm's default).
    pub(super) fn assoc(&mut self, view: &SchedView<'_>, j: JobId) -> usize {
        let job = view.job(j);
        let key = (job.group(), job.user());
        if let Some(&a) = self.users.get(&key) {
            return a;
        }
        let name = format!("g{}", key.0);
        let account = match self.tree.find_account(&name) {
            Some(a) => a,
            None => self.tree.add_account(0, &name, 1),
        };
        let user = format!("u{}", key.1);
        let a = match self.tree.find_user(account, &user) {
            Some(a) => a,
            None => self.tree.add_user(account, &user, 1),
        };
        self.users.insert(key, a);
        a
    }

    /// A job entered the queue: its priority from the current factors.
    pub fn on_submit(&mut self, view: &SchedView<'_>, j: JobId, conf: &SlurmConf) {
        if !self.multifactor {
            return;
        }
        if self.next.is_none() {
            self.next = Some(view.now() + conf.priority.calc_period);
            self.last = Some(view.now());
        }
        let a = self.assoc(view, j);
        if self.values.len() <= j.idx() {
            self.values.resize(j.idx() + 1, 0);
        }
        let fs = self.fairshare.get(a).copied().unwrap_or(1.0);
        self.values[j.idx()] = value(view, j, conf, fs);
    }

    /// Charges usage, decays it, recomputes fair share and every pending job's priority.
    pub fn recalculate(&mut self, view: &SchedView<'_>, conf: &SlurmConf, running: impl Iterator<Item = JobId>) {
        let now = view.now();
        let since = self.last.unwrap_or(now);
        let elapsed = now.saturating_since(since);
        let hl = conf.priority.decay_half_life.as_secs_f64();
        self.tree.decay(super::fairshare::decay_factor(elapsed.as_secs_f64(), hl));
        if let Some(period) = conf.priority.usage_reset
            && now.as_micros() / period.as_micros().max(1) != since.as_micros() / period.as_micros().max(1)
        {
            self.tree.reset_usage();
        }
        for j in running {
            let a = self.assoc(view, j);
            let started = view.running_job(j).map_or(since, |r| r.start.max(since));
            let cpus = view.job(j).tasks() as f64 * view.job(j).task().cores.max(1) as f64;
            // A QOS's UsageFactor scales the usage its jobs are charged.
            let factor = conf.qos[conf.qos_of(view.job(j).queue())].usage_factor;
            self.tree.add_usage(a, factor * cpus * now.saturating_since(started).as_secs_f64());
        }
        self.fairshare = if conf.priority.fair_tree {
            self.tree.fair_tree()
        } else {
            self.tree.classic(f64::from(conf.priority.dampening.max(1)))
        };
        for &j in view.queue() {
            let a = self.assoc(view, j);
            if self.values.len() <= j.idx() {
                self.values.resize(j.idx() + 1, 0);
            }
            let fs = self.fairshare.get(a).copied().unwrap_or(1.0);
            self.values[j.idx()] = value(view, j, conf, fs);
        }
        self.last = Some(now);
        self.next = Some(now + conf.priority.calc_period.max(SimDuration::from_secs(1)));
    }
}

/// A job's factors, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Factors {
    /// Age: time since submission over `PriorityMaxAge`, at most 1.
    pub age: f64,
    /// Fair share.
    pub fairshare: f64,
    /// Job size.
    pub size: f64,
    /// Partition: its `PriorityJobFactor` over the largest.
    pub partition: f64,
    /// QOS: its `Priority` over the largest.
    pub qos: f64,
}

impl Factors {
    /// The weighted sum (`priority_p_calc_priority`'s, truncated), at least 1.
    pub fn priority(&self, p: &PriorityConf) -> u64 {
        let sum = f64::from(p.weight_age) * self.age
            + f64::from(p.weight_fairshare) * self.fairshare
            + f64::from(p.weight_job_size) * self.size
            + f64::from(p.weight_partition) * self.partition
            + f64::from(p.weight_qos) * self.qos;
        (sum as u64).max(1)
    }
}

/// The age factor of a job waiting `waited` seconds.
pub fn age_factor(waited: f64, max_age: SimDuration) -> f64 {
    let max = max_age.as_secs_f64();
    if max <= 0.0 { 1.0 } else { (waited / max).min(1.0) }
}

/// `_get_job_size_factor`: the mean of the job's share of the nodes (its minimum node
/// count) and of the CPUs; with `PriorityFavorSmall` of what it leaves.
pub fn size_factor_of(min_nodes: f64, cpus: f64, nodes_total: f64, cpus_total: f64, favor_small: bool) -> f64 {
    let (nodes_total, cpus_total) = (nodes_total.max(1.0), cpus_total.max(1.0));
    let f = if favor_small {
        ((nodes_total - min_nodes) / nodes_total + (cpus_total - cpus) / cpus_total) / 2.0
    } else {
        (min_nodes / nodes_total + cpus / cpus_total) / 2.0
    };
    f.clamp(0.0, 1.0)
}

/// `value`'s share of the largest of `all` (0 when all are 0).
pub fn share_of_max(value: u32, all: impl Iterator<Item = u32>) -> f64 {
    let max = all.max().unwrap_or(0);
    if max == 0 { 0.0 } else { f64::from(value) / f64::from(max) }
}

/// The multifactor sum of job `j` with fair-share factor `fs`.
fn value(view: &SchedView<'_>, j: JobId, conf: &SlurmConf, fs: f64) -> u64 {
    let job = view.job(j);
    let t = job.task();
    let min_nodes = if t.cores > 1 || t.gpus > 0 { f64::from(job.tasks().max(1)) } else { 1.0 };
    let cpus = f64::from(job.tasks()) * f64::from(t.cores.max(1));
    let cpus_total: f64 = conf.nodes.iter().map(|n| f64::from(n.cpus)).sum();
    let part = &conf.partitions[conf.partition_of(job.partition())];
    Factors {
        age: age_factor(view.now().saturating_since(job.submit()).as_secs_f64(), conf.priority.max_age),
        fairshare: fs,
        size: size_factor_of(min_nodes, cpus, conf.nodes.len() as f64, cpus_total, conf.priority.favor_small),
        partition: share_of_max(part.priority_job_factor, conf.partitions.iter().map(|p| p.priority_job_factor)),
        qos: share_of_max(conf.qos[conf.qos_of(job.queue())].priority, conf.qos.iter().map(|q| q.priority)),
    }
    .priority(&conf.priority)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(age: u32, fs: u32, size: u32, part: u32, qos: u32) -> PriorityConf {
        PriorityConf {
            weight_age: age,
            weight_fairshare: fs,
            weight_job_size: size,
            weight_partition: part,
            weight_qos: qos,
            ..PriorityConf::default()
        }
    }

    #[test]
    fn age_grows_to_max_age_then_stays() {
        let week = SimDuration::from_secs(7 * 86_400);
        assert_eq!(age_factor(0.0, week), 0.0);
        assert_eq!(age_factor(3.5 * 86_400.0, week), 0.5);
        assert_eq!(age_factor(30.0 * 86_400.0, week), 1.0);
        assert_eq!(age_factor(5.0, SimDuration::ZERO), 1.0);
    }

    #[test]
    fn job_size_is_the_mean_of_the_node_and_cpu_shares() {
        // 10 nodes of 16 CPUs: a 4-node, 64-CPU job has (4/10 + 64/160) / 2 = 0.4; with
        // PriorityFavorSmall (6/10 + 96/160) / 2 = 0.6. A one-CPU job: (0.1 + 1/160) / 2.
        assert!((size_factor_of(4.0, 64.0, 10.0, 160.0, false) - 0.4).abs() < 1e-12);
        assert!((size_factor_of(4.0, 64.0, 10.0, 160.0, true) - 0.6).abs() < 1e-12);
        assert!((size_factor_of(1.0, 1.0, 10.0, 160.0, false) - 0.053125).abs() < 1e-12);
    }

    #[test]
    fn partition_and_qos_are_shares_of_the_largest() {
        assert_eq!(share_of_max(50, [10, 50, 100].into_iter()), 0.5);
        assert_eq!(share_of_max(0, [0, 0].into_iter()), 0.0);
    }

    #[test]
    fn the_sum_is_weighted_and_truncated() {
        // Slurm's priority_multifactor.shtml example weights: age 1000, fair share 10000,
        // job size 1000, partition 1000, QOS 10000. Factors 0.5, 0.25, 0.4, 1, 0.1:
        // 500 + 2500 + 400 + 1000 + 1000 = 5400.
        let f = Factors { age: 0.5, fairshare: 0.25, size: 0.4, partition: 1.0, qos: 0.1 };
        assert_eq!(f.priority(&weights(1000, 10_000, 1000, 1000, 10_000)), 5400);
        // 0.3333 × 1000 = 333.3 truncates to 333; all weights 0 still gives 1.
        let third = Factors { age: 1.0 / 3.0, fairshare: 0.0, size: 0.0, partition: 0.0, qos: 0.0 };
        assert_eq!(third.priority(&weights(1000, 0, 0, 0, 0)), 333);
        assert_eq!(third.priority(&weights(0, 0, 0, 0, 0)), 1);
    }
}
