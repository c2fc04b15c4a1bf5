//! The synthetic generator and its fitting to real traces.

use proptest::prelude::*;
use sim_core::Job;
use sim_core::job::JobKind;
use std::path::PathBuf;
use traces::generator::{
    Arrivals, BurstSize, Class, Continuous, Discrete, Generator, Law, LogNormalFit, MAX_START, MIN_RATE_PER_HOUR,
    Model, Process, RuntimeBin, Users,
};

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

/// A one-class model with `arrivals`.
fn model(arrivals: Arrivals) -> Model {
    Model {
        name: "t".into(),
        procs: Some(128),
        gpus_per_node: None,
        queues: None,
        arrivals,
        users: Users { count: 50, zipf: 1.2 },
        classes: vec![Class {
            name: "b".into(),
            kind: JobKind::Batch,
            weight: 1.0,
            tasks: Discrete { values: vec![1, 2, 4, 8], weights: vec![4.0, 2.0, 2.0, 1.0] },
            cores: None,
            gpus: None,
            gpu_memory_mib: None,
            memory_mib: None,
            runtime: Continuous::new(Law::LogNormal { mu: 6.0, sigma: 1.5 }),
            overestimate: Some(Continuous::new(Law::Uniform { low: 1.0, high: 3.0 })),
            requested_by_runtime: None,
            max_requested: None,
            gpu_peak_mib: None,
            gpu_util_pct: None,
            job_profile: None,
            lognormal_fit: None,
        }],
    }
}

fn arrivals(process: Process, rate: f64) -> Arrivals {
    Arrivals {
        process,
        rate_per_hour: rate,
        start: 0.0,
        hour_factors: None,
        day_factors: None,
        bursts_per_hour: None,
        burst_jobs: None,
        burst_size: None,
        burst_spread: None,
    }
}

/// Jobs per hour over the span of the submit times.
fn rate(jobs: &[Job]) -> f64 {
    let span = (jobs.last().unwrap().submit.as_micros() - jobs[0].submit.as_micros()) as f64 / 3.6e9;
    (jobs.len() - 1) as f64 / span
}

fn mean(it: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = it.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n as f64
}

/// (mean run time s, mean processors, jobs per hour)
fn figures(jobs: &[Job]) -> (f64, f64, f64) {
    (
        mean(jobs.iter().filter_map(|j| j.runtime).map(|r| r.as_secs_f64())),
        mean(jobs.iter().filter(|j| j.tasks > 0).map(|j| j.units() as f64)),
        rate(jobs),
    )
}

fn check_fit(path: &std::path::Path) {
    let trace = traces::load(path, None, None).unwrap().jobs;
    let m = traces::fit::fit(&trace, "kth");
    let text = m.to_toml();
    let back = Model::from_toml(&text, "fitted.toml").unwrap();
    assert_eq!(back, m, "the fitted model round-trips");
    let generated: Vec<Job> = Generator::new(&m, 0).take(trace.len()).collect();
    let (tr, tp, ta) = figures(&trace);
    let (gr, gp, ga) = figures(&generated);
    // The run-time table's own mean (linear between quantiles), free of sampling noise:
    // on the 3000-job slice one sample's mean run time varies by about ±9 % from seed to
    // seed (heavy tail), so the table is held to a tighter bound than the sample.
    let Law::Empirical { quantiles: q } = &m.classes[0].runtime.law else { panic!("empirical run times") };
    let table_mean = q.windows(2).map(|w| (w[0] + w[1]) / 2.0).sum::<f64>() / (q.len() - 1) as f64;
    assert!((table_mean - tr).abs() <= 0.03 * tr, "run-time table mean {table_mean}, trace {tr}");
    println!(
        "{}: {} jobs, trace vs generated: mean runtime {tr:.0} s vs {gr:.0} s (table {table_mean:.0} s); \
         mean procs {tp:.3} vs {gp:.3}; rate {ta:.4}/h vs {ga:.4}/h",
        path.display(),
        trace.len()
    );
    for (what, t, g) in [("mean runtime", tr, gr), ("mean processors", tp, gp), ("arrival rate", ta, ga)] {
        assert!((g - t).abs() <= 0.10 * t, "{what}: trace {t}, generated {g}");
    }
    assert!(generated.windows(2).all(|w| w[0].submit <= w[1].submit));
    assert!(generated.iter().all(|j| j.units() <= 100));
}

#[test]
fn fitting_kth_reproduces_its_means() {
    check_fit(&repo("data/KTH-SP2-1996-2.1-cln.first3000.swf.gz"));
    let full = repo("../shared/traces/swf/KTH-SP2-1996-2.1-cln.swf.gz");
    if full.exists() {
        check_fit(&full);
    } else {
        println!("note: {} absent: full-log fit not checked", full.display());
    }
}

/// (mean requested time s, largest requested time s, jobs requesting more than a year)
/// of the jobs that state a request.
fn requests(jobs: &[Job]) -> (f64, f64, usize) {
    let r: Vec<f64> = jobs.iter().filter_map(|j| j.requested).map(|r| r.as_secs_f64()).collect();
    let year = 365.0 * 86_400.0;
    (mean(r.iter().copied()), r.iter().copied().fold(0.0, f64::max), r.iter().filter(|&&x| x > year).count())
}

/// Fitted on `path` and generated back with as many jobs (seed 1): the mean requested
/// time within 10 % of the trace's, no request above the trace's largest but those of
/// jobs running longer (which request their run time: KTH has one run of 226,709 s,
/// above its largest request, 216,000 s, and the run-time table gives a few such runs),
/// none below its job's run time. Drawing the request independently of the run time
/// (issue 24) put a short job's large over-estimation factor on long jobs: 7.66 M s
/// mean on KTH.
fn check_requests(path: &std::path::Path) {
    let trace = traces::load(path, None, None).unwrap().jobs;
    let m = traces::fit::fit(&trace, "kth");
    let generated: Vec<Job> = Generator::new(&m, 1).take(trace.len()).collect();
    let (tm, tmax, tyear) = requests(&trace);
    let (gm, gmax, gyear) = requests(&generated);
    let longer = generated.iter().filter(|j| j.requested.unwrap().as_secs_f64() > tmax).count();
    println!(
        "{}: requested time, trace vs generated: mean {tm:.0} s vs {gm:.0} s; max {tmax:.0} s vs {gmax:.0} s \
         ({longer} runs longer than the trace's largest request); over a year {tyear} vs {gyear}",
        path.display()
    );
    assert!((gm - tm).abs() <= 0.10 * tm, "mean requested: trace {tm} s, generated {gm} s");
    for j in &generated {
        assert!(j.requested >= j.runtime, "{j:?}");
        assert!(j.requested.unwrap().as_secs_f64() <= tmax || j.requested == j.runtime, "largest {tmax} s: {j:?}");
    }
}

#[test]
fn fitted_requests_match_the_kth_slice() {
    check_requests(&repo("data/KTH-SP2-1996-2.1-cln.first3000.swf.gz"));
}

#[test]
fn fitted_requests_match_the_full_kth_log() {
    let full = repo("../shared/traces/swf/KTH-SP2-1996-2.1-cln.swf.gz");
    if !full.exists() {
        eprintln!("note: {} absent: full-log requests not checked", full.display());
        return;
    }
    check_requests(&full);
}

#[test]
fn same_seed_same_jobs_other_seed_other_jobs() {
    let m = model(arrivals(Process::Poisson, 10.0));
    let a: Vec<Job> = Generator::new(&m, 1).take(1000).collect();
    let b: Vec<Job> = Generator::new(&m, 1).take(1000).collect();
    let c: Vec<Job> = Generator::new(&m, 2).take(1000).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a[0].trace_id, "1");
    assert_eq!(a[999].trace_id, "1000");
    assert!(a.iter().all(|j| j.requested >= j.runtime && (1..=50).contains(&j.user)));
}

#[test]
fn every_process_keeps_its_rate() {
    let mut modulated = arrivals(Process::Modulated, 20.0);
    modulated.hour_factors = Some((0..24).map(|h| if (9..18).contains(&h) { 3.0 } else { 1.0 }).collect());
    modulated.day_factors = Some(vec![1.0, 1.0, 1.0, 1.0, 1.0, 0.3, 0.3]);
    let mut bursts = arrivals(Process::Bursts, 40.0);
    bursts.bursts_per_hour = Some(2.0);
    bursts.burst_jobs = Some(10.0);
    bursts.burst_spread = Some(600.0);
    let mut poisson_bursts = bursts.clone();
    poisson_bursts.burst_size = Some(traces::generator::BurstSize::Poisson);
    poisson_bursts.rate_per_hour = 20.0; // all of it in bursts
    for a in [arrivals(Process::Poisson, 15.0), modulated.clone(), bursts, poisson_bursts] {
        let want = a.rate_per_hour;
        let jobs: Vec<Job> = Generator::new(&model(a.clone()), 3).take(100_000).collect();
        assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit), "{:?}", a.process);
        let got = rate(&jobs);
        assert!((got - want).abs() < 0.03 * want, "{:?}: {got} jobs/h, want {want}", a.process);
    }
    // Modulated: busy hours and weekdays get their share.
    let jobs: Vec<Job> = Generator::new(&model(modulated), 3).take(100_000).collect();
    let (mut day, mut night, mut weekday, mut weekend) = (0u32, 0u32, 0u32, 0u32);
    for j in &jobs {
        let hours = j.submit.as_micros() / 3_600_000_000;
        if (9..18).contains(&(hours % 24)) {
            day += 1
        } else {
            night += 1
        }
        if hours / 24 % 7 < 5 { weekday += 1 } else { weekend += 1 }
    }
    // 9 hours at 3 against 15 at 1: 27/42 of the jobs in the day.
    let share = day as f64 / (day + night) as f64;
    assert!((share - 27.0 / 42.0).abs() < 0.01, "day share {share}");
    let share = weekday as f64 / (weekday + weekend) as f64;
    assert!((share - 5.0 / 5.6).abs() < 0.01, "weekday share {share}");
}

#[test]
fn example_models_parse_round_trip_and_generate() {
    for name in ["hpc", "gpu"] {
        let path = repo(&format!("examples/models/{name}.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let m = Model::from_toml(&text, &path.display().to_string()).unwrap();
        assert_eq!(Model::from_toml(&m.to_toml(), "again").unwrap(), m, "{name}");
        let jobs: Vec<Job> = Generator::new(&m, 11).take(20_000).collect();
        assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
        let got = rate(&jobs);
        assert!((got - m.arrivals.rate_per_hour).abs() < 0.1 * m.arrivals.rate_per_hour, "{name}: {got}/h");
        for k in m.classes.iter().map(|c| c.kind) {
            assert!(jobs.iter().any(|j| j.kind == k), "{name}: no {k:?} job");
        }
        if let Some(p) = m.procs {
            assert!(jobs.iter().all(|j| j.units() <= p));
        }
        if name == "gpu" {
            assert!(jobs.iter().any(|j| j.tasks > 1 && j.task.gpus == 8));
            assert!(jobs.iter().any(|j| j.kind == JobKind::Inference && j.task.gpu_memory_mib > 0));
        }
    }
}

#[test]
fn toml_round_trips() {
    let mut m = model(arrivals(Process::Bursts, 40.0));
    m.arrivals.bursts_per_hour = Some(1.5);
    m.arrivals.burst_jobs = Some(4.25);
    m.arrivals.burst_spread = Some(0.1);
    m.queues = Some(Discrete { values: vec![-1, 3], weights: vec![0.3, 0.7] });
    m.name = "a \"quoted\" name\twith\\escapes".into();
    m.classes[0].runtime = Continuous {
        law: Law::Empirical { quantiles: (0..300).map(|i| i as f64 * 1.1).collect() },
        min: Some(1.0),
        max: None,
    };
    m.classes[0].memory_mib = Some(Discrete { values: (1..100).collect(), weights: vec![1e-3; 99] });
    let mut w = m.classes[0].clone();
    w.kind = JobKind::DlTrain;
    w.runtime = Continuous::new(Law::Weibull { scale: 1e20, shape: 0.3 });
    w.overestimate = Some(Continuous::new(Law::Exponential { mean: 2.0 }));
    w.gpus = Some(Discrete::constant(8));
    m.classes.push(w);
    // Every other law, clamps, and floats at the ends of the range.
    let mut e = m.classes[0].clone();
    e.kind = JobKind::Inference;
    e.weight = 5e-324;
    e.runtime = Continuous { law: Law::LogNormal { mu: -1.5, sigma: 1.8 }, min: None, max: Some(f64::MAX) };
    e.overestimate = Some(Continuous::new(Law::Uniform { low: 1.0, high: 3.0 }));
    e.gpu_peak_mib = Some(Continuous::new(Law::Constant { value: 1e-300 }));
    e.gpu_util_pct = Some(Continuous { law: Law::Constant { value: 55.5 }, min: Some(0.0), max: Some(100.0) });
    e.lognormal_fit = Some(LogNormalFit { mu: 7.25, sigma: 0.1 });
    m.classes.push(e);
    m.arrivals.burst_size = Some(BurstSize::Poisson);
    let text = m.to_toml();
    assert!(text.starts_with("# schedlab workload model (sim gen --model FILE)\n"), "{text}");
    for written in ["dist = \"weibull\"", "dist = \"lognormal\"", "kind = \"dl_train\"", "burst_size = \"poisson\""] {
        assert!(text.contains(written), "{written} in {text}");
    }
    assert_eq!(Model::from_toml(&text, "m.toml").unwrap(), m, "{text}");
}

/// Three bins: run times up to 1 min request 1–10 min, up to 1 h 1–2 h, longer ones
/// 50,000–100,000 s.
fn bins() -> Vec<RuntimeBin> {
    vec![
        RuntimeBin { runtime_upto: 60.0, quantiles: vec![60.0, 120.0, 600.0] },
        RuntimeBin { runtime_upto: 3600.0, quantiles: (0..101).map(|k| 3600.0 + 36.0 * k as f64).collect() },
        RuntimeBin { runtime_upto: 86_400.0, quantiles: vec![50_000.0, 100_000.0] },
    ]
}

#[test]
fn requests_by_run_time_round_trip_and_draw_from_their_bin() {
    let mut m = model(arrivals(Process::Poisson, 10.0));
    // Run times up to 89,700 s, a long table (written as a sub-table before the bins).
    m.classes[0].runtime = Continuous::new(Law::Empirical { quantiles: (0..300).map(|i| i as f64 * 300.0).collect() });
    m.classes[0].overestimate = None;
    m.classes[0].requested_by_runtime = Some(bins());
    m.classes[0].max_requested = Some(80_000.0);
    // An old-style class, capped.
    let mut old = m.classes[0].clone();
    old.kind = JobKind::DlTrain;
    old.requested_by_runtime = None;
    old.overestimate = Some(Continuous::new(Law::Uniform { low: 1.0, high: 3.0 }));
    old.max_requested = Some(7200.0);
    m.classes.push(old);
    let text = m.to_toml();
    assert_eq!(text.matches("\n[[classes.requested_by_runtime]]\n").count(), 3, "{text}");
    assert_eq!(Model::from_toml(&text, "m.toml").unwrap(), m, "{text}");

    let jobs: Vec<Job> = Generator::new(&m, 4).take(20_000).collect();
    let secs = |d: Option<sim_core::SimDuration>| d.unwrap().as_secs_f64();
    let (mut raised, mut capped) = (0, 0);
    for j in &jobs {
        let (r, q) = (secs(j.runtime), secs(j.requested));
        assert!(q >= r, "{j:?}");
        if j.kind == JobKind::DlTrain {
            assert!(q <= 3.0 * r + 1e-6 && (q <= 7200.0 || q == r), "{j:?}");
            continue;
        }
        let (lo, hi) = if r <= 60.0 {
            (60.0, 600.0)
        } else if r <= 3600.0 {
            (3600.0, 7200.0)
        } else {
            (50_000.0, 80_000.0)
        };
        assert!(q == r || (lo <= q && q <= hi), "{j:?}");
        raised += (q == r && r > hi) as u32;
        capped += (q == 80_000.0) as u32;
    }
    // Runs longer than the cap request their run time; others are capped.
    assert!(raised > 50 && capped > 50, "raised {raised}, capped {capped}");

    // The request law draws from its class's own stream: run times, and the other
    // class's jobs, stay as they were without it.
    let mut plain = m.clone();
    plain.classes[0].requested_by_runtime = None;
    plain.classes[0].max_requested = None;
    let before: Vec<Job> = Generator::new(&plain, 4).take(20_000).collect();
    assert!(before.iter().zip(&jobs).all(|(a, b)| a.runtime == b.runtime && a.submit == b.submit));
    let of = |jobs: &[Job]| -> Vec<Job> { jobs.iter().filter(|j| j.kind == JobKind::DlTrain).cloned().collect() };
    assert_eq!(of(&before), of(&jobs));
    assert!(before.iter().filter(|j| j.kind == JobKind::Batch).all(|j| j.requested == j.runtime));
}

/// GOOD with bins of requests and a cap on class `b` (lines 17 and on).
const BINS: &str = r#"max_requested = 7200

[[classes.requested_by_runtime]]
runtime_upto = 60
quantiles = [60, 600]

[[classes.requested_by_runtime]]
runtime_upto = 3600
quantiles = [
    3600,
    7200,
]
"#;

#[test]
fn request_bins_errors_name_line_and_field() {
    let good = format!("{GOOD}{BINS}");
    let m = Model::from_toml(&good, "good.toml").unwrap();
    assert_eq!(m.classes[1].requested_by_runtime.as_ref().map(Vec::len), Some(2));
    assert_eq!(m.classes[1].max_requested, Some(7200.0));
    let cases = [
        (
            good.replace("runtime_upto = 3600", "runtime_upto = 30"),
            "bad.toml:24: classes[1].requested_by_runtime[1].runtime_upto: \
             expected a bound above the previous bin's (60), found 30",
        ),
        (
            good.replace("    7200,", "    70,"),
            "bad.toml:25: classes[1].requested_by_runtime[1].quantiles[1]: \
             expected non-decreasing quantiles, found 70 after 3600",
        ),
        (
            good.replace("quantiles = [60, 600]", "quantiles = []"),
            "bad.toml:21: classes[1].requested_by_runtime[0].quantiles: expected at least one quantile",
        ),
        (
            good.replace("quantiles = [60, 600]", "quantiles = [60, nan]"),
            "bad.toml:21: classes[1].requested_by_runtime[0].quantiles[1]: expected a number ≥ 0, found NaN",
        ),
        (
            good.replace("runtime_upto = 60", "runtime_upto = -1"),
            "bad.toml:20: classes[1].requested_by_runtime[0].runtime_upto: expected a number ≥ 0, found -1",
        ),
        (
            good.replace("max_requested = 7200", "max_requested = -5"),
            "bad.toml:17: classes[1].max_requested: expected a number ≥ 0, found -5",
        ),
        (
            good.replace("runtime_upto = 60", "runtime_upto = 60\ncolour = 1"),
            "bad.toml:21: classes[1].requested_by_runtime: unknown field `colour`",
        ),
        (
            // Inline bins in class 0: the line of the array, not a header of class 1's.
            good.replace(
                "value = 60 }",
                "value = 60 }\nrequested_by_runtime = [{ runtime_upto = 1, quantiles = [1] }, \
                 { runtime_upto = 0.5, quantiles = [1] }]",
            ),
            "bad.toml:11: classes[0].requested_by_runtime[1].runtime_upto: \
             expected a bound above the previous bin's (1), found 0.5",
        ),
        (
            format!("{GOOD}requested_by_runtime = []\n"),
            "bad.toml:17: classes[1].requested_by_runtime: expected at least one bin",
        ),
        (
            good.replace("max_requested = 7200", "overestimate = { dist = \"constant\", value = 2 }"),
            "bad.toml:12: classes[1].requested_by_runtime: not with overestimate",
        ),
    ];
    for (text, want) in cases {
        let got = error(&text);
        assert!(got.starts_with(want), "got: {got}\nwant: {want}…\n{text}");
    }
    // The same rules hold for models built in code.
    let mut m = model(arrivals(Process::Poisson, 10.0));
    m.classes[0].overestimate = None;
    m.classes[0].requested_by_runtime = Some(Vec::new());
    assert_eq!(m.validate().unwrap_err().field, "classes[0].requested_by_runtime");
    let mut b = bins();
    b[2].quantiles[1] = f64::INFINITY;
    m.classes[0].requested_by_runtime = Some(b);
    assert_eq!(m.validate().unwrap_err().field, "classes[0].requested_by_runtime[2].quantiles[1]");
    m.classes[0].requested_by_runtime = Some(bins());
    m.classes[0].max_requested = Some(f64::NAN);
    assert_eq!(m.validate().unwrap_err().field, "classes[0].max_requested");
    m.classes[0].max_requested = Some(0.0);
    m.validate().unwrap();
    // A cap of 0: every job requests its run time.
    assert!(Generator::new(&m, 2).take(500).all(|j| j.requested == j.runtime));
}

fn error(text: &str) -> String {
    Model::from_toml(text, "bad.toml").unwrap_err().to_string()
}

const GOOD: &str = r#"
[arrivals]
process = "poisson"
rate_per_hour = 10

[[classes]]
name = "a"
weight = 1
tasks = { values = [1], weights = [1] }
runtime = { dist = "constant", value = 60 }

[[classes]]
name = "b"
weight = 1
tasks = { values = [1, 2], weights = [1, 1] }
runtime = { dist = "lognormal", mu = 5.0, sigma = 1.0 }
"#;

#[test]
fn errors_name_line_and_field() {
    assert!(Model::from_toml(GOOD, "good.toml").is_ok());
    let cases = [
        (GOOD.replace("sigma = 1.0", "sigma = -1.0"), "bad.toml:16: classes[1].runtime.sigma: expected a number ≥ 0"),
        (
            GOOD.replace("weights = [1, 1]", "weights = [1]"),
            "bad.toml:15: classes[1].tasks.weights: expected 2 weights",
        ),
        (
            GOOD.replace("rate_per_hour = 10", "rate_per_hour = 0"),
            "bad.toml:4: arrivals.rate_per_hour: expected a number ≥ 0.000001, found 0",
        ),
        (
            GOOD.replace("rate_per_hour = 10", "rate_per_hour = \"x\""),
            "bad.toml:4: arrivals.rate_per_hour: invalid type",
        ),
        (GOOD.replace("\"poisson\"", "\"often\""), "bad.toml:3: arrivals.process: unknown variant `often`"),
        (GOOD.replace("name = \"a\"", "name = \"a\"\ncolour = 1"), "bad.toml:8: classes[0]: unknown field `colour`"),
        (
            GOOD.replace("dist = \"constant\", value = 60", "dist = \"lognormal\", sigma = 1.0"),
            "bad.toml:10: classes[0].runtime.mu: missing: dist = \"lognormal\" needs it",
        ),
        (
            GOOD.replace("dist = \"constant\"", "dist = \"lognormal\""),
            "bad.toml:10: classes[0].runtime.value: not a parameter of dist = \"lognormal\"",
        ),
        (GOOD.replace("tasks = { values = [1],", "tasks = { values = [0],"), "bad.toml:9: classes[0].tasks.values[0]"),
        (
            GOOD.replace("rate_per_hour = 10", "rate_per_hour = 10\nhour_factors = [1, 2]"),
            "bad.toml:5: arrivals.hour_factors: only used with process = \"modulated\"",
        ),
        (GOOD.replace("weight = 1", "weight = 0"), "bad.toml:6: classes: expected class weights summing"),
        (GOOD.replace("[arrivals]", "[arrival]"), "bad.toml:2: unknown field `arrival`"),
    ];
    for (text, want) in cases {
        let got = error(&text);
        assert!(got.starts_with(want), "got: {got}\nwant: {want}…");
    }
}

/// GOOD with a modulated process carrying `keys` (lines 4 and on).
fn modulated(keys: &str) -> String {
    GOOD.replace("\"poisson\"", "\"modulated\"").replace("rate_per_hour = 10", &format!("rate_per_hour = 10\n{keys}"))
}

#[test]
fn non_finite_or_overflowing_laws_are_refused() {
    let big24 = ["1e308"; 24].join(", ");
    let big7 = ["1e308"; 7].join(", ");
    let ones23 = ["1"; 23].join(", ");
    let cases = [
        // Finite entries whose sum overflows: normalised, every rate would be 0.
        (
            modulated(&format!("hour_factors = [{big24}]")),
            "bad.toml:5: arrivals.hour_factors: expected factors summing to a finite number > 0, found a sum of inf",
        ),
        (
            modulated(&format!("day_factors = [{big7}]")),
            "bad.toml:5: arrivals.day_factors: expected factors summing to a finite number > 0",
        ),
        (
            modulated(&format!("hour_factors = [inf, {ones23}]")),
            "bad.toml:5: arrivals.hour_factors[0]: expected a number ≥ 0, found inf",
        ),
        (
            modulated(&format!("hour_factors = [{ones23}, nan]")),
            "bad.toml:5: arrivals.hour_factors[23]: expected a number ≥ 0, found NaN",
        ),
        (
            modulated(&format!("hour_factors = [{}]", ["0"; 24].join(", "))),
            "bad.toml:5: arrivals.hour_factors: expected factors summing to a finite number > 0, found a sum of 0",
        ),
        (
            GOOD.replace("weight = 1\n", "weight = 1e308\n"),
            "bad.toml:6: classes: expected class weights summing to a finite number > 0, found a sum of inf",
        ),
        (GOOD.replacen("weight = 1\n", "weight = inf\n", 1), "bad.toml:8: classes[0].weight: expected a number ≥ 0"),
        (
            GOOD.replace("weights = [1, 1]", "weights = [1e308, 1e308]"),
            "bad.toml:15: classes[1].tasks.weights: expected weights summing to a finite number > 0",
        ),
        (
            GOOD.replace("weights = [1, 1]", "weights = [1, nan]"),
            "bad.toml:15: classes[1].tasks.weights[1]: expected a number ≥ 0, found NaN",
        ),
        (
            GOOD.replace("rate_per_hour = 10", "rate_per_hour = inf"),
            "bad.toml:4: arrivals.rate_per_hour: expected a number ≥ 0.000001, found inf",
        ),
        (
            GOOD.replace("rate_per_hour = 10", "rate_per_hour = 1e-300"),
            "bad.toml:4: arrivals.rate_per_hour: expected a number ≥ 0.000001",
        ),
        (
            GOOD.replace("rate_per_hour = 10", "rate_per_hour = 10\nstart = 1e300"),
            "bad.toml:5: arrivals.start: expected at most 1e12 (s), found 1e300",
        ),
        (GOOD.replace("mu = 5.0", "mu = nan"), "bad.toml:16: classes[1].runtime.mu: expected a finite number"),
        (GOOD.replace("sigma = 1.0", "sigma = inf"), "bad.toml:16: classes[1].runtime.sigma: expected a number ≥ 0"),
        (
            GOOD.replace("value = 60", "value = 60, max = -inf"),
            "bad.toml:10: classes[0].runtime.max: expected a finite number",
        ),
        (
            GOOD.replace("[arrivals]", "queues = { values = [-1, 2], weights = [inf, 1] }\n[arrivals]"),
            "bad.toml:2: queues.weights[0]: expected a number ≥ 0, found inf",
        ),
    ];
    for (text, want) in cases {
        let got = error(&text);
        assert!(got.starts_with(want), "got: {got}\nwant: {want}…\n{text}");
    }
    // The same rules hold for models built in code.
    let mut m = model(arrivals(Process::Modulated, 10.0));
    m.arrivals.hour_factors = Some(vec![f64::MAX; 24]);
    let e = m.validate().unwrap_err();
    assert_eq!(e.field, "arrivals.hour_factors", "{e}");
    m.arrivals.hour_factors = None;
    m.classes.push(m.classes[0].clone());
    m.classes[0].weight = f64::MAX;
    m.classes[1].weight = f64::MAX;
    assert_eq!(m.validate().unwrap_err().field, "classes");
}

/// Models at the edges of the rules: every one yields jobs, promptly.
#[test]
fn valid_models_at_the_edges_yield_jobs() {
    let mut cases = Vec::new();
    // The slowest rate, from the latest start, in a single hour of a single day.
    let mut a = arrivals(Process::Modulated, MIN_RATE_PER_HOUR);
    a.start = MAX_START;
    a.hour_factors = Some((0..24).map(|h| if h == 13 { 5e-324 } else { 0.0 }).collect());
    a.day_factors = Some((0..7).map(|d| if d == 6 { f64::MAX / 8.0 } else { 0.0 }).collect());
    cases.push(a);
    // Tiny and huge factors side by side.
    let mut a = arrivals(Process::Modulated, 1.0);
    a.hour_factors = Some((0..24).map(|h| if h % 2 == 0 { f64::MAX / 24.0 } else { f64::MIN_POSITIVE }).collect());
    cases.push(a);
    let mut a = arrivals(Process::Poisson, MIN_RATE_PER_HOUR);
    a.start = MAX_START;
    cases.push(a);
    // All of the slowest rate in the slowest bursts.
    let mut a = arrivals(Process::Bursts, MIN_RATE_PER_HOUR);
    a.start = MAX_START;
    a.bursts_per_hour = Some(MIN_RATE_PER_HOUR);
    a.burst_jobs = Some(1.0);
    cases.push(a);
    let mut a = arrivals(Process::Modulated, f64::MAX);
    a.day_factors = Some(vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    cases.push(a);
    for a in cases {
        let mut m = model(a.clone());
        m.classes[0].weight = f64::MAX / 2.0;
        m.classes[0].tasks.weights = vec![f64::MAX / 4.0; 4];
        m.validate().unwrap();
        let jobs: Vec<Job> = Generator::new(&m, 5).take(20).collect();
        assert_eq!(jobs.len(), 20, "{a:?}");
        assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit), "{a:?}");
        assert!(jobs[0].submit.as_micros() as f64 >= a.start * 1e6 - 1.0, "{a:?}");
    }
}

/// A factor or weight list: finite numbers ≥ 0 of all magnitudes, some 0, not all 0.
fn factor_list(n: usize) -> impl Strategy<Value = Vec<f64>> {
    let one = prop_oneof![Just(0.0), Just(f64::MIN_POSITIVE), 1e-300..1e-290f64, 0.0..10.0f64, 1e290..1e300f64];
    (proptest::collection::vec(one, n), 0..n, 1e-300..1e300f64).prop_map(|(mut v, i, x)| {
        if v.iter().all(|&f| f == 0.0) {
            v[i] = x;
        }
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever a valid model says, the generator yields jobs (and in submit order).
    #[test]
    fn any_valid_model_yields_jobs(
        process in prop_oneof![Just(Process::Poisson), Just(Process::Modulated), Just(Process::Bursts)],
        log_rate in -6.0..6.0f64,
        start_share in prop_oneof![Just(0.0), Just(1.0), 0.0..1.0f64],
        hours in factor_list(24),
        days in factor_list(7),
        flat in any::<bool>(),
        burst_share in 0.0..=1.0f64,
        burst_jobs in 1.0..50.0f64,
        weights in factor_list(3),
        seed in any::<u64>(),
    ) {
        let rate = 10f64.powf(log_rate).max(MIN_RATE_PER_HOUR);
        let mut a = arrivals(process, rate);
        a.start = start_share * MAX_START;
        match process {
            Process::Poisson => {}
            Process::Modulated => {
                if !flat {
                    a.hour_factors = Some(hours);
                    a.day_factors = Some(days);
                }
            }
            Process::Bursts => {
                a.burst_jobs = Some(burst_jobs);
                a.bursts_per_hour = Some((rate * burst_share / burst_jobs).max(MIN_RATE_PER_HOUR));
                a.burst_spread = Some(60.0);
            }
        }
        let mut m = model(a);
        if m.validate().is_err() {
            // Only bursts can break a rule here (a rate too small to split).
            prop_assert_eq!(process, Process::Bursts);
            return Ok(());
        }
        m.classes[0].tasks.weights = weights.into_iter().chain([0.0]).collect();
        prop_assert!(m.validate().is_ok());
        let jobs: Vec<Job> = Generator::new(&m, seed).take(3).collect();
        prop_assert_eq!(jobs.len(), 3);
        prop_assert!(jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
    }
}

/// Two classes, `a` (batch) and `b` (dl_train), alike but for `b`'s run-time law.
fn two_classes(b_runtime: Continuous, b_overestimate: Option<Continuous>) -> Model {
    let mut m = model(arrivals(Process::Poisson, 30.0));
    let mut b = m.classes[0].clone();
    b.name = "b".into();
    b.kind = JobKind::DlTrain;
    b.weight = 0.5;
    b.runtime = b_runtime;
    b.overestimate = b_overestimate;
    m.classes.push(b);
    m
}

#[test]
fn editing_one_class_leaves_another_class_alone() {
    let over = Some(Continuous::new(Law::Uniform { low: 1.0, high: 3.0 }));
    let variants = [
        two_classes(Continuous::new(Law::Constant { value: 600.0 }), None),
        two_classes(Continuous::new(Law::LogNormal { mu: 8.0, sigma: 2.0 }), over.clone()),
        two_classes(Continuous::new(Law::Weibull { scale: 3000.0, shape: 0.5 }), over),
        two_classes(
            Continuous::new(Law::Empirical { quantiles: vec![1.0, 10.0, 100.0, 1e4] }),
            Some(Continuous::new(Law::Exponential { mean: 2.0 })),
        ),
    ];
    let runs: Vec<Vec<Job>> = variants.iter().map(|m| Generator::new(m, 42).take(3000).collect()).collect();
    let of = |jobs: &[Job], k: JobKind| -> Vec<Job> { jobs.iter().filter(|j| j.kind == k).cloned().collect() };
    let class_a = of(&runs[0], JobKind::Batch);
    assert!(class_a.len() > 1500 && class_a.len() < 2500, "{}", class_a.len());
    for (i, run) in runs.iter().enumerate().skip(1) {
        // Class A's jobs, whole: submit time, size, run time, request, user.
        assert_eq!(of(run, JobKind::Batch), class_a, "variant {i}");
        assert_ne!(of(run, JobKind::DlTrain), of(&runs[0], JobKind::DlTrain), "variant {i}");
    }
}

/// The jobs `(submit s, queue)` with everything else alike.
fn queued(q: &[(u64, i32)]) -> Vec<Job> {
    q.iter()
        .enumerate()
        .map(|(i, &(t, queue))| {
            let mut j = Job::rigid(
                (i + 1).to_string(),
                sim_core::SimTime::from_secs(t),
                1,
                sim_core::SimDuration::from_secs(100),
                sim_core::SimDuration::from_secs(200),
            );
            j.queue = queue;
            j
        })
        .collect()
}

#[test]
fn negative_queue_numbers_fit_and_generate() {
    let spec: Vec<(u64, i32)> = (0..600u64).map(|i| (i * 60, [-1, -7, 3, -7, -1, -1][i as usize % 6])).collect();
    let m = traces::fit::fit(&queued(&spec), "q");
    let q = m.queues.clone().expect("queues fitted");
    assert_eq!((q.values.as_slice(), q.weights.as_slice()), (&[-7, -1, 3][..], &[200.0, 300.0, 100.0][..]));
    assert_eq!(Model::from_toml(&m.to_toml(), "q.toml").unwrap(), m);
    let jobs: Vec<Job> = Generator::new(&m, 9).take(3000).collect();
    for v in [-7, -1, 3] {
        let n = jobs.iter().filter(|j| j.queue == v).count();
        assert!(n > 300, "queue {v}: {n} jobs");
    }
    assert!(jobs.iter().all(|j| [-7, -1, 3].contains(&j.queue)));
    // More negative queues than a law keeps: each rarer one goes to the nearest kept one.
    let spec: Vec<(u64, i32)> = (0..2000u64).map(|i| (i, -((i % 100) as i32) - (i % 3 == 0) as i32 * 1000)).collect();
    let q = traces::fit::fit(&queued(&spec), "many").queues.unwrap();
    assert_eq!(q.values.len(), traces::fit::MAX_VALUES);
    assert!(q.values.iter().all(|&v| v < 0) && q.values.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(q.weights.iter().sum::<f64>(), 2000.0);
    // Only the unknown queue: no law.
    assert_eq!(traces::fit::fit(&queued(&[(0, -1), (10, -1)]), "none").queues, None);
    let text = GOOD.replace("[arrivals]", "queues = { values = [-3, -1], weights = [1, 1] }\n[arrivals]");
    let m = Model::from_toml(&text, "neg.toml").unwrap();
    assert!(Generator::new(&m, 1).take(200).any(|j| j.queue == -3));
}

#[test]
fn fit_takes_its_arrival_figures_from_stats() {
    let trace = traces::load(&repo("data/KTH-SP2-1996-2.1-cln.first3000.swf.gz"), None, None).unwrap().jobs;
    let m = traces::fit::fit(&trace, "kth");
    let s = traces::stats::compute(&trace);
    assert_eq!(m.arrivals.rate_per_hour, s.arrivals_per_hour);
    assert_eq!(m.arrivals.start, s.first_submit_s);
    // A trace too sparse or too late for the rules still gives a valid model.
    let year = 365 * 86_400;
    for spec in [vec![(0, -1), (300 * year, -1)], vec![(40_000 * year, 2), (40_000 * year + 3600, 2)]] {
        let m = traces::fit::fit(&queued(&spec), "edge");
        m.validate().unwrap();
        assert!(m.arrivals.rate_per_hour >= MIN_RATE_PER_HOUR && m.arrivals.start <= MAX_START);
        assert_eq!(Generator::new(&m, 3).take(5).count(), 5);
    }
}

#[test]
fn a_job_profile_gives_gpu_peaks_and_utilization() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("train.toml"),
        "duration_s = 60.0\npeak_memory_mib = 30000\nmean_memory_mib = 20000\n\
         memory_mib_quantiles = [10000, 20000, 30000]\nmean_util_pct = 62.5\n",
    )
    .unwrap();
    let text = "[arrivals]\nprocess = \"poisson\"\nrate_per_hour = 60\n[users]\ncount = 3\n\
                [[classes]]\nname = \"t\"\nweight = 1\ntasks = { values = [1], weights = [1] }\ngpus = { values = [1], weights = [1] }\n\
                runtime = { dist = \"constant\", value = 100 }\njob_profile = \"train.toml\"\n";
    let path = dir.path().join("m.toml");
    let m = Model::from_toml(text, &path.display().to_string()).unwrap();
    let jobs: Vec<Job> = traces::generator::Generator::new(&m, 7).take(500).collect();
    assert!(jobs.iter().all(|j| j.task.gpu_util_permille == 625));
    assert!(jobs.iter().all(|j| (10_000..=30_000).contains(&j.task.gpu_peak_mib)));
    let mean = mean(jobs.iter().map(|j| j.task.gpu_peak_mib as f64));
    assert!((mean - 20_000.0).abs() < 1_000.0, "{mean}");
    // The model written back keeps the reference and the laws it resolved to.
    assert!(m.to_toml().contains("job_profile = \"train.toml\""));
    let e = Model::from_toml(&text.replace("train.toml", "none.toml"), &path.display().to_string()).unwrap_err();
    assert!(e.to_string().contains("classes[0].job_profile"), "{e}");
}

/// A one-GPU class of `model(..)`'s shape, with `gpu_util_pct` unset.
fn gpu_class() -> Class {
    let mut c = model(arrivals(Process::Poisson, 60.0)).classes.remove(0);
    c.gpus = Some(Discrete { values: vec![1], weights: vec![1.0] });
    c
}

#[test]
fn a_job_profile_without_utilization_leaves_the_default_not_zero() {
    // Utilization not measured (MIG, no NVML utilization): the file leaves it out.
    let unknown: sim_core::hardware::JobProfile = toml::from_str(
        "duration_s = 60.0\npeak_memory_mib = 30000\nmean_memory_mib = 20000\n\
         [sources]\nmean_util_pct = \"not measured: NVML answered utilization NotSupported\"\n\
         peak_memory_mib = \"NVML process list\"\n",
    )
    .unwrap();
    assert_eq!((unknown.mean_util_pct, unknown.mean_power_w, unknown.peak_power_w), (None, None, None));
    assert_eq!(unknown.sources["peak_memory_mib"], "NVML process list");
    let default = gpu_class();
    let mut c = gpu_class();
    c.apply_job_profile(&unknown);
    // The same utilization as a class that does not say (the run's --gpu-util), not 0 %.
    assert_eq!(c.gpu_util_pct, default.gpu_util_pct);
    assert_eq!(c.gpu_peak_mib, Some(Continuous::new(Law::Constant { value: 30_000.0 })));
    let jobs = |c: Class| {
        let mut m = model(arrivals(Process::Poisson, 60.0));
        m.classes = vec![c];
        Generator::new(&m, 5).take(50).map(|j| j.task.gpu_util_permille).collect::<Vec<_>>()
    };
    assert_eq!(jobs(c), jobs(default.clone()));

    // A measured utilization is used, 0 % included.
    for (pct, law) in [(62.5, 62.5), (0.0, 0.0), (140.0, 100.0)] {
        let mut c = gpu_class();
        c.apply_job_profile(&sim_core::hardware::JobProfile { mean_util_pct: Some(pct), ..unknown.clone() });
        assert_eq!(c.gpu_util_pct, Some(Continuous::new(Law::Constant { value: law })), "{pct}");
    }
    // A class's own utilization wins over the profile's.
    let mut c = gpu_class();
    c.gpu_util_pct = Some(Continuous::new(Law::Constant { value: 30.0 }));
    c.apply_job_profile(&sim_core::hardware::JobProfile { mean_util_pct: Some(90.0), ..unknown });
    assert_eq!(c.gpu_util_pct, Some(Continuous::new(Law::Constant { value: 30.0 })));
}

#[test]
fn a_model_whose_job_profile_lacks_utilization_generates_jobs_at_the_runs_default() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mig.toml"), "duration_s = 60.0\npeak_memory_mib = 9000\nmean_memory_mib = 8000\n")
        .unwrap();
    let text = "[arrivals]\nprocess = \"poisson\"\nrate_per_hour = 60\n[users]\ncount = 3\n\
                [[classes]]\nname = \"t\"\nweight = 1\ntasks = { values = [1], weights = [1] }\ngpus = { values = [1], weights = [1] }\n\
                runtime = { dist = \"constant\", value = 100 }\njob_profile = \"mig.toml\"\n";
    let path = dir.path().join("m.toml");
    let m = Model::from_toml(text, &path.display().to_string()).unwrap();
    assert_eq!(m.classes[0].gpu_util_pct, None);
    assert!(!m.to_toml().contains("gpu_util_pct"));
    // gpu_util_permille 0 is "not stated": the run's --gpu-util applies (default 100 %).
    let jobs: Vec<Job> = Generator::new(&m, 7).take(100).collect();
    assert!(jobs.iter().all(|j| j.task.gpu_util_permille == 0 && j.task.gpu_peak_mib == 9000));
}

#[test]
fn job_profiles_of_the_old_shape_read_the_same() {
    let old = "origin = \"nvidia-smi log a.csv\"\ngpu_model = \"NVIDIA A100-SXM4-80GB\"\ngpus = 2\nduration_s = 60.0\n\
               samples = 120\npeak_memory_mib = 30000\nmean_memory_mib = 20000\n\
               memory_mib_quantiles = [10000, 20000, 30000]\nmean_util_pct = 62.5\npeak_util_pct = 100.0\n\
               mean_mem_util_pct = 30.0\nmean_power_w = 250.5\npeak_power_w = 400.0\n";
    let p: sim_core::hardware::JobProfile = toml::from_str(old).unwrap();
    assert_eq!(
        (p.mean_util_pct, p.peak_util_pct, p.mean_mem_util_pct, p.mean_power_w, p.peak_power_w),
        (Some(62.5), Some(100.0), Some(30.0), Some(250.5), Some(400.0))
    );
    assert!(p.sources.is_empty());
    // Written back byte for byte: no `sources` table when there are none.
    assert_eq!(toml::to_string(&p).unwrap(), old);
    // Unknown keys are still refused.
    assert!(toml::from_str::<sim_core::hardware::JobProfile>(&format!("{old}mean_util = 1.0\n")).is_err());
}
