//! The controllers crate's tests: each controller in tiny hand-computed scenarios.

mod cluster_autoscaler;
mod failures;
mod fuzz;
mod hpa;
mod hybrid;
mod karpenter;
mod maintenance;
mod service;
mod spot;
