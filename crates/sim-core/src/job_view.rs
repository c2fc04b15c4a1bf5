//! What a policy or controller may know of a job: everything its user submitted, not how
//! it will really run. [`crate::policy::SchedView::job`] hands out a [`JobView`]; the
//! facts a real scheduler cannot know (how long the job really runs, its actual peak GPU
//! memory) reach a policy only through the named oracle accessors
//! [`crate::policy::SchedView::oracle_runtime`] and
//! [`crate::policy::SchedView::gpu_peak_mib`], which only variants declared clairvoyant
//! use. Slurm and kube-scheduler likewise see a job's request (`--time`, resource
//! requests), never its future.

use crate::constraints::PodConstraints;
use crate::job::{Job, JobKind, TaskShape};
use crate::time::{SimDuration, SimTime};

/// A job as a scheduler sees it: the submitted request, without its actual run time,
/// its actual peak GPU memory, or how it ended in the traced system.
#[derive(Clone, Copy, Debug)]
pub struct JobView<'a> {
    job: &'a Job,
}

impl<'a> JobView<'a> {
    /// The scheduler's view of `job`.
    pub fn of(job: &'a Job) -> Self {
        JobView { job }
    }
    /// The id the trace gives it.
    pub fn trace_id(&self) -> &'a str {
        &self.job.trace_id
    }
    /// Submission time.
    pub fn submit(&self) -> SimTime {
        self.job.submit
    }
    /// Gang size: number of identical tasks.
    pub fn tasks(&self) -> u32 {
        self.job.tasks
    }
    /// What each task asks for, as a copy whose `gpu_peak_mib` reads 0 (unknown): the
    /// actual peak is the oracle [`crate::policy::SchedView::gpu_peak_mib`].
    pub fn task(&self) -> TaskShape {
        TaskShape { gpu_peak_mib: 0, ..self.job.task }
    }
    /// Requested time limit as the trace gives it (`None`: not stated); see
    /// [`crate::policy::SchedView::requested`] for the limit the engine applies.
    pub fn requested(&self) -> Option<SimDuration> {
        self.job.requested
    }
    /// User id.
    pub fn user(&self) -> u32 {
        self.job.user
    }
    /// Group or account.
    pub fn group(&self) -> u32 {
        self.job.group
    }
    /// Queue (Slurm QOS, SWF queue number).
    pub fn queue(&self) -> i32 {
        self.job.queue
    }
    /// What becomes of its pod when its container fails.
    pub fn restart_policy(&self) -> crate::job::RestartPolicy {
        self.job.restart_policy
    }
    /// Its scheduling domain ([`crate::domain`]; 0 in a run without domains).
    pub fn domain(&self) -> u8 {
        self.job.domain
    }
    /// Partition.
    pub fn partition(&self) -> i32 {
        self.job.partition
    }
    /// Priority (higher first where a policy uses it).
    pub fn priority(&self) -> i64 {
        self.job.priority
    }
    /// Kind.
    pub fn kind(&self) -> JobKind {
        self.job.kind
    }
    /// GPU models it may run on (empty: any).
    pub fn gpu_models(&self) -> &'a [String] {
        &self.job.gpu_models
    }
    /// Node selector, node affinity and tolerations.
    pub fn constraints(&self) -> Option<&'a PodConstraints> {
        self.job.constraints.as_deref()
    }
    /// Elastic gangs: the fewest tasks it may start with as given (0: all).
    pub fn min_tasks(&self) -> u32 {
        self.job.min_tasks
    }
    /// Fewest tasks it may start with (`tasks` unless elastic).
    pub fn needed_tasks(&self) -> u32 {
        self.job.needed_tasks()
    }
    /// Units (cores) the whole gang needs.
    pub fn units(&self) -> u64 {
        self.job.units()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_actual_gpu_memory_peak_is_hidden() {
        let mut j = Job::rigid("1", SimTime(5), 4, SimDuration(10), SimDuration(20));
        j.task.gpu_peak_mib = 30_000;
        j.task.gpu_memory_mib = 16_000;
        let v = JobView::of(&j);
        assert_eq!(v.task().gpu_peak_mib, 0);
        assert_eq!(v.task().gpu_memory_mib, 16_000);
        assert_eq!((v.submit(), v.units(), v.requested()), (SimTime(5), 4, Some(SimDuration(20))));
    }
}
