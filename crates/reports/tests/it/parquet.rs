//! `reports::parquet` (feature `parquet`): the frame's Parquet reads back row for row,
//! every Parquet file is byte-stable, and the lazy by-size-class analysis accounts for
//! every job and agrees with the plain-Rust group tables.
#![cfg(feature = "parquet")]

use polars::prelude::*;
use proptest::prelude::*;
use reports::frame::JobRow;
use reports::parquet as pq;
use reports::report::{self, RunData};
use reports::tables::{self, GroupBy};
use std::io::Cursor;

/// A job row: every field varies with `i`, some times unknown, some jobs GPU jobs.
fn row(i: u64, spread: u64) -> JobRow {
    let submit = i * 1_700_003 + spread;
    let started = i % 9 != 8;
    let start = submit + (i * i * 977_777 + spread) % 90_000_000;
    let end = start + (i % 7 + 1) * 3_100_000;
    let gpu_milli = match i % 5 {
        0 => 250,
        1 => 1000 * (1 + i % 12),
        _ => 0,
    };
    JobRow {
        id: format!("job-{i}"),
        submit_us: submit,
        start_us: started.then_some(start),
        end_us: (started && i % 13 != 0).then_some(end),
        requested_us: (i % 4 != 0).then_some((i % 7 + 2) * 3_100_000),
        units: 1 + (i * 31) % 700,
        gpu_milli,
        gpu_milli_held: gpu_milli.next_multiple_of(1000),
        user: (i % 17) as u32,
        group: (i % 3) as u32,
        queue: (i % 4) as i32 - 1,
        partition: -1,
        kind: ["batch", "dl_train", "inference", "interactive"][(i % 4) as usize].into(),
        outcome: if !started {
            "unfinished"
        } else if i % 13 == 0 {
            "killed"
        } else {
            "completed"
        }
        .into(),
        oom_kills: (i % 11 == 3) as u32,
        allocated: if i % 2 == 0 { vec![(i * 3, 1 + i % 4), (i * 3 + 10, 2)] } else { Vec::new() },
        observed_wait_us: (i % 3 == 0).then_some(i * 1000),
    }
}

fn rows(n: u64, spread: u64) -> Vec<JobRow> {
    (0..n).map(|i| row(i, spread)).collect()
}

fn run(name: &str, policy: &str, seed: u64, rows: Vec<JobRow>) -> RunData {
    RunData {
        name: name.into(),
        summary: serde_json::json!({ "policy": policy, "seed": seed, "machine_units": 1024, "machine_gpus": 64,
            "wait_mean": seed as f64 }),
        rows,
        fragmentation: Vec::new(),
    }
}

fn runs() -> Vec<RunData> {
    vec![
        run("fcfs__seed1", "fcfs", 1, rows(700, 0)),
        run("fcfs__seed2", "fcfs", 2, rows(650, 5)),
        run("easy__seed1", "easy", 1, rows(400, 11)),
        run("easy__seed2", "easy", 2, rows(900, 3)),
    ]
}

#[test]
fn frame_parquet_reads_back_every_row_with_its_ids_and_times() {
    let n = 2_500;
    let rows = rows(n, 0);
    let bytes = pq::to_bytes(&mut pq::frame_df(&rows).unwrap()).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    let df = ParquetReader::new(Cursor::new(&bytes)).finish().unwrap();
    assert_eq!(df.height(), n as usize);
    let names: Vec<&str> = df.get_column_names().into_iter().map(|c| c.as_str()).collect();
    assert_eq!(names[..5], ["id", "submit_us", "start_us", "end_us", "requested_us"]);
    assert_eq!(names.len(), 17, "one column per JobRow field: {names:?}");
    let ids: Vec<&str> = df.column("id").unwrap().str().unwrap().iter().map(Option::unwrap).collect();
    assert_eq!(ids, rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>());
    let t = |c: &str| -> Vec<Option<u64>> {
        df.column(c).unwrap().i64().unwrap().iter().map(|v| v.map(|x| x as u64)).collect()
    };
    assert_eq!(t("submit_us"), rows.iter().map(|r| Some(r.submit_us)).collect::<Vec<_>>());
    assert_eq!(t("start_us"), rows.iter().map(|r| r.start_us).collect::<Vec<_>>());
    assert_eq!(t("end_us"), rows.iter().map(|r| r.end_us).collect::<Vec<_>>());
    // And the whole frame comes back as it was written.
    assert_eq!(pq::frame_rows(&df).unwrap(), rows);
    assert_eq!(pq::frame_rows(&pq::read_bytes(&bytes).unwrap()).unwrap(), rows);
}

#[test]
fn same_input_gives_the_same_parquet_bytes() {
    let runs = runs();
    let a = report::build(&runs).unwrap();
    let b = report::build(&runs).unwrap();
    let paths: Vec<&str> = a.iter().map(|f| f.path.as_str()).collect();
    for p in [
        "comparison.parquet",
        "tables/fcfs__seed1.frame.parquet",
        "tables/easy__seed2.groups.parquet",
        "tables/easy__seed2.timeseries.parquet",
        "runs_by_size_class.parquet",
        "runs_by_size_class.csv",
    ] {
        assert!(paths.contains(&p), "{p} missing: {paths:?}");
    }
    assert_eq!(a, b, "a report built twice is the same, byte for byte");
    // From another thread (polars' pool is warm now), still the same bytes.
    let rows = rows(3_000, 7);
    let first = pq::to_bytes(&mut pq::frame_df(&rows).unwrap()).unwrap();
    let again = std::thread::spawn(move || pq::to_bytes(&mut pq::frame_df(&rows).unwrap()).unwrap()).join().unwrap();
    assert_eq!(first, again);
    // Each Parquet table holds its CSV's rows and columns.
    let file = |p: &str| &a.iter().find(|f| f.path == p).unwrap().bytes;
    let groups = pq::read_bytes(file("tables/fcfs__seed1.groups.parquet")).unwrap();
    let csv = String::from_utf8(file("tables/fcfs__seed1.groups.csv").clone()).unwrap();
    assert_eq!(groups.height() + 1, csv.lines().count());
    let header: Vec<&str> = groups.get_column_names().into_iter().map(|c| c.as_str()).collect();
    assert_eq!(header.join(","), csv.lines().next().unwrap());
    let series = pq::read_bytes(file("tables/fcfs__seed1.timeseries.parquet")).unwrap();
    let csv = String::from_utf8(file("tables/fcfs__seed1.timeseries.csv").clone()).unwrap();
    assert_eq!(
        (series.height() + 1, series.width()),
        (csv.lines().count(), csv.lines().next().unwrap().split(',').count())
    );
    let comparison = pq::read_bytes(file("comparison.parquet")).unwrap();
    assert_eq!(comparison.height() + 1, String::from_utf8_lossy(file("comparison.csv")).lines().count());
}

#[test]
fn by_size_class_counts_every_job_once_in_policy_then_size_order() {
    let runs = runs();
    let df = pq::runs_by_size_class(&runs).unwrap();
    let names: Vec<&str> = df.get_column_names().into_iter().map(|c| c.as_str()).collect();
    assert_eq!(names, pq::BY_SIZE_CLASS_COLUMNS);
    let jobs: Vec<u64> = df.column("jobs").unwrap().u64().unwrap().iter().map(Option::unwrap).collect();
    let total: usize = runs.iter().map(|r| r.rows.len()).sum();
    assert_eq!(jobs.iter().sum::<u64>(), total as u64, "counts sum to the number of jobs");
    let policy: Vec<&str> = df.column("policy").unwrap().str().unwrap().iter().map(Option::unwrap).collect();
    let class: Vec<&str> = df.column("size_class").unwrap().str().unwrap().iter().map(Option::unwrap).collect();
    // Policies in first-seen order, size classes in SIZE_CLASSES order within each.
    let key = |i: usize| {
        let p = ["fcfs", "easy"].iter().position(|x| *x == policy[i]).unwrap();
        (p, tables::SIZE_CLASSES.iter().position(|x| *x == class[i]).unwrap())
    };
    assert!((1..df.height()).all(|i| key(i - 1) < key(i)), "{policy:?} {class:?}");
    // The same figures as the plain-Rust size-class table of the pooled rows.
    let f = |c: &str| -> Vec<Option<f64>> { df.column(c).unwrap().f64().unwrap().iter().collect() };
    let (wait_mean, wait_p95, bsld_mean) = (f("wait_mean"), f("wait_p95"), f("bsld_mean"));
    let started: Vec<u64> = df.column("started").unwrap().u64().unwrap().iter().map(Option::unwrap).collect();
    let mut i = 0;
    for p in ["fcfs", "easy"] {
        let pooled: Vec<JobRow> =
            runs.iter().filter(|r| r.policy() == p).flat_map(|r| r.rows.iter().cloned()).collect();
        for g in tables::group_table(&pooled, GroupBy::SizeClass) {
            assert_eq!((policy[i], class[i], jobs[i], started[i]), (p, g.key.as_str(), g.jobs, g.started));
            let close = |a: Option<f64>, b: f64, n: u64| match a {
                Some(a) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                None => n == 0,
            };
            assert!(close(wait_mean[i], g.wait.mean, g.wait.n), "{p} {}: {:?} vs {}", g.key, wait_mean[i], g.wait.mean);
            assert!(close(bsld_mean[i], g.bsld.mean, g.bsld.n), "{p} {}: {:?} vs {}", g.key, bsld_mean[i], g.bsld.mean);
            assert_eq!(wait_p95[i].unwrap_or(0.0), g.wait.p95, "{p} {}: nearest-rank p95", g.key);
            i += 1;
        }
    }
    assert_eq!(i, df.height());
    // The CSV: fixed decimals, one line per group.
    let mut csv = Vec::new();
    pq::write_by_size_class_csv(&mut csv, &df).unwrap();
    let text = String::from_utf8(csv).unwrap();
    assert_eq!(text.lines().next(), Some("policy,size_class,jobs,started,wait_mean,wait_p95,bsld_mean"));
    assert_eq!(text.lines().count(), df.height() + 1);
    let first = text.lines().nth(1).unwrap();
    assert!(first.starts_with(&format!("fcfs,{},{},", class[0], jobs[0])), "{first}");
    assert!(
        first.split(',').skip(4).all(|v| v.is_empty() || v.split('.').nth(1).is_some_and(|d| d.len() == 6)),
        "{first}"
    );
}

#[test]
fn no_runs_and_empty_frames() {
    let df = pq::runs_by_size_class(&[]).unwrap();
    assert_eq!((df.height(), df.width()), (0, pq::BY_SIZE_CLASS_COLUMNS.len()));
    let empty = pq::to_bytes(&mut pq::frame_df(&[]).unwrap()).unwrap();
    assert_eq!(pq::frame_rows(&pq::read_bytes(&empty).unwrap()).unwrap(), []);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn any_frame_round_trips(
        spec in prop::collection::vec((any::<u32>(), 0u64..1 << 40, prop::option::of(0u64..1 << 40), any::<u64>(), any::<i32>()), 0..60)
    ) {
        let rows: Vec<JobRow> = spec
            .iter()
            .enumerate()
            .map(|(i, &(user, submit, start, units, queue))| JobRow {
                user,
                submit_us: submit,
                start_us: start,
                end_us: start.map(|s| s + 1),
                units,
                queue,
                id: format!("{i},\"x\""),
                ..row(i as u64, 0)
            })
            .collect();
        let bytes = pq::to_bytes(&mut pq::frame_df(&rows).unwrap()).unwrap();
        prop_assert_eq!(pq::frame_rows(&pq::read_bytes(&bytes).unwrap()).unwrap(), rows);
    }
}
