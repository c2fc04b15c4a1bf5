//! Benchmarks
