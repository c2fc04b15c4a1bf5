//! `reports::report::build`: which plots a report gets, and how its Gantt charts are coloured.

use reports::frame::JobRow;
use reports::report::{self, GANTT_MAX_JOBS, RunData};

/// Job `i` of a run on 64 units: 1-8 units, started and ended, user `user(i)`.
fn row(i: u64, user: u32) -> JobRow {
    let submit = i * 10_000_000;
    JobRow {
        id: i.to_string(),
        submit_us: submit,
        start_us: Some(submit + 1_000_000),
        end_us: Some(submit + 1_000_000 + (i % 5 + 1) * 7_000_000),
        requested_us: None,
        units: 1 + i % 8,
        user,
        kind: "batch".into(),
        outcome: "completed".into(),
        queue: -1,
        partition: -1,
        ..JobRow::default()
    }
}

fn run(rows: Vec<JobRow>) -> RunData {
    RunData {
        name: "easy__seed1".into(),
        summary: serde_json::json!({ "policy": "easy", "seed": 1, "machine_units": 64, "machine_gpus": 0 }),
        rows,
        fragmentation: Vec::new(),
    }
}

fn file<'a>(files: &'a [report::ReportFile], path: &str) -> Option<&'a str> {
    files.iter().find(|f| f.path == path).map(|f| std::str::from_utf8(&f.bytes).unwrap())
}

#[test]
fn a_run_of_up_to_2000_jobs_gets_a_gantt_chart() {
    assert_eq!(GANTT_MAX_JOBS, 2_000);
    let rows: Vec<JobRow> = (0..2_000).map(|i| row(i, (i % 3) as u32)).collect();
    let files = report::build(&[run(rows.clone())]).unwrap();
    assert!(file(&files, "plots/gantt_easy__seed1.svg").is_some(), "2,000 jobs: a Gantt chart");
    assert!(files.iter().any(|f| f.path == "plots/gantt_easy__seed1.png"));
    let mut more = rows;
    more.push(row(2_000, 0));
    let files = report::build(&[run(more)]).unwrap();
    assert!(file(&files, "plots/gantt_easy__seed1.svg").is_none(), "2,001 jobs: none");
}

/// A colour per user: palette index = user modulo the palette's 10 colours, so users 0
/// and 8 differ (and 0 and 10 share Tableau's blue).
#[test]
fn gantt_colours_jobs_by_user_modulo_ten() {
    let files = report::build(&[run(vec![row(0, 0), row(1, 8)])]).unwrap();
    let svg = file(&files, "plots/gantt_easy__seed1.svg").unwrap().to_ascii_uppercase();
    assert!(svg.contains("#4E79A7"), "user 0: Tableau blue");
    assert!(svg.contains("#9C755F"), "user 8: the ninth colour, not user 0's");
    let files = report::build(&[run(vec![row(0, 10)])]).unwrap();
    let svg = file(&files, "plots/gantt_easy__seed1.svg").unwrap().to_ascii_uppercase();
    assert!(svg.contains("#4E79A7"), "user 10 wraps to the first colour");
}

/// Known units reach the chart: a job on units 0-1 and 6-7 of 8 is drawn as two
/// rectangles (the frame's `allocated` column), and the same run gives the same bytes.
#[test]
fn gantt_draws_known_units_and_is_deterministic() {
    let mut a = row(0, 0);
    a.units = 4;
    a.allocated = vec![(0, 2), (6, 2)];
    let files = report::build(&[run(vec![a.clone()])]).unwrap();
    let again = report::build(&[run(vec![a])]).unwrap();
    assert_eq!(files, again);
    let svg = file(&files, "plots/gantt_easy__seed1.svg").unwrap().to_ascii_uppercase();
    assert_eq!(svg.matches("FILL=\"#4E79A7\"").count(), 2, "{svg}");
}
