//! # benches: schedlab's benchmarks
//!
//! Criterion benches (`cargo bench -p benches`) replay whole Parallel Workloads Archive
//! logs from `../shared/traces/swf` (`replay`) and run the FGD paper's protocol on the
//! openb traces in `../shared/traces/openb` (`fgd`); when those folders are absent they
//! say so and use the committed slices.

use std::path::PathBuf;

/// Folder of the shared SWF logs, relative to the workspace root.
pub fn shared_swf_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/swf")
}

/// Folder of the shared openb traces, relative to the workspace root.
pub fn shared_openb_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/openb")
}

/// The shared SWF logs (sorted by name), or nothing when the folder is absent.
pub fn shared_swf_logs() -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(shared_swf_dir()) else { return Vec::new() };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".swf.gz") || p.to_string_lossy().ends_with(".swf"))
        .collect();
    v.sort();
    v
}
