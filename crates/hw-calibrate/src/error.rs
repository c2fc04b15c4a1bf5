//! What can go wrong, and which exit status it maps to.

/// A calibration failure. [`CalibrateError::is_bad_input`] says whether it is the user's
/// input or environment that is wrong (`sim` exits 2) or something else (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// NVML could not be loaded or the kernel driver is not running: nothing to measure
    /// on this machine.
    #[error("no NVIDIA driver: NVML could not be loaded ({0})")]
    NoDriver(String),
    /// NVML is there but sees no GPU.
    #[error("no NVIDIA GPU: NVML found no device")]
    NoGpu,
    /// NVML sees GPUs but none of them can be read: each was skipped (`NoPermission` for
    /// every GPU outside this job's cgroup, `GpuLost`), with why.
    #[error("no NVIDIA GPU could be read: {}", skipped.join("; "))]
    NoReadableGpu {
        /// One line per GPU skipped.
        skipped: Vec<String>,
    },
    /// An NVML call failed on a machine that has a driver.
    #[error("NVML {call} failed: {message}")]
    Nvml {
        /// The call (`device_count`, `memory_info` of GPU 0, ...).
        call: String,
        /// NVML's error.
        message: String,
    },
    /// A file that cannot be read.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// A file that is not what it should be: the line (1-based; 0 for the whole file),
    /// and what was expected and found.
    #[error("{}", located(file, *line, message))]
    Invalid {
        /// The file (or a name for bytes read from elsewhere).
        file: String,
        /// 1-based line, 0 when the problem is the whole file.
        line: usize,
        /// The column or metric, what was expected and what was found.
        message: String,
    },
    /// A GPU reference (`resolve_gpu`) that names no file and no shipped model.
    #[error("GPU profile '{reference}' not found: {}", tried.join("; "))]
    NotFound {
        /// The reference as given.
        reference: String,
        /// What was tried, in order.
        tried: Vec<String>,
    },
    /// The workload command of `sim calibrate sample` could not be started.
    #[error("cannot run `{command}`: {message}")]
    Command {
        /// The command line.
        command: String,
        /// Why.
        message: String,
    },
}

fn located(file: &str, line: usize, message: &str) -> String {
    if line == 0 { format!("{file}: {message}") } else { format!("{file}:{line}: {message}") }
}

impl CalibrateError {
    /// Whether this is bad input or usage (exit status 2): a missing driver or GPU, a file
    /// that cannot be read or parsed, an unknown profile, a command that cannot start.
    /// NVML failures on a machine with a driver are other failures (exit status 1).
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, CalibrateError::Nvml { .. })
    }

    /// The `sim` exit status: 2 for bad input, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        if self.is_bad_input() { 2 } else { 1 }
    }

    pub(crate) fn invalid(file: &str, line: usize, message: impl Into<String>) -> Self {
        CalibrateError::Invalid { file: file.to_string(), line, message: message.into() }
    }
}
