//! QOS limits and preemption, as `slurmctld` applies them.
//!
//! Sources (Slurm 24.05): `doc/html/resource_limits.shtml` (limits and the pending
//! reasons they give; a job held by a limit is passed over, it does not block its
//! partition: `_schedule` in `job_scheduler.c` moves to the next job when
//! `acct_policy_job_runnable_pre_select` fails), `doc/html/preempt.shtml`
//! (`PreemptType`, `PreemptMode`, `GraceTime`, `PreemptExemptTime`),
//! `src/plugins/preempt/qos/preempt_qos.c` and `partition_prio/preempt_partition_prio.c`.
//!
//! * **Limits** of the job's QOS: `MaxWall` and `MaxTRESPerJob` (a job over them stays
//!   pending: `QOSMaxWallDurationPerJobLimit`, `QOSMaxCpuPerJobLimit`,
//!   `QOSMaxGRESPerJob`, `QOSMaxNodePerJobLimit`), `MaxJobsPerUser` over the user's running
//!   jobs of that QOS (`QOSMaxJobsPerUserLimit`), `GrpTRES` over all running jobs of the
//!   QOS (`QOSGrpCpuLimit`, `QOSGrpGRES`, `QOSGrpNodeLimit`).
//! * **Preemption**: a pending job that cannot start for want of resources may preempt
//!   running jobs it outranks — with `preempt/qos`, jobs whose QOS its QOS's `Preempt`
//!   list names; with `preempt/partition_prio`, jobs of partitions of a lower
//!   `PriorityTier` — that have run at least `PreemptExemptTime` and whose `PreemptMode`
//!   (their QOS's, else their partition's, else the cluster's) is not `OFF`. Candidates
//!   are taken lowest QOS priority (partition tier) first, then the most recently
//!   started, until the job fits; those on the nodes it would get are preempted. Each
//!   gets its QOS's `GraceTime` (SIGTERM, then SIGKILL when it ends) and holds its
//!   resources until then. `REQUEUE`: it goes back to the queue with its id, counting a
//!   restart; `CANCEL`: it ends for good, `preempted` (Slurm's job state `PREEMPTED`).
//!   The preemptor starts when they are gone, at the next scheduler run. `SUSPEND` (gang
//!   time-slicing) needs the engine to pause a running job; a configuration that uses it
//!   is refused (`Slurm::from_conf`).

use super::conf::{PreemptMode, PreemptType};
use super::nodes::{Held, Request};
use super::{Run, Slurm};
use sim_core::job::JobId;
use sim_core::policy::{Decision, SchedView};
use sim_core::time::SimTime;

impl Slurm {
    /// Why a limit of its QOS keeps `j` pending now (Slurm's reason), if one does.
    pub(super) fn limit_reason(&self, view: &SchedView<'_>, j: JobId, r: &Request) -> Option<&'static str> {
        let job = view.job(j);
        let qi = self.conf.qos_of(job.queue());
        let q = &self.conf.qos[qi];
        if q.max_wall.is_some_and(|w| self.limit(view, j) > w) {
            return Some("QOSMaxWallDurationPerJobLimit");
        }
        let (cpus, gpus, nodes) = Self::tres_of(r);
        let per_job = &q.max_tres_per_job;
        if per_job.cpu.is_some_and(|m| cpus > m) {
            return Some("QOSMaxCpuPerJobLimit");
        }
        if per_job.gpu.is_some_and(|m| gpus > m) {
            return Some("QOSMaxGRESPerJob");
        }
        if per_job.node.is_some_and(|m| nodes > m) {
            return Some("QOSMaxNodePerJobLimit");
        }
        if let Some(m) = q.max_jobs_per_user
            && self.user_running.get(&(qi, job.user())).copied().unwrap_or(0) >= m
        {
            return Some("QOSMaxJobsPerUserLimit");
        }
        let used = self.qos_running.get(qi).copied().unwrap_or([0; 3]);
        let grp = &q.grp_tres;
        if grp.cpu.is_some_and(|m| used[0] + cpus > m) {
            return Some("QOSGrpCpuLimit");
        }
        if grp.gpu.is_some_and(|m| used[1] + gpus > m) {
            return Some("QOSGrpGRES");
        }
        if grp.node.is_some_and(|m| used[2] + nodes > m) {
            return Some("QOSGrpNodeLimit");
        }
        None
    }

    /// CPUs, GPUs and (at least) nodes a request counts against TRES limits.
    pub(super) fn tres_of(r: &Request) -> (u64, u64, u64) {
        let nodes = if r.one_per_node || r.whole_nodes { u64::from(r.tasks) } else { 1 };
        (r.total_cpus(), u64::from(r.tasks) * u64::from(r.gpus), nodes)
    }

    /// What a running job counts against its QOS's limits, added or taken away.
    pub(super) fn count_usage(&mut self, run: &Run, add: bool) {
        let n = self.user_running.entry((run.qos, run.user)).or_default();
        let used = &mut self.qos_running[run.qos];
        let tres = [run.tres.0, run.tres.1, run.tres.2];
        if add {
            *n += 1;
            (0..3).for_each(|i| used[i] += tres[i]);
        } else {
            *n = n.saturating_sub(1);
            (0..3).for_each(|i| used[i] = used[i].saturating_sub(tres[i]));
        }
    }

    /// The preemption mode of running job `v` (its QOS's, else its partition's, else the
    /// cluster's).
    fn mode_of(&self, v: &Run) -> PreemptMode {
        self.conf.qos[v.qos]
            .preempt_mode
            .or(self.conf.partitions[v.part].preempt_mode)
            .unwrap_or(self.conf.preempt_mode)
    }

    /// Whether a job of QOS `qos` in partition `part` may preempt running job `v`.
    fn outranks(&self, qos: usize, part: usize, v: &Run, now: SimTime) -> bool {
        let may = match self.conf.preempt_type {
            PreemptType::None => false,
            PreemptType::Qos => self.conf.qos[qos].preempt.contains(&v.qos),
            PreemptType::PartitionPrio => {
                self.conf.partitions[v.part].priority_tier < self.conf.partitions[part].priority_tier
            }
        };
        may && self.mode_of(v) != PreemptMode::Off && now.saturating_since(v.start) >= self.conf.preempt_exempt_time
    }

    /// Tries to make room for pending job `j` by preempting jobs it outranks; returns
    /// whether it did (then `j` waits for them to go).
    pub(super) fn preempt_for(
        &mut self,
        view: &SchedView<'_>,
        j: JobId,
        p: usize,
        r: &Request,
        out: &mut Vec<Decision>,
    ) -> bool {
        if self.conf.preempt_type == PreemptType::None {
            return false;
        }
        let now = view.now();
        // Already waiting for jobs it preempted: nothing more until they are gone.
        if self.preemptors.get(&j).is_some_and(|vs| vs.iter().any(|v| self.running.contains_key(v))) {
            return true;
        }
        let qos = self.conf.qos_of(view.job(j).queue());
        let mut cands: Vec<(u32, std::cmp::Reverse<SimTime>, JobId)> = self
            .running
            .iter()
            .filter(|(v, run)| !self.preempting.contains(v) && self.outranks(qos, p, run, now))
            .map(|(&v, run)| {
                let rank = match self.conf.preempt_type {
                    PreemptType::PartitionPrio => self.conf.partitions[run.part].priority_tier,
                    _ => self.conf.qos[run.qos].priority,
                };
                (rank, std::cmp::Reverse(run.start), v)
            })
            .collect();
        cands.sort_unstable();
        let mut freed: Vec<JobId> = Vec::new();
        let mut placed: Option<Vec<Held>> = None;
        for &(_, _, v) in &cands {
            for h in &self.running[&v].held {
                self.nodes.give(h);
            }
            freed.push(v);
            if let Some(held) = self.nodes.place(p, r, |n| Self::node_up(view, n)) {
                placed = Some(held);
                break;
            }
        }
        for v in &freed {
            for h in &self.running[v].held {
                self.nodes.take(h);
            }
        }
        let Some(held) = placed else { return false };
        let on: std::collections::BTreeSet<u32> = held.iter().map(|h| h.node).collect();
        let victims: Vec<JobId> =
            freed.into_iter().filter(|v| self.running[v].held.iter().any(|h| on.contains(&h.node))).collect();
        for &v in &victims {
            self.preempting.insert(v);
            let run = &self.running[&v];
            let grace = self.conf.qos[run.qos].grace_time;
            let by = view.job(j).trace_id();
            out.push(if self.mode_of(run) == PreemptMode::Cancel {
                Decision::Cancel { job: v, grace, reason: format!("preempted (PreemptMode=CANCEL) by job {by}") }
            } else {
                Decision::Evict { job: v, grace, reason: format!("preempted (PreemptMode=REQUEUE) by job {by}") }
            });
        }
        self.preemptors.insert(j, victims);
        true
    }
}
