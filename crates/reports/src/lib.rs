//! # reports: what a run produced, as tables and summaries
//!
//! * [`jobs_csv`] — one row per input job, in input order (`jobs.csv`), or Batsim's
//!   `out_jobs.csv` columns so evalys can draw it.
//! * [`summary`] — `summary.json`: counts per outcome, wait percentiles, bounded slowdown,
//!   utilization, makespan.
//!
//! * [`fgd_curves`] — the FGD paper's allocation and fragmentation curves against
//!   arrived workload.
//!
//! Later issues add per-group tables, time series, plots and the HTML report here.

pub mod compare;
pub mod fgd_curves;
pub mod frame;
pub mod jobs_csv;
pub mod plots;
pub mod report;
pub mod summary;
pub mod tables;
pub mod timeseries;

pub use summary::{RunMeta, Summary};
