//! Sweeps bigger than one machine (`sim sweep`): a grid of traces × policies × `--vary`
//! settings × seeds named in a `sweep.toml`, each cell one replay with a stable id, run
//! here in parallel (`local`), or one per task of a Slurm job array or a Kubernetes
//! Indexed Job (`run --index`, which also reads `SLURM_ARRAY_TASK_ID` or
//! `JOB_COMPLETION_INDEX`), then merged into the report `sim compare` writes
//! (docs/sweeps.md).
//!
//! Every cell writes its run folder under the sweep's output whole or not at all (into a
//! temporary folder renamed into place), so a cell whose folder exists is done: a re-run,
//! or a resubmitted array task, runs only the cells still missing. A trace's cells are
//! the cells `sim compare` would run on it, in its order and in folders of its names, so
//! the merge writes the same bytes as `sim compare` over the same cells.

use crate::RunError;
use crate::compare::Cell;
use crate::input::{Input, Loaded};
use crate::run::RunOptions;
use serde::{Deserialize, Serialize};

pub mod scripts;
use std::path::{Path, PathBuf};

/// A `sweep.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    out: String,
    policies: Vec<String>,
    #[serde(default)]
    seeds: Option<String>,
    #[serde(default)]
    vary: Vec<String>,
    #[serde(default)]
    controllers: Vec<String>,
    #[serde(default)]
    perturb: Option<String>,
    #[serde(default)]
    run: RunTable,
    #[serde(default)]
    trace: Vec<TraceTable>,
    #[serde(default)]
    slurm: SlurmTable,
    #[serde(default)]
    kubernetes: KubernetesTable,
}

/// `[run]`: the settings of every cell's replay (the flags of `sim run`).
#[derive(Deserialize, Serialize, Default, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
struct RunTable {
    #[serde(default)]
    walltime_kill: bool,
    #[serde(default)]
    oom_retries: Option<u32>,
    #[serde(default)]
    horizon: Option<String>,
    #[serde(default)]
    checkpoint: Option<String>,
    #[serde(default)]
    restarts: Option<String>,
}

/// `[[trace]]`: one workload, with the input flags of `sim run`.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
struct TraceTable {
    #[serde(default)]
    name: Option<String>,
    trace: String,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    procs: Option<u64>,
    #[serde(default)]
    cluster: Option<String>,
    #[serde(default)]
    nodes: Option<String>,
    #[serde(default)]
    gpu_memory: Option<String>,
}

/// `[slurm]`: what `sim sweep slurm` asks of Slurm for each task.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SlurmTable {
    /// Partition (`--partition`); none: the cluster's default.
    pub partition: Option<String>,
    /// CPUs per task (`--cpus-per-task`).
    pub cpus_per_task: u32,
    /// Memory per task (`--mem`).
    pub mem: String,
    /// Time limit per task (`--time`).
    pub time: String,
    /// Tasks running at once (the array's `%M` throttle); 0: no throttle.
    pub throttle: u32,
}

impl Default for SlurmTable {
    fn default() -> Self {
        SlurmTable { partition: None, cpus_per_task: 1, mem: "2G".into(), time: "01:00:00".into(), throttle: 0 }
    }
}

/// `[kubernetes]`: what `sim sweep k8s` writes into the Job.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct KubernetesTable {
    /// The container image holding `sim` (on its PATH).
    pub image: String,
    /// The Job's name.
    pub name: String,
    /// Pods running at once.
    pub parallelism: u32,
    /// Retries of one index (`backoffLimitPerIndex`).
    pub backoff_limit_per_index: u32,
    /// The PersistentVolumeClaim holding the sweep file, the traces and the output.
    pub claim: String,
    /// Where it is mounted; the sweep file is read from there.
    pub mount: String,
    /// CPU and memory requested per pod.
    pub cpu: String,
    /// Memory requested per pod.
    pub memory: String,
}

impl Default for KubernetesTable {
    fn default() -> Self {
        KubernetesTable {
            image: "schedlab:latest".into(),
            name: "schedlab-sweep".into(),
            parallelism: 8,
            backoff_limit_per_index: 2,
            claim: "schedlab-sweep".into(),
            mount: "/sweep".into(),
            cpu: "1".into(),
            memory: "2Gi".into(),
        }
    }
}

/// One workload of a sweep.
#[derive(Clone, Debug)]
pub struct SweepTrace {
    /// Its name: the folder of its cells and of its report under the sweep's output.
    pub name: String,
    /// What `sim run` would read.
    pub input: Input,
    table: TraceTable,
}

/// One cell: a trace, a policy, a setting of the varied keys, a seed.
#[derive(Clone, Debug)]
pub struct SweepCell {
    /// The trace (an index into [`Sweep::traces`]).
    pub trace: usize,
    /// What `sim compare` calls it on that trace.
    pub cell: Cell,
    /// A hash of the cell's whole configuration: unchanged when cells are added.
    pub id: String,
}

/// A sweep read from its file (see the module documentation).
#[derive(Debug)]
pub struct Sweep {
    /// The sweep file.
    pub file: PathBuf,
    /// Where the cells and the reports go.
    pub out: PathBuf,
    /// The workloads.
    pub traces: Vec<SweepTrace>,
    /// Policy specs.
    pub specs: Vec<String>,
    /// The `--vary` combinations (one empty when nothing varies).
    pub variants: Vec<crate::vary::Variant>,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Every cell's settings besides its policy, variant and seed.
    pub base: RunOptions,
    /// `[slurm]`.
    pub slurm: SlurmTable,
    /// `[kubernetes]`.
    pub kubernetes: KubernetesTable,
    run: RunTable,
    /// Every cell, in order (see [`Sweep::cells`]).
    cells: Vec<SweepCell>,
}

fn bad(m: String) -> RunError {
    RunError::BadInput(m)
}

impl Sweep {
    /// Reads and checks a sweep file: paths in it are relative to its folder; every
    /// policy, controller and varied setting builds.
    pub fn load(path: &Path) -> Result<Sweep, RunError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| bad(format!("{name}: cannot read: {e}")))?;
        let f: File = toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            bad(format!("{name}{}: {}", line.map_or(String::new(), |l| format!(":{l}")), e.message()))
        })?;
        let at = |what: String| bad(format!("{name}: {what}"));
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let rel = |p: &str| dir.join(p);
        if f.trace.is_empty() {
            return Err(at("expected at least one [[trace]]".into()));
        }
        let mut traces: Vec<SweepTrace> = Vec::with_capacity(f.trace.len());
        for t in &f.trace {
            let tname = t.name.clone().unwrap_or_else(|| stem(&t.trace));
            if tname.is_empty() || crate::compare::safe_name(&tname) != tname {
                return Err(at(format!("trace '{}': name '{tname}': expected letters, digits and '-'", t.trace)));
            }
            if traces.iter().any(|x| x.name == tname) {
                return Err(at(format!("two traces are named '{tname}': give each a `name`")));
            }
            let format = match &t.format {
                None => None,
                Some(x) => Some(traces::Format::named(x).map_err(|e| at(format!("trace '{tname}': {e}")))?),
            };
            let synthetic = match t.gpu_memory.as_deref() {
                None | Some("trace") => false,
                Some("synthetic") => true,
                Some(x) => {
                    return Err(at(format!("trace '{tname}': gpu_memory: expected trace or synthetic, found '{x}'")));
                }
            };
            let input = Input {
                trace: Some(rel(&t.trace)),
                format,
                procs: t.procs,
                nodes: t.nodes.as_deref().map(rel),
                cluster: t.cluster.as_deref().map(rel),
                synthetic_gpu_memory: synthetic,
                perturb: f.perturb.clone(),
                ..Input::default()
            };
            traces.push(SweepTrace { name: tname, input, table: t.clone() });
        }
        let seeds = crate::compare::parse_seeds(f.seeds.as_deref().unwrap_or("0"), "seeds").map_err(at)?;
        let base = base_options(&f.run, &f.controllers).map_err(|e| at(e.to_string()))?;
        let specs: Vec<String> = f.policies.iter().map(|p| p.trim().to_string()).collect();
        let variants = crate::compare::check_plan(&specs, &f.vary, &base).map_err(|e| at(e.to_string()))?;
        let mut sweep = Sweep {
            file: path.to_path_buf(),
            // Absolute: the array tasks and the merge job run from anywhere.
            out: std::path::absolute(rel(&f.out)).unwrap_or_else(|_| rel(&f.out)),
            traces,
            specs,
            variants,
            seeds,
            base,
            slurm: f.slurm,
            kubernetes: f.kubernetes,
            run: f.run,
            cells: Vec::new(),
        };
        let mut cells = Vec::new();
        for (t, trace) in sweep.traces.iter().enumerate() {
            for cell in crate::compare::plan(&sweep.specs, &sweep.variants, &sweep.seeds) {
                let id = sweep.cell_id(trace, &cell);
                cells.push(SweepCell { trace: t, cell, id });
            }
        }
        sweep.cells = cells;
        Ok(sweep)
    }

    /// Every cell, in order: trace by trace, each trace's cells in `sim compare`'s order.
    pub fn cells(&self) -> &[SweepCell] {
        &self.cells
    }

    /// A hash of everything that makes the cell's results: its trace and input flags as
    /// written, the run settings, the controllers, the perturbation, its policy, varied
    /// settings and seed. Adding a seed or a policy leaves the other cells' ids alone.
    fn cell_id(&self, trace: &SweepTrace, cell: &Cell) -> String {
        use sha2::Digest;
        // JSON, not Rust's Debug text: the ids must not change with the toolchain.
        let text = serde_json::json!({
            "trace": trace.table, "run": self.run, "controllers": self.base.controllers, "perturb": trace.input.perturb,
            "policy": cell.spec, "variant": cell.variant, "seed": cell.seed,
        })
        .to_string();
        sha2::Sha256::digest(text.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// A trace's output folder: its cells' run folders and its report.
    pub fn trace_dir(&self, trace: usize) -> PathBuf {
        self.out.join(&self.traces[trace].name)
    }

    /// A cell's run folder.
    pub fn folder(&self, c: &SweepCell) -> PathBuf {
        self.trace_dir(c.trace).join(c.cell.folder())
    }

    /// Whether a cell's run folder is there (written whole: it is done).
    pub fn done(&self, c: &SweepCell) -> bool {
        self.folder(c).join("summary.json").is_file()
    }

    /// The cell an array task runs: `index` (given or from the environment), or the
    /// cell of id `id`.
    pub fn pick(&self, index: Option<usize>, id: Option<&str>) -> Result<&SweepCell, RunError> {
        let cells = self.cells();
        if let Some(id) = id {
            return cells.iter().find(|c| c.id == id).ok_or_else(|| {
                bad(format!("{}: no cell has id '{id}' (sim sweep plan lists them)", self.file.display()))
            });
        }
        let index = match index {
            Some(i) => i,
            None => task_index()?,
        };
        let n = cells.len();
        cells.get(index).ok_or_else(|| {
            bad(format!("{}: index {index}: the sweep has {n} cells (0..{})", self.file.display(), n.saturating_sub(1)))
        })
    }

    /// Runs one cell on its workload (read for its seed) unless it is done; its folder
    /// appears whole or not at all. Returns whether it ran.
    pub fn run_cell(&self, c: &SweepCell, loaded: &Loaded) -> Result<bool, RunError> {
        if self.done(c) {
            return Ok(false);
        }
        let dest = self.folder(c);
        let parent = &self.trace_dir(c.trace);
        std::fs::create_dir_all(parent)
            .map_err(|e| RunError::Other(format!("{}: cannot create folder: {e}", parent.display())))?;
        let tmp = parent.join(format!(".{}.partial-{}", c.cell.folder(), std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        // `sim compare`'s options for the same cell.
        let o = crate::compare::cell_options(&self.base, &c.cell, tmp.clone())?;
        crate::run::run(&o, loaded, None)?;
        let cell = serde_json::json!({ "id": c.id, "trace": self.traces[c.trace].name, "policy": c.cell.spec,
            "variant": c.cell.variant, "seed": c.cell.seed });
        std::fs::write(tmp.join(CELL_FILE), format!("{cell:#}\n"))
            .map_err(|e| RunError::Other(format!("{}: {e}", tmp.join(CELL_FILE).display())))?;
        match std::fs::rename(&tmp, &dest) {
            Ok(()) => Ok(true),
            // Another task finished the same cell first: its folder stands.
            Err(_) if self.done(c) => {
                let _ = std::fs::remove_dir_all(&tmp);
                Ok(false)
            }
            Err(e) => Err(RunError::Other(format!("{}: {e}", dest.display()))),
        }
    }

    /// Reads a cell's workload and runs it (an array task).
    pub fn run_one(&self, c: &SweepCell, notes: &mut dyn FnMut(String)) -> Result<bool, RunError> {
        if self.done(c) {
            return Ok(false);
        }
        let loaded = crate::input::load(&self.traces[c.trace].input, c.cell.seed, notes)?;
        self.run_cell(c, &loaded)
    }

    /// Runs every cell not done yet, in parallel on `threads` threads (0: one per core);
    /// `done` is called after each. Returns how many ran.
    pub fn run_local(&self, threads: usize, done: &(dyn Fn() + Sync)) -> Result<usize, RunError> {
        use rayon::prelude::*;
        let todo: Vec<&SweepCell> = self.cells().iter().filter(|c| !self.done(c)).collect();
        let pool = crate::compare::thread_pool(threads)?;
        let mut ran = 0;
        for t in 0..self.traces.len() {
            let cells: Vec<&SweepCell> = todo.iter().copied().filter(|c| c.trace == t).collect();
            if cells.is_empty() {
                continue;
            }
            // Each seed's workload read once (the cells repeat the seeds, policy by policy).
            let mut seeds: Vec<u64> = cells.iter().map(|c| c.cell.seed).collect();
            seeds.sort_unstable();
            seeds.dedup();
            let loaded = crate::compare::load_per_seed(&self.traces[t].input, &seeds, threads, &mut |_| {})?;
            let results: Vec<Result<bool, RunError>> = pool.install(|| {
                cells
                    .par_iter()
                    .map(|c| {
                        let r = self.run_cell(c, crate::compare::loaded_for(&loaded, c.cell.seed));
                        done();
                        r
                    })
                    .collect()
            });
            for r in results {
                ran += usize::from(r?);
            }
        }
        Ok(ran)
    }

    /// Gathers each trace's finished cells into its report (`sim compare`'s files:
    /// `comparison.csv`, `report.html`, `runs.txt`, ...) under the trace's folder; returns
    /// the cells missing (their report leaves them out).
    pub fn merge(&self) -> Result<Vec<SweepCell>, RunError> {
        let cells = self.cells();
        let mut missing = Vec::new();
        for t in 0..self.traces.len() {
            let (finished, absent): (Vec<&SweepCell>, Vec<&SweepCell>) =
                cells.iter().filter(|c| c.trace == t).partition(|c| self.done(c));
            missing.extend(absent.into_iter().cloned());
            if finished.is_empty() {
                continue;
            }
            let out = self.trace_dir(t);
            let plan: Vec<Cell> = finished.iter().map(|c| c.cell.clone()).collect();
            let runs = crate::compare::read_runs(&out, &plan).map_err(|e| bad(e.to_string()))?;
            crate::compare::write_comparison(&out, &plan, &runs)?;
        }
        Ok(missing)
    }
}

/// The file a sweep's cell folder holds besides the run's: its id and configuration.
pub const CELL_FILE: &str = "cell.json";

/// An array task's index: `SLURM_ARRAY_TASK_ID` (Slurm job arrays), else
/// `JOB_COMPLETION_INDEX` (Kubernetes Indexed Jobs).
fn task_index() -> Result<usize, RunError> {
    for var in ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"] {
        if let Ok(v) = std::env::var(var) {
            return v.trim().parse().map_err(|_| bad(format!("{var}='{v}': expected a task index (0, 1, ...)")));
        }
    }
    Err(bad("no cell given: --index N, --cell ID, or SLURM_ARRAY_TASK_ID / JOB_COMPLETION_INDEX set".into()))
}

/// A trace's default name: its file name without extensions, made safe.
fn stem(path: &str) -> String {
    let file = Path::new(path).file_name().map_or(String::new(), |f| f.to_string_lossy().into_owned());
    let base = file.split('.').next().unwrap_or_default();
    crate::compare::safe_name(base).trim_matches('_').to_string()
}

/// The run settings of every cell: `sim run`'s defaults with `[run]` and the
/// controllers.
fn base_options(r: &RunTable, controllers: &[String]) -> Result<RunOptions, RunError> {
    let horizon = r
        .horizon
        .as_deref()
        .map(|h| {
            sim_core::time::parse_secs_micros(h)
                .map(sim_core::SimTime)
                .map_err(|e| bad(format!("[run] horizon: {e}, found '{h}'")))
        })
        .transpose()?;
    Ok(RunOptions {
        controllers: controllers.to_vec(),
        walltime_kill: r.walltime_kill,
        horizon,
        oom_retries: r.oom_retries.unwrap_or(RunOptions::default().oom_retries),
        checkpoint: r.checkpoint.clone(),
        restarts: r.restarts.clone(),
        ..RunOptions::default()
    })
}
