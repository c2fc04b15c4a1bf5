//! `sim compare`, `sim report` and `sim run --report` end to end.

use crate::{data, sim};
use std::path::Path;

fn ok(out: &std::process::Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn compare_into(dir: &Path, threads: &str) {
    ok(&sim(&[
        "compare",
        "--quiet",
        "--trace",
        &data("HPC2N-2002-2.2-cln.first2000.swf.gz"),
        "--policies",
        "fcfs,easy,conservative[replan=rebuild]",
        "--seeds",
        "1..2",
        "--threads",
        threads,
        "--out",
        dir.to_str().unwrap(),
    ]));
}

/// Every file under `dir`, by relative path.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn compare_writes_runs_a_comparison_and_a_report_whatever_the_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    compare_into(&a, "1");
    compare_into(&b, "2");
    let (fa, fb) = (files(&a), files(&b));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (k, v) in &fa {
        assert!(v == &fb[k], "{k} differs between 1 and 2 threads");
    }
    for run in ["fcfs__seed1", "easy__seed2", "conservative_replan_rebuild__seed1"] {
        for f in ["jobs.csv", "summary.json", "frame.csv"] {
            assert!(fa.contains_key(&format!("{run}/{f}")), "{run}/{f} missing");
        }
    }
    for f in [
        "comparison.csv",
        "report.html",
        "plots/wait_cdf.svg",
        "plots/utilization.png",
        "plots/queue_length.svg",
        "plots/utilization_difference.svg",
        "plots/observed_wait_cdf.svg",
        "tables/summary.csv",
        "tables/by_size_class.csv",
        "tables/by_user.csv",
        "tables/why.csv",
        "tables/observed.csv",
    ] {
        assert!(fa.contains_key(f), "{f} missing: {:?}", fa.keys().collect::<Vec<_>>());
    }
    let html = String::from_utf8(fa["report.html"].clone()).unwrap();
    assert_eq!(html.matches("<figure>").count(), html.matches("<svg").count());
    assert!(html.matches("<svg").count() >= 4, "every plot embedded");
    assert!(!html.contains("<script") && !html.contains("src=\"http"), "self-contained");
    // The summary table first; the SWF slice's observed waits get their section; no GPU
    // row on a trace without GPUs; an unvaried replay's seeds are one run.
    let summary = html.find("<table class=\"summary\"").expect("summary table");
    assert!(summary < html.find("<figure>").unwrap());
    assert!(html.contains("Simulated against observed") && html.contains("KS distance"));
    assert!(!html[summary..].split("</table>").next().unwrap().contains("GPU"));
    assert!(html.contains("The 2 seeds gave the same results"));
    assert!(html.contains("<td>conservative[replan=rebuild]"), "labelled as typed");
    // The comparison's means are the runs' summary.json figures.
    let csv = String::from_utf8(fa["comparison.csv"].clone()).unwrap();
    for (policy, folder) in [("fcfs", "fcfs"), ("easy", "easy")] {
        let v = |seed: u32| -> serde_json::Value {
            serde_json::from_slice(&fa[&format!("{folder}__seed{seed}/summary.json")]).unwrap()
        };
        let (s1, s2) = (v(1), v(2));
        let spec = s1["policy"].as_str().unwrap().to_string();
        assert!(spec.starts_with(policy));
        let mean = (s1["wait_mean"].as_f64().unwrap() + s2["wait_mean"].as_f64().unwrap()) / 2.0;
        let line = csv
            .lines()
            .find(|l| {
                l.contains(",wait_mean,") && l.starts_with(&format!("\"{spec}\""))
                    || l.starts_with(&format!("{spec},wait_mean"))
            })
            .unwrap_or_else(|| panic!("{spec} wait_mean missing in {csv}"));
        assert!(line.contains(&format!("{mean:.6}")), "{line} vs {mean}");
    }
}

#[test]
fn report_rebuilds_the_same_report_from_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    compare_into(&a, "2");
    let r = tmp.path().join("r");
    ok(&sim(&["report", a.to_str().unwrap(), "--out", r.to_str().unwrap()]));
    let (fa, fr) = (files(&a), files(&r));
    for f in ["comparison.csv", "report.html", "plots/wait_cdf.svg", "plots/bsld_by_size.png"] {
        assert!(fa[f] == fr[f], "{f} differs when rebuilt");
    }
    // Not a run folder: a usage error.
    let out = sim(&["report", tmp.path().join("nothing").to_str().unwrap(), "--out", r.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn run_with_report_writes_tables_plots_and_html() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    ok(&sim(&["run", "--quiet", "--report", "--out", out.to_str().unwrap()]));
    let f = files(&out);
    for name in ["frame.csv", "report.html", "comparison.csv", "plots/utilization.svg"] {
        assert!(f.contains_key(name), "{name} missing");
    }
    assert!(f.keys().any(|k| k.starts_with("tables/") && k.ends_with(".groups.csv")));
    // The embedded default trace has 3,000 jobs: no Gantt chart (drawn for up to 2,000).
    assert!(!f.keys().any(|k| k.contains("gantt")));
}

/// Measures the page's layout in the browser, writing what it finds into `<body
/// data-layout>` for `--dump-dom`: whether the page is wider than the window, whether
/// the summary table is on the first screen, and each plot's size and place.
const LAYOUT_PROBE: &str = r#"<script>
(function () {
  const W = window.innerWidth, H = window.innerHeight, doc = document.documentElement, bad = [];
  if (doc.scrollWidth > W) bad.push('page wider than the window: ' + doc.scrollWidth + ' > ' + W);
  const s = document.querySelector('table.summary');
  if (!s) bad.push('no summary table');
  else {
    const r = s.getBoundingClientRect();
    if (r.top < 0 || r.bottom > H) bad.push('summary table off the first screen: ' + r.top + '..' + r.bottom);
    if (r.right > W) bad.push('summary table wider than the window: ' + r.right);
  }
  const figs = document.querySelectorAll('figure svg');
  figs.forEach(function (g, i) {
    const r = g.getBoundingClientRect();
    if (r.width < 300 || r.height < 150) bad.push('plot ' + i + ' is ' + r.width + 'x' + r.height);
    if (r.left < 0 || r.right > doc.clientWidth + 1) bad.push('plot ' + i + ' overflows: ' + r.left + '..' + r.right);
  });
  document.body.setAttribute('data-plots', String(figs.length));
  document.body.setAttribute('data-layout', bad.length ? bad.join('; ') : 'ok');
})();
</script>"#;

/// Headless Chromium renders report.html: the summary table on the first screen, every
/// plot drawn at a readable size, nothing wider than the window (at a laptop's 1280 × 800
/// and a narrow 900 × 700). Chromium comes from `apt-get install chromium` (`.ci/run`
/// installs it and sets `SCHEDLAB_REQUIRE_CHROMIUM=1`, making its absence a failure);
/// elsewhere, without it, the check is skipped with a note.
#[test]
fn report_renders_in_headless_chromium() {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
    else {
        assert!(std::env::var_os("SCHEDLAB_REQUIRE_CHROMIUM").is_none(), "no Chromium on PATH");
        eprintln!("note: no Chromium on PATH: the rendering check is skipped");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    compare_into(&a, "2");
    let html = a.join("report.html");
    let flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--hide-scrollbars"];
    let shot = tmp.path().join("shot.png");
    let out = std::process::Command::new(chromium)
        .args(flags)
        .arg("--window-size=1280,800")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(shot.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    let figures = page.matches("<figure>").count();
    assert!(figures >= 6, "{figures} plots");
    let probed = tmp.path().join("probed.html");
    std::fs::write(&probed, page.replace("</body>", &format!("{LAYOUT_PROBE}</body>"))).unwrap();
    for size in ["1280,800", "900,700"] {
        let dom = std::process::Command::new(chromium)
            .args(flags)
            .arg(format!("--window-size={size}"))
            .arg("--dump-dom")
            .arg(format!("file://{}", probed.display()))
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&dom.stdout);
        assert!(dom.contains(&format!("data-plots=\"{figures}\"")), "every plot parsed ({size})");
        assert!(
            dom.contains("data-layout=\"ok\""),
            "{size}: {}",
            dom.split("data-layout=").nth(1).unwrap_or("no probe").lines().next().unwrap_or("")
        );
        assert!(dom.matches("<polyline").count() >= 3);
    }
}

/// With the `parquet` feature, `sim compare` writes each run's frame as Parquet: as many
/// rows as the run's `jobs.csv`, the same ids in the same order; and the analysis over
/// every run counts every job once.
#[cfg(feature = "parquet")]
#[test]
fn compare_writes_parquet_tables_with_every_job() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    compare_into(&a, "2");
    let f = files(&a);
    let mut total = 0;
    for run in ["fcfs__seed1", "easy__seed2", "conservative_replan_rebuild__seed1"] {
        let jobs_csv = String::from_utf8(f[&format!("{run}/jobs.csv")].clone()).unwrap();
        let data_rows = jobs_csv.lines().skip(1).filter(|l| !l.is_empty()).count();
        let df = reports::parquet::read_bytes(&f[&format!("tables/{run}.frame.parquet")]).unwrap();
        assert_eq!(df.height(), data_rows, "{run}: frame.parquet rows vs jobs.csv rows");
        let rows = reports::parquet::frame_rows(&df).unwrap();
        let csv_rows = reports::frame::read_csv(&f[&format!("{run}/frame.csv")][..], "frame.csv").unwrap();
        assert_eq!(rows, csv_rows, "{run}: the Parquet frame is the CSV frame");
        for t in ["groups", "timeseries"] {
            assert!(f.contains_key(&format!("tables/{run}.{t}.parquet")), "{run}.{t}.parquet missing");
        }
        total += data_rows;
    }
    assert!(f.contains_key("comparison.parquet"));
    let by_size = reports::parquet::read_bytes(&f["runs_by_size_class.parquet"]).unwrap();
    let jobs: u64 = by_size.column("jobs").unwrap().u64().unwrap().iter().map(Option::unwrap).sum();
    // Six runs (three policies, two seeds) of the same trace.
    assert_eq!(jobs, 2 * total as u64);
    let csv = String::from_utf8(f["runs_by_size_class.csv"].clone()).unwrap();
    assert_eq!(csv.lines().count(), by_size.height() + 1);
}

/// A GPU replay samples fragmentation over time; the report plots it.
#[test]
fn gpu_runs_record_fragmentation_over_time() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    ok(&sim(&[
        "run",
        "--quiet",
        "--report",
        "--trace",
        &data("openb/openb_pod_list_default.first400.csv"),
        "--nodes",
        &data("openb/openb_node_list_gpu_node.every20th.csv"),
        "--out",
        out.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(out.join("fragmentation.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("t,free_gpus,fragment_gpus,fragmentation"));
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|f| f.parse().unwrap()).collect()).collect();
    assert!(rows.len() > 100, "{} samples", rows.len());
    // 314 GPUs: free and fragment within bounds, time ascending, some fragment once pods
    // run.
    assert!(rows.windows(2).all(|w| w[0][0] < w[1][0]));
    assert!(rows.iter().all(|r| r[1] <= 314.0 && r[2] <= r[1] && (0.0..=1.0).contains(&r[3])));
    assert!(rows.iter().any(|r| r[2] > 0.0));
    assert!(out.join("plots/gpu_fragmentation.svg").exists());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("GPU fragmentation over time"));
    assert!(html.contains("<th>GPU allocation</th>"), "utilization of the scarce resource");
    // A CPU-only run has no GPUs to sample.
    let cpu = tmp.path().join("cpu");
    ok(&sim(&["run", "--quiet", "--out", cpu.to_str().unwrap()]));
    assert!(!cpu.join("fragmentation.csv").exists());
}

/// `--perturb resample` gives each seed its own workload, the same for every policy: the
/// seeds are runs with intervals, the deltas are paired, and the output is the same
/// whatever the thread count.
#[test]
fn perturbed_seeds_give_paired_intervals_at_any_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let go = |dir: &Path, threads: &str| {
        ok(&sim(&[
            "compare",
            "--quiet",
            "--trace",
            &data("HPC2N-2002-2.2-cln.first2000.swf.gz"),
            "--policies",
            "fcfs,easy",
            "--seeds",
            "1..4",
            "--perturb",
            "resample",
            "--threads",
            threads,
            "--out",
            dir.to_str().unwrap(),
        ]));
        files(dir)
    };
    let (a, b) = (go(&tmp.path().join("a"), "1"), go(&tmp.path().join("b"), "2"));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs between 1 and 2 threads");
    }
    let csv = String::from_utf8(a["comparison.csv"].clone()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let easy_wait = rows.iter().find(|r| r[col("metric")] == *"wait_mean" && r[col("label")] == *"easy").unwrap();
    assert_eq!(&easy_wait[col("runs")], "4");
    assert_eq!(&easy_wait[col("deterministic")], "false");
    let (lo, hi): (f64, f64) =
        (easy_wait[col("delta_ci95_low")].parse().unwrap(), easy_wait[col("delta_ci95_high")].parse().unwrap());
    assert!(hi > lo, "a non-zero paired interval: [{lo}, {hi}]");
    // Each seed's workload differs, and the two policies of one seed read the same one.
    let jobs = |run: &str| -> f64 {
        let v: serde_json::Value = serde_json::from_slice(&a[&format!("{run}/summary.json")]).unwrap();
        v["jobs_total"].as_f64().unwrap()
    };
    assert_eq!(jobs("fcfs__seed1"), jobs("easy__seed1"));
    assert!(
        (1..=4).map(|s| jobs(&format!("fcfs__seed{s}")) as u64).collect::<std::collections::BTreeSet<_>>().len() > 1
    );
    let html = String::from_utf8(a["report.html"].clone()).unwrap();
    assert!(html.contains("Each of the 4 seeds replays a different version of the trace"));
}
