//! # runner: schedlab's run pipeline
//!
//! Configuration → load → simulate → outputs, as a library: `sim run`, `sim compare`,
//! `sim report` and `sim trace convert` are thin command-line layers over it (the binary
//! keeps clap and exit codes only), and anything else can drive a replay the same way.
//!
//! * [`input`] — an [`input::Input`] (trace, format, cluster, node list, …) read into a
//!   workload on its cluster through [`traces::open`], with the notes a user should see
//!   (rows skipped, flags that do nothing, GPU models the cluster lacks);
//! * [`run`] — a [`run::RunOptions`] (policy, controllers, seed, limits, outputs):
//!   the policy and controllers built, the replay simulated, the run folder written
//!   (`jobs.csv`, `summary.json`, `frame.csv`, `fragmentation.csv`, `decisions.jsonl`,
//!   `sacct.txt`), each file whole or not at all ([`output`]); [`fragmentation`] is the
//!   FGD measure of `fragmentation.csv`, [`sacct`] the wiring of `sacct.txt`;
//! * [`stream`] — the same replay of an SWF file read a job at a time and written as the
//!   jobs leave the system, its memory following the jobs in the system;
//! * [`compare`] — a plan of (policy, seed) runs replayed in parallel, results in plan
//!   order whatever the thread count;
//! * [`report`] — run folders read back and the report written;
//! * [`sweep`] — a grid of traces × policies × settings × seeds from a `sweep.toml`, one
//!   cell per Slurm array task or Kubernetes Job index, merged into `sim compare`'s report;
//! * [`fgd`] — the FGD paper's placement experiments on openb node and pod lists
//!   (`sim fgd`): every (workload, placement, seed) in parallel, the curves written.
//!
//! Errors are [`RunError`]: bad input or usage (the command exits 2) or anything else
//! (exit 1).

pub mod billing;
pub mod compare;
pub mod fgd;
pub mod fragmentation;
pub mod input;
pub mod output;
pub mod reorder;
pub mod report;
pub mod run;
pub mod sacct;
pub mod stream;
pub mod sweep;
pub mod vary;

/// Why a run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad input or usage: a trace that cannot be read, an unknown policy or option, a
    /// bad flag value. Not fatal to anything but this command (exit status 2).
    #[error("{0}")]
    BadInput(String),
    /// Anything else: an output that cannot be written, a policy that made an invalid
    /// decision (exit status 1).
    #[error("{0}")]
    Other(String),
}

impl RunError {
    /// Whether the input or usage is at fault.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, RunError::BadInput(_))
    }
}
