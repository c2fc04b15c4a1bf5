//! Output files written whole or not at all: a temporary file in the target folder,
//! renamed into place once complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file being written; it appears under its name only on [`AtomicFile::commit`].
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

    /// Flushes, syncs and renames into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        let out = self.out.take().expect("not committed");
        let f = out.into_inner().map_err(|e| e.into_error())?;
        drop(f);
        std::fs::rename(&self.tmp, &self.dest)
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

/// Writes `dest` whole with `fill`.
pub fn write_atomic(dest: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    fill(f.writer())?;
    f.commit()
}
