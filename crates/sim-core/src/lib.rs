//! # sim-core: the schedlab engine
//!
//! Integer simulated time ([`SimTime`], [`SimDuration`], microseconds), a totally
//! ordered [`event::EventQueue`], the cluster ([`Cluster`]) and job ([`Job`]) model, the
//! policy boundary ([`policy::Policy`] over a read-only [`policy::SchedView`]), outcomes,
//! seeded random streams, and the engine ([`simulate`]).
//!
//! This crate depends on no other schedlab crate; `policies`, `traces`, `hw-calibrate`
//! and `reports` depend on it.
//!
//! ## Event-ordering contract
//!
//! Events are totally ordered by the key **(time, event class, sequence number)**:
//!
//! 1. **time** — integer microseconds.
//! 2. **class** — at one instant, [`event::EventClass::JobEnd`] (completions,
//!    time-limit kills, evictions at the end of their grace period) first, then
//!    [`event::EventClass::Controller`] (controller timers: node events given as input,
//!    maintenance, autoscalers), then [`event::EventClass::JobArrival`] (out-of-memory
//!    retries, permit timeouts, wake-ups a policy asked for). Resources freed at an
//!    instant are therefore visible to jobs submitted at that instant. The engine's module
//!    documentation ([`engine`]) gives every step of an instant.
//! 3. **sequence** — within a class, the order the events were created: job ends in the
//!    order the jobs were started; arrivals in (submit time, input position) order (the
//!    engine reads arrivals from the input sorted stably by submit time rather than
//!    through the heap, which is the same order). A job coming back after an
//!    out-of-memory back-off is an arrival-class event in the heap: at one instant it
//!    re-enters the queue before the trace's arrivals of that instant.
//!
//! Scheduling passes ([`policy::PassMode`]): `PerTime` applies every event of an instant
//! and then runs one pass; `PerEvent` runs one pass after each event. Decisions are
//! applied in the order the policy returns them; jobs started in one pass get start
//! sequence numbers in that order.
//!
//! ## Determinism guarantees
//!
//! * The same binary, inputs, options and seed give byte-identical outputs, on any
//!   thread count: a run is single-threaded and touches no clock, no thread-local random
//!   generator and no hash-map iteration order; collections that reach outputs are
//!   `Vec`s indexed by dense ids or `BTreeMap`/`BTreeSet`s.
//! * Randomness comes only from [`rng::RngStreams`]: one master seed split by name into
//!   ChaCha8 streams, an algorithm pinned by name, so crate upgrades do not change
//!   results.
//! * Times never pass through floating point inside the engine; floats appear only in
//!   reported metrics, computed in a fixed order.
//! * Across platforms: the engine's integer results are identical everywhere; reported
//!   float metrics are identical on IEEE-754 platforms with the same Rust float
//!   formatting.
//!
//! ## Invariants
//!
//! Every job read ends with exactly one [`Outcome`]. No unit is ever given to two jobs
//! (checked on every allocation by the free pool; counts are also checked in debug
//! builds). A gang's units are taken all at once or not at all. A job bound to nodes
//! ([`policy::Decision::Bind`]) is checked against the [`Ledger`]: no node gives more
//! milli-CPU or host memory than it has and no GPU more than 1000 milli-GPU, and all its
//! tasks are bound in one decision or none.

pub mod binding;
pub mod checkpoint;
pub mod cluster;
pub mod constraints;
pub mod controller;
pub mod domain;
pub mod engine;
pub mod event;
pub mod fixture;
pub mod hardware;
pub mod job;
pub mod job_table;
pub mod job_view;
pub mod ledger;
pub mod log;
pub mod order_stats;
pub mod outcome;
pub mod policy;
pub mod power;
pub mod restart;
pub mod rng;
pub mod running_on_nodes;
pub mod spec;
pub mod time;
pub mod units;

pub use binding::Binding;
pub use cluster::{Cluster, Delay, GpuSharing, GpuSpec, NodeGroup, NodeId, NodePool, NodeSpec, NodeState};
pub use engine::{
    Deadlock, EngineError, Fragmentation, GpuEnergy, GpuSample, Hooks, JobSource, RecordSink, RunResult, SimConfig,
    Stall, simulate, simulate_stream, simulate_stream_in, simulate_with,
};
pub use job::{Job, JobId, JobKind, RestartPolicy, TaskShape, TraceStatus};
pub use ledger::{GpuAffinity, Ledger, NodeUse, TaskBinding};
pub use outcome::{Interruption, JobRecord, LostTime, Outcome, RejectReason};
pub use power::{PowerCurve, PowerCurveError};
pub use time::{SimDuration, SimTime};
