//! Engine tests with small hand-written policies.

mod engine;
mod events;
mod gpu;
