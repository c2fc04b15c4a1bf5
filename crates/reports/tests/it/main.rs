//! Integration tests of the reports crate, one module per area.

mod gantt;
mod page;
mod parquet;
mod plots;
mod report;
