//! # reports: what a run produced, as tables and summaries
//!
//! * [`jobs_csv`] — one row per input job, in input order (`jobs.csv`), or Batsim's
//!   `out_jobs.csv` columns so evalys can draw it.
//! * [`summary`] — `summary.json`: counts per outcome, wait percentiles, bounded slowdown,
//!   utilization, makespan.
//! * [`sacct`] — `sacct.txt`: the jobs as Slurm's `sacct --parsable2` shows them, with
//!   Slurm's time, duration, state and host-list notations.
//!
//! * [`fgd_curves`] — the FGD paper's allocation and fragmentation curves against
//!   arrived workload.
//!
//! * [`report`] — the report of one or more runs (tables, plots, `report.html`), built
//!   in memory.
//! * `parquet` (feature `parquet`, off by default: it pulls in polars) — Parquet copies of
//!   every table and a lazy-polars analysis over many runs.

pub mod compare;
pub mod domains;
pub mod fgd_curves;
pub mod fragmentation;
pub mod frame;
pub mod jobs_csv;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod plots;
pub mod report;
pub mod sacct;
pub mod summary;
pub mod tables;
pub mod timeseries;

pub use summary::{RunMeta, Summary};
