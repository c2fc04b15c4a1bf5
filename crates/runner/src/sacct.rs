//! The wiring of `sacct.txt` ([`reports::sacct`]): whether a run writes it, where its
//! jobs ran, when its time zero is and what the accounting calls its partitions and
//! nodes.
//!
//! * Written for a run of the `slurm` policy, or of any policy with `--sacct`.
//! * Where jobs ran: the engine's records keep the units a job held but not the nodes it
//!   was bound to, so a controller that only observes starts ([`Placements`]; it never
//!   acts) reads each attempt's nodes from the running job (its bindings, else the nodes
//!   of its units). Attached, it makes the engine track units and node states (as any
//!   attached controller does); the schedule is the same.
//! * Time zero: SWF's `UnixStartTime`, a sacct dump's first day (as its reader counts
//!   times), the Philly and Helios importers' fixed epochs; else 1970-01-01T00:00:00.
//! * Names: with `--slurm-conf`, its nodes and partitions; without, the names the `slurm`
//!   policy gives the cluster it adopts (`n<id>`, one partition `batch`). QOS names: with
//!   a `slurm.conf`, the QOS the `slurm` policy files a job under (its queue's index in the
//!   `--qos` file, else `normal`); without, the trace's own names (a sacct dump's, whose
//!   queue ids count them from 1).

use crate::RunError;
use reports::sacct::{Accounting, Partition};
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::policy::SchedView;
use sim_core::{Job, RunResult, SimTime};
use traces::{Format, Workload};

/// Whether a run of policy `spec` (canonical) writes `sacct.txt`: `--sacct`, or the
/// `slurm` policy.
pub fn wanted(sacct_flag: bool, spec: &str) -> bool {
    sacct_flag || spec == "slurm" || spec.starts_with("slurm[")
}

/// The nodes each job's last attempt held, ascending, by job index (input order, then
/// the jobs controllers submitted); `None` for a job that never started.
pub type Placed = Vec<Option<reports::sacct::NodeRuns>>;

/// A controller that observes starts and keeps the nodes each attempt holds; it never
/// acts, relabels nothing and sets no timer.
pub struct Placements<'a> {
    /// Where it keeps them.
    pub placed: &'a mut Placed,
}

impl Controller for Placements<'_> {
    fn spec(&self) -> String {
        "sacct-placements".into()
    }
    fn interests(&self) -> Interests {
        Interests { starts: true, ..Interests::default() }
    }
    fn may_relabel(&self) -> bool {
        false
    }
    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, _: &mut Vec<Action>) {
        let Observed::Started { job } = *event else { return };
        let Some(r) = view.running_job(job) else { return };
        let nodes = r.nodes(view.cluster());
        let i = job.idx();
        if self.placed.len() <= i {
            self.placed.resize(i + 1, None);
        }
        self.placed[i] = (!nodes.is_empty()).then(|| reports::sacct::NodeRuns::from_sorted(&nodes));
    }
}

/// The run's controllers, with [`Placements`] keeping its starts' nodes in `placed`
/// after them when there is one.
pub fn with_placements<'a>(
    controllers: Vec<Box<dyn Controller>>,
    placed: Option<&'a mut Placed>,
) -> Vec<Box<dyn Controller + 'a>> {
    let mut all: Vec<Box<dyn Controller + 'a>> =
        controllers.into_iter().map(|c| c as Box<dyn Controller + 'a>).collect();
    if let Some(placed) = placed {
        all.push(Box::new(Placements { placed }));
    }
    all
}

/// Seconds since 1970-01-01T00:00:00 of the workload's time zero, when the trace says.
pub fn epoch_secs(w: &Workload, trace_name: &str) -> Option<i64> {
    match w.format {
        Format::Swf => w.header.iter().find_map(|line| {
            let (key, value) = line.trim_start_matches(';').split_once(':')?;
            key.trim().eq_ignore_ascii_case("UnixStartTime").then(|| value.trim().parse::<i64>().ok()).flatten()
        }),
        Format::Philly => Some(traces::philly::EPOCH_SECS),
        Format::Helios => Some(traces::helios::EPOCH_SECS),
        Format::Sacct => {
            // The reader counts from midnight of the first job row's Submit: read up to it.
            use traces::import::JobReader;
            let path = std::path::Path::new(trace_name);
            let input = traces::input::open(path, trace_name).ok()?;
            let mut r = traces::sacct::SacctReader::new(input, trace_name).ok()?;
            r.next_job().ok()?;
            r.epoch_secs()
        }
        _ => None,
    }
}

/// When a run stopped: its horizon, the time a stalled run was stopped, else its last
/// submission, start or end.
pub fn run_end(horizon: Option<SimTime>, result: &RunResult, jobs: &[Job]) -> SimTime {
    horizon.or(result.stall.as_ref().map(|s| s.at)).unwrap_or_else(|| {
        let records = result.records.iter().flat_map(|r| [r.start, r.end]).flatten();
        jobs.iter().map(|j| j.submit).chain(records).max().unwrap_or_default()
    })
}

/// Everything `sacct.txt` needs besides the jobs and records: the run's `slurm.conf`,
/// workload and trace name, where its jobs ran and when it stopped.
pub fn accounting(
    slurm_conf: Option<&std::path::Path>,
    slurm_qos: Option<&std::path::Path>,
    w: &Workload,
    trace_name: &str,
    placed: Placed,
    now: SimTime,
) -> Result<Accounting, RunError> {
    let mut conf = slurm_conf.map(crate::input::slurm_conf).transpose()?;
    if let (Some(c), Some(q)) = (conf.as_mut(), slurm_qos) {
        c.qos = crate::input::slurm_qos(q)?;
    }
    let (partitions, default_partition, node_names, node_cpus) = match &conf {
        Some(c) => {
            let partitions = c
                .partitions
                .iter()
                .map(|p| Partition {
                    name: p.name.clone(),
                    default_limit: p.default_time.or(p.max_time),
                    whole_nodes: c.select.linear || p.oversubscribe == policies::slurm::conf::OverSubscribe::Exclusive,
                })
                .collect();
            let names = c.nodes.iter().map(|n| n.name.clone()).collect();
            let cpus = c.nodes.iter().map(|n| n.cpus.max(1)).collect();
            (partitions, c.partition_of(-1), names, cpus)
        }
        None => {
            let names = (0..w.cluster.node_count()).map(|i| format!("n{i}")).collect();
            let cpus = w.cluster.nodes().map(|(_, s, _)| s.cores.max(1)).collect();
            (vec![Partition::batch()], 0, names, cpus)
        }
    };
    let (qos_names, default_qos) = match &conf {
        // As the slurm policy files jobs: the queue's QOS, else `normal`, else the first.
        Some(c) => (c.qos.iter().map(|q| q.name.clone()).collect(), Some(c.qos_of(-1))),
        // The trace's names, by id from 1.
        None if !w.names.queues.is_empty() => {
            (std::iter::once(String::new()).chain(w.names.queues.iter().cloned()).collect(), None)
        }
        None => (Vec::new(), None),
    };
    Ok(Accounting {
        epoch_secs: epoch_secs(w, trace_name).unwrap_or(0),
        qos_names,
        default_qos,
        now,
        partitions,
        default_partition,
        node_names,
        node_cpus,
        nodes: placed,
        priorities: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slurm_policy_and_the_flag_write_it() {
        assert!(wanted(false, "slurm"));
        assert!(wanted(false, "slurm[bf_interval=30]"));
        assert!(!wanted(false, "easy"));
        assert!(!wanted(false, "slurmish"));
        assert!(wanted(true, "easy"));
    }
}
