//! # benches: schedlab's benchmarks
//!
//! Criterion benches (`cargo bench -p benches`) replay whole Parallel Workloads Archive
//! logs from `../shared/traces/swf`; when that folder is absent they say so and skip.

use std::path::PathBuf;

/// Folder of the shared SWF logs, relative to the workspace root.
pub fn shared_swf_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/swf")
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
