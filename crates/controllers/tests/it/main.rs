//! The controllers crate's tests: each controller in tiny hand-computed scenarios.

mod failures;
mod maintenance;
mod spot;
