//! What the workload manager does with a job whose attempt was interrupted — its node
//! failed, a controller evicted it, its policy preempted it with requeue — as the real
//! systems decide it: requeue it, count it toward a limit, fail it or hold it.
//!
//! Out-of-memory kills are not interruptions here: they have their own limit
//! ([`crate::SimConfig::oom_retries`], the Job controller's `backoffLimit`).

use crate::outcome::Interruption;
use crate::time::SimDuration;

/// The restart rule of a run (`sim run --restarts SPEC`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Restarts {
    /// Every interruption requeues the job, without limit or delay (Batsim's and
    /// AccaSim's replays; the default).
    #[default]
    Always,
    /// Slurm (`slurm.conf(5)`, `sbatch(1)`, Slurm 24.05): a batch job on a node that
    /// fails is requeued when it is requeueable (`JobRequeue=1`, the default, or
    /// `sbatch --requeue`) and ends `NODE_FAIL` otherwise (`--no-requeue`, `JobRequeue=0`);
    /// a job requeued more than `MaxBatchRequeue` times (default 5) is held instead
    /// (`scontrol show job`: reason `JobHoldMaxRequeue`, `src/slurmctld/job_mgr.c`) and runs
    /// no more. Node failures and evictions (a node powered down or reclaimed: DOWN to
    /// slurmctld) count; preemption with `PreemptMode=REQUEUE` is the scheduler's own and
    /// neither counts nor fails a job.
    Slurm {
        /// Jobs are requeued (`JobRequeue=1`, `--requeue`).
        requeue: bool,
        /// `MaxBatchRequeue`.
        max_requeue: u32,
    },
    /// Kubernetes Job (`batch/v1`, Kubernetes 1.31, `pkg/controller/job`): every failed
    /// pod counts toward `backoffLimit` (default 6) and its replacement is created after
    /// the back-off of 10 s, 20 s, 40 s, … capped at 6 min; one failure more than
    /// `backoffLimit` fails the Job (`BackoffLimitExceeded`). With `podFailurePolicy`'s
    /// rule `action: Ignore, onPodConditions: [DisruptionTarget]` (`ignore_disruptions`),
    /// pods that failed from a disruption — evicted by the node lifecycle controller's
    /// taint, a drain or a reclaim, preempted by the scheduler — are replaced at once and
    /// not counted.
    Kube {
        /// `backoffLimit`.
        backoff_limit: u32,
        /// The podFailurePolicy ignores disruptions.
        ignore_disruptions: bool,
    },
    /// Volcano (`batch.volcano.sh/v1alpha1` Job, `pkg/controllers/job`): a pod evicted or
    /// failed restarts the whole job (the `RestartJob` action of its policies) until its
    /// retries reach `maxRetry` (default 3); then the job is `Failed`.
    Volcano {
        /// `maxRetry`.
        max_retry: u32,
    },
    /// PyTorch elastic (`torchrun --nnodes=MIN:MAX --max-restarts=N`, PyTorch 2.5
    /// `torch.distributed.elastic`): a node lost (failed, reclaimed) is a membership change;
    /// the agents on the nodes left restart the whole worker group at once, from its last
    /// checkpoint, on those nodes, as long as at least MIN tasks are left (the job's
    /// `min_tasks`; its work is then shared by fewer workers). Each such restart counts
    /// toward `max_restarts` (default 0, torchrun's) and the one past it fails the job. A job
    /// that cannot go on (not elastic, fewer than MIN left, not bound to nodes) or that was
    /// preempted goes back to the workload manager's queue, where a new launch starts
    /// torchrun's count again.
    Torchrun {
        /// `--max-restarts`.
        max_restarts: u32,
    },
}

/// What becomes of an interrupted job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Back to the queue after this long (zero: at once).
    Requeue {
        /// The delay.
        after: SimDuration,
    },
    /// It ends `failed`, for this reason.
    Fail(String),
    /// It is held and runs no more: it ends `unfinished` with this reason.
    Hold(String),
    /// It goes on at once on the tasks whose nodes are left ([`Restarts::Torchrun`]).
    Continue,
}

impl Restarts {
    /// Whether an interruption by `cause` counts toward the limit.
    pub fn counts(self, cause: Interruption) -> bool {
        match self {
            Restarts::Always => false,
            Restarts::Slurm { .. } => matches!(cause, Interruption::Failure | Interruption::Eviction),
            Restarts::Kube { ignore_disruptions, .. } => !ignore_disruptions,
            Restarts::Volcano { .. } => true,
            Restarts::Torchrun { .. } => matches!(cause, Interruption::Failure | Interruption::Eviction),
        }
    }

    /// The verdict on an interruption by `cause`, `counted` being the job's counted
    /// interruptions so far, this one included when it counts.
    pub fn verdict(self, cause: Interruption, counted: u32) -> Verdict {
        let now = Verdict::Requeue { after: SimDuration::ZERO };
        if !self.counts(cause) {
            return now;
        }
        match self {
            Restarts::Always => now,
            Restarts::Slurm { requeue: false, .. } => Verdict::Fail("NODE_FAIL: not requeueable (--no-requeue)".into()),
            // Slurm's reason code first: `squeue` and `sacct` show the job pending for it.
            Restarts::Slurm { max_requeue, .. } if counted > max_requeue => Verdict::Hold(format!(
                "JobHoldMaxRequeue: held, requeued {counted} times, more than MaxBatchRequeue={max_requeue}"
            )),
            Restarts::Slurm { .. } => now,
            Restarts::Kube { backoff_limit, .. } if counted > backoff_limit => {
                Verdict::Fail(format!("BackoffLimitExceeded: {counted} pods failed, backoffLimit={backoff_limit}"))
            }
            Restarts::Kube { .. } => Verdict::Requeue { after: crate::engine::oom_backoff(counted) },
            Restarts::Volcano { max_retry } if counted > max_retry => {
                Verdict::Fail(format!("Failed: {counted} restarts, maxRetry={max_retry}"))
            }
            Restarts::Volcano { .. } => now,
            Restarts::Torchrun { max_restarts } if counted > max_restarts => {
                Verdict::Fail(format!("torchrun: {counted} restarts, more than max_restarts={max_restarts}"))
            }
            Restarts::Torchrun { .. } => Verdict::Continue,
        }
    }

    /// The canonical spec that [`Restarts::parse`] reads back.
    pub fn spec(self) -> String {
        let yes = |b: bool| if b { "yes" } else { "no" };
        match self {
            Restarts::Always => "always".into(),
            Restarts::Slurm { requeue, max_requeue } => format!("slurm[requeue={},max={max_requeue}]", yes(requeue)),
            Restarts::Kube { backoff_limit, ignore_disruptions } => {
                format!("kube[backoff_limit={backoff_limit},ignore_disruptions={}]", yes(ignore_disruptions))
            }
            Restarts::Volcano { max_retry } => format!("volcano[max_retry={max_retry}]"),
            Restarts::Torchrun { max_restarts } => format!("torchrun[max_restarts={max_restarts}]"),
        }
    }

    /// Reads `always`, `slurm[requeue=yes|no,max=N]`, `kube[backoff_limit=N,ignore_disruptions=yes|no]`,
    /// `volcano[max_retry=N]` or `torchrun[max_restarts=N]`; options left out take the real
    /// system's defaults.
    pub fn parse(spec: &str) -> Result<Restarts, String> {
        let spec = spec.trim();
        let (name, opts) = match spec.split_once('[') {
            Some((n, rest)) => {
                let inner = rest.strip_suffix(']').ok_or_else(|| format!("'{spec}': expected ']' at the end"))?;
                (n.trim(), inner)
            }
            None => (spec, ""),
        };
        let mut r = match name {
            "always" => Restarts::Always,
            "slurm" => Restarts::Slurm { requeue: true, max_requeue: 5 },
            "kube" => Restarts::Kube { backoff_limit: 6, ignore_disruptions: false },
            "volcano" => Restarts::Volcano { max_retry: 3 },
            "torchrun" => Restarts::Torchrun { max_restarts: 0 },
            _ => return Err(format!("'{name}': expected always, slurm, kube, volcano or torchrun")),
        };
        for kv in opts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("'{kv}': expected KEY=VALUE"))?;
            let (k, v) = (k.trim(), v.trim());
            let count = || v.parse::<u32>().map_err(|_| format!("{k}='{v}': expected a whole number"));
            let flag = || match v {
                "yes" | "true" | "1" => Ok(true),
                "no" | "false" | "0" => Ok(false),
                _ => Err(format!("{k}='{v}': expected yes or no")),
            };
            match (&mut r, k) {
                (Restarts::Slurm { requeue, .. }, "requeue") => *requeue = flag()?,
                (Restarts::Slurm { max_requeue, .. }, "max") => *max_requeue = count()?,
                (Restarts::Kube { backoff_limit, .. }, "backoff_limit") => *backoff_limit = count()?,
                (Restarts::Kube { ignore_disruptions, .. }, "ignore_disruptions") => *ignore_disruptions = flag()?,
                (Restarts::Volcano { max_retry }, "max_retry") => *max_retry = count()?,
                (Restarts::Torchrun { max_restarts }, "max_restarts") => *max_restarts = count()?,
                _ => return Err(format!("'{k}': not an option of {name} ({})", Restarts::options(name))),
            }
        }
        Ok(r)
    }

    fn options(name: &str) -> &'static str {
        match name {
            "slurm" => "requeue, max",
            "kube" => "backoff_limit, ignore_disruptions",
            "volcano" => "max_retry",
            "torchrun" => "max_restarts",
            _ => "none",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_read_back_with_the_real_defaults() {
        assert_eq!(Restarts::parse("slurm").unwrap(), Restarts::Slurm { requeue: true, max_requeue: 5 });
        assert_eq!(Restarts::parse("kube").unwrap(), Restarts::Kube { backoff_limit: 6, ignore_disruptions: false });
        assert_eq!(Restarts::parse("volcano").unwrap(), Restarts::Volcano { max_retry: 3 });
        for s in [
            "always",
            "slurm[requeue=no,max=2]",
            "kube[backoff_limit=0,ignore_disruptions=yes]",
            "volcano[max_retry=1]",
            "torchrun[max_restarts=3]",
        ] {
            assert_eq!(Restarts::parse(s).unwrap().spec(), s);
        }
        assert!(Restarts::parse("slurm[backoff_limit=1]").unwrap_err().contains("requeue, max"));
        assert!(Restarts::parse("kube[backoff_limit=x]").unwrap_err().contains("whole number"));
        assert!(Restarts::parse("lsf").is_err());
        assert!(Restarts::parse("slurm[max=1").is_err());
    }

    #[test]
    fn slurm_holds_past_max_batch_requeue_and_ignores_preemption() {
        let r = Restarts::Slurm { requeue: true, max_requeue: 2 };
        let zero = Verdict::Requeue { after: SimDuration::ZERO };
        assert_eq!(r.verdict(Interruption::Failure, 2), zero);
        assert!(matches!(r.verdict(Interruption::Failure, 3), Verdict::Hold(_)));
        assert!(!r.counts(Interruption::Preemption));
        assert_eq!(r.verdict(Interruption::Preemption, 9), zero);
        let no = Restarts::Slurm { requeue: false, max_requeue: 5 };
        assert!(matches!(no.verdict(Interruption::Eviction, 1), Verdict::Fail(_)));
    }

    #[test]
    fn kube_backs_off_then_fails_past_backoff_limit() {
        let r = Restarts::Kube { backoff_limit: 2, ignore_disruptions: false };
        assert_eq!(r.verdict(Interruption::Failure, 1), Verdict::Requeue { after: SimDuration::from_secs(10) });
        assert_eq!(r.verdict(Interruption::Preemption, 2), Verdict::Requeue { after: SimDuration::from_secs(20) });
        assert!(matches!(r.verdict(Interruption::Failure, 3), Verdict::Fail(_)));
        let ignore = Restarts::Kube { backoff_limit: 0, ignore_disruptions: true };
        assert_eq!(ignore.verdict(Interruption::Eviction, 7), Verdict::Requeue { after: SimDuration::ZERO });
        let v = Restarts::Volcano { max_retry: 1 };
        assert!(matches!(v.verdict(Interruption::Preemption, 2), Verdict::Fail(_)));
    }

    #[test]
    fn torchrun_goes_on_until_max_restarts_and_leaves_preemption_to_the_scheduler() {
        let t = Restarts::Torchrun { max_restarts: 1 };
        assert_eq!(t.verdict(Interruption::Failure, 1), Verdict::Continue);
        assert_eq!(t.verdict(Interruption::Eviction, 1), Verdict::Continue);
        assert!(matches!(t.verdict(Interruption::Failure, 2), Verdict::Fail(_)));
        assert!(!t.counts(Interruption::Preemption));
        assert_eq!(t.verdict(Interruption::Preemption, 5), Verdict::Requeue { after: SimDuration::ZERO });
        assert_eq!(Restarts::parse("torchrun").unwrap(), Restarts::Torchrun { max_restarts: 0 });
    }
}
