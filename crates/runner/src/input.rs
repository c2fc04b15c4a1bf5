//! Reading the workload and the cluster: an [`Input`] (what the command line names)
//! through [`traces::open`] into a [`Loaded`] workload, with the notes a user should see.

use crate::RunError;
use std::path::{Path, PathBuf};
use traces::{Format, ImportOptions, Workload};

/// The embedded default trace: the first 3,000 jobs of the Parallel Workloads Archive's
/// KTH-SP2 log (cleaned version 2.1), donated by Lars Malinowsky (KTH); see data/README.md.
pub const DEFAULT_TRACE: &[u8] = include_bytes!("../../../data/KTH-SP2-1996-2.1-cln.first3000.swf.gz");
/// Its name in outputs.
pub const DEFAULT_TRACE_NAME: &str = "embedded:KTH-SP2-1996-2.1-cln.first3000.swf.gz";

/// Where the workload and the cluster come from.
#[derive(Clone, Debug, Default)]
pub struct Input {
    /// The trace file; the embedded default when `None`.
    pub trace: Option<PathBuf>,
    /// Scheduling domains' workloads (`--trace DOMAIN:FILE`), for a cluster with
    /// `[[domain]]` tables.
    pub domain_traces: Vec<(String, PathBuf)>,
    /// Its format; detected from the name or content when `None`.
    pub format: Option<Format>,
    /// Machine size in processors (SWF, Batsim).
    pub procs: Option<u64>,
    /// An openb pod list's node list.
    pub nodes: Option<PathBuf>,
    /// A cluster configuration (TOML).
    pub cluster: Option<PathBuf>,
    /// How an openb node list's GPUs are shared (default shared).
    pub sharing: Option<sim_core::GpuSharing>,
    /// Draw declared and peak GPU memory per job from the seed (`traces::gpumem`).
    pub synthetic_gpu_memory: bool,
    /// A PAI task table's job table.
    pub pai_jobs: Option<PathBuf>,
    /// Run times of Sia/Pollux applications, `APP=SECONDS`.
    pub app_runtimes: Vec<String>,
    /// `--perturb`: how the workload varies per seed (`traces::perturb`).
    pub perturb: Option<String>,
    /// A site's `slurm.conf` (`--slurm-conf`): its nodes are the cluster.
    pub slurm_conf: Option<PathBuf>,
    /// The site's QOSes (`--qos`): jobs' QOS names of sacct input are mapped onto them.
    pub slurm_qos: Option<PathBuf>,
    /// The site's associations (`--assoc`): the fair-share tree.
    pub slurm_assoc: Option<PathBuf>,
}

/// A workload read, on its cluster.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The jobs and the cluster.
    pub workload: Workload,
    /// The trace's name in outputs.
    pub name: String,
    /// The controller specs of the cluster configuration's `[[controller]]` tables.
    pub controllers: Vec<String>,
    /// The perturbation applied for this seed, canonical (`traces::perturb::spec_text`).
    pub perturb: Option<String>,
    /// Each pool's price, from the cluster configuration (empty without one).
    pub prices: Vec<traces::cluster_toml::PoolPrice>,
    /// The restart rule of the site's `slurm.conf` (`JobRequeue`, `MaxBatchRequeue`),
    /// when one is read.
    pub slurm_restarts: Option<sim_core::restart::Restarts>,
    /// The cluster configuration's scheduling domains (empty: one scheduler).
    pub domains: Vec<traces::cluster_toml::DomainConfig>,
    /// Each node's owning domain at the start (the pools' `domain`), in node order.
    pub node_domains: Vec<u8>,
    /// The cluster configuration's arrangement of its domains, when it names one.
    pub arrangement: Option<String>,
}

/// The other name a domain may be given on the command line (`k8s` for `kubernetes`).
fn domain_alias(name: &str) -> &str {
    match name {
        "k8s" => "kubernetes",
        other => other,
    }
}

/// Splits a `--trace` value into a domain and a file when it reads `DOMAIN:FILE` with a
/// domain name of letters, digits, `-` and `_` and no file of that whole name exists.
pub fn domain_trace(arg: &Path) -> Option<(String, PathBuf)> {
    let text = arg.to_str()?;
    let (d, f) = text.split_once(':')?;
    let plain = !d.is_empty() && d.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    (plain && !f.is_empty() && !arg.exists()).then(|| (domain_alias(d).to_string(), PathBuf::from(f)))
}

/// Reads the workloads of a cluster with scheduling domains: each domain's trace (its
/// `--trace DOMAIN:FILE`, else its table's `trace`), its jobs given the domain and ids
/// `DOMAIN/ID`, one after the other in domain order.
fn load_domains(
    i: &Input,
    config: traces::cluster_toml::ClusterConfig,
    seed: u64,
    perturb: Vec<traces::perturb::Perturbation>,
    notes: &mut dyn FnMut(String),
) -> Result<Loaded, RunError> {
    let cfg_path = i.cluster.as_deref().unwrap_or(Path::new(""));
    let dir = cfg_path.parent().unwrap_or(Path::new("")).to_path_buf();
    let names: Vec<&str> = config.domains.iter().map(|d| d.name.as_str()).collect();
    for (d, _) in &i.domain_traces {
        if !names.contains(&d.as_str()) {
            return Err(bad(format!(
                "--trace {d}:...: {} has no domain '{d}' (expected one of {})",
                cfg_path.display(),
                names.join(", ")
            )));
        }
    }
    let opts = traces::LoadOptions {
        format: None,
        procs: None,
        cluster: Some(config.cluster.clone()),
        nodes: None,
        sharing: sim_core::GpuSharing::Shared,
        import: import_options(&i.pai_jobs, &i.app_runtimes)?,
        domains: names.iter().map(|n| n.to_string()).collect(),
    };
    // What is read: a plain --trace (its jobs in the domain each names, native `domain`,
    // else the first), then each domain's own trace.
    let mut sources: Vec<(Option<usize>, PathBuf, Option<Format>)> = Vec::new();
    if let Some(t) = &i.trace {
        sources.push((None, t.clone(), i.format));
    }
    for (d, dom) in config.domains.iter().enumerate() {
        let given = i.domain_traces.iter().rev().find(|(n, _)| n == &dom.name).map(|(_, p)| p.clone());
        let path = match (given, &dom.trace) {
            (Some(p), _) => p,
            (None, Some(t)) => dir.join(t),
            (None, None) => continue,
        };
        let format = match &dom.format {
            Some(f) => Some(
                traces::Format::named(f)
                    .map_err(|e| bad(format!("{}: domain '{}': {e}", cfg_path.display(), dom.name)))?,
            ),
            None => None,
        };
        sources.push((Some(d), path, format));
    }
    let mut merged: Option<Workload> = None;
    let mut name_parts = Vec::new();
    for (d, path, format) in sources {
        let dom = d.map(|d| &config.domains[d]);
        refuse_empty(&path)?;
        let mut w =
            traces::open(&path, &traces::LoadOptions { format, ..opts.clone() }).map_err(|e| bad(e.to_string()))?;
        let shown = dom.map_or_else(|| path.display().to_string(), |dom| format!("{}:{}", dom.name, path.display()));
        if w.format.needs_cluster() && w.format != Format::Native && w.format != Format::Openb {
            let rows = w.jobs.len() as u64 + w.skipped.total();
            notes(accounting(&shown, rows, w.jobs.len(), &w.skipped));
        }
        if w.jobs.is_empty() {
            return Err(bad(format!("{shown}: no jobs")));
        }
        let mut jobs = std::mem::take(&mut w.jobs);
        if let Some((from, to)) = dom.and_then(|dom| dom.window) {
            jobs.retain(|j| j.submit.0 >= from.0 && j.submit.0 < to.0);
            if jobs.is_empty() {
                return Err(bad(format!(
                    "{shown}: no job submitted in its window {}..{} s",
                    from.0 / 1_000_000,
                    to.0 / 1_000_000
                )));
            }
            for j in &mut jobs {
                j.submit = sim_core::SimTime(j.submit.0 - from.0);
                j.observed_start = j.observed_start.map(|t| sim_core::SimTime(t.0.saturating_sub(from.0)));
            }
        }
        for j in &mut jobs {
            if let Some(d) = d {
                j.domain = d as u8;
            }
            j.trace_id = format!("{}/{}", config.domains[j.domain as usize].name, j.trace_id);
        }
        name_parts.push(shown);
        merged = Some(match merged {
            None => Workload { jobs, ..w },
            Some(mut m) => {
                m.jobs.extend(jobs);
                m.checksum = format!("{}+{}", m.checksum, w.checksum);
                for (k, v) in w.skipped.0 {
                    *m.skipped.0.entry(k).or_default() += v;
                }
                m
            }
        });
    }
    let Some(mut workload) = merged else {
        return Err(bad(format!(
            "{}: no domain has a workload: give --trace DOMAIN:FILE ({}), `trace` in a [[domain]] table, or a \
             native --trace whose jobs name their `domain`",
            cfg_path.display(),
            names.join(", ")
        )));
    };
    let name = name_parts.join(" + ");
    let perturb = finish(&mut workload, i, seed, &name, &perturb, notes)?;
    let node_domains = config
        .cluster
        .pools
        .iter()
        .zip(&config.pool_domains)
        .flat_map(|(p, &d)| std::iter::repeat_n(d, p.count as usize))
        .collect();
    Ok(Loaded {
        workload,
        name,
        controllers: config.controllers,
        prices: config.prices,
        perturb,
        slurm_restarts: None,
        domains: config.domains,
        node_domains,
        arrangement: config.arrangement,
    })
}

fn bad(m: String) -> RunError {
    RunError::BadInput(m)
}

/// The importers' options from a PAI job table and `APP=SECONDS` run times.
pub fn import_options(pai_jobs: &Option<PathBuf>, app_runtimes: &[String]) -> Result<ImportOptions, RunError> {
    let mut runtimes = std::collections::BTreeMap::new();
    for a in app_runtimes {
        let err = || bad(format!("--app-runtime '{a}': expected APP=SECONDS, e.g. cifar10=3600"));
        let (app, secs) = a.split_once('=').ok_or_else(err)?;
        let us = sim_core::time::parse_secs_micros(secs.trim()).map_err(|_| err())?;
        if app.trim().is_empty() || us == 0 {
            return Err(err());
        }
        runtimes.insert(app.trim().to_string(), sim_core::SimDuration(us));
    }
    Ok(ImportOptions { pai_jobs: pai_jobs.clone(), app_runtimes: runtimes })
}

/// A line saying how the rows of an imported trace were accounted for.
pub fn accounting(name: &str, rows: u64, jobs: usize, skipped: &traces::import::Skipped) -> String {
    let mut s = format!("{name}: {rows} rows: {jobs} jobs");
    if skipped.total() > 0 {
        let reasons: Vec<String> = skipped.0.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        s.push_str(&format!(", {} skipped ({})", skipped.total(), reasons.join(", ")));
    }
    s
}

/// Refuses a trace file that holds nothing (or only white space): `FILE: no jobs
/// (empty file)`, whatever its name says its format is.
pub fn refuse_empty(path: &Path) -> Result<(), RunError> {
    if traces::is_blank_file(path).map_err(|e| bad(e.to_string()))? {
        return Err(bad(format!("{}: no jobs (empty file)", path.display())));
    }
    Ok(())
}

/// Reads a cluster configuration whole: the cluster, its switches and its controllers.
/// `gpus.profile` references are resolved by [`hw_calibrate::resolve_gpu`]: a profile
/// file relative to the configuration's folder, or a shipped profile by model name.
pub fn load_cluster(path: &Path) -> Result<traces::cluster_toml::ClusterConfig, RunError> {
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let resolve = |r: &str| hw_calibrate::resolve_gpu(r, &dir).map_err(|e| e.to_string());
    traces::cluster_toml::load_with(path, &resolve).map_err(|e| bad(e.to_string()))
}

/// Reads a site's `slurm.conf` (errors name the file, line and key).
pub fn slurm_conf(path: &Path) -> Result<policies::slurm::conf::SlurmConf, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("{}: cannot read: {e}", path.display())))?;
    policies::slurm::conf::SlurmConf::parse(&text, &path.display().to_string()).map_err(|e| bad(e.to_string()))
}

/// Reads `sacctmgr show qos -P` output (errors name the file, line and column).
pub fn slurm_qos(path: &Path) -> Result<Vec<policies::slurm::qos::QosDef>, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("{}: cannot read: {e}", path.display())))?;
    policies::slurm::qos::parse_qos(&text, &path.display().to_string()).map_err(bad)
}

/// Reads `sacctmgr show assoc -P` output (errors name the file, line and column).
pub fn slurm_assoc(path: &Path) -> Result<policies::slurm::fairshare::AssocFile, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("{}: cannot read: {e}", path.display())))?;
    policies::slurm::fairshare::parse_sacctmgr_assoc(&text, &path.display().to_string()).map_err(bad)
}

/// The associations of `path` named as the policy sees the jobs of `w`: an account the
/// trace names (sacct's `Account`) becomes `g<its group id>`, a user `u<its user id>`;
/// the others keep their names (traces of numbers name them so themselves).
pub fn slurm_assoc_for(
    path: &Path,
    w: Option<&traces::Workload>,
) -> Result<policies::slurm::fairshare::AssocFile, RunError> {
    let mut a = slurm_assoc(path)?;
    if let Some(w) = w {
        let id_of = |names: &[String], name: &str| names.iter().position(|n| n == name).map(|i| i + 1);
        let (accounts, users) = (&w.names.accounts, &w.names.users);
        a.tree.rename(|n| id_of(accounts, n).map(|i| format!("g{i}")), |n| id_of(users, n).map(|i| format!("u{i}")));
    }
    Ok(a)
}

/// The trace's format, from the input, else its name, else its first bytes.
pub fn detected(i: &Input) -> Option<Format> {
    let path = i.trace.as_ref()?;
    i.format.or_else(|| Some(traces::detect_file_format(path)))
}

/// Loads the workload and cluster `i` names (or the embedded default); `notes` gets what
/// the user should read (rows skipped, flags that do nothing, GPU models the cluster
/// lacks).
pub fn load(i: &Input, seed: u64, notes: &mut dyn FnMut(String)) -> Result<Loaded, RunError> {
    if i.procs == Some(0) {
        return Err(bad("--procs: expected a number of processors >= 1, found 0".into()));
    }
    let perturb = perturbations(i)?;
    let config = i.cluster.as_deref().map(load_cluster).transpose()?;
    if i.slurm_conf.is_some() && config.is_some() {
        return Err(bad("--slurm-conf and --cluster both describe the cluster: give one".into()));
    }
    match &config {
        Some(c) if !c.domains.is_empty() => {
            return load_domains(i, config.expect("matched"), seed, perturb, notes);
        }
        _ if !i.domain_traces.is_empty() => {
            let (d, p) = &i.domain_traces[0];
            return Err(bad(format!(
                "--trace {d}:{}: a domain's trace needs a cluster configuration with [[domain]] tables (--cluster)",
                p.display()
            )));
        }
        _ => {}
    }
    let slurm = match &i.slurm_conf {
        Some(path) => {
            let mut conf = slurm_conf(path)?;
            if !conf.not_modelled.is_empty() {
                let keys: Vec<String> = conf.not_modelled.iter().map(|(l, k)| format!("{k} (line {l})")).collect();
                notes(format!("{}: read, not modelled: {}", path.display(), keys.join(", ")));
            }
            if let Some(q) = &i.slurm_qos {
                conf.qos = slurm_qos(q)?;
            }
            if let Some(a) = &i.slurm_assoc {
                // Read now so that a bad file stops the run before the trace is read.
                slurm_assoc(a)?;
            }
            Some(conf)
        }
        None => None,
    };
    let slurm_cluster = slurm.as_ref().map(policies::slurm::conf::SlurmConf::cluster);
    let opts = traces::LoadOptions {
        format: i.format,
        procs: i.procs,
        cluster: slurm_cluster.or_else(|| config.as_ref().map(|c| c.cluster.clone())),
        nodes: i.nodes.clone(),
        sharing: i.sharing.unwrap_or(sim_core::GpuSharing::Shared),
        import: import_options(&i.pai_jobs, &i.app_runtimes)?,
        domains: Vec::new(),
    };
    let (mut workload, name) = match &i.trace {
        Some(path) => {
            refuse_empty(path)?;
            (traces::open(path, &opts).map_err(|e| bad(e.to_string()))?, path.display().to_string())
        }
        None => (
            traces::open_bytes(DEFAULT_TRACE, DEFAULT_TRACE_NAME, &opts).map_err(|e| bad(e.to_string()))?,
            DEFAULT_TRACE_NAME.to_string(),
        ),
    };
    if workload.format.needs_cluster() && workload.format != Format::Native && workload.format != Format::Openb {
        let rows = workload.jobs.len() as u64 + workload.skipped.total();
        notes(accounting(&name, rows, workload.jobs.len(), &workload.skipped));
    }
    if workload.jobs.is_empty() {
        let skipped = workload.skipped.total();
        let why = if skipped > 0 { format!("all {skipped} rows skipped") } else { "no job lines".into() };
        return Err(bad(format!("{name}: no jobs ({why})")));
    }
    if let Some(conf) = &slurm {
        by_slurm_names(&mut workload, conf, &name, notes);
    }
    let perturb = finish(&mut workload, i, seed, &name, &perturb, notes)?;
    let (controllers, prices) = config.map(|c| (c.controllers, c.prices)).unwrap_or_default();
    let slurm_restarts = slurm.as_ref().map(policies::slurm::conf::SlurmConf::restarts);
    Ok(Loaded {
        workload,
        name,
        controllers,
        prices,
        perturb,
        slurm_restarts,
        domains: Vec::new(),
        node_domains: Vec::new(),
        arrangement: None,
    })
}

/// Jobs of a trace with partition and QOS names (sacct) go to the `slurm.conf`
/// partition and the `--qos` QOS of that name, as Slurm files them: a job's partition id
/// becomes the partition's index in the file and its queue id the QOS's. A name the
/// files lack is noted, and its jobs go to the default partition (QOS `normal`).
fn by_slurm_names(
    w: &mut Workload,
    conf: &policies::slurm::conf::SlurmConf,
    name: &str,
    notes: &mut dyn FnMut(String),
) {
    let map = |names: &[String], known: &mut dyn Iterator<Item = &str>| -> Vec<Option<i32>> {
        let known: Vec<&str> = known.collect();
        names.iter().map(|n| known.iter().position(|k| k == n).map(|i| i as i32)).collect()
    };
    let parts = map(&w.names.partitions, &mut conf.partitions.iter().map(|p| p.name.as_str()));
    let qos = map(&w.names.queues, &mut conf.qos.iter().map(|q| q.name.as_str()));
    let mut unknown: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for j in &mut w.jobs {
        let slot = |id: i32, to: &[Option<i32>], names: &[String], unknown: &mut std::collections::BTreeSet<String>| {
            let i = usize::try_from(id).ok().and_then(|i| i.checked_sub(1)).filter(|&i| i < to.len())?;
            if to[i].is_none() {
                unknown.insert(names[i].clone());
            }
            Some(to[i].unwrap_or(-1))
        };
        if let Some(p) = slot(j.partition, &parts, &w.names.partitions, &mut unknown) {
            j.partition = p;
        }
        if let Some(q) = slot(j.queue, &qos, &w.names.queues, &mut unknown) {
            j.queue = q;
        }
    }
    if !unknown.is_empty() {
        let list: Vec<String> = unknown.into_iter().collect();
        notes(format!(
            "{name}: partitions or QOSes not in the slurm.conf or --qos file, their jobs given the defaults: {}",
            list.join(", ")
        ));
    }
}

/// The perturbations `--perturb` names (none without it).
pub fn perturbations(i: &Input) -> Result<Vec<traces::perturb::Perturbation>, RunError> {
    match &i.perturb {
        None => Ok(Vec::new()),
        Some(text) => traces::perturb::parse(text).map_err(|e| bad(format!("--perturb: {e}"))),
    }
}

/// The workload as every run reads it: [`prepare`]d, then varied for `seed`
/// (`--perturb`); returns the perturbation's canonical text.
fn finish(
    workload: &mut Workload,
    i: &Input,
    seed: u64,
    name: &str,
    perturb: &[traces::perturb::Perturbation],
    notes: &mut dyn FnMut(String),
) -> Result<Option<String>, RunError> {
    prepare(workload, i, seed, name, notes);
    if perturb.is_empty() {
        return Ok(None);
    }
    workload.jobs = traces::perturb::apply(std::mem::take(&mut workload.jobs), perturb, seed);
    if workload.jobs.is_empty() {
        return Err(bad(format!("{name}: --perturb left no job for seed {seed}")));
    }
    Ok(Some(traces::perturb::spec_text(perturb)))
}

/// What a read workload gets before a replay: the shipped GPU profiles' power, the
/// trace's GPU model names spelled as the cluster spells them, synthetic GPU memory.
fn prepare(workload: &mut Workload, i: &Input, seed: u64, name: &str, notes: &mut dyn FnMut(String)) {
    // GPUs named but not given a profile take the shipped one's power (energy model).
    hw_calibrate::attach_power(&mut workload.cluster);
    // The trace's GPU model names, as the cluster spells them (`a100` → `A100-SXM4-80GB`).
    let unmatched = hw_calibrate::models::map_job_models(&workload.cluster, &mut workload.jobs);
    if let Some(w) = unmatched.warning(workload.jobs.len(), &workload.cluster) {
        notes(format!("warning: {name}: {w}"));
    }
    if i.synthetic_gpu_memory {
        traces::gpumem::GpuMemoryModel::default().assign(&mut workload.jobs, seed);
    }
    for w in unused_flags(i, workload.format, &workload.jobs) {
        notes(format!("warning: {w}"));
    }
}

/// The input flags given that do nothing for this input (a flag silently ignored reads
/// as if it had an effect): one line each.
pub fn unused_flags(i: &Input, format: Format, jobs: &[sim_core::Job]) -> Vec<String> {
    let mut out = Vec::new();
    let name = format.name();
    let openb_nodes = format == Format::Openb && i.cluster.is_none();
    if i.nodes.is_some() && !openb_nodes {
        let why = if format == Format::Openb { "--cluster replaces it" } else { "only an openb pod list reads it" };
        out.push(format!("--nodes is ignored: {why}"));
    }
    if i.sharing.is_some() && !openb_nodes {
        out.push(
            "--gpu-sharing is ignored: it applies to an openb node list (--nodes); a cluster configuration \
             sets `sharing` per pool"
                .into(),
        );
    }
    if i.synthetic_gpu_memory && !jobs.iter().any(|j| j.task.gpus > 0) {
        out.push("--gpu-memory synthetic does nothing: no job asks for GPUs".into());
    }
    if i.procs.is_some() && (i.cluster.is_some() || !matches!(format, Format::Swf | Format::Batsim)) {
        let why = if i.cluster.is_some() { "--cluster gives the machine" } else { "only SWF and Batsim size it" };
        out.push(format!("--procs is ignored for this {name} input: {why}"));
    }
    if i.pai_jobs.is_some() && format != Format::Pai {
        out.push(format!("--pai-jobs is ignored: the trace is {name}, not a PAI task table"));
    }
    if !i.app_runtimes.is_empty() && format != Format::Sia {
        out.push(format!("--app-runtime is ignored: the trace is {name}, not a Sia/Pollux workload"));
    }
    out
}
