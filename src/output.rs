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
