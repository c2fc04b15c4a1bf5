//! `report.html` and the page's tables: the summary table first, labelled as the user
//! typed the policies; GPU columns only with GPUs; the "why", breakdown and
//! simulated-against-observed tables computed by hand on tiny runs.

use reports::frame::JobRow;
use reports::report::{self, ReportFile, RunData};

/// A job submitted at 0 on `units` units, waiting `wait` s then running 100 s, user
/// `user`, requesting 200 s.
fn job(id: &str, units: u64, wait: u64, user: u32) -> JobRow {
    JobRow {
        id: id.into(),
        submit_us: 0,
        start_us: Some(wait * 1_000_000),
        end_us: Some((wait + 100) * 1_000_000),
        requested_us: Some(200_000_000),
        units,
        user,
        kind: "batch".into(),
        outcome: "completed".into(),
        queue: -1,
        partition: -1,
        ..JobRow::default()
    }
}

fn run(given: &str, spec: &str, seed: u64, rows: Vec<JobRow>, extra: serde_json::Value) -> RunData {
    let wait_mean = rows.iter().filter_map(JobRow::wait_s).sum::<f64>() / rows.len() as f64;
    let mut summary = serde_json::json!({
        "policy": spec, "policy_given": given, "seed": seed, "machine_units": 64, "machine_gpus": 0,
        "wait_mean": wait_mean, "wait_p95": wait_mean, "bounded_slowdown_mean": 1.0, "utilization": 0.5,
        "makespan": 1000, "gpu_hours": 0.0, "trace": "t.swf",
    });
    for (k, v) in extra.as_object().unwrap() {
        summary[k] = v.clone();
    }
    RunData {
        name: format!("{}__seed{seed}", given.replace(['[', ']', '='], "_")),
        summary,
        rows,
        fragmentation: Vec::new(),
    }
}

fn file<'a>(files: &'a [ReportFile], path: &str) -> &'a str {
    let f = files.iter().find(|f| f.path == path).unwrap_or_else(|| panic!("{path} missing"));
    std::str::from_utf8(&f.bytes).unwrap()
}

/// Two policies over two seeds of one unvaried workload: fcfs waits 100 s for the small
/// job and 0 for the big one; `easy[...]` the other way round with 50 s.
fn two_policies() -> Vec<RunData> {
    let none = serde_json::json!({});
    let base = || vec![job("a", 1, 100, 1), job("b", 64, 0, 2)];
    let other = || vec![job("a", 1, 0, 1), job("b", 64, 50, 2)];
    vec![
        run("fcfs", "fcfs[pass=per-time]", 1, base(), none.clone()),
        run("fcfs", "fcfs[pass=per-time]", 2, base(), none.clone()),
        run("easy[reservation=nodes]", "easy[pass=per-time,reservation=nodes]", 1, other(), none.clone()),
        run("easy[reservation=nodes]", "easy[pass=per-time,reservation=nodes]", 2, other(), none),
    ]
}

#[test]
fn the_summary_table_comes_first_labelled_as_typed() {
    let files = report::build(&two_policies()).unwrap();
    let html = file(&files, "report.html");
    let summary = html.find("<table class=\"summary\"").expect("a summary table");
    for later in ["<figure>", "id=\"why\"", "id=\"groups\"", "<details>"] {
        assert!(summary < html.find(later).unwrap_or(usize::MAX), "{later} before the summary table");
    }
    // Rows as typed, full specs in the legend, each policy one deterministic run.
    assert!(html.contains("<td>easy[reservation=nodes]</td>"), "{html}");
    assert!(html.contains("<code>easy[pass=per-time,reservation=nodes]</code>"));
    assert_eq!(html.matches("1 (deterministic)").count(), 2);
    assert!(html.contains("The 2 seeds gave the same results"));
    // No GPUs: no GPU column anywhere in the summary.
    let table = &html[summary..summary + html[summary..].find("</table>").unwrap()];
    assert!(!table.contains("GPU"), "{table}");
    assert!(table.contains("<th>utilization</th>"));
    // The CSV twin: mean wait 50 → 25 (−50 %), one pair, no interval.
    let csv = file(&files, "tables/summary.csv");
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("label,policy,runs,deterministic,wait_mean_mean,wait_mean_ci95,"));
    assert!(lines.next().unwrap().starts_with("fcfs,fcfs[pass=per-time],1,true,50.000000,0.000000,,,"));
    assert!(
        lines.next().unwrap().starts_with(
            "easy[reservation=nodes],\"easy[pass=per-time,reservation=nodes]\",1,true,25.000000,0.000000,-50.000000,,"
        ),
        "{csv}"
    );
}

#[test]
fn gpu_columns_appear_only_with_gpus() {
    let gpu = serde_json::json!({ "machine_gpus": 8, "gpu_hours": 3.5 });
    let runs = vec![run("kube", "kube", 1, vec![job("a", 1, 0, 1)], gpu)];
    let files = report::build(&runs).unwrap();
    let html = file(&files, "report.html");
    assert!(html.contains("<th>GPU allocation</th>"));
    assert!(html.contains("<th>GPU-hours</th>") || html.contains("GPU-hours"), "gpu_hours column");
    // OOM kills and energy are zero (absent): no column.
    assert!(!html.contains("OOM kills</th>"));
}

#[test]
fn why_pairs_each_job_with_itself_under_the_baseline() {
    let files = report::build(&two_policies()).unwrap();
    let why = file(&files, "tables/why.csv");
    // Deterministic: one run each, so each job once. The 1-unit job: 100 → 0; the
    // 64-unit one: 0 → 50; both request 200 s (the "≤ 10 min" class): 50 → 25.
    assert_eq!(
        why,
        "label,by,class,jobs,baseline_wait_mean,wait_mean,change\n\
         easy[reservation=nodes],size_class,1,1,100.000,0.000,-100.000\n\
         easy[reservation=nodes],size_class,17-64,1,0.000,50.000,50.000\n\
         easy[reservation=nodes],requested,≤ 10 min,2,50.000,25.000,-25.000\n"
    );
    let html = file(&files, "report.html");
    assert!(html.contains("helped most size 1 (1 jobs, mean wait 100.000 s → 0.000 s)"), "{html}");
    assert!(html.contains("hurt most size 17-64"));
}

#[test]
fn breakdown_by_user_has_jain_fairness() {
    let files = report::build(&two_policies()).unwrap();
    let by_user = file(&files, "tables/by_user.csv");
    // fcfs: user 1's bounded slowdown (100 + 100) / 100 = 2, user 2's 1:
    // J = 3² / (2 × 5) = 0.9. easy: user 1's 1, user 2's 1.5: 2.5² / (2 × 3.25).
    assert!(by_user.contains("user,all,fcfs,,,,,,0.900000"), "{by_user}");
    let j = 2.5f64 * 2.5 / (2.0 * 3.25);
    assert!(by_user.contains(&format!("user,all,easy[reservation=nodes],,,,,,{j:.6}")), "{by_user}");
    assert!(by_user.contains("user,1,fcfs,1,100.000,"));
}

#[test]
fn observed_waits_get_their_section_and_ks_distance() {
    let mut runs = two_policies();
    // Observed: 100 s and 0 s, as fcfs simulates them; easy's 0 and 50.
    for r in &mut runs {
        r.rows[0].observed_wait_us = Some(100_000_000);
        r.rows[1].observed_wait_us = Some(0);
    }
    let files = report::build(&runs).unwrap();
    let csv = file(&files, "tables/observed.csv");
    let mut lines = csv.lines().skip(1);
    // fcfs reproduces the observed waits: KS 0. easy: simulated {0, 50} against
    // observed {0, 100}: at 50 the CDFs are 1 and 0.5.
    assert!(lines.next().unwrap().starts_with("fcfs,2,0.000000,"), "{csv}");
    assert!(lines.next().unwrap().starts_with("easy[reservation=nodes],2,0.500000,"), "{csv}");
    let html = file(&files, "report.html");
    assert!(html.contains("Simulated against observed"));
    assert!(files.iter().any(|f| f.path == "plots/observed_wait_cdf.svg"));
    // Without observed waits, no section.
    let files = report::build(&two_policies()).unwrap();
    assert!(!file(&files, "report.html").contains("Simulated against observed"));
}

#[test]
fn perturbed_seeds_are_paired_runs_with_intervals() {
    let p = serde_json::json!({ "perturb": "resample" });
    let mk = |given: &str, seed: u64, w: u64| run(given, given, seed, vec![job("a", 1, w, 1)], p.clone());
    // fcfs 100, 200, 300; easy 90, 189, 291: differences −10, −11, −9 (significant).
    let runs = vec![
        mk("fcfs", 1, 100),
        mk("fcfs", 2, 200),
        mk("fcfs", 3, 300),
        mk("easy", 1, 90),
        mk("easy", 2, 189),
        mk("easy", 3, 291),
    ];
    let files = report::build(&runs).unwrap();
    let html = file(&files, "report.html");
    assert!(html.contains("Each of the 3 seeds replays a different version of the trace"));
    assert!(html.contains("✓"), "easy significantly better");
    let csv = file(&files, "tables/summary.csv");
    assert!(csv.lines().nth(2).unwrap().starts_with("easy,easy,3,false,190.000000,"), "{csv}");
    assert!(csv.lines().nth(2).unwrap().contains(",true,"), "{csv}");
}

#[test]
fn the_text_comparison_names_policies_as_typed() {
    let text = report::comparison_text(&two_policies());
    assert!(text.starts_with("mean wait (s)\n"), "{text}");
    assert!(text.contains("  easy[reservation=nodes]  runs 1 (deterministic)"), "{text}");
    assert!(text.contains("-50.0 %"), "{text}");
    assert!(text.contains("easy[reservation=nodes]: easy[pass=per-time,reservation=nodes]"));
    assert!(!text.contains("GPU"));
}
