//! Parquet copies of the report's tables, and a lazy-polars analysis over many runs
//! (only with the opt-in `parquet` feature: polars is a heavy build, about 11 min cold in
//! debug, so the default build never depends on it).
//!
//! * [`frame_df`] — the per-job frame, one column per [`JobRow`] field, named as the
//!   field. Times stay **integer microseconds** (`Int64`: `submit_us`, `start_us`,
//!   `end_us`, `requested_us`, `observed_wait_us`; null = unknown), so a frame read back
//!   ([`frame_rows`]) is the frame written; counts keep their Rust types (`UInt64` units
//!   and milli-GPUs, `UInt32` users, groups and OOM kills, `Int32` queues and partitions);
//!   `allocated` is the units held in the CSV's interval-set text (`0-3 8 10-11`), null
//!   when unknown.
//! * [`groups_df`], [`series_df`], [`comparison_df`] — the group tables, time series and
//!   comparison, with the columns (and names) of their CSV files, floats as `Float64`
//!   seconds (a CSV's empty cell is a null).
//! * [`runs_by_size_class`] — every run's frame concatenated (with `policy` and `seed`
//!   columns) and grouped by policy and size class through the lazy API.
//!
//! [`to_bytes`] writes a frame in memory the same way every time: one thread, Zstd at
//! zstd's default level (3), the default statistics, no timestamp (Parquet's footer names
//! only `Polars` as the writer). The same table always gives the same bytes (with the
//! pinned polars and zstd).

use crate::frame::{JobRow, parse_ranges, ranges_text};
use crate::report::RunData;
use crate::tables::{self, GroupRow};
use crate::timeseries::TimeSeries;
use polars::prelude::*;
use std::io::{Cursor, Write};

/// `df` as Parquet bytes, deterministically (see the module documentation).
pub fn to_bytes(df: &mut DataFrame) -> PolarsResult<Vec<u8>> {
    let mut out = Vec::new();
    ParquetWriter::new(&mut out).with_compression(ParquetCompression::Zstd(None)).set_parallel(false).finish(df)?;
    Ok(out)
}

/// Reads Parquet bytes (as [`to_bytes`] writes them) into a frame.
pub fn read_bytes(bytes: &[u8]) -> PolarsResult<DataFrame> {
    ParquetReader::new(Cursor::new(bytes)).finish()
}

fn i64_us(v: u64) -> PolarsResult<i64> {
    i64::try_from(v).map_err(|_| polars_err!(ComputeError: "time {v} µs does not fit an Int64"))
}

fn opt_us(v: Option<u64>) -> PolarsResult<Option<i64>> {
    v.map(i64_us).transpose()
}

/// The per-job frame: one row per job, one column per [`JobRow`] field (times in µs).
pub fn frame_df(rows: &[JobRow]) -> PolarsResult<DataFrame> {
    let times = |f: fn(&JobRow) -> Option<u64>| rows.iter().map(|r| opt_us(f(r))).collect::<PolarsResult<Vec<_>>>();
    let columns = vec![
        Column::new("id".into(), rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>()),
        Column::new("submit_us".into(), rows.iter().map(|r| i64_us(r.submit_us)).collect::<PolarsResult<Vec<_>>>()?),
        Column::new("start_us".into(), times(|r| r.start_us)?),
        Column::new("end_us".into(), times(|r| r.end_us)?),
        Column::new("requested_us".into(), times(|r| r.requested_us)?),
        Column::new("units".into(), rows.iter().map(|r| r.units).collect::<Vec<_>>()),
        Column::new("gpu_milli".into(), rows.iter().map(|r| r.gpu_milli).collect::<Vec<_>>()),
        Column::new("gpu_milli_held".into(), rows.iter().map(|r| r.gpu_milli_held).collect::<Vec<_>>()),
        Column::new("user".into(), rows.iter().map(|r| r.user).collect::<Vec<_>>()),
        Column::new("group".into(), rows.iter().map(|r| r.group).collect::<Vec<_>>()),
        Column::new("queue".into(), rows.iter().map(|r| r.queue).collect::<Vec<_>>()),
        Column::new("partition".into(), rows.iter().map(|r| r.partition).collect::<Vec<_>>()),
        Column::new("kind".into(), rows.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>()),
        Column::new("outcome".into(), rows.iter().map(|r| r.outcome.as_str()).collect::<Vec<_>>()),
        Column::new("oom_kills".into(), rows.iter().map(|r| r.oom_kills).collect::<Vec<_>>()),
        Column::new("allocated".into(), rows.iter().map(allocated_text).collect::<Vec<_>>()),
        Column::new("observed_wait_us".into(), times(|r| r.observed_wait_us)?),
    ];
    DataFrame::new(rows.len(), columns)
}

/// A row's units as text, `None` when unknown.
fn allocated_text(r: &JobRow) -> Option<String> {
    (!r.allocated.is_empty()).then(|| ranges_text(&r.allocated))
}

/// The unit ranges in the `allocated` column (null or empty: unknown).
fn allocated_ranges(df: &DataFrame) -> PolarsResult<Vec<Vec<(u64, u64)>>> {
    df.column("allocated")?
        .str()?
        .iter()
        .map(|v| {
            parse_ranges(v.unwrap_or(""))
                .ok_or_else(|| polars_err!(ComputeError: "'allocated': {v:?} is not unit ranges like '0-3 8 10-11'"))
        })
        .collect()
}

/// The rows of a frame made by [`frame_df`] (or read back from its Parquet file).
pub fn frame_rows(df: &DataFrame) -> PolarsResult<Vec<JobRow>> {
    let s = |name: &str| -> PolarsResult<Vec<String>> {
        df.column(name)?
            .str()?
            .iter()
            .map(|v| v.map(str::to_string).ok_or_else(|| polars_err!(ComputeError: "null in '{name}'")))
            .collect()
    };
    let us = |name: &str| -> PolarsResult<Vec<Option<u64>>> {
        df.column(name)?
            .i64()?
            .iter()
            .map(|v| v.map(|t| u64::try_from(t).map_err(|_| polars_err!(ComputeError: "negative time in '{name}'"))))
            .map(Option::transpose)
            .collect()
    };
    fn need<T>(v: Option<T>, name: &str) -> PolarsResult<T> {
        v.ok_or_else(|| polars_err!(ComputeError: "null in '{name}'"))
    }
    let u64s = |name: &str| -> PolarsResult<Vec<Option<u64>>> { Ok(df.column(name)?.u64()?.iter().collect()) };
    let u32s = |name: &str| -> PolarsResult<Vec<Option<u32>>> { Ok(df.column(name)?.u32()?.iter().collect()) };
    let i32s = |name: &str| -> PolarsResult<Vec<Option<i32>>> { Ok(df.column(name)?.i32()?.iter().collect()) };
    let (id, kind, outcome) = (s("id")?, s("kind")?, s("outcome")?);
    let (submit, start, end, requested, observed) =
        (us("submit_us")?, us("start_us")?, us("end_us")?, us("requested_us")?, us("observed_wait_us")?);
    let (units, milli, held) = (u64s("units")?, u64s("gpu_milli")?, u64s("gpu_milli_held")?);
    let mut allocated = allocated_ranges(df)?;
    let (user, group, oom) = (u32s("user")?, u32s("group")?, u32s("oom_kills")?);
    let (queue, partition) = (i32s("queue")?, i32s("partition")?);
    (0..df.height())
        .map(|i| {
            Ok(JobRow {
                id: id[i].clone(),
                submit_us: need(submit[i], "submit_us")?,
                start_us: start[i],
                end_us: end[i],
                requested_us: requested[i],
                units: need(units[i], "units")?,
                gpu_milli: need(milli[i], "gpu_milli")?,
                gpu_milli_held: need(held[i], "gpu_milli_held")?,
                user: need(user[i], "user")?,
                group: need(group[i], "group")?,
                queue: need(queue[i], "queue")?,
                partition: need(partition[i], "partition")?,
                kind: kind[i].clone(),
                outcome: outcome[i].clone(),
                oom_kills: need(oom[i], "oom_kills")?,
                allocated: std::mem::take(&mut allocated[i]),
                observed_wait_us: observed[i],
            })
        })
        .collect()
}

/// A group table ([`tables::all_groups`]) with the columns of its CSV
/// ([`tables::GROUP_CSV_HEADER`]); distributions in `Float64` (seconds for wait and JCT).
pub fn groups_df(rows: &[GroupRow]) -> PolarsResult<DataFrame> {
    let u = |name: &str, f: fn(&GroupRow) -> u64| Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>());
    let mut columns = vec![
        Column::new("group_by".into(), rows.iter().map(|r| r.group_by).collect::<Vec<_>>()),
        Column::new("key".into(), rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>()),
        u("jobs", |r| r.jobs),
        u("started", |r| r.started),
        u("ran", |r| r.bsld.n),
        u("completed", |r| r.completed),
        u("failed", |r| r.failed),
        u("killed", |r| r.killed),
        u("oom_killed", |r| r.oom_killed),
        u("rejected", |r| r.rejected),
        u("unfinished", |r| r.unfinished),
        u("oom_kills", |r| r.oom_kills),
    ];
    for name in ["wait", "bsld", "jct"] {
        let dists: Vec<&tables::Dist> = rows
            .iter()
            .map(|r| match name {
                "wait" => &r.wait,
                "bsld" => &r.bsld,
                _ => &r.jct,
            })
            .collect();
        for stat in ["mean", "p50", "p95", "p99", "max"] {
            let v: Vec<f64> = dists
                .iter()
                .map(|d| match stat {
                    "mean" => d.mean,
                    "p50" => d.p50,
                    "p95" => d.p95,
                    "p99" => d.p99,
                    _ => d.max,
                })
                .collect();
            columns.push(Column::new(format!("{name}_{stat}").into(), v));
        }
    }
    debug_assert_eq!(
        columns.iter().map(|c| c.name().as_str()).collect::<Vec<_>>(),
        tables::GROUP_CSV_HEADER,
        "the Parquet columns are the CSV's"
    );
    DataFrame::new(rows.len(), columns)
}

/// Time series ([`crate::timeseries::series`]) as one frame: `t` (bucket start, seconds)
/// and one `Float64` column per series, as its CSV (a series with fewer points is null
/// there).
pub fn series_df(series: &[TimeSeries]) -> PolarsResult<DataFrame> {
    let n = series.iter().map(|s| s.points.len()).max().unwrap_or(0);
    let t: Vec<f64> = (0..n).map(|i| series.iter().find_map(|s| s.points.get(i)).map_or(0.0, |p| p.0)).collect();
    let mut columns = vec![Column::new("t".into(), t)];
    for s in series {
        let v: Vec<Option<f64>> = (0..n).map(|i| s.points.get(i).map(|p| p.1)).collect();
        columns.push(Column::new(s.name.as_str().into(), v));
    }
    DataFrame::new(n, columns)
}

/// The comparison ([`crate::compare::compare`]) with the columns of `comparison.csv`
/// ([`crate::compare::CSV_HEADER`]; a value that is not finite, or a change, difference or
/// significance there is none of, is null).
pub fn comparison_df(rows: &[crate::compare::Compared]) -> PolarsResult<DataFrame> {
    let finite = |v: f64| v.is_finite().then_some(v);
    let f = |name: &str, g: &dyn Fn(&crate::compare::Compared) -> Option<f64>| {
        Column::new(name.into(), rows.iter().map(g).collect::<Vec<_>>())
    };
    let columns = vec![
        Column::new("policy".into(), rows.iter().map(|c| c.policy.as_str()).collect::<Vec<_>>()),
        Column::new("metric".into(), rows.iter().map(|c| c.metric.key).collect::<Vec<_>>()),
        Column::new("runs".into(), rows.iter().map(|c| c.n as u64).collect::<Vec<_>>()),
        f("mean", &|c| finite(c.mean)),
        f("ci95_low", &|c| finite(c.mean - c.ci95)),
        f("ci95_high", &|c| finite(c.mean + c.ci95)),
        f("change_vs_first_pct", &|c| c.change_pct.and_then(finite)),
        f("delta_vs_first", &|c| c.delta.and_then(|d| finite(d.mean))),
        f("delta_ci95_low", &|c| c.delta.and_then(|d| finite(d.mean - d.ci95))),
        f("delta_ci95_high", &|c| c.delta.and_then(|d| finite(d.mean + d.ci95))),
        Column::new(
            "significant".into(),
            rows.iter().map(|c| c.delta.and_then(|d| d.significant())).collect::<Vec<_>>(),
        ),
        Column::new("label".into(), rows.iter().map(|c| c.label.as_str()).collect::<Vec<_>>()),
        Column::new("deterministic".into(), rows.iter().map(|c| c.deterministic).collect::<Vec<_>>()),
    ];
    DataFrame::new(rows.len(), columns)
}

/// The columns of [`runs_by_size_class`], in order.
pub const BY_SIZE_CLASS_COLUMNS: [&str; 7] =
    ["policy", "size_class", "jobs", "started", "wait_mean", "wait_p95", "bsld_mean"];

/// One run's frame with what the by-size-class analysis groups and sorts by: `policy`,
/// `seed`, `policy_rank` (the policy's first-seen position), `size_class` and
/// `size_rank` ([`tables::size_class`], [`tables::SIZE_CLASSES`] order), `wait_us`,
/// `wait_s` and `bsld` (null when the job did not start / run).
fn analysis_frame(rows: &[JobRow], policy: &str, seed: u64, policy_rank: u32) -> PolarsResult<DataFrame> {
    let n = rows.len();
    let class: Vec<&str> = rows.iter().map(tables::size_class).collect();
    let rank: Vec<u32> =
        class.iter().map(|c| tables::SIZE_CLASSES.iter().position(|x| x == c).unwrap_or(0) as u32).collect();
    let mut df = frame_df(rows)?;
    df.hstack_mut(&[
        Column::new("policy".into(), vec![policy; n]),
        Column::new("seed".into(), vec![seed; n]),
        Column::new("policy_rank".into(), vec![policy_rank; n]),
        Column::new("size_class".into(), class),
        Column::new("size_rank".into(), rank),
        Column::new(
            "wait_us".into(),
            rows.iter()
                .map(|r| opt_us(r.start_us.map(|s| s.saturating_sub(r.submit_us))))
                .collect::<PolarsResult<Vec<_>>>()?,
        ),
        Column::new("wait_s".into(), rows.iter().map(JobRow::wait_s).collect::<Vec<_>>()),
        Column::new("bsld".into(), rows.iter().map(JobRow::bounded_slowdown).collect::<Vec<_>>()),
    ])?;
    Ok(df)
}

/// Jobs per policy and size class over every run given (all seeds pooled), through the
/// lazy API: every run's frame concatenated (with its policy and seed), then
/// `group_by([policy, size_class]).agg(…)`, sorted by policy (first-seen order, the
/// comparison's) then size class ([`tables::SIZE_CLASSES`] order). Columns
/// ([`BY_SIZE_CLASS_COLUMNS`]):
///
/// * `jobs` — jobs in the group (they add up to every run's jobs);
/// * `started` — those that started;
/// * `wait_mean` — mean wait of those, seconds (an exact integer sum of µs over the count,
///   so it depends on no summation order);
/// * `wait_p95` — their nearest-rank 95th percentile wait, seconds (polars'
///   `Equiprobable` quantile, rank `⌈0.95·n⌉`, as [`tables::percentile`]);
/// * `bsld_mean` — mean bounded slowdown (τ = 10 s) of the jobs that ran, summed in
///   ascending order.
///
/// Means and the percentile are null for a group with no such job.
pub fn runs_by_size_class(runs: &[RunData]) -> PolarsResult<DataFrame> {
    let mut policies: Vec<String> = Vec::new();
    let mut frames = Vec::with_capacity(runs.len());
    for r in runs {
        let p = r.policy();
        let rank = match policies.iter().position(|x| *x == p) {
            Some(i) => i,
            None => {
                policies.push(p);
                policies.len() - 1
            }
        };
        frames.push(analysis_frame(&r.rows, &policies[rank], r.seed(), rank as u32)?.lazy());
    }
    if frames.is_empty() {
        frames.push(analysis_frame(&[], "", 0, 0)?.lazy());
    }
    let all = concat(frames, UnionArgs::default())?;
    all.group_by([col("policy"), col("size_class")])
        .agg([
            col("policy_rank").first(),
            col("size_rank").first(),
            len().cast(DataType::UInt64).alias("jobs"),
            col("wait_us").count().cast(DataType::UInt64).alias("started"),
            col("wait_us").sum().alias("wait_sum_us"),
            col("wait_s").quantile(lit(0.95), QuantileMethod::Equiprobable).alias("wait_p95"),
            col("bsld").drop_nulls().sort(SortOptions::default()).mean().alias("bsld_mean"),
        ])
        .with_column(
            when(col("started").gt(lit(0u64)))
                .then(col("wait_sum_us").cast(DataType::Float64) / col("started").cast(DataType::Float64) / lit(1e6))
                .otherwise(lit(NULL).cast(DataType::Float64))
                .alias("wait_mean"),
        )
        .sort(["policy_rank", "size_rank"], SortMultipleOptions::default())
        .select(BY_SIZE_CLASS_COLUMNS.map(col))
        .collect()
}

/// Writes a [`runs_by_size_class`] table as CSV: its columns, floats with six decimals
/// (`{:.6}`), empty for null, so the bytes depend on nothing but the table.
pub fn write_by_size_class_csv(out: &mut dyn Write, df: &DataFrame) -> std::io::Result<()> {
    let err = |e: PolarsError| std::io::Error::other(e.to_string());
    let s = |name: &str| -> std::io::Result<Vec<String>> {
        Ok(df.column(name).map_err(err)?.str().map_err(err)?.iter().map(|v| v.unwrap_or("").to_string()).collect())
    };
    let u = |name: &str| -> std::io::Result<Vec<String>> {
        Ok(df
            .column(name)
            .map_err(err)?
            .u64()
            .map_err(err)?
            .iter()
            .map(|v| v.map(|x| x.to_string()).unwrap_or_default())
            .collect())
    };
    let f = |name: &str| -> std::io::Result<Vec<String>> {
        Ok(df
            .column(name)
            .map_err(err)?
            .f64()
            .map_err(err)?
            .iter()
            .map(|v| v.filter(|x| x.is_finite()).map(|x| format!("{x:.6}")).unwrap_or_default())
            .collect())
    };
    let cols =
        [s("policy")?, s("size_class")?, u("jobs")?, u("started")?, f("wait_mean")?, f("wait_p95")?, f("bsld_mean")?];
    let mut w = csv::WriterBuilder::new().from_writer(out);
    w.write_record(BY_SIZE_CLASS_COLUMNS)?;
    for i in 0..df.height() {
        w.write_record(cols.iter().map(|c| c[i].as_str()))?;
    }
    w.flush()
}

/// The Parquet files of the report of `runs` ([`crate::report::build`] adds them beside
/// the CSVs): `comparison.parquet`, per run `tables/<run>.frame.parquet`,
/// `tables/<run>.groups.parquet` and `tables/<run>.timeseries.parquet` (`groups` and
/// `series` are the runs' tables, in the order of `runs`), and the analysis over every
/// run, `runs_by_size_class.parquet` and `runs_by_size_class.csv`
/// ([`runs_by_size_class`]). Each is a (path, bytes) pair.
pub fn report_files(
    runs: &[RunData],
    compared: &[crate::compare::Compared],
    groups: &[Vec<GroupRow>],
    series: &[Vec<TimeSeries>],
) -> PolarsResult<Vec<(String, Vec<u8>)>> {
    let mut out = vec![("comparison.parquet".to_string(), to_bytes(&mut comparison_df(compared)?)?)];
    for ((r, g), s) in runs.iter().zip(groups).zip(series) {
        out.push((format!("tables/{}.frame.parquet", r.name), to_bytes(&mut frame_df(&r.rows)?)?));
        out.push((format!("tables/{}.groups.parquet", r.name), to_bytes(&mut groups_df(g)?)?));
        out.push((format!("tables/{}.timeseries.parquet", r.name), to_bytes(&mut series_df(s)?)?));
    }
    let mut by_size = runs_by_size_class(runs)?;
    let mut csv = Vec::new();
    write_by_size_class_csv(&mut csv, &by_size)
        .map_err(|e| polars_err!(ComputeError: "runs_by_size_class.csv: {e}"))?;
    out.push(("runs_by_size_class.parquet".to_string(), to_bytes(&mut by_size)?));
    out.push(("runs_by_size_class.csv".to_string(), csv));
    Ok(out)
}
