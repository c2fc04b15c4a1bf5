//! Integration tests of the reports crate, one module per area.

mod parquet;
mod plots;
