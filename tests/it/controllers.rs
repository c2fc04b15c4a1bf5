//! Controllers from the command line and the cluster configuration.

use crate::{read, run_into, sim};

const CLUSTER: &str = "[[pool]]\nname = \"r1\"\ncount = 2\ncores = 4\ntopology = { rack = \"r1\" }\n\n\
[[pool]]\nname = \"r2\"\ncount = 2\ncores = 4\ntopology = { rack = \"r2\" }\n";

const WORKLOAD: &str = "{\"id\":\"A\",\"submit\":0,\"runtime\":100,\"tasks\":8}\n\
{\"id\":\"B\",\"submit\":60,\"runtime\":100,\"tasks\":8}\n\
{\"id\":\"C\",\"submit\":70,\"runtime\":50,\"tasks\":4}\n\
{\"id\":\"D\",\"submit\":80,\"runtime\":10,\"tasks\":12}\n";

fn starts(jobs_csv: &str) -> Vec<String> {
    jobs_csv.lines().skip(1).map(|l| l.split(',').nth(2).unwrap().to_string()).collect()
}

/// The maintenance window of the controller guide, from `--controller` and from a
/// `[[controller]]` table: rack r1 drains at 50 until 300 (see
/// crates/controllers/tests/it/maintenance.rs for the hand computation).
#[test]
fn a_maintenance_window_from_the_flag_or_the_cluster_file() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = dir.path().join("cluster.toml");
    let workload = dir.path().join("w.jsonl");
    std::fs::write(&cluster, CLUSTER).unwrap();
    std::fs::write(&workload, WORKLOAD).unwrap();
    let (w, c) = (workload.to_str().unwrap(), cluster.to_str().unwrap());
    let base = ["--trace", w, "--cluster", c, "--policy", "easy"];
    let (out, plain) = run_into(&base);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(starts(&read(&plain, "jobs.csv")), ["0", "60", "100", "160"]);
    let mut args = base.to_vec();
    args.extend(["--controller", "maintenance[rack=r1,at=50,until=300]"]);
    let (out, flag) = run_into(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(starts(&read(&flag, "jobs.csv")), ["0", "60", "160", "300"]);
    let s: serde_json::Value = serde_json::from_str(&read(&flag, "summary.json")).unwrap();
    assert_eq!(s["controllers"][0], "maintenance[rack=r1,pool=*,at=50,until=300,mode=drain]");
    let with_table = dir.path().join("maintained.toml");
    std::fs::write(
        &with_table,
        format!("{CLUSTER}\n[[controller]]\nspec = \"maintenance[rack=r1,at=50,until=300]\"\n"),
    )
    .unwrap();
    let (out, table) = run_into(&["--trace", w, "--cluster", with_table.to_str().unwrap(), "--policy", "easy"]);
    assert!(out.status.success());
    assert_eq!(read(&table, "jobs.csv"), read(&flag, "jobs.csv"));
}

#[test]
fn controllers_are_listed_and_bad_specs_refused() {
    let out = sim(&["controllers"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("maintenance\n"), "{text}");
    assert!(text.contains("    mode=drain|down (default drain)") && text.contains("job-retry"), "{text}");
    let (out, _) = run_into(&["--controller", "maintenance[when=3]"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--controller 'maintenance[when=3]': controller 'maintenance': unknown option 'when'"),
        "{err}"
    );
}
