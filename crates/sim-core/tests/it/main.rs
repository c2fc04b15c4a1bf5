//! Engine tests with small hand-written policies.

mod controllers;
mod engine;
mod events;
mod gpu;
mod node_lifecycle;
mod suspend;
