//! # hw-calibrate: hardware and job profiles for schedlab
//!
//! Purpose (built by a later issue): calibrate the cluster model from live NVML
//! measurements of real GPUs (memory, clocks, power limits, NVLink, MIG) and from the logs
//! operators already keep (`nvidia-smi --query-gpu` CSV, dcgm-exporter scrapes), and write
//! hardware profiles that cluster configurations reference by GPU model, plus job profiles
//! (peak GPU memory, utilisation, power) for OOM and energy modelling.
//!
//! Nothing is implemented yet; the crate exists so the workspace layout is final.
