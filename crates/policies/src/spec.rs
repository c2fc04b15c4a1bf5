//! Policy specs: `name` or `name[key=value,key=value]`, as DSLab's resolver takes them.
//! The parser and its errors are [`sim_core::spec`]'s, shared with controllers.

pub use sim_core::spec::{Spec as PolicySpec, SpecError as PolicyError};
