//! Slurm and Kubernetes on one cluster from the command line: `[[domain]]` tables,
//! `--trace DOMAIN:FILE`, `--arrangement`, `sim compare --arrangements`, and the errors
//! of each.

use crate::sim;
use std::path::Path;

const CLUSTER: &str = r#"
[[domain]]
name = "slurm"
policy = "slurm"
[[domain]]
name = "kubernetes"
policy = "kube"

[[pool]]
name = "batch"
count = 1
cores = 16
gpus = { count = 8, model = "A100", memory_mib = 81920 }
domain = "slurm"

[[pool]]
name = "serve"
count = 1
cores = 16
gpus = { count = 8, model = "A100", memory_mib = 81920 }
domain = "kubernetes"
"#;

const SLURM: &str = "{\"id\":\"s1\",\"submit\":0,\"runtime\":100,\"gpus\":8}\n\
                     {\"id\":\"s2\",\"submit\":0,\"runtime\":100,\"gpus\":8}\n";
const PODS: &str = "{\"id\":\"p\",\"submit\":10,\"runtime\":50,\"gpus\":8}\n";

/// The cluster and the two traces in `dir`.
fn inputs(dir: &Path, cluster: &str) -> (String, String, String) {
    let w = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    (w("cluster.toml", cluster), w("slurm.jsonl", SLURM), w("pods.jsonl", PODS))
}

/// The `summary.json` of the run folder `dir/out`.
fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("out/summary.json")).unwrap()).unwrap()
}

fn run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let (cluster, slurm, pods) = inputs(dir, CLUSTER);
    let out = dir.join("out").display().to_string();
    let (s, p) = (format!("slurm:{slurm}"), format!("k8s:{pods}"));
    let mut args = vec!["run", "--quiet", "--out", &out, "--cluster", &cluster, "--trace", &s, "--trace", &p];
    args.extend_from_slice(extra);
    sim(&args)
}

/// A static split (the pools' domains): s2 waits for s1 on Slurm's node while
/// Kubernetes' idles; the pod runs at once on its own. The summary counts per domain,
/// and a second run writes the same bytes.
#[test]
fn a_static_split_from_the_pools_and_its_figures_per_domain() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(d.path().join("out/summary.json")).unwrap();
    let s: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(s["domains"]["slurm"]["wait_mean"], 50.0, "{s:#}");
    assert_eq!(s["domains"]["kubernetes"]["wait_mean"], 0.0);
    assert_eq!(s["domains"]["slurm"]["jobs"], 2);
    assert_eq!(s["node_moves"], 0);
    assert!(s["policy"].as_str().unwrap().starts_with("static[slurm_nodes=pools] over slurm:slurm["));
    let jobs = std::fs::read_to_string(d.path().join("out/jobs.csv")).unwrap();
    assert!(jobs.contains("slurm/s2,") && jobs.contains("kubernetes/p,"), "{jobs}");
    assert!(run(d.path(), &[]).status.success());
    assert_eq!(std::fs::read(d.path().join("out/summary.json")).unwrap(), bytes, "same inputs, same bytes");
    // Bridged, the pod is a Slurm job on a whole node: both nodes are Slurm's, s1 and s2
    // run at once and the pod waits for the first to end.
    let o = run(d.path(), &["--arrangement", "bridge"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = summary(d.path());
    assert_eq!(
        (s["domains"]["slurm"]["wait_mean"].as_f64(), s["domains"]["kubernetes"]["wait_mean"].as_f64()),
        (Some(0.0), Some(90.0))
    );
    assert_eq!(s["node_moves"], 1);
    assert!(s["domains"]["kubernetes"]["gpu_utilization"].is_null(), "it owns no node");
}

fn fails(o: &std::process::Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(want), "{err:?} should contain {want:?}");
}

#[test]
fn bad_domain_input_is_refused_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    fails(&run(d.path(), &["--arrangement", "lend-somehow"]), "arrangement 'lend-somehow': expected one of static");
    fails(&run(d.path(), &["--arrangement", "lend-evict[kill_wait=soon]"]), "kill_wait");
    fails(&run(d.path(), &["--policy", "kube"]), "each domain's policy is its [[domain]] table's");
    // A domain the cluster does not have.
    let (cluster, slurm, _) = inputs(d.path(), CLUSTER);
    let out = d.path().join("o").display().to_string();
    let t = format!("gpu:{slurm}");
    fails(&sim(&["run", "-q", "--out", &out, "--cluster", &cluster, "--trace", &t]), "has no domain 'gpu'");
    // A domain's trace without domains.
    let plain = d.path().join("plain.toml");
    std::fs::write(&plain, "[[pool]]\nname = \"a\"\ncount = 1\ncores = 4\n").unwrap();
    let t = format!("slurm:{slurm}");
    let o = sim(&["run", "-q", "--out", &out, "--cluster", plain.to_str().unwrap(), "--trace", &t]);
    fails(&o, "needs a cluster configuration with [[domain]] tables");
    // A pool of a domain that is not declared: the file is named.
    let bad = CLUSTER.replace("domain = \"kubernetes\"", "domain = \"k8s\"");
    let (cluster, slurm, _) = inputs(d.path(), &bad);
    let t = format!("slurm:{slurm}");
    let o = sim(&["run", "-q", "--out", &out, "--cluster", &cluster, "--trace", &t]);
    fails(&o, "cluster.toml");
    fails(&o, "pool 'serve': domain: expected one of the [[domain]] names (slurm, kubernetes), found 'k8s'");
    assert!(!Path::new(&out).join("summary.json").exists());
}

/// `sim compare --arrangements`: one run per arrangement and seed, compared per domain.
#[test]
fn arrangements_are_compared_per_domain() {
    let d = tempfile::tempdir().unwrap();
    let (cluster, slurm, pods) = inputs(d.path(), CLUSTER);
    let out = d.path().join("cmp");
    let (s, p) = (format!("slurm:{slurm}"), format!("kubernetes:{pods}"));
    let o = sim(&[
        "compare",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--cluster",
        &cluster,
        "--trace",
        &s,
        "--trace",
        &p,
        "--arrangements",
        "static,bridge[shared]",
        "--seeds",
        "1,2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("comparison.csv")).unwrap();
    let row = |label: &str, metric: &str| {
        csv.lines()
            .find(|l| l.contains(&format!(",{metric},")) && l.contains(&format!(",{label},")))
            .unwrap_or_else(|| panic!("no {metric} of {label} in {csv}"))
            .to_string()
    };
    // A deterministic workload: each arrangement is one run, not two. Pooled by Slurm
    // with shared nodes, both Slurm jobs start at once.
    assert!(row("static", "slurm_wait_mean").contains(",slurm_wait_mean,1,50.0"), "{csv}");
    assert!(row("bridge[shared]", "slurm_wait_mean").contains(",slurm_wait_mean,1,0.0"), "{csv}");
    let o = sim(&[
        "compare",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--cluster",
        &cluster,
        "--trace",
        &s,
        "--arrangements",
        "static,static[slurm_nodes=pools]",
    ]);
    fails(&o, "is the same as 'static'");
}

/// The shipped example reads (its first simulated hour, every arrangement).
#[test]
fn the_hybrid_example_runs() {
    let cluster = crate::root().join("examples/hybrid/cluster.toml");
    for a in ["static", "lend-drain", "lend-evict", "bridge[shared]"] {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out").display().to_string();
        let o = sim(&[
            "run",
            "-q",
            "--out",
            &out,
            "--cluster",
            cluster.to_str().unwrap(),
            "--arrangement",
            a,
            "--horizon",
            "3600",
        ]);
        assert!(o.status.success(), "{a}: {}", String::from_utf8_lossy(&o.stderr));
        let s: serde_json::Value = summary(d.path());
        assert_eq!(s["jobs_total"], 1912 + 465, "{a}");
        assert!(s["domains"]["slurm"]["jobs"] == 1912 && s["domains"]["kubernetes"]["jobs"] == 465, "{a}");
    }
}

/// One native trace whose jobs name their domain: the same run as a trace per domain; a
/// domain the cluster lacks is refused naming the file, line and field.
#[test]
fn a_native_trace_names_each_jobs_domain() {
    let d = tempfile::tempdir().unwrap();
    let (cluster, _, _) = inputs(d.path(), CLUSTER);
    let mixed = d.path().join("mixed.jsonl");
    let pod = PODS.replace("{\"id\":\"p\",", "{\"id\":\"p\",\"domain\":\"kubernetes\",");
    std::fs::write(&mixed, format!("{SLURM}{pod}")).unwrap();
    let out = d.path().join("out").display().to_string();
    let o = sim(&["run", "-q", "--out", &out, "--cluster", &cluster, "--trace", mixed.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = summary(d.path());
    assert_eq!(
        (s["domains"]["slurm"]["jobs"].as_u64(), s["domains"]["kubernetes"]["jobs"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (s["domains"]["slurm"]["wait_mean"].as_f64(), s["domains"]["kubernetes"]["wait_mean"].as_f64()),
        (Some(50.0), Some(0.0))
    );
    let jobs = std::fs::read_to_string(d.path().join("out/jobs.csv")).unwrap();
    assert!(jobs.contains("slurm/s1,") && jobs.contains("kubernetes/p,"), "{jobs}");
    std::fs::write(&mixed, format!("{SLURM}{}", pod.replace("kubernetes", "k8s"))).unwrap();
    let o = sim(&["run", "-q", "--out", &out, "--cluster", &cluster, "--trace", mixed.to_str().unwrap()]);
    fails(&o, "mixed.jsonl:3: field 'domain': expected one of the cluster's domains (slurm, kubernetes)");
}
