//! Reading run folders back and writing a report (`sim run --report`, `sim compare`,
//! `sim report`): run folders made on any machine give the same report.

use crate::RunError as Failure;
use crate::output::write_finished;
use std::path::{Path, PathBuf};

pub use reports::report::RunData;

/// Reads a run folder: its `summary.json` and `frame.csv`.
pub fn read_run(dir: &Path) -> Result<RunData, Failure> {
    let bad = Failure::BadInput;
    let sp = dir.join("summary.json");
    let text = std::fs::read_to_string(&sp).map_err(|e| bad(format!("{}: cannot read: {e}", sp.display())))?;
    let summary: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("{}: not a summary.json: {e}", sp.display())))?;
    let fp = dir.join("frame.csv");
    let f = std::fs::File::open(&fp).map_err(|e| bad(format!("{}: cannot read: {e}", fp.display())))?;
    let rows = reports::frame::read_csv(std::io::BufReader::new(f), &fp.display().to_string())
        .map_err(|e| bad(e.to_string()))?;
    let name = dir.file_name().map_or_else(|| "run".to_string(), |n| n.to_string_lossy().into_owned());
    let gp = dir.join("fragmentation.csv");
    let fragmentation = match std::fs::File::open(&gp) {
        Ok(f) => {
            reports::fragmentation::read_csv(std::io::BufReader::new(f), &gp.display().to_string()).map_err(bad)?
        }
        Err(_) => Vec::new(),
    };
    Ok(RunData { name, summary, rows, fragmentation })
}

/// Writes the report of `runs` into `out`, each file whole or not at all; returns the
/// paths written, relative to `out`.
pub fn write_report(out: &Path, runs: &[RunData]) -> Result<Vec<String>, Failure> {
    let files = reports::report::build(runs).map_err(|e| Failure::Other(e.to_string()))?;
    let mut finished = Vec::new();
    for f in &files {
        let dest = out.join(&f.path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Failure::Other(format!("{}: cannot create folder: {e}", parent.display())))?;
        }
        let done = write_finished(&dest, |w| w.write_all(&f.bytes))
            .map_err(|e| Failure::Other(format!("{}: {e}", dest.display())))?;
        finished.push((dest, done));
    }
    for (dest, f) in finished {
        f.rename().map_err(|e| Failure::Other(format!("{}: {e}", dest.display())))?;
    }
    Ok(files.into_iter().map(|f| f.path).collect())
}

/// The comparison as a text table.
pub fn comparison_table(runs: &[RunData]) -> String {
    reports::report::comparison_text(runs)
}

pub use crate::compare::RUNS_LIST;

/// The run folders `dirs` name: each folder holding a `summary.json`, or the folders
/// directly inside it that do: in the order of its `runs.txt` when it has one, else
/// sorted by name.
pub fn run_folders(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    for d in dirs {
        if d.join("summary.json").is_file() {
            out.push(d.clone());
            continue;
        }
        if let Ok(list) = std::fs::read_to_string(d.join(RUNS_LIST)) {
            out.extend(list.lines().map(str::trim).filter(|l| !l.is_empty()).map(|l| d.join(l)));
            continue;
        }
        let entries =
            std::fs::read_dir(d).map_err(|e| Failure::BadInput(format!("{}: cannot read: {e}", d.display())))?;
        let mut inner: Vec<PathBuf> =
            entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("summary.json").is_file()).collect();
        if inner.is_empty() {
            return Err(Failure::BadInput(format!(
                "{}: no run folder here (expected summary.json and frame.csv, or folders holding them)",
                d.display()
            )));
        }
        inner.sort();
        out.extend(inner);
    }
    Ok(out)
}

/// Refuses runs of different traces (or of one trace on different machines): their
/// figures are not samples of one quantity, and pooling them into means with
/// confidence intervals would compare nothing. Each trace's runs get their own report.
pub fn refuse_mixed_traces(runs: &[RunData]) -> Result<(), Failure> {
    let key = |r: &RunData| {
        let s = &r.summary;
        let text = |k: &str| s[k].as_str().map(str::to_string).unwrap_or_else(|| s[k].to_string());
        (text("trace_sha256"), text("machine_units"), text("machine_gpus"), text("trace"))
    };
    let mut groups: std::collections::BTreeMap<(String, String, String), (String, Vec<&str>)> = Default::default();
    for r in runs {
        let (sha, units, gpus, trace) = key(r);
        groups.entry((sha, units, gpus)).or_insert_with(|| (trace, Vec::new())).1.push(&r.name);
    }
    if groups.len() <= 1 {
        return Ok(());
    }
    let list: Vec<String> = groups
        .iter()
        .map(|((_, units, gpus), (trace, names))| {
            format!("{trace} on {units} units, {gpus} GPUs: {}", names.join(", "))
        })
        .collect();
    Err(Failure::BadInput(format!(
        "the runs replay {} different traces or machines, which one comparison cannot pool: {}; report each \
         trace's runs apart",
        groups.len(),
        list.join("; ")
    )))
}

/// Reads the runs of `dirs` (run folders, or folders holding them) and writes their
/// report into `out`, removing an earlier report's files the new one does not write.
/// Refuses two runs of the same name and runs of different traces.
pub fn report(dirs: &[PathBuf], out: &Path) -> Result<Vec<RunData>, Failure> {
    let runs: Vec<RunData> = run_folders(dirs)?.iter().map(|d| read_run(d)).collect::<Result<_, _>>()?;
    let mut names = std::collections::BTreeSet::new();
    if let Some(r) = runs.iter().find(|r| !names.insert(r.name.clone())) {
        return Err(Failure::BadInput(format!("two run folders are named '{}': rename one", r.name)));
    }
    refuse_mixed_traces(&runs)?;
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::Other(format!("{}: cannot create folder: {e}", out.display())))?;
    let written = write_report(out, &runs)?;
    crate::output::remove_stale(out, &written, false)
        .map_err(|e| Failure::Other(format!("{}: removing an earlier report's files: {e}", out.display())))?;
    Ok(runs)
}
