//! Integration tests of the reports crate, one module per area.

mod gantt;
mod parquet;
mod plots;
mod report;
