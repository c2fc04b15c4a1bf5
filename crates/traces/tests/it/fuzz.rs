//! Arbitrary input must give an error or a workload, never a panic.

use proptest::prelude::*;
use std::io::Write;

fn load_bytes(bytes: &[u8], name: &str) -> Result<traces::Workload, traces::TraceError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    traces::load(&p, None, None)
}

fn swf_line() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        Just("-1".to_string()),
        (0i64..100000).prop_map(|v| v.to_string()),
        (-5i64..5).prop_map(|v| v.to_string()),
        "[0-9]{1,25}",
        "[0-9.eE+-]{1,8}",
        "[a-z]{1,3}",
        Just("1e999999".to_string()),
    ];
    prop::collection::vec(field, 0..20).prop_map(|f| f.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn swf_lines_never_panic(lines in prop::collection::vec(swf_line(), 0..6)) {
        let text = format!("; MaxProcs: 8\n{}\n", lines.join("\n"));
        let _ = load_bytes(text.as_bytes(), "f.swf");
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = load_bytes(&bytes, "f.swf");
        let _ = load_bytes(&bytes, "f.json");
        let mut gz = vec![0x1f, 0x8b];
        gz.extend_from_slice(&bytes);
        let _ = load_bytes(&gz, "f.swf.gz");
    }

    #[test]
    fn batsim_documents_never_panic(
        nb in "[-0-9.a-z\"]{0,6}",
        sub in "[-0-9.eE\"a-z]{0,10}",
        res in "[-0-9.\"]{0,5}",
        wall in "[-0-9.\"nul]{0,6}",
        delay in "[-0-9.eE\"]{0,8}",
        kind in "(delay|parallel|\"x\")",
    ) {
        let doc = format!(
            "{{\"nb_res\": {nb}, \"jobs\": [{{\"id\": 1, \"subtime\": {sub}, \"walltime\": {wall}, \"res\": {res}, \"profile\": \"p\"}}], \"profiles\": {{\"p\": {{\"type\": \"{kind}\", \"delay\": {delay}}}}}}}"
        );
        let _ = load_bytes(doc.as_bytes(), "w.json");
    }
}

fn import_bytes(bytes: &[u8], name: &str, format: traces::Format) -> Result<traces::Imported, traces::TraceError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    let mut opts = traces::ImportOptions::default();
    opts.app_runtimes.insert("cifar10".into(), sim_core::SimDuration::from_secs(60));
    traces::import(&p, Some(format), &opts)
}

/// A CSV-ish field: numbers, dates, Slurm durations and TRES, states, junk.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..100000).prop_map(|v| v.to_string()),
        (-5i64..5).prop_map(|v| v.to_string()),
        "[0-9]{1,22}",
        "[0-9.eE+-]{1,8}",
        "20[0-9]{2}-[01][0-9]-[0-3][0-9][ T][0-2][0-9]:[0-5][0-9]:[0-5][0-9]",
        "([0-9]{1,3}-)?[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?",
        "(cpu|mem|node|gres/gpu(:[a-z0-9]{1,4})?)=[0-9]{1,4}[KMGT]?",
        "(COMPLETED|FAILED|CANCELLED by 5|TIMEOUT|RUNNING|PENDING|Terminated|Failed|Running|UNLIMITED|Unknown|None|cifar10|nan)",
        "[a-z|,\"]{0,4}",
    ]
}

const HEADERS: [(&str, traces::Format); 5] = [
    (
        "JobID|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqTRES|AllocTRES|Partition|QOS|User|Account|State",
        traces::Format::Sacct,
    ),
    ("timestamp,duration,num_gpus,gpu_time,cluster", traces::Format::Philly),
    (
        "job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue",
        traces::Format::Helios,
    ),
    ("name,time,application,num_replicas,batch_size", traces::Format::Sia),
    ("", traces::Format::Pai),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn importer_rows_never_panic(
        which in 0usize..5,
        rows in prop::collection::vec(prop::collection::vec(field(), 0..16), 0..5),
    ) {
        let (header, format) = HEADERS[which];
        let sep = if format == traces::Format::Sacct { "|" } else { "," };
        let mut text = if header.is_empty() { String::new() } else { format!("{header}\n") };
        for r in &rows {
            text.push_str(&r.join(sep));
            text.push('\n');
        }
        let name = if format == traces::Format::Pai { "pai_task_table.csv" } else { "t.csv" };
        let _ = import_bytes(text.as_bytes(), name, format);
    }

    #[test]
    fn importer_bytes_never_panic(which in 0usize..5, bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let (header, format) = HEADERS[which];
        let mut all = header.as_bytes().to_vec();
        all.push(b'\n');
        all.extend_from_slice(&bytes);
        let _ = import_bytes(&all, "t.csv", format);
    }
}

/// A model line: known keys with odd values, or junk.
fn model_line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("rate_per_hour"),
        Just("process"),
        Just("procs"),
        Just("count"),
        Just("zipf"),
        Just("weight"),
        Just("tasks"),
        Just("runtime"),
        Just("hour_factors"),
        Just("burst_jobs"),
    ];
    let value = prop_oneof![
        "-?[0-9]{1,20}(\\.[0-9]{0,3})?",
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("1e308".to_string()),
        Just("\"bursts\"".to_string()),
        Just("{ dist = \"lognormal\", mu = 1e300, sigma = 1e300 }".to_string()),
        Just("{ values = [1, 2], weights = [0, 0] }".to_string()),
        Just("[1e308, 1e308]".to_string()),
        "[a-z\"\\[\\]{}=,. ]{0,12}",
    ];
    prop_oneof![
        (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        Just("[arrivals]".to_string()),
        Just("[[classes]]".to_string()),
        Just("[users]".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generator_models_never_panic(lines in prop::collection::vec(model_line(), 0..14)) {
        let text = lines.join("\n");
        if let Ok(m) = traces::generator::Model::from_toml(&text, "m.toml") {
            // A model that is read generates.
            let n = traces::generator::Generator::new(&m, 1).take(50).count();
            prop_assert_eq!(n, 50);
        }
    }
}

/// Fault-log lines from plausible and broken pieces.
fn fault_line() -> impl Strategy<Value = String> {
    let time = prop_oneof![
        Just("0".to_string()),
        Just("1e9".to_string()),
        Just("-3".to_string()),
        "[0-9]{1,12}(\\.[0-9]{0,8})?"
    ];
    let node = prop_oneof![Just("a".to_string()), Just(String::new()), "[a-z0-9-]{1,8}"];
    let event = prop_oneof![Just("fault_start"), Just("fault_end"), Just("down"), Just("up"), Just("x")];
    (time, node, event, prop::option::of("[A-Za-z ]{0,6}")).prop_map(|(t, n, e, c)| match c {
        Some(c) => format!("{t},{n},{e},{c}"),
        None => format!("{t},{n}"),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fault_logs_never_panic(lines in prop::collection::vec(fault_line(), 0..8), nodes in 0u32..5) {
        let text = format!("time,node,event,cause\n{}\n", lines.join("\n"));
        if let Ok(log) = traces::faults::read_str(&text, "f.csv") {
            // Every down is followed by at most one up per node, in time order.
            let ev = log.node_events(nodes);
            prop_assert!(ev.windows(2).all(|w| w[0].0 <= w[1].0));
            let _ = log.fit(nodes);
        }
    }

    #[test]
    fn fault_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = traces::faults::read_str(&text, "f.csv");
        let _ = traces::faults::read_str(&format!("[{text}"), "f.json");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A pool's `autoscale` table with arbitrary values: an error or a cluster, never a
    /// panic.
    #[test]
    fn autoscale_tables_never_panic(
        min in 0u32..12, initial in proptest::option::of(0u32..12),
        ready in prop_oneof![Just("90".to_string()), "[ -~]{0,16}", "(uniform|lognormal):[0-9.eE+-]{0,8},[0-9.eE+-]{0,8}"],
        gpus_ready in "[ -~]{0,16}",
    ) {
        let initial = initial.map_or(String::new(), |i| format!(", initial = {i}"));
        let text = format!(
            "[[pool]]\nname = \"g\"\ncount = 8\ncores = 4\ngpus = {{ count = 1, model = \"T4\", memory_mib = 15000 }}\n\
             autoscale = {{ min = {min}{initial}, ready = {ready:?}, gpus_ready = {gpus_ready:?} }}\n"
        );
        let _ = traces::cluster_toml::parse("fuzz.toml", &text);
        let _ = traces::cluster_toml::parse_delay(&ready);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `[[domain]]` tables, a pool's `domain` and `arrangement` with arbitrary values: an
    /// error or a cluster, never a panic; a cluster read has a domain per pool within its
    /// domains.
    #[test]
    fn domain_tables_never_panic(
        names in prop::collection::vec("[ -~]{0,10}", 0..4),
        pool_domain in proptest::option::of("[ -~]{0,10}"),
        window in proptest::option::of("[0-9dhms. ]{0,6}(\\.\\.)?[0-9dhms. ]{0,6}"),
        arrangement in proptest::option::of("[ -~]{0,12}"),
    ) {
        let mut text = String::new();
        if let Some(a) = &arrangement {
            text.push_str(&format!("arrangement = {a:?}\n"));
        }
        for n in &names {
            text.push_str(&format!("[[domain]]\nname = {n:?}\npolicy = \"kube\"\n"));
            if let Some(w) = &window {
                text.push_str(&format!("window = {w:?}\n"));
            }
        }
        text.push_str("[[pool]]\nname = \"g\"\ncount = 2\ncores = 4\n");
        if let Some(d) = &pool_domain {
            text.push_str(&format!("domain = {d:?}\n"));
        }
        if let Ok(c) = traces::cluster_toml::parse("fuzz.toml", &text) {
            prop_assert_eq!(c.pool_domains.len(), 1);
            prop_assert!(c.domains.is_empty() && c.pool_domains[0] == 0 || (c.pool_domains[0] as usize) < c.domains.len());
        }
    }
}
