//! The workload model [`super::Generator`] draws from: its types, its rules, and its TOML
//! form (read with [`Model::from_toml`], written with [`Model::to_toml`]).

use crate::error::{Location, TraceError};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use sim_core::job::JobKind;
use std::fmt;

/// A synthetic workload: how jobs arrive, who submits them, and the job classes they are
/// drawn from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// A name for reports (free text).
    #[serde(default)]
    pub name: String,
    /// Machine size in processors (the SWF header's `MaxProcs`); also caps the processors
    /// (tasks × cores) of each job. `None`: no cap.
    #[serde(default, deserialize_with = "positive_opt", skip_serializing_if = "Option::is_none")]
    pub procs: Option<u64>,
    /// GPUs per node: caps the GPUs of each task. `None`: no cap.
    #[serde(default, deserialize_with = "positive_opt", skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<u32>,
    /// Queue numbers (SWF queue, Slurm QOS); `None`: every job gets queue -1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<Discrete<i32>>,
    /// The arrival process.
    #[serde(deserialize_with = "checked")]
    pub arrivals: Arrivals,
    /// The user population (one user when absent).
    #[serde(default, deserialize_with = "checked")]
    pub users: Users,
    /// The job classes (`[[classes]]`), at least one.
    pub classes: Vec<Class>,
}

/// How submissions are spread in time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Process {
    /// A Poisson process of constant rate.
    Poisson,
    /// A Poisson process whose rate follows the hour of the day and the day of the week.
    Modulated,
    /// Bursts (flurries) of jobs on top of a Poisson background.
    Bursts,
}

/// How many jobs a burst holds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BurstSize {
    /// 1 + a geometric number of extra jobs (memoryless, heavy-ish tail).
    #[default]
    Geometric,
    /// 1 + a Poisson number of extra jobs (concentrated around the mean).
    Poisson,
}

/// The arrival process (`[arrivals]`).
///
/// Time is counted in seconds from the clock's zero; for [`Process::Modulated`] second 0
/// starts hour 0 of day 0: hour `floor(t / 3600) mod 24`, day `floor(t / 86400) mod 7`.
/// A model fitted to a trace keeps the trace's time zero, which need not be a midnight or
/// a Monday (see [`crate::stats`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arrivals {
    /// The process.
    pub process: Process,
    /// Mean jobs per hour, all of them (for bursts: background plus bursts); at least
    /// [`MIN_RATE_PER_HOUR`].
    pub rate_per_hour: f64,
    /// No job arrives before this time, in seconds (at most [`MAX_START`]).
    #[serde(default)]
    pub start: f64,
    /// Modulated: 24 hour-of-day rate factors, finite, ≥ 0, with a finite sum > 0
    /// (normalised to mean 1; all 1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour_factors: Option<Vec<f64>>,
    /// Modulated: 7 day-of-week rate factors, finite, ≥ 0, with a finite sum > 0
    /// (normalised to mean 1; all 1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_factors: Option<Vec<f64>>,
    /// Bursts: bursts per hour (a Poisson process), at least [`MIN_RATE_PER_HOUR`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bursts_per_hour: Option<f64>,
    /// Bursts: mean jobs per burst (≥ 1). `bursts_per_hour × burst_jobs` may not exceed
    /// `rate_per_hour`; the rest of the rate is a Poisson background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_jobs: Option<f64>,
    /// Bursts: the law of the burst size (geometric when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_size: Option<BurstSize>,
    /// Bursts: the jobs of a burst are spread uniformly over this many seconds after its
    /// start (0 when absent: all at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_spread: Option<f64>,
}

/// The user population (`[users]`): users `1..=count`, user `k` submitting a share
/// proportional to `k^-zipf` (0: all alike).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Users {
    /// Number of users.
    pub count: u32,
    /// Zipf exponent of user activity.
    #[serde(default)]
    pub zipf: f64,
}

impl Default for Users {
    fn default() -> Self {
        Users { count: 1, zipf: 0.0 }
    }
}

/// One job class (`[[classes]]`): each job is of a class drawn by weight, then each
/// quantity is drawn independently from the class's distributions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    /// Name (free text, e.g. `mpi_batch`).
    pub name: String,
    /// Kind of its jobs.
    #[serde(default)]
    pub kind: JobKind,
    /// Relative weight (finite, ≥ 0; the weights of all classes have a finite sum > 0).
    #[serde(deserialize_with = "non_negative")]
    pub weight: f64,
    /// Gang size (tasks), values ≥ 1.
    #[serde(deserialize_with = "positive_values")]
    pub tasks: Discrete<u32>,
    /// Cores per task, values ≥ 1 (1 when absent).
    #[serde(default, deserialize_with = "positive_values_opt", skip_serializing_if = "Option::is_none")]
    pub cores: Option<Discrete<u32>>,
    /// GPUs per task (0 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<Discrete<u32>>,
    /// Declared GPU memory per GPU in MiB, for tasks with GPUs (0 = not stated when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_mib: Option<Discrete<u64>>,
    /// Host memory per task in MiB (0 = not stated when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<Discrete<u64>>,
    /// Run time in seconds (negative samples count as 0).
    pub runtime: Continuous,
    /// Over-estimation factor: requested time = run time × factor, factors below 1 taken
    /// as 1. Absent (and no `requested_by_runtime`): the request equals the run time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overestimate: Option<Continuous>,
    /// Requested time conditioned on the run time, instead of `overestimate` (not with
    /// it): bins of run time, each with the law of the requests of its jobs. A factor
    /// drawn independently of the run time puts the large factors of short jobs on long
    /// ones (issue 24: a mean request of 7.7 M s where the trace had 13.7 k s); a request
    /// drawn among jobs of similar run time keeps them apart. At least one bin, bounds
    /// increasing (see [`RuntimeBin`]).
    #[serde(default, deserialize_with = "checked_bins", skip_serializing_if = "Option::is_none")]
    pub requested_by_runtime: Option<Vec<RuntimeBin>>,
    /// Largest requested time in seconds (finite, ≥ 0), whichever law drew it; a request
    /// is never lowered below its job's run time, so a job running longer requests its
    /// run time. Absent: no cap.
    #[serde(default, deserialize_with = "non_negative_opt", skip_serializing_if = "Option::is_none")]
    pub max_requested: Option<f64>,
    /// Actual peak GPU memory per GPU in MiB, for out-of-memory modelling (0 = never runs
    /// out when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_peak_mib: Option<Continuous>,
    /// How busy its jobs keep their GPUs, percent (energy model; the run's `--gpu-util`
    /// when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_util_pct: Option<Continuous>,
    /// A job profile (`sim calibrate sample|import --job-out`), a path relative to the
    /// model file: it supplies `gpu_peak_mib` (empirical, from its memory quantiles, or its
    /// peak) and `gpu_util_pct` (its mean utilization, when it has one) where the class
    /// gives neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_profile: Option<String>,
    /// Informational, never sampled: the lognormal maximum-likelihood fit of the run
    /// times [`crate::fit::fit`] saw (of those > 0), to compare with `runtime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lognormal_fit: Option<LogNormalFit>,
}

/// Parameters of a lognormal law: `ln x` is normal with mean `mu` and deviation `sigma`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogNormalFit {
    /// Mean of `ln x`.
    pub mu: f64,
    /// Standard deviation of `ln x`.
    pub sigma: f64,
}

/// One bin of [`Class::requested_by_runtime`]: the requests of the jobs whose run time is
/// at most `runtime_upto` and above the previous bin's (any run time for the first bin
/// from 0; run times above the last bin's bound draw from the last bin). TOML: one
/// `[[classes.requested_by_runtime]]` table per bin, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeBin {
    /// The bin's largest run time, seconds (finite, ≥ 0; each bin's above the previous).
    pub runtime_upto: f64,
    /// Requested times in seconds: an empirical quantile table as in [`Law::Empirical`]
    /// (at least one, finite, ≥ 0, non-decreasing). A draw below the job's run time is
    /// raised to it.
    pub quantiles: Vec<f64>,
}

/// A discrete law: `values[i]` with probability `weights[i] / Σ weights`. TOML:
/// `{ values = [1, 2, 4], weights = [5, 3, 1] }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DiscreteToml<T>", bound(deserialize = "T: Deserialize<'de>"))]
pub struct Discrete<T> {
    /// The values.
    pub values: Vec<T>,
    /// Their weights (finite, ≥ 0, with a finite sum > 0).
    pub weights: Vec<f64>,
}

impl<T> Discrete<T> {
    /// One value, always.
    pub fn constant(value: T) -> Self {
        Discrete { values: vec![value], weights: vec![1.0] }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiscreteToml<T> {
    values: Vec<T>,
    weights: Vec<f64>,
}

impl<T> TryFrom<DiscreteToml<T>> for Discrete<T> {
    type Error = Encoded;
    fn try_from(d: DiscreteToml<T>) -> Result<Self, Encoded> {
        let d = Discrete { values: d.values, weights: d.weights };
        d.check()?;
        Ok(d)
    }
}

/// A continuous law, optionally clamped to `[min, max]`. TOML: a table with a `dist` key,
/// inline, e.g. `{ dist = "lognormal", mu = 7.0, sigma = 1.8, max = 86400 }`, or a
/// `[classes.runtime]` sub-table, as [`Model::to_toml`] writes it.
///
/// Written by serde (the law's fields flattened beside its clamps); read through
/// `ContinuousToml`, whose errors say which parameter a `dist` lacks or does not take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ContinuousToml")]
pub struct Continuous {
    /// The law.
    #[serde(flatten)]
    pub law: Law,
    /// Samples below are raised to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Samples above are lowered to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

impl Continuous {
    /// A law without clamps.
    pub fn new(law: Law) -> Self {
        Continuous { law, min: None, max: None }
    }
}

/// The continuous laws (`dist = "..."` in TOML: the variant's name in lower case).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "lowercase")]
pub enum Law {
    /// `constant { value }`.
    Constant {
        /// The value.
        value: f64,
    },
    /// `uniform { low, high }`.
    Uniform {
        /// Lower bound.
        low: f64,
        /// Upper bound (≥ low).
        high: f64,
    },
    /// `exponential { mean }`.
    Exponential {
        /// Mean (> 0).
        mean: f64,
    },
    /// `lognormal { mu, sigma }`: `ln x` is normal(mu, sigma).
    LogNormal {
        /// Mean of `ln x`.
        mu: f64,
        /// Deviation of `ln x` (≥ 0).
        sigma: f64,
    },
    /// `weibull { scale, shape }`.
    Weibull {
        /// Scale (> 0).
        scale: f64,
        /// Shape (> 0).
        shape: f64,
    },
    /// `empirical { quantiles }`: `quantiles[k]` is the quantile of probability
    /// `k / (n - 1)` (non-decreasing, n ≥ 1); sampled by inverse CDF with linear
    /// interpolation between neighbours.
    Empirical {
        /// The quantile table.
        quantiles: Vec<f64>,
    },
}

/// A law as the TOML gives it: every parameter optional, checked against its `dist`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContinuousToml {
    dist: String,
    #[serde(default)]
    value: Option<f64>,
    #[serde(default)]
    low: Option<f64>,
    #[serde(default)]
    high: Option<f64>,
    #[serde(default)]
    mean: Option<f64>,
    #[serde(default)]
    mu: Option<f64>,
    #[serde(default)]
    sigma: Option<f64>,
    #[serde(default)]
    scale: Option<f64>,
    #[serde(default)]
    shape: Option<f64>,
    #[serde(default)]
    quantiles: Option<Vec<f64>>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
}

impl TryFrom<ContinuousToml> for Continuous {
    type Error = Encoded;
    fn try_from(t: ContinuousToml) -> Result<Self, Encoded> {
        let mut given: Vec<(&'static str, bool)> = vec![
            ("value", t.value.is_some()),
            ("low", t.low.is_some()),
            ("high", t.high.is_some()),
            ("mean", t.mean.is_some()),
            ("mu", t.mu.is_some()),
            ("sigma", t.sigma.is_some()),
            ("scale", t.scale.is_some()),
            ("shape", t.shape.is_some()),
            ("quantiles", t.quantiles.is_some()),
        ];
        let (law, needs): (Law, &[&str]) = match t.dist.as_str() {
            "constant" => (Law::Constant { value: t.value.unwrap_or(0.0) }, &["value"]),
            "uniform" => (Law::Uniform { low: t.low.unwrap_or(0.0), high: t.high.unwrap_or(0.0) }, &["low", "high"]),
            "exponential" => (Law::Exponential { mean: t.mean.unwrap_or(0.0) }, &["mean"]),
            "lognormal" => {
                (Law::LogNormal { mu: t.mu.unwrap_or(0.0), sigma: t.sigma.unwrap_or(0.0) }, &["mu", "sigma"])
            }
            "weibull" => {
                (Law::Weibull { scale: t.scale.unwrap_or(0.0), shape: t.shape.unwrap_or(0.0) }, &["scale", "shape"])
            }
            "empirical" => (Law::Empirical { quantiles: t.quantiles.unwrap_or_default() }, &["quantiles"]),
            other => {
                return Err(Encoded(Invalid::new(
                    "dist",
                    format!(
                        "expected constant, uniform, exponential, lognormal, weibull or empirical, found '{other}'"
                    ),
                )));
            }
        };
        for (key, present) in &mut given {
            match (needs.contains(key), *present) {
                (true, false) => {
                    return Err(Encoded(Invalid::new(*key, format!("missing: dist = \"{}\" needs it", t.dist))));
                }
                (false, true) => {
                    return Err(Encoded(Invalid::new(*key, format!("not a parameter of dist = \"{}\"", t.dist))));
                }
                _ => {}
            }
        }
        let c = Continuous { law, min: t.min, max: t.max };
        c.check()?;
        Ok(c)
    }
}

// ---------------------------------------------------------------------------------------
// Rules

/// A broken rule: the field (relative to the checked value) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The field, e.g. `arrivals.hour_factors` or `classes[1].runtime.sigma`.
    pub field: String,
    /// What was expected, and what was found.
    pub what: String,
}

/// Separates the field from the message in the text of a serde error, so that
/// [`Model::from_toml`] can put the field back together with the TOML key path.
const SEP: char = '\u{1f}';

impl Invalid {
    fn new(field: impl Into<String>, what: impl Into<String>) -> Self {
        Invalid { field: field.into(), what: what.into() }
    }
    fn within(mut self, parent: &str) -> Self {
        self.field = if self.field.is_empty() {
            parent.to_string()
        } else if self.field.starts_with('[') {
            // An element of `parent`: `bins[2].quantiles`, not `bins.[2].quantiles`.
            format!("{parent}{}", self.field)
        } else {
            format!("{parent}.{}", self.field)
        };
        self
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() { f.write_str(&self.what) } else { write!(f, "{}: {}", self.field, self.what) }
    }
}

impl std::error::Error for Invalid {}

/// An [`Invalid`] on its way through serde: `SEP field SEP what`, taken apart again by
/// [`toml_error`].
struct Encoded(Invalid);

impl fmt::Display for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SEP}{}{SEP}{}", self.0.field, self.0.what)
    }
}

impl From<Invalid> for Encoded {
    fn from(e: Invalid) -> Self {
        Encoded(e)
    }
}

fn finite(field: &str, v: f64) -> Result<(), Invalid> {
    if v.is_finite() { Ok(()) } else { Err(Invalid::new(field, format!("expected a finite number, found {v}"))) }
}
fn positive(field: &str, v: f64) -> Result<(), Invalid> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Invalid::new(field, format!("expected a number > 0, found {v}")))
    }
}
fn at_least(field: &str, v: f64, low: f64) -> Result<(), Invalid> {
    if v.is_finite() && v >= low {
        Ok(())
    } else {
        Err(Invalid::new(field, format!("expected a number ≥ {low}, found {v}")))
    }
}

/// Factors: `n` finite numbers ≥ 0 with a finite sum > 0.
fn factors(field: &str, f: &[f64], n: usize) -> Result<(), Invalid> {
    if f.len() != n {
        return Err(Invalid::new(field, format!("expected {n} factors, found {}", f.len())));
    }
    weights(field, f, "factors")
}

/// Weights: finite numbers ≥ 0 with a finite sum > 0 (a sum that overflows would make
/// every normalised weight 0).
fn weights(field: &str, w: &[f64], what: &str) -> Result<(), Invalid> {
    for (i, &x) in w.iter().enumerate() {
        at_least(&format!("{field}[{i}]"), x, 0.0)?;
    }
    sum_ok(field, w.iter().sum(), what)
}

fn sum_ok(field: &str, sum: f64, what: &str) -> Result<(), Invalid> {
    if sum.is_finite() && sum > 0.0 {
        Ok(())
    } else {
        Err(Invalid::new(field, format!("expected {what} summing to a finite number > 0, found a sum of {sum}")))
    }
}

impl<T> Discrete<T> {
    /// Checks the rules: as many weights as values (at least one), finite weights ≥ 0
    /// with a finite sum > 0.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.values.is_empty() {
            return Err(Invalid::new("values", "expected at least one value"));
        }
        if self.weights.len() != self.values.len() {
            return Err(Invalid::new(
                "weights",
                format!("expected {} weights (one per value), found {}", self.values.len(), self.weights.len()),
            ));
        }
        weights("weights", &self.weights, "weights")
    }
}

impl Discrete<u32> {
    fn check_positive(&self) -> Result<(), Invalid> {
        self.check()?;
        match self.values.iter().position(|&v| v == 0) {
            Some(i) => Err(Invalid::new(format!("values[{i}]"), "expected a value ≥ 1, found 0")),
            None => Ok(()),
        }
    }
}

impl Continuous {
    /// Checks the rules: finite parameters in range, non-decreasing quantiles, min ≤ max.
    pub fn check(&self) -> Result<(), Invalid> {
        match &self.law {
            Law::Constant { value } => finite("value", *value)?,
            Law::Uniform { low, high } => {
                finite("low", *low)?;
                finite("high", *high)?;
                if high < low {
                    return Err(Invalid::new("high", format!("expected a number ≥ low ({low}), found {high}")));
                }
            }
            Law::Exponential { mean } => positive("mean", *mean)?,
            Law::LogNormal { mu, sigma } => {
                finite("mu", *mu)?;
                at_least("sigma", *sigma, 0.0)?;
            }
            Law::Weibull { scale, shape } => {
                positive("scale", *scale)?;
                positive("shape", *shape)?;
            }
            Law::Empirical { quantiles } => {
                if quantiles.is_empty() {
                    return Err(Invalid::new("quantiles", "expected at least one quantile"));
                }
                for (i, &q) in quantiles.iter().enumerate() {
                    finite(&format!("quantiles[{i}]"), q)?;
                    if i > 0 && q < quantiles[i - 1] {
                        return Err(Invalid::new(
                            format!("quantiles[{i}]"),
                            format!("expected non-decreasing quantiles, found {q} after {}", quantiles[i - 1]),
                        ));
                    }
                }
            }
        }
        if let Some(m) = self.min {
            finite("min", m)?;
        }
        if let Some(m) = self.max {
            finite("max", m)?;
        }
        if let (Some(lo), Some(hi)) = (self.min, self.max)
            && hi < lo
        {
            return Err(Invalid::new("max", format!("expected a number ≥ min ({lo}), found {hi}")));
        }
        Ok(())
    }
}

/// Checks the rules of [`Class::requested_by_runtime`]: at least one bin, each bound
/// finite, ≥ 0 and above the previous one, each table non-empty, finite, ≥ 0 and
/// non-decreasing. Fields are relative to the list (`[2].quantiles[5]`).
fn check_bins(bins: &[RuntimeBin]) -> Result<(), Invalid> {
    if bins.is_empty() {
        return Err(Invalid::new("", "expected at least one bin"));
    }
    for (i, b) in bins.iter().enumerate() {
        let at = |field: &str| format!("[{i}].{field}");
        at_least(&at("runtime_upto"), b.runtime_upto, 0.0)?;
        if i > 0 && b.runtime_upto <= bins[i - 1].runtime_upto {
            return Err(Invalid::new(
                at("runtime_upto"),
                format!(
                    "expected a bound above the previous bin's ({}), found {}",
                    bins[i - 1].runtime_upto,
                    b.runtime_upto
                ),
            ));
        }
        if b.quantiles.is_empty() {
            return Err(Invalid::new(at("quantiles"), "expected at least one quantile"));
        }
        for (k, &q) in b.quantiles.iter().enumerate() {
            at_least(&at(&format!("quantiles[{k}]")), q, 0.0)?;
            if k > 0 && q < b.quantiles[k - 1] {
                return Err(Invalid::new(
                    at(&format!("quantiles[{k}]")),
                    format!("expected non-decreasing quantiles, found {q} after {}", b.quantiles[k - 1]),
                ));
            }
        }
    }
    Ok(())
}

impl Arrivals {
    /// Checks the rules (see the fields).
    pub fn check(&self) -> Result<(), Invalid> {
        at_least("rate_per_hour", self.rate_per_hour, MIN_RATE_PER_HOUR)?;
        at_least("start", self.start, 0.0)?;
        if self.start > MAX_START {
            return Err(Invalid::new("start", format!("expected at most {MAX_START:e} (s), found {:e}", self.start)));
        }
        let modulated = self.process == Process::Modulated;
        let bursts = self.process == Process::Bursts;
        let only = |field: &str, given: bool, ok: bool, process: &str| {
            if given && !ok {
                Err(Invalid::new(field, format!("only used with process = \"{process}\"")))
            } else {
                Ok(())
            }
        };
        only("hour_factors", self.hour_factors.is_some(), modulated, "modulated")?;
        only("day_factors", self.day_factors.is_some(), modulated, "modulated")?;
        only("bursts_per_hour", self.bursts_per_hour.is_some(), bursts, "bursts")?;
        only("burst_jobs", self.burst_jobs.is_some(), bursts, "bursts")?;
        only("burst_size", self.burst_size.is_some(), bursts, "bursts")?;
        only("burst_spread", self.burst_spread.is_some(), bursts, "bursts")?;
        if let Some(h) = &self.hour_factors {
            factors("hour_factors", h, 24)?;
        }
        if let Some(d) = &self.day_factors {
            factors("day_factors", d, 7)?;
        }
        if bursts {
            let (Some(b), Some(j)) = (self.bursts_per_hour, self.burst_jobs) else {
                return Err(Invalid::new(
                    if self.bursts_per_hour.is_none() { "bursts_per_hour" } else { "burst_jobs" },
                    "missing: process = \"bursts\" needs bursts_per_hour and burst_jobs",
                ));
            };
            at_least("bursts_per_hour", b, MIN_RATE_PER_HOUR)?;
            at_least("burst_jobs", j, 1.0)?;
            if j > MAX_BURST as f64 {
                return Err(Invalid::new("burst_jobs", format!("expected at most {MAX_BURST}, found {j}")));
            }
            at_least("burst_spread", self.burst_spread.unwrap_or(0.0), 0.0)?;
            if b * j > self.rate_per_hour * (1.0 + 1e-12) {
                return Err(Invalid::new(
                    "bursts_per_hour",
                    format!(
                        "expected bursts_per_hour × burst_jobs ≤ rate_per_hour ({}), found {b} × {j}",
                        self.rate_per_hour
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The largest burst: larger draws are cut to it (bursts are buffered while they last).
pub const MAX_BURST: u64 = 1_000_000;

/// The smallest `rate_per_hour` and `bursts_per_hour` (one job in about 114 years): with
/// [`MAX_START`], it keeps the first job of every valid model well before the end of
/// time (about 292,000 years), so a valid model always yields jobs.
pub const MIN_RATE_PER_HOUR: f64 = 1e-6;

/// The latest `start`, in seconds (about 31,700 years).
pub const MAX_START: f64 = 1e12;

impl Users {
    /// Checks the rules: at least one user, a finite exponent ≥ 0.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.count == 0 {
            return Err(Invalid::new("count", "expected at least 1 user, found 0"));
        }
        at_least("zipf", self.zipf, 0.0)
    }
}

impl Class {
    /// Takes `gpu_peak_mib` and `gpu_util_pct` from a job profile where the class gives
    /// neither: the peak from the profile's memory quantiles (empirical) or its peak, the
    /// utilization its mean. A profile without a mean utilization (not measured: MIG, no
    /// NVML utilization) leaves `gpu_util_pct` unset, so its jobs take the run's
    /// `--gpu-util` as jobs that do not say do: unknown is never 0 %.
    pub fn apply_job_profile(&mut self, p: &sim_core::hardware::JobProfile) {
        if self.gpu_peak_mib.is_none() {
            let law = if p.memory_mib_quantiles.len() >= 2 {
                Law::Empirical { quantiles: p.memory_mib_quantiles.iter().map(|&q| q as f64).collect() }
            } else {
                Law::Constant { value: p.peak_memory_mib as f64 }
            };
            self.gpu_peak_mib = Some(Continuous::new(law));
        }
        if self.gpu_util_pct.is_none()
            && let Some(u) = p.mean_util_pct
        {
            self.gpu_util_pct = Some(Continuous::new(Law::Constant { value: u.clamp(0.0, 100.0) }));
        }
    }

    /// Checks the rules of every distribution of the class.
    pub fn check(&self) -> Result<(), Invalid> {
        at_least("weight", self.weight, 0.0)?;
        self.tasks.check_positive().map_err(|e| e.within("tasks"))?;
        if let Some(c) = &self.cores {
            c.check_positive().map_err(|e| e.within("cores"))?;
        }
        if let Some(g) = &self.gpus {
            g.check().map_err(|e| e.within("gpus"))?;
        }
        if let Some(g) = &self.gpu_memory_mib {
            g.check().map_err(|e| e.within("gpu_memory_mib"))?;
        }
        if let Some(m) = &self.memory_mib {
            m.check().map_err(|e| e.within("memory_mib"))?;
        }
        self.runtime.check().map_err(|e| e.within("runtime"))?;
        if let Some(o) = &self.overestimate {
            o.check().map_err(|e| e.within("overestimate"))?;
        }
        if let Some(b) = &self.requested_by_runtime {
            check_bins(b).map_err(|e| e.within("requested_by_runtime"))?;
            if self.overestimate.is_some() {
                return Err(Invalid::new(
                    "requested_by_runtime",
                    "not with overestimate: give one law of the requested time or the other",
                ));
            }
        }
        if let Some(m) = self.max_requested {
            at_least("max_requested", m, 0.0)?;
        }
        if let Some(g) = &self.gpu_peak_mib {
            g.check().map_err(|e| e.within("gpu_peak_mib"))?;
        }
        if let Some(g) = &self.gpu_util_pct {
            g.check().map_err(|e| e.within("gpu_util_pct"))?;
        }
        Ok(())
    }
}

impl Model {
    /// Checks every rule; the error names the field (`classes[1].runtime.sigma`).
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.procs == Some(0) {
            return Err(Invalid::new("procs", "expected at least 1, found 0"));
        }
        if self.gpus_per_node == Some(0) {
            return Err(Invalid::new("gpus_per_node", "expected at least 1, found 0"));
        }
        if let Some(q) = &self.queues {
            q.check().map_err(|e| e.within("queues"))?;
        }
        self.arrivals.check().map_err(|e| e.within("arrivals"))?;
        self.users.check().map_err(|e| e.within("users"))?;
        self.check_classes()
    }

    fn check_classes(&self) -> Result<(), Invalid> {
        if self.classes.is_empty() {
            return Err(Invalid::new("classes", "expected at least one [[classes]] table"));
        }
        for (i, c) in self.classes.iter().enumerate() {
            c.check().map_err(|e| e.within(&format!("classes[{i}]")))?;
        }
        sum_ok("classes", self.classes.iter().map(|c| c.weight).sum(), "class weights")
    }

    /// Reads a model from TOML text; `file` names it in errors, which give the line, the
    /// field (`arrivals.rate_per_hour`, `classes[1].runtime`) and what was expected.
    pub fn from_toml(text: &str, file: &str) -> Result<Model, TraceError> {
        let mut model: Model = toml::from_str(text).map_err(|e| toml_error(&e, text, file))?;
        let dir = std::path::Path::new(file).parent().unwrap_or(std::path::Path::new(""));
        for (i, c) in model.classes.iter_mut().enumerate() {
            let Some(p) = c.job_profile.clone() else { continue };
            let at = |what: String| {
                let line = table_lines(text, "classes").get(i).map(|&l| l as u64);
                TraceError::malformed(file, line, Some(format!("classes[{i}].job_profile")), what)
            };
            let path = dir.join(&p);
            let body = std::fs::read_to_string(&path).map_err(|e| at(format!("{}: {e}", path.display())))?;
            let prof: sim_core::hardware::JobProfile = toml::from_str(&body)
                .map_err(|e| at(format!("{}: expected a job profile: {}", path.display(), e.message())))?;
            c.apply_job_profile(&prof);
        }
        model.check_classes().map_err(|e| {
            // A rule of one class: its header and the key's line; of all classes: the
            // first header.
            let headers = table_lines(text, "classes");
            let class = e.field.strip_prefix("classes[").and_then(|f| f.split_once(']'));
            let line = match class.and_then(|(i, rest)| Some((*headers.get(i.parse::<usize>().ok()?)?, rest))) {
                Some((l, rest)) => Some(rule_line(text, l, "classes", rest.trim_start_matches('.'))),
                None => headers.first().copied(),
            };
            TraceError::malformed(file, line.map(|l| l as u64), Some(e.field), e.what)
        })?;
        Ok(model)
    }

    /// Writes the model as TOML that [`Model::from_toml`] reads back to an equal model:
    /// serde's form of it under a comment line (floats in their shortest exact form).
    pub fn to_toml(&self) -> String {
        // Every field is a number, a string, a table or an array of them: nothing toml
        // cannot write (no `None` inside an array, no non-string map keys).
        let body = toml::to_string(self).expect("a model serializes to TOML");
        format!("# schedlab workload model (sim gen --model FILE)\n{body}")
    }
}

// ---------------------------------------------------------------------------------------
// Checked deserialization: the rules run while the value is read, so the TOML error
// carries the value's span (its line) and key path.

fn checked<'de, D: Deserializer<'de>, T: Deserialize<'de> + CheckRule>(d: D) -> Result<T, D::Error> {
    let v = T::deserialize(d)?;
    v.rule().map_err(|e| D::Error::custom(Encoded(e)))?;
    Ok(v)
}

trait CheckRule {
    fn rule(&self) -> Result<(), Invalid>;
}
impl CheckRule for Arrivals {
    fn rule(&self) -> Result<(), Invalid> {
        self.check()
    }
}
impl CheckRule for Users {
    fn rule(&self) -> Result<(), Invalid> {
        self.check()
    }
}

fn positive_opt<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default + PartialEq>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = T::deserialize(d)?;
    if v == T::default() {
        return Err(D::Error::custom(Encoded(Invalid::new("", "expected at least 1, found 0"))));
    }
    Ok(Some(v))
}

fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    at_least("", v, 0.0).map_err(|e| D::Error::custom(Encoded(e)))?;
    Ok(v)
}

fn non_negative_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    non_negative(d).map(Some)
}

/// The bins are checked as a whole: toml gives a rule broken by one element of an array
/// of tables the span of the array's first table, and the element's index is lost, so
/// the rule names it (`[2].quantiles`) and [`toml_error`] finds its table.
fn checked_bins<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<RuntimeBin>>, D::Error> {
    let v = Vec::<RuntimeBin>::deserialize(d)?;
    check_bins(&v).map_err(|e| D::Error::custom(Encoded(e)))?;
    Ok(Some(v))
}

fn positive_values<'de, D: Deserializer<'de>>(d: D) -> Result<Discrete<u32>, D::Error> {
    let v = Discrete::<u32>::deserialize(d)?;
    v.check_positive().map_err(|e| D::Error::custom(Encoded(e)))?;
    Ok(v)
}

fn positive_values_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Discrete<u32>>, D::Error> {
    positive_values(d).map(Some)
}

/// A toml error as a [`TraceError`]: the span's line, and the field from toml's key path
/// (array-of-tables indices restored from the `[[classes]]` headers above) plus the field
/// our rule named.
fn toml_error(e: &toml::de::Error, text: &str, file: &str) -> TraceError {
    let start = e.span().map(|s| s.start.min(text.len()));
    let mut line = start.map(|s| line_at(text, s));
    let mut bare = e.clone();
    bare.set_input(None);
    let shown = bare.to_string();
    let keys = shown.lines().find_map(|l| l.strip_prefix("in `").and_then(|r| r.strip_suffix('`'))).unwrap_or("");
    let mut path: Vec<String> = keys.split('.').filter(|k| !k.is_empty()).map(str::to_string).collect();
    if let (Some(first), Some(s)) = (path.first_mut(), start)
        && first == "classes"
    {
        let before = table_lines(text, "classes").iter().filter(|&&l| l <= line_at(text, s)).count();
        if before > 0 {
            *first = format!("classes[{}]", before - 1);
        }
    }
    let message = e.message();
    let what = match message.strip_prefix(SEP).and_then(|m| m.split_once(SEP)) {
        Some((field, what)) => {
            if !field.is_empty() {
                // A rule on a multi-line table: point at the key's own line when found.
                line = line.map(|l| rule_line(text, l, keys, field));
                match (field.starts_with('['), path.last_mut()) {
                    (true, Some(last)) => last.push_str(field),
                    _ => path.push(field.to_string()),
                }
            }
            what.to_string()
        }
        None => message.to_string(),
    };
    let field = (!path.is_empty()).then(|| path.join("."));
    TraceError::Malformed { at: Location { file: file.into(), line: line.map(|l| l as u64), field }, what }
}

/// The line of the field a rule names, from the line `from` of the value it checked (in
/// the table at key path `keys`): the line setting the field's first key, searched from
/// `from`, or from the header of element `k` of an array of tables for `[k].key`.
fn rule_line(text: &str, from: usize, keys: &str, field: &str) -> usize {
    let (from, rest) = match field.strip_prefix('[').and_then(|f| f.split_once(']')) {
        Some((k, rest)) => {
            let header = format!("[[{keys}]]");
            // Its headers, up to the next element of another array (`[[classes]]`).
            let element = k.parse::<usize>().ok().and_then(|k| {
                let lines = text.lines().enumerate().skip(from - 1).map(|(i, l)| (i + 1, l.trim_start()));
                let ours = lines.take_while(|(_, l)| !l.starts_with("[[") || l.starts_with(&header));
                ours.filter(|(_, l)| l.starts_with(&header)).nth(k).map(|(i, _)| i)
            });
            match element {
                Some(l) => (l, rest.trim_start_matches('.')),
                None => return from,
            }
        }
        None => (from, field),
    };
    match rest.split(['.', '[']).next() {
        Some(key) if !key.is_empty() => key_line(text, from, key).unwrap_or(from),
        _ => from,
    }
}

/// 1-based line of byte offset `at`.
fn line_at(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// The lines (1-based) of the `[[name]]` headers.
fn table_lines(text: &str, name: &str) -> Vec<usize> {
    let header = format!("[[{name}]]");
    text.lines().enumerate().filter(|(_, l)| l.trim_start().starts_with(&header)).map(|(i, _)| i + 1).collect()
}

/// The first line at or after `from` (1-based), before the next table header, that sets
/// `key` (`key = ...`).
fn key_line(text: &str, from: usize, key: &str) -> Option<usize> {
    for (i, l) in text.lines().enumerate().skip(from - 1) {
        let l = l.trim_start();
        if i + 1 > from && l.starts_with('[') {
            return None;
        }
        if let Some(rest) = l.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return Some(i + 1);
        }
    }
    None
}
