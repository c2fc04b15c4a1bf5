//! One trace under several policies and seeds, replayed in parallel: each run writes its
//! own folder, then the comparison and the report are built from them.

use crate::RunError;
use crate::input::{Input, Loaded};
use crate::run::RunOptions;
use rayon::prelude::*;
use std::path::Path;

/// The list of run folders a comparison leaves in its output, in its order (the first
/// policy is the comparison's baseline).
pub const RUNS_LIST: &str = "runs.txt";

/// Splits a list of policy specs at the commas outside `[...]`.
pub fn split_specs(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// A run folder's name: the policy spec with its punctuation made safe, and the seed.
pub fn folder_name(spec: &str, seed: u64) -> String {
    format!("{}__seed{seed}", safe_name(spec).trim_end_matches('_'))
}

/// `text` for a file name: letters, digits and `-` kept, the rest `_`.
pub fn safe_name(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// Seeds: an inclusive range `1..10` or a list `1,2,3` (`what` names the flag or key).
pub fn parse_seeds(s: &str, what: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("{what}: expected a range such as 42..51 or a list such as 42,43, found '{s}'");
    if let Some((a, b)) = s.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().trim_start_matches('=').parse().map_err(|_| bad())?;
        if b < a {
            return Err(format!(
                "{what}: the range '{s}' is reversed: its first seed must not exceed its last ({b}..{a}?)"
            ));
        }
        if b - a > 100_000 {
            return Err(format!("{what}: the range '{s}' holds {} seeds, expected at most 100001", b - a + 1));
        }
        return Ok((a..=b).collect());
    }
    let seeds: Vec<u64> = s.split(',').map(|x| x.trim().parse::<u64>().map_err(|_| bad())).collect::<Result<_, _>>()?;
    let mut sorted = seeds.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("{what}: seed {} is listed twice in '{s}'", w[0]));
    }
    Ok(seeds)
}

/// One run of a comparison: a policy spec, a seed and the settings varied for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The policy spec as given.
    pub spec: String,
    /// The master seed.
    pub seed: u64,
    /// The settings `--vary` gives it (empty: none).
    pub variant: crate::vary::Variant,
}

impl Cell {
    /// A run of `spec` with `seed` and no setting varied.
    pub fn new(spec: &str, seed: u64) -> Self {
        Cell { spec: spec.to_string(), seed, variant: Default::default() }
    }

    /// Its folder: [`folder_name`], with the varied settings before the seed.
    pub fn folder(&self) -> String {
        let stem = safe_name(&self.spec);
        format!("{}{}__seed{}", stem.trim_end_matches('_'), crate::vary::folder_part(&self.variant), self.seed)
    }
}

/// Every cell of a comparison: each spec, with each variant, with each seed, in that
/// nesting (the first spec's runs first: it is the baseline).
pub fn plan(specs: &[String], variants: &[crate::vary::Variant], seeds: &[u64]) -> Vec<Cell> {
    let mut out = Vec::new();
    for spec in specs {
        for v in variants {
            for &seed in seeds {
                out.push(Cell { spec: spec.clone(), seed, variant: v.clone() });
            }
        }
    }
    out
}

/// Checks a comparison before any run starts: its specs ([`check_specs`]), the
/// controllers, and each `--vary` combination applied to `base`; the combinations.
pub fn check_plan(specs: &[String], vary: &[String], base: &RunOptions) -> Result<Vec<crate::vary::Variant>, RunError> {
    check_specs(specs, base)?;
    crate::run::controllers(base, &[])?;
    let variants = crate::vary::parse(vary)?;
    for v in &variants {
        crate::vary::apply(base, v)?;
    }
    Ok(variants)
}

/// Checks every spec before any run starts: each builds, and no policy comes twice (the
/// same canonical spec, or two specs that would share a run folder).
pub fn check_specs(specs: &[String], base: &RunOptions) -> Result<(), RunError> {
    let bad = RunError::BadInput;
    if base.compare_arrangements {
        return check_arrangements(specs);
    }
    if specs.is_empty() {
        return Err(bad("--policies: expected at least one policy spec".into()));
    }
    let mut seen: Vec<(String, String, &str)> = Vec::new();
    for p in specs {
        let built = policies::compose(p, base.placement.as_deref(), base.gang.as_deref(), base.topology.as_deref(), 0)
            .map_err(|e| bad(format!("--policies: '{p}': {e}")))?;
        let (canonical, folder) = (built.spec(), folder_name(p, 0));
        if let Some((c, _, first)) = seen.iter().find(|(c, f, _)| *c == canonical || *f == folder) {
            let what = if *c == canonical {
                format!("is the same policy as '{first}' ({canonical})")
            } else {
                format!("would share a run folder with '{first}'")
            };
            return Err(bad(format!("--policies: '{p}' {what}: list each policy once")));
        }
        seen.push((canonical, folder, p));
    }
    Ok(())
}

/// Checks every arrangement of `sim compare --arrangements` before any run starts: each
/// builds, and none comes twice.
fn check_arrangements(specs: &[String]) -> Result<(), RunError> {
    let bad = RunError::BadInput;
    if specs.is_empty() {
        return Err(bad("--arrangements: expected at least one arrangement".into()));
    }
    let mut seen: Vec<(String, String, &str)> = Vec::new();
    for a in specs {
        let canonical = crate::run::check_arrangement(a).map_err(|e| bad(format!("--arrangements: {e}")))?;
        let folder = folder_name(a, 0);
        if let Some((_, _, first)) = seen.iter().find(|(c, f, _)| *c == canonical || *f == folder) {
            return Err(bad(format!("--arrangements: '{a}' is the same as '{first}': list each once")));
        }
        seen.push((canonical, folder, a));
    }
    Ok(())
}

/// Replays every `(spec, seed)` of `plan` on the workload `loaded_for(seed)` gives, in
/// parallel on `threads` threads (0: one per core), each into `out/<folder_name>` with
/// `base`'s other settings; `done` is called after each run. Results come back in plan
/// order, so nothing depends on the thread count. Then writes the report and the list of
/// runs into `out`, and returns the runs read back.
pub fn compare<'l>(
    plan: &[Cell],
    base: &RunOptions,
    loaded_for: &(dyn Fn(u64) -> &'l Loaded + Sync),
    out: &Path,
    threads: usize,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<crate::report::RunData>, RunError> {
    std::fs::create_dir_all(out)
        .map_err(|e| RunError::Other(format!("{}: cannot create folder: {e}", out.display())))?;
    // Everything parallel here, the report included, runs on this pool, so `--threads 1`
    // is one thread throughout.
    thread_pool(threads)?.install(|| compare_in_pool(plan, base, loaded_for, out, done))
}

/// A pool of `threads` threads (0: one per core).
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, RunError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RunError::Other(format!("thread pool: {e}")))
}

/// Reads the workload of every seed of `seeds` (each seed its own version when `--perturb`
/// or synthetic GPU memory makes the workload depend on it, else one shared by all), in
/// parallel on `threads` threads; `notes` gets what the first read says.
pub fn load_per_seed(
    input: &Input,
    seeds: &[u64],
    threads: usize,
    notes: &mut dyn FnMut(String),
) -> Result<std::collections::BTreeMap<u64, Loaded>, RunError> {
    let distinct: &[u64] = if seeded_input(input) { seeds } else { &seeds[..seeds.len().min(1)] };
    let read: Vec<Result<(Loaded, Vec<String>), RunError>> = thread_pool(threads)?.install(|| {
        distinct
            .par_iter()
            .map(|&s| {
                let mut said = Vec::new();
                crate::input::load(input, s, &mut |n| said.push(n)).map(|l| (l, said))
            })
            .collect()
    });
    let mut loaded = std::collections::BTreeMap::new();
    for (i, (&s, r)) in distinct.iter().zip(read).enumerate() {
        let (l, said) = r?;
        if i == 0 {
            said.into_iter().for_each(&mut *notes);
        }
        loaded.insert(s, l);
    }
    Ok(loaded)
}

fn compare_in_pool<'l>(
    plan: &[Cell],
    base: &RunOptions,
    loaded_for: &(dyn Fn(u64) -> &'l Loaded + Sync),
    out: &Path,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<crate::report::RunData>, RunError> {
    let results: Vec<Result<(), RunError>> = plan
        .par_iter()
        .map(|cell| {
            let o = cell_options(base, cell, out.join(cell.folder()));
            let r = o.and_then(|o| crate::run::run(&o, loaded_for(cell.seed), None).map(|done| (o, done))).and_then(
                |(o, done)| {
                    crate::output::remove_stale(&o.out, &done.written, true)
                        .map_err(|e| RunError::Other(format!("{}: removing stale files: {e}", o.out.display())))
                },
            );
            done();
            r
        })
        .collect();
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    let runs = read_runs(out, plan)?;
    write_comparison(out, plan, &runs)?;
    Ok(runs)
}

/// Whether every cell of `plan` can replay `input` streamed ([`crate::stream::streams`]):
/// then [`compare_streamed`] reads no workload ahead.
pub fn streams_all(plan: &[Cell], base: &RunOptions, input: &Input) -> bool {
    crate::stream::streams_input(input)
        && plan.iter().all(|cell| {
            cell_options(base, cell, std::path::PathBuf::new()).is_ok_and(|o| crate::stream::streams_run(&o))
        })
}

/// [`compare`] with each replay streamed from `input` ([`streams_all`] must hold), in
/// parallel: a replay's memory follows the jobs in its system, whatever the trace's
/// length. A trace that cannot stream after all (not sorted by submit time) is read whole
/// once and shared by the cells. `notes` gets what the plan's first replay says.
pub fn compare_streamed(
    plan: &[Cell],
    base: &RunOptions,
    input: &Input,
    out: &Path,
    threads: usize,
    notes: &mut dyn FnMut(String),
    done: &(dyn Fn() + Sync),
) -> Result<Vec<crate::report::RunData>, RunError> {
    std::fs::create_dir_all(out)
        .map_err(|e| RunError::Other(format!("{}: cannot create folder: {e}", out.display())))?;
    // Everything parallel here runs on this pool, as in [`compare`].
    let (said, runs) = thread_pool(threads)?.install(|| streamed_in_pool(plan, base, input, out, done));
    said.into_iter().for_each(&mut *notes);
    runs
}

/// [`compare_streamed`] on the current pool; returns the first replay's notes too.
#[allow(clippy::type_complexity)]
fn streamed_in_pool(
    plan: &[Cell],
    base: &RunOptions,
    input: &Input,
    out: &Path,
    done: &(dyn Fn() + Sync),
) -> (Vec<String>, Result<Vec<crate::report::RunData>, RunError>) {
    let whole: std::sync::OnceLock<Result<Loaded, String>> = std::sync::OnceLock::new();
    let replay = |k: usize, cell: &Cell, said: &mut Vec<String>| -> Result<(), RunError> {
        let o = cell_options(base, cell, out.join(cell.folder()))?;
        let mut mine = Vec::new();
        let replayed = match crate::stream::run(input, &o, &mut |n| mine.push(n), &mut |_| {}, None)? {
            crate::stream::Streamed::Done { replayed, notes } => {
                mine.extend(notes);
                *replayed
            }
            crate::stream::Streamed::ReadWhole => {
                let l = whole.get_or_init(|| {
                    crate::input::load(input, cell.seed, &mut |n| mine.push(n)).map_err(|e| e.to_string())
                });
                crate::run::run(&o, l.as_ref().map_err(|e| RunError::BadInput(e.clone()))?, None)?
            }
        };
        if k == 0 {
            *said = mine;
        }
        crate::output::remove_stale(&o.out, &replayed.written, true)
            .map_err(|e| RunError::Other(format!("{}: removing stale files: {e}", o.out.display())))
    };
    let results: Vec<(Vec<String>, Result<(), RunError>)> = plan
        .par_iter()
        .enumerate()
        .map(|(k, cell)| {
            let mut said = Vec::new();
            let r = replay(k, cell, &mut said);
            done();
            (said, r)
        })
        .collect();
    let mut notes = Vec::new();
    let mut first_error = None;
    for (said, r) in results {
        notes.extend(said);
        if let (Err(e), None) = (r, &first_error) {
            first_error = Some(e);
        }
    }
    if let Some(e) = first_error {
        return (notes, Err(e));
    }
    let runs = read_runs(out, plan).and_then(|runs| write_comparison(out, plan, &runs).map(|()| runs));
    (notes, runs)
}

/// The runs of `plan`'s cells under `out`, read back in parallel and collected in plan
/// order (the first error in that order wins).
pub fn read_runs(out: &Path, plan: &[Cell]) -> Result<Vec<crate::report::RunData>, RunError> {
    let read: Vec<Result<crate::report::RunData, RunError>> =
        plan.par_iter().map(|cell| crate::report::read_run(&out.join(cell.folder()))).collect();
    read.into_iter().collect()
}

/// The workload read for `seed` (`load_per_seed` reads one for all seeds when the seed
/// does not change it).
pub fn loaded_for(loaded: &std::collections::BTreeMap<u64, Loaded>, seed: u64) -> &Loaded {
    loaded.get(&seed).unwrap_or_else(|| loaded.values().next().expect("at least one seed read"))
}

/// The options of one cell's replay into `out`: `base` with the cell's varied settings,
/// its policy (or arrangement) and seed; no decision log, the default `jobs.csv`.
pub fn cell_options(base: &RunOptions, cell: &Cell, out: std::path::PathBuf) -> Result<RunOptions, RunError> {
    crate::vary::apply(base, &cell.variant).map(|varied| RunOptions {
        policy: (!base.compare_arrangements).then(|| cell.spec.clone()),
        arrangement: if base.compare_arrangements { Some(cell.spec.clone()) } else { varied.arrangement.clone() },
        seed: cell.seed,
        out,
        log: false,
        jobs_format: crate::run::JobsFormat::Default,
        ..varied
    })
}

/// The comparison of `runs` (the runs of `plan`, read back in its order) into `out`: the
/// report's files, earlier reports' stale files removed, and `runs.txt`.
pub fn write_comparison(out: &Path, plan: &[Cell], runs: &[crate::report::RunData]) -> Result<(), RunError> {
    let written = crate::report::write_report(out, runs)?;
    crate::output::remove_stale(out, &written, false)
        .map_err(|e| RunError::Other(format!("{}: removing an earlier report's files: {e}", out.display())))?;
    let list: String = plan.iter().map(|cell| cell.folder() + "\n").collect();
    let path = out.join(RUNS_LIST);
    let f = crate::output::write_finished(&path, |w| w.write_all(list.as_bytes()))
        .map_err(|e| RunError::Other(format!("{}: {e}", path.display())))?;
    f.rename().map_err(|e| RunError::Other(format!("{}: {e}", path.display())))?;
    Ok(())
}

/// Whether a comparison needs the workload read once per seed: only when the seed
/// changes it (synthetic GPU memory, `--perturb`).
pub fn seeded_input(i: &Input) -> bool {
    i.synthetic_gpu_memory || i.perturb.is_some()
}
