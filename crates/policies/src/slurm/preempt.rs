//! QOS limits and preemption, as `slurmctld` applies them.
//!
//! Sources (Slurm 24.05): `doc/html/resource_limits.shtml` (limits and the pending
//! reasons they give; a job held by a limit is passed over, it does not block its
//! partition: `_schedule` in `job_scheduler.c` moves to the next job when
//! `acct_policy_job_runnable_pre_select` fails), `doc/html/preempt.shtml`
//! (`PreemptType`, `PreemptMode`, `GraceTime`, `PreemptExemptTime`),
//! `src/plugins/preempt/qos/preempt_qos.c` and `partition_prio/preempt_partition_prio.c`.
//!
//! * **Limits**, applied only with `AccountingStorageEnforce=limits` (or `safe`, `all`;
//!   `acct_policy_job_runnable_pre_select` in `src/slurmctld/acct_policy.c` passes every
//!   job without it). Those of the job's QOS: `MaxWall` and `MaxTRESPerJob` (a job over them stays
//!   pending: `QOSMaxWallDurationPerJobLimit`, `QOSMaxCpuPerJobLimit`,
//!   `QOSMaxGRESPerJob`, `QOSMaxNodePerJobLimit`), `MaxJobsPerUser` over the user's running
//!   jobs of that QOS (`QOSMaxJobsPerUserLimit`), `GrpTRES` over all running jobs of the
//!   QOS (`QOSGrpCpuLimit`, `QOSGrpGRES`, `QOSGrpNodeLimit`).
//! * **Preemption**: a pending job that cannot start for want of resources may preempt
//!   running jobs it outranks — with `preempt/qos`, jobs whose QOS its QOS's `Preempt`
//!   list names; with `preempt/partition_prio`, jobs of partitions of a lower
//!   `PriorityTier` — that have run at least `PreemptExemptTime` and whose `PreemptMode`
//!   (with `preempt/qos` their QOS's, with `preempt/partition_prio` their partition's,
//!   else the cluster's: `preempt_p_get_mode` of each plugin) is not `OFF`. Candidates
//!   are taken lowest QOS priority (partition tier) first, then the most recently
//!   started, until the job fits; those on the nodes it would get are preempted. Each
//!   gets its QOS's `GraceTime` (SIGTERM, then SIGKILL when it ends) and holds its
//!   resources until then. `REQUEUE`: it goes back to the queue with its id, counting a
//!   restart; `CANCEL`: it ends for good, `preempted` (Slurm's job state `PREEMPTED`).
//!   The preemptor starts when they are gone, at the next scheduler run.
//! * **`SUSPEND`** (with `GANG` in the cluster's `PreemptMode`; `Slurm::from_conf` refuses
//!   it otherwise): the victims are suspended at once and the preemptor starts in the same
//!   scheduler run on what they lend (`_preempt_jobs` in `src/slurmctld/node_scheduler.c`
//!   leaves them to the gang scheduler and lets the preemptor start; `GraceTime` is not
//!   used, `suspend_grace_time`'s SIGTSTP-to-SIGSTOP delay is not modelled). A suspended
//!   job keeps its memory and, against every job but its preemptor, its CPUs and GPUs;
//!   it is resumed when its preemptor ends (`gs_job_fini` in `src/slurmctld/gang.c`),
//!   before the schedulers run, its time limit moved by the time it was suspended. With
//!   `preempt/qos` a job suspends only jobs of a partition of a lower `PriorityTier`
//!   (`preempt.shtml`: "a preempting job needs to be submitted to a partition with a
//!   higher PriorityTier or to the same partition"; the same partition means gang
//!   time-slicing, not modelled). If some victims must be requeued or cancelled, those
//!   go first and the preemptor waits for them, as `_preempt_jobs` makes it wait.

use super::conf::{PreemptMode, PreemptType};
use super::nodes::{Held, Request};
use super::{By, Run, Slurm};
use sim_core::job::JobId;
use sim_core::policy::{Decision, SchedView};
use sim_core::time::SimTime;

/// What [`Slurm::preempt_for`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Preemption {
    /// Nothing: the job cannot make room by preempting.
    None,
    /// Jobs are being requeued or cancelled for it: it waits for them to go.
    Waiting,
    /// The jobs in its way were suspended and it started.
    Started,
}

/// A job suspended for a preemptor.
#[derive(Debug, Clone)]
pub(super) struct Suspended {
    /// It as it ran (its expected end as it was when suspended).
    run: Run,
    /// The preemptor; it is resumed when that has ended.
    by: JobId,
    /// When it was suspended.
    since: SimTime,
    /// The CPUs and GPUs it lent that its preemptor did not take: kept from other jobs.
    reserved: Vec<Held>,
}

/// The reason for the first `GrpTRES` limit (CPUs, GPUs, nodes) that running `used` plus
/// a job's `add` would pass.
fn over_grp(grp: &super::qos::Tres, used: [u64; 3], add: [u64; 3], reasons: [&'static str; 3]) -> Option<&'static str> {
    let limits = [grp.cpu, grp.gpu, grp.node];
    (0..3).find(|&i| limits[i].is_some_and(|m| used[i] + add[i] > m)).map(|i| reasons[i])
}

/// What a hold counts of CPUs and GPUs only (what a suspended job lends).
fn compute_of(h: &Held) -> Held {
    Held { mem: 0, ..h.clone() }
}

/// What a hold counts of memory only (what a suspended job keeps).
fn memory_of(h: &Held) -> Held {
    Held { cpus: 0, gpus: 0, ..h.clone() }
}

impl Slurm {
    /// Why a limit of its QOS keeps `j` pending now (Slurm's reason), if one does.
    pub(super) fn limit_reason(&self, view: &SchedView<'_>, j: JobId, r: &Request) -> Option<&'static str> {
        if !self.conf.enforce_limits {
            return None;
        }
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
        if let Some(why) = self.assoc_limit_reason(j, r) {
            return Some(why);
        }
        let used = self.qos_running.get(qi).copied().unwrap_or([0; 3]);
        over_grp(&q.grp_tres, used, [cpus, gpus, nodes], ["QOSGrpCpuLimit", "QOSGrpGRES", "QOSGrpNodeLimit"])
    }

    /// The limits of a `--assoc` file by association (none without limits): `MaxJobs`,
    /// and `GrpTRES` (checked when the file was read).
    pub(super) fn assoc_limits(conf: &super::conf::SlurmConf) -> Vec<(Option<u32>, super::qos::Tres)> {
        let Some(a) = &conf.assoc else { return Vec::new() };
        let limits: Vec<(Option<u32>, super::qos::Tres)> =
            a.limits.iter().map(|l| (l.max_jobs, super::qos::Tres::parse(&l.grp_tres).unwrap_or_default())).collect();
        let any = limits.iter().any(|(m, t)| m.is_some() || *t != super::qos::Tres::default());
        if any { limits } else { Vec::new() }
    }

    /// Why a limit of job `j`'s associations keeps it pending (`resource_limits.shtml`):
    /// `MaxJobs` over its user association's running jobs (an account's `MaxJobs` is
    /// inherited by the user associations under it without one: `AssocMaxJobsLimit`),
    /// `GrpTRES` over the running jobs of each association up to root and its children
    /// (`AssocGrpCpuLimit`, `AssocGrpGRES`, `AssocGrpNodeLimit`).
    fn assoc_limit_reason(&self, j: JobId, r: &Request) -> Option<&'static str> {
        let a = *self.job_assoc.get(j.idx())?;
        let nodes = self.priority.tree().nodes();
        let chain = std::iter::successors(Some(a), |&n| nodes.get(n).and_then(|x| x.parent));
        let used = |n: usize| self.assoc_used.get(n).copied().unwrap_or([0; 4]);
        let max_jobs = chain.clone().find_map(|n| self.assoc_limits.get(n).and_then(|l| l.0));
        if max_jobs.is_some_and(|m| used(a)[0] >= u64::from(m)) {
            return Some("AssocMaxJobsLimit");
        }
        let (cpus, gpus, nodes_n) = Self::tres_of(r);
        let reasons = ["AssocGrpCpuLimit", "AssocGrpGRES", "AssocGrpNodeLimit"];
        chain
            .filter_map(|n| Some((self.assoc_limits.get(n)?, used(n))))
            .find_map(|((_, grp), u)| over_grp(grp, [u[1], u[2], u[3]], [cpus, gpus, nodes_n], reasons))
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
        if run.assoc != usize::MAX {
            let nodes = self.priority.tree().nodes();
            let add4 = [1, tres[0], tres[1], tres[2]];
            for n in std::iter::successors(Some(run.assoc), |&n| nodes.get(n).and_then(|x| x.parent)) {
                if self.assoc_used.len() <= n {
                    self.assoc_used.resize(n + 1, [0; 4]);
                }
                let u = &mut self.assoc_used[n];
                (0..4).for_each(|i| u[i] = if add { u[i] + add4[i] } else { u[i].saturating_sub(add4[i]) });
            }
        }
    }

    /// The preemption mode of running job `v`: with `preempt/qos` its QOS's, with
    /// `preempt/partition_prio` its partition's, else the cluster's (`preempt_p_get_mode`
    /// of each plugin).
    fn mode_of(&self, v: &Run) -> PreemptMode {
        let own = match self.conf.preempt_type {
            PreemptType::Qos => self.conf.qos[v.qos].preempt_mode,
            PreemptType::PartitionPrio => self.conf.partitions[v.part].preempt_mode,
            PreemptType::None => None,
        };
        own.unwrap_or(self.conf.preempt_mode)
    }

    /// Whether a job of QOS `qos` in partition `part` may preempt running job `v`.
    fn outranks(&self, qos: usize, part: usize, v: &Run, now: SimTime) -> bool {
        let may = match self.conf.preempt_type {
            PreemptType::None => false,
            PreemptType::Qos => {
                self.conf.qos[qos].preempt.contains(&v.qos)
                    && (self.mode_of(v) != PreemptMode::Suspend
                        || self.conf.partitions[v.part].priority_tier < self.conf.partitions[part].priority_tier)
            }
            PreemptType::PartitionPrio => {
                self.conf.partitions[v.part].priority_tier < self.conf.partitions[part].priority_tier
            }
        };
        may && self.mode_of(v) != PreemptMode::Off && now.saturating_since(v.start) >= self.conf.preempt_exempt_time
    }

    /// Tries to make room for pending job `j` by preempting jobs it outranks: it waits
    /// for them to go, or starts at once when they are suspended (`by` says which
    /// scheduler it started from).
    pub(super) fn preempt_for(
        &mut self,
        view: &SchedView<'_>,
        j: JobId,
        p: usize,
        r: &Request,
        by: By,
        out: &mut Vec<Decision>,
    ) -> Preemption {
        if self.conf.preempt_type == PreemptType::None {
            return Preemption::None;
        }
        let now = view.now();
        // Already waiting for jobs it preempted: nothing more until they are gone.
        if self.preemptors.get(&j).is_some_and(|vs| vs.iter().any(|v| self.running.contains_key(v))) {
            return Preemption::Waiting;
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
        // A job to be suspended frees its CPUs and GPUs, not its memory.
        let freed_by = |s: &Self, v: &JobId| -> Vec<Held> {
            let run = &s.running[v];
            let suspend = s.mode_of(run) == PreemptMode::Suspend;
            run.held.iter().map(|h| if suspend { compute_of(h) } else { h.clone() }).collect()
        };
        for &(_, _, v) in &cands {
            for h in freed_by(self, &v) {
                self.nodes.give(&h);
            }
            freed.push(v);
            if let Some(held) = self.nodes.place(p, r, |n| Self::node_up(view, n)) {
                placed = Some(held);
                break;
            }
        }
        for v in &freed {
            for h in freed_by(self, v) {
                self.nodes.take(&h);
            }
        }
        let Some(held) = placed else { return Preemption::None };
        let on: std::collections::BTreeSet<u32> = held.iter().map(|h| h.node).collect();
        let victims: Vec<JobId> =
            freed.into_iter().filter(|v| self.running[v].held.iter().any(|h| on.contains(&h.node))).collect();
        let (suspend, victims): (Vec<JobId>, Vec<JobId>) =
            victims.into_iter().partition(|v| self.mode_of(&self.running[v]) == PreemptMode::Suspend);
        if victims.is_empty() {
            self.suspend_for(view, j, r, held, suspend, by, out);
            return Preemption::Started;
        }
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
        Preemption::Waiting
    }

    /// Suspends `victims` and starts `j` on `held`, which their CPUs and GPUs make room
    /// for; what they lend beyond it stays theirs.
    #[allow(clippy::too_many_arguments)]
    fn suspend_for(
        &mut self,
        view: &SchedView<'_>,
        j: JobId,
        r: &Request,
        held: Vec<Held>,
        victims: Vec<JobId>,
        by: By,
        out: &mut Vec<Decision>,
    ) {
        let now = view.now();
        let who = view.job(j).trace_id();
        for &v in &victims {
            let run = self.untrack(v).expect("a running victim");
            for h in &run.held {
                self.nodes.give(&compute_of(h));
            }
            let reason = format!("preempted (PreemptMode=SUSPEND,GANG) by job {who}");
            out.push(Decision::Suspend { job: v, reason });
            self.suspended.insert(v, Suspended { run, by: j, since: now, reserved: Vec::new() });
        }
        let by = if matches!(by, By::Submit | By::Main) { By::Suspending } else { by };
        self.start(view, j, r, held, by, out);
        for v in victims {
            let s = self.suspended.get_mut(&v).expect("just suspended");
            for h in &s.run.held {
                let n = h.node as usize;
                let keep = Held {
                    node: h.node,
                    tasks: 0,
                    cpus: h.cpus.min(self.nodes.free_cpus[n]),
                    mem: 0,
                    gpus: h.gpus & self.nodes.free_gpus[n],
                };
                self.nodes.take(&keep);
                s.reserved.push(keep);
            }
        }
    }

    /// Resumes, oldest suspension first, the suspended jobs whose preemptor has ended
    /// and whose CPUs and GPUs are free again (the gang scheduler at a job's end).
    pub(super) fn resume_suspended(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let now = view.now();
        let mut due: Vec<(SimTime, JobId)> = self
            .suspended
            .iter()
            .filter(|(_, s)| !self.running.contains_key(&s.by) && !self.suspended.contains_key(&s.by))
            .map(|(&v, s)| (s.since, v))
            .collect();
        due.sort_unstable();
        for (_, v) in due {
            let s = self.suspended.remove(&v).expect("listed");
            for x in &s.reserved {
                self.nodes.give(x);
            }
            let n = &self.nodes;
            let fits = s.run.held.iter().all(|h| {
                let i = h.node as usize;
                n.free_cpus[i] >= h.cpus && n.free_gpus[i] & h.gpus == h.gpus
            });
            if !fits {
                for x in &s.reserved {
                    self.nodes.take(x);
                }
                self.suspended.insert(v, s);
                continue;
            }
            for h in &s.run.held {
                self.nodes.take(&compute_of(h));
            }
            let mut run = s.run;
            run.expected_end = run.expected_end + now.saturating_since(s.since);
            self.track(v, run);
            out.push(Decision::Resume { job: v });
        }
    }

    /// A suspended job the engine let go (its node failed): what it kept comes back.
    pub(super) fn drop_suspended(&mut self, v: JobId) {
        let Some(s) = self.suspended.remove(&v) else { return };
        for h in &s.run.held {
            self.nodes.give(&memory_of(h));
        }
        for x in &s.reserved {
            self.nodes.give(x);
        }
        self.count_usage(&s.run, false);
    }
}
