//! Engine tests with small hand-written policies.

mod controllers;
mod engine;
mod events;
mod go_rand;
mod gpu;
mod node_lifecycle;
mod suspend;
