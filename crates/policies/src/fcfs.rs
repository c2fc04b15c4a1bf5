//! First come, first served.

use crate::options::{OptionInfo, PASS, QueueOptions, RESERVATION, Reservation, canonical, pass_index};
use crate::spec::{PolicyError, PolicySpec};
use sim_core::policy::{Decision, PassInfo, PassMode, Policy, SchedView, StartReason, WaitReason};

/// FCFS: start queue heads in arrival order while the head fits; never look past a head
/// that does not fit (strict FCFS, batsched's `fcfs`, pybatsim's `schedFcfs`).
///
/// Options: `pass=per-time|per-event`; `reservation=count|nodes` (with `nodes` each job
/// is placed on the lowest-indexed free units, which the engine also does by default,
/// so the schedule is the same).
#[derive(Debug, Clone)]
pub struct Fcfs {
    pass: PassMode,
    reservation: Reservation,
}

impl Fcfs {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[PASS, RESERVATION];

    /// Builds it from a spec.
    pub fn from_spec(spec: &PolicySpec) -> Result<Self, PolicyError> {
        let c = crate::options::check(spec, Self::OPTIONS)?;
        Ok(Fcfs { pass: c.pass(), reservation: c.reservation() })
    }
}

impl Policy for Fcfs {
    fn spec(&self) -> String {
        canonical("fcfs", &[(PASS, pass_index(self.pass)), (RESERVATION, self.reservation as usize)])
    }
    fn pass_mode(&self) -> PassMode {
        self.pass
    }
    fn schedule(&mut self, view: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        let mut free = view.free_units();
        for &j in view.queue() {
            let need = view.job(j).units();
            if need > free {
                if view.logging() {
                    out.push(Decision::Wait { job: j, reason: WaitReason::DoesNotFit { free } });
                }
                break;
            }
            free -= need;
            out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
        }
    }
}
