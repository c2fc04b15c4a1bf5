//! Output files written whole or not at all: a temporary file in the target folder,
//! renamed into place once complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file being written; it appears under its name only once [`AtomicFile::finish`]ed
/// and [`Finished::rename`]d.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest`.
    pub fn create(dest: &Path) -> std::io::Result<Self> {
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let f = File::create(&tmp)?;
        Ok(AtomicFile { tmp, dest: dest.to_path_buf(), out: Some(BufWriter::with_capacity(1 << 16, f)) })
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.out.as_mut().expect("not committed")
    }

    /// Flushes the temporary file; it is renamed into place by [`Finished::rename`].
    pub fn finish(mut self) -> std::io::Result<Finished> {
        let out = self.out.take().expect("not finished");
        let tmp = std::mem::take(&mut self.tmp);
        let dest = std::mem::take(&mut self.dest);
        match out.into_inner().map_err(|e| e.into_error()) {
            Ok(f) => {
                drop(f);
                Ok(Finished { tmp, dest })
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }
}

/// A complete temporary file waiting to be renamed into place; removed if dropped.
pub struct Finished {
    tmp: PathBuf,
    dest: PathBuf,
}

impl Finished {
    /// Renames it into place.
    pub fn rename(mut self) -> std::io::Result<()> {
        let tmp = std::mem::take(&mut self.tmp);
        let r = std::fs::rename(&tmp, &self.dest);
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        r
    }
}

impl Drop for Finished {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.is_some() {
            self.out = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `dest` to a complete temporary file with `fill`; rename it with
/// [`Finished::rename`] once every output of the run is ready.
pub fn write_finished(
    dest: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Finished> {
    let mut f = AtomicFile::create(dest)?;
    fill(f.writer())?;
    f.finish()
}

/// Files a run writes into its folder, by name (the report's under `tables/` and
/// `plots/` by suffix): what a new run into the same folder may remove when it does not
/// write them again, so that no other run's file is left beside its own.
pub const RUN_FILES: &[&str] =
    &["jobs.csv", "summary.json", "frame.csv", "fragmentation.csv", "decisions.jsonl", "sacct.txt"];

/// Files a report writes at the top of its folder (beside `tables/` and `plots/`).
pub const REPORT_FILES: &[&str] =
    &["report.html", "comparison.csv", "comparison.parquet", "runs_by_size_class.csv", "runs_by_size_class.parquet"];

/// The report's subfolders and the suffixes of the files it writes there.
const REPORT_DIRS: &[(&str, &[&str])] =
    &[("tables", &[".groups.csv", ".timeseries.csv", ".parquet"]), ("plots", &[".svg", ".png"])];

/// The page's tables in `tables/` (besides [`REPORT_DIRS`]' suffixes): by name, and
/// `by_*.csv`.
const REPORT_TABLES: &[&str] = &["summary.csv", "why.csv", "observed.csv", "checkpoint_interval.csv"];

/// Whether `name` in the report's subfolder `sub` is a file the report writes.
fn report_file(sub: &str, suffixes: &[&str], name: &str) -> bool {
    suffixes.iter().any(|s| name.ends_with(s))
        || sub == "tables" && (REPORT_TABLES.contains(&name) || name.starts_with("by_") && name.ends_with(".csv"))
}

/// Removes from folder `dir` the report's files ([`REPORT_FILES`], and those it writes
/// in `tables/` and `plots/`) and, for a run folder (`run`), the files of [`RUN_FILES`],
/// that this command did not write: `written` holds the paths, relative to `dir`, it
/// wrote. Nothing else is touched; a subfolder left empty is removed.
pub fn remove_stale(dir: &Path, written: &[String], run: bool) -> std::io::Result<()> {
    let keep = |rel: &str| written.iter().any(|w| w == rel);
    let names = REPORT_FILES.iter().chain(if run { RUN_FILES } else { &[] });
    for name in names {
        let p = dir.join(name);
        if !keep(name) && p.is_file() {
            std::fs::remove_file(&p)?;
        }
    }
    for (sub, suffixes) in REPORT_DIRS {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = format!("{sub}/{name}");
            if e.path().is_file() && report_file(sub, suffixes, &name) && !keep(&rel) {
                std::fs::remove_file(e.path())?;
            }
        }
        // Only succeeds when it is empty.
        let _ = std::fs::remove_dir(dir.join(sub));
    }
    Ok(())
}
