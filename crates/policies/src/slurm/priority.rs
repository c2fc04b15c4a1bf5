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
//! Factors are recalculated every `PriorityCalcPeriod` (and a job's at its submission),
//! as Slurm's decay thread does; usage is charged then, for the time each running job
//! ran since the last recalculation.

use super::conf::SlurmConf;
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
            tree: AssocTree::new(),
            users: BTreeMap::new(),
            fairshare: Vec::new(),
        }
    }

    /// Job `j`'s priority (0 before it was computed; all 0 under `priority/basic`, whose
    /// order is the submit order).
    pub fn of(&self, j: JobId) -> u64 {
        self.values.get(j.idx()).copied().unwrap_or(0)
    }

    /// Whether a recalculation is due at `now`.
    pub fn recalculate_due(&self, now: SimTime) -> bool {
        self.multifactor && self.next.is_some_and(|t| now >= t)
    }

    /// When the next recalculation is due (`None` under `priority/basic`).
    pub fn next_due(&self) -> Option<SimTime> {
        if self.multifactor { self.next } else { None }
    }

    /// The user association of job `j`, made when first seen (share 1, Slurm's default).
    fn assoc(&mut self, view: &SchedView<'_>, j: JobId) -> usize {
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
        let a = self.tree.add_user(account, &format!("u{}", key.1), 1);
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

/// The multifactor sum of job `j` with fair-share factor `fs`.
fn value(view: &SchedView<'_>, j: JobId, conf: &SlurmConf, fs: f64) -> u64 {
    let p = &conf.priority;
    let job = view.job(j);
    let age = {
        let max = p.max_age.as_secs_f64();
        if max <= 0.0 { 1.0 } else { (view.now().saturating_since(job.submit()).as_secs_f64() / max).min(1.0) }
    };
    let size = size_factor(view, j, conf);
    let part = &conf.partitions[conf.partition_of(job.partition())];
    let max_factor = conf.partitions.iter().map(|p| p.priority_job_factor).max().unwrap_or(1).max(1);
    let partition = f64::from(part.priority_job_factor) / f64::from(max_factor);
    let max_qos = conf.qos.iter().map(|q| q.priority).max().unwrap_or(0);
    let qos =
        if max_qos == 0 { 0.0 } else { f64::from(conf.qos[conf.qos_of(job.queue())].priority) / f64::from(max_qos) };
    let sum = f64::from(p.weight_age) * age
        + f64::from(p.weight_fairshare) * fs
        + f64::from(p.weight_job_size) * size
        + f64::from(p.weight_partition) * partition
        + f64::from(p.weight_qos) * qos;
    (sum as u64).max(1)
}

/// `_get_job_size_factor`: the mean of the job's share of the nodes (its minimum node
/// count) and of the CPUs; with `PriorityFavorSmall` of what it leaves.
fn size_factor(view: &SchedView<'_>, j: JobId, conf: &SlurmConf) -> f64 {
    let job = view.job(j);
    let t = job.task();
    let nodes_total = conf.nodes.len().max(1) as f64;
    let cpus_total: f64 = conf.nodes.iter().map(|n| f64::from(n.cpus)).sum::<f64>().max(1.0);
    let min_nodes = if t.cores > 1 || t.gpus > 0 { f64::from(job.tasks().max(1)) } else { 1.0 };
    let cpus = f64::from(job.tasks()) * f64::from(t.cores.max(1));
    let f = if conf.priority.favor_small {
        ((nodes_total - min_nodes) / nodes_total + (cpus_total - cpus) / cpus_total) / 2.0
    } else {
        (min_nodes / nodes_total + cpus / cpus_total) / 2.0
    };
    f.clamp(0.0, 1.0)
}
