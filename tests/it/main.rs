//! End-to-end tests of the `sim` binary.

mod bad_input;
mod calibrate;
mod compare;
mod controllers;
mod energy;
mod examples;
mod golden;
mod gpu;
mod hybrid;
mod k8s_schema;
mod reference;
mod run;
mod sacct_out;
mod slurm;
mod sweep;
mod trace_tools;
mod user_paths;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `sim` with `args`.
pub fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim")).args(args).output().expect("sim runs")
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `data/`.
pub fn data(name: &str) -> String {
    root().join("data").join(name).display().to_string()
}

/// `sim run` into a fresh temporary folder; returns (output, folder).
pub fn run_into(args: &[&str]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut all = vec!["run", "--quiet", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    (sim(&all), dir)
}

/// Reads a file of a run folder.
pub fn read(dir: &tempfile::TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join("out").join(name)).unwrap()
}

/// SHA-256 hex of bytes.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `path` exists (the shared traces are absent on a fresh clone).
pub fn exists(path: &Path) -> bool {
    path.exists()
}
