//! The opt-in decision log: every event and decision with a reason, so a user can see
//! why a job waited.

use crate::time::{Secs, SimTime};
use serde::Serialize;

/// One entry of the decision log. Serialised as one JSON object per line by the binary,
/// with the time added as `t` (seconds, a number); every time and count is a JSON number,
/// and `units` is always text (the units or nodes and GPUs held).
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LogEvent<'a> {
    /// A job was submitted and queued.
    Arrival {
        /// Trace id.
        job: &'a str,
        /// Units it needs (processors or cores); `units` elsewhere names the units held.
        units_needed: u64,
        /// Requested time, seconds.
        requested: Secs,
    },
    /// A job was refused at submission.
    Reject {
        /// Trace id.
        job: &'a str,
        /// Why.
        reason: &'static str,
    },
    /// A job started.
    Start {
        /// Trace id.
        job: &'a str,
        /// Units it holds, as an interval set (`0-3 8`), or its nodes and GPUs.
        units: String,
        /// Why the policy started it.
        reason: String,
    },
    /// A job keeps waiting.
    Wait {
        /// Trace id.
        job: &'a str,
        /// Why.
        reason: String,
        /// Its reserved start (seconds), when it holds a reservation.
        #[serde(skip_serializing_if = "Option::is_none")]
        reserved_at: Option<Secs>,
    },
    /// A job ended.
    End {
        /// Trace id.
        job: &'a str,
        /// Outcome name.
        outcome: &'static str,
    },
    /// Some tasks of a gang were bound and wait for the rest.
    Hold {
        /// Trace id.
        job: &'a str,
        /// Where the tasks went.
        units: String,
        /// Tasks held now, of the gang's size.
        held: u32,
        /// The gang's size.
        tasks: u32,
    },
    /// A running job was suspended (it keeps its binding, lends its CPUs and GPUs).
    Suspend {
        /// Trace id.
        job: &'a str,
        /// Why.
        reason: String,
    },
    /// A suspended job runs again.
    Resume {
        /// Trace id.
        job: &'a str,
        /// Run time it has left, seconds.
        left: Secs,
    },
    /// A running job went back to the queue.
    Requeue {
        /// Trace id.
        job: &'a str,
        /// Why.
        reason: String,
    },
    /// A waiting job was withdrawn by its policy and will never run (Kueue deactivated
    /// it); its outcome is `unfinished` with this reason.
    Withdraw {
        /// Trace id.
        job: &'a str,
        /// Why.
        reason: String,
    },
    /// A controller's decision ([`crate::controller::Action::Note`]).
    Controller {
        /// The controller's name.
        by: &'a str,
        /// What it decided.
        what: &'a str,
        /// Details and reason.
        reason: &'a str,
    },
    /// A node changed state.
    Node {
        /// Node index.
        node: u32,
        /// New state.
        state: &'static str,
    },
}

/// Where decision-log entries go.
pub trait LogSink {
    /// Records one entry.
    fn record(&mut self, now: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()>;
}
