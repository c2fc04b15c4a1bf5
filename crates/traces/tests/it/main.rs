//! Reader tests: the committed slices, and fuzzing (no input may panic).

mod fuzz;
mod slices;
