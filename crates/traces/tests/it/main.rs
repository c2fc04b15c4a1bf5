//! Reader tests: the committed slices, the importers of operators' formats, the
//! generator and its fitting, and fuzzing (no input may panic).

mod convert;
mod fuzz;
mod generator;
mod gpu_importers;
mod pai;
mod sacct;
mod slices;
