//! hw-calibrate's tests: every fixture turned into profiles, checked against values worked
//! out by hand. No GPU, driver or network needed.

mod api;
mod device_check;
mod fuzz;
mod import;
mod nvml;
mod probe;
mod sample;
mod shipped;

use std::path::PathBuf;

/// A file under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}
