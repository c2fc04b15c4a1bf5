//! Fingerprints of fixed schedules, to show that a refactoring changed no result: for
//! each scenario, the SHA-256 of every job's start, end, outcome, attempts, units,
//! milli-GPU held and out-of-memory kills, in job order.
//!
//! `cargo run --release -p benches --example schedule_hashes > now.tsv` prints one line
//! per scenario (`name<TAB>jobs<TAB>hash`); `benches/schedules.baseline.tsv` holds the
//! committed lines (`scripts/schedule-check.sh` compares them). Scenarios: five committed
//! SWF slices under the processor policies and their variants (with and without time
//! limits, with node failures), the committed openb slice under `kube` variants (with
//! synthetic GPU memory, so jobs run out of it), the shipped examples' native
//! workloads, the synthetic gang workload at 10,000 jobs under every gang mode (1,000 under
//! `queue=conservative`) and at
//! 100,000 jobs (the `gangs` bench) under `kube` and `kube[gang=none]`.

use sim_core::{Cluster, Job, NodeId, NodeState, SimConfig, SimTime};
use std::fmt::Write;
use std::path::Path;
use traces::synthetic::GangWorkload;

fn hash(records: &[sim_core::JobRecord]) -> String {
    use sha2::Digest;
    let mut text = String::new();
    for r in records {
        let _ = writeln!(
            text,
            "{:?} {:?} {} {} {} {} {}",
            r.start.map(|t| t.as_micros()),
            r.end.map(|t| t.as_micros()),
            r.outcome.name(),
            r.attempts,
            r.units.iter().map(|u| u.to_string()).collect::<Vec<_>>().join("+"),
            r.gpu_milli_held,
            r.oom_kills
        );
    }
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn run(name: &str, cluster: &Cluster, jobs: &[Job], spec: &str, cfg: &SimConfig) {
    let mut p = policies::build(spec).expect("known policy");
    let r = sim_core::simulate(cluster, jobs, p.as_mut(), cfg, None).expect("run");
    println!("{name} {spec}\t{}\t{}", jobs.len(), hash(&r.records));
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let data = |f: &str| root.join("data").join(f);
    for slice in [
        "CTC-SP2-1996-3.1-cln.first2000.swf.gz",
        "KTH-SP2-1996-2.1-cln.first3000.swf.gz",
        "HPC2N-2002-2.2-cln.first2000.swf.gz",
        "SDSC-BLUE-2000-4.2-cln.first2000.swf.gz",
        "LANL-CM5-1994-4.1-cln.first2000.swf.gz",
    ] {
        swf_slice(slice, &data(slice));
    }
    openb(&data("openb/openb_pod_list_default.first400.csv"), &data("openb/openb_node_list_gpu_node.every20th.csv"));
    for ex in ["gang-deadlock", "inference-spread", "rack-local"] {
        example(ex, &root.join("examples").join(ex));
    }
    gangs();
}

/// A committed SWF slice under the processor policies and their variants, with time
/// limits enforced and with nodes failing.
fn swf_slice(slice: &str, path: &Path) {
    let plain = SimConfig::default();
    let kill = SimConfig { walltime_kill: true, ..SimConfig::default() };
    let w = traces::load(path, None, None).expect("committed slice");
    for spec in [
        "fcfs",
        "fcfs[pass=per-event]",
        "easy",
        "easy[pass=per-event]",
        "easy[backfill_estimate=actual]",
        "easy[reservation=nodes]",
        "conservative",
        "conservative[replan=rebuild]",
        "conservative[backfill_estimate=actual]",
        "conservative[reservation=nodes]",
        "sjf-aging",
        "sjf-aging[blocking=skip]",
    ] {
        run(slice, &w.cluster, &w.jobs, spec, &plain);
    }
    for spec in ["easy", "conservative"] {
        run(&format!("{slice} walltime-kill"), &w.cluster, &w.jobs, spec, &kill);
    }
    let failing = SimConfig { node_events: node_events(&w.cluster, &w.jobs), ..SimConfig::default() };
    for spec in ["easy", "conservative", "easy[reservation=nodes]"] {
        run(&format!("{slice} node-events"), &w.cluster, &w.jobs, spec, &failing);
    }
}

/// Nodes failing and coming back: every 97th node down for a day from the 10th job's
/// submission, one drained.
fn node_events(cluster: &Cluster, jobs: &[Job]) -> Vec<(SimTime, NodeId, NodeState)> {
    let t0 = jobs[10].submit;
    let mut events: Vec<(SimTime, NodeId, NodeState)> = Vec::new();
    for n in (0..cluster.node_count()).step_by(97) {
        events.push((t0, NodeId(n), NodeState::Down));
        events.push((SimTime(t0.0 + 86_400_000_000), NodeId(n), NodeState::Up));
    }
    events.push((t0, NodeId(1), NodeState::Draining));
    events
}

/// The committed openb slice under `kube` variants, as it is and with synthetic GPU
/// memory.
fn openb(pods: &Path, nodes: &Path) {
    let plain = SimConfig::default();
    let openb = traces::load_openb(pods, nodes, sim_core::GpuSharing::Shared).expect("committed openb slice");
    let mut oom = openb.jobs.clone();
    traces::gpumem::GpuMemoryModel::default().assign(&mut oom, 7);
    for spec in [
        "kube",
        "kube[queue=fcfs]",
        "kube[queue=easy]",
        "kube[queue=conservative]",
        "kube[score=fgd]",
        "kube[score=bestfit]",
        "kube[score=random]",
        "kube[memory=aware]",
        "kube[order=fifo]",
    ] {
        run("openb", &openb.cluster, &openb.jobs, spec, &plain);
        run("openb-gpumem", &openb.cluster, &oom, spec, &plain);
    }
}

/// A shipped example's native workload (in folder `dir`) under `kube` variants.
fn example(ex: &str, dir: &Path) {
    let plain = SimConfig::default();
    let cluster = traces::cluster_toml::load(&dir.join("cluster.toml")).expect("example cluster").cluster;
    let w = traces::load_native(&dir.join("workload.jsonl"), cluster).expect("example workload");
    for spec in [
        "kube",
        "kube[gang=none]",
        "kube[gang=permit-wait]",
        "kube[gang=kueue]",
        "kube[gang=kueue,quota=50]",
        "kube[topology=tree]",
        "kube[queue=easy]",
        "kube[queue=conservative]",
    ] {
        run(ex, &w.cluster, &w.jobs, spec, &plain);
    }
}

/// The synthetic gang workload at 10,000 jobs under every gang mode, at 1,000 under
/// `queue=conservative` and at 100,000 under `kube` and `kube[gang=none]`.
fn gangs() {
    let plain = SimConfig::default();
    let small = GangWorkload { jobs: 10_000, ..GangWorkload::default() };
    let (cluster, jobs) = (small.cluster(), small.jobs());
    for spec in [
        "kube",
        "kube[gang=none]",
        "kube[gang=permit-wait]",
        "kube[gang=kueue]",
        "kube[topology=tree]",
        "kube[queue=easy]",
        "kube[queue=fcfs,gang=none]",
    ] {
        run("gangs-10k", &cluster, &jobs, spec, &plain);
    }
    // Conservative over placements is slow on gangs (it replans every pod each pass).
    let tiny = GangWorkload { jobs: 1_000, racks: 2, ..GangWorkload::default() };
    let (cluster, jobs) = (tiny.cluster(), tiny.jobs());
    run("gangs-1k", &cluster, &jobs, "kube[queue=conservative]", &plain);
    let w = GangWorkload::default();
    let (cluster, jobs) = (w.cluster(), w.jobs());
    for spec in ["kube", "kube[gang=none]"] {
        run("gangs-100k", &cluster, &jobs, spec, &plain);
    }
}
