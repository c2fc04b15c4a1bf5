//! `bridge`: Slinky's slurm-bridge (`SlinkyProject/slurm-bridge`): Kubernetes pods become
//! Slurm jobs, scheduled by slurmctld; the kubelet runs them. Every node is Slurm's, and
//! its README's limitation holds: "Exclusive, whole node allocations are made for each
//! pod". `shared` is what slurm-bridge#48 asks for (several pods on a node, by their
//! requests): the bridge's `shared` annotation (slurm-bridge PR #14).

use super::Sides;
use sim_core::cluster::NodeId;
use sim_core::controller::{Action, Controller};
use sim_core::domain::Route;
use sim_core::policy::SchedView;
use sim_core::spec::{Chosen, OptionInfo, Spec, SpecError, canonical};

/// `shared=false|true`.
pub const SHARED: OptionInfo = OptionInfo {
    key: "shared",
    values: &["false", "true"],
    doc: "false: each pod takes a whole node (slurm-bridge today); true: pods share nodes by their requests \
          (slurm-bridge#48)",
};

/// Pods scheduled by Slurm (see the module documentation).
pub struct Bridge {
    shared: bool,
}

impl Bridge {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[SHARED];

    /// Builds it from a spec (`bridge[shared]` is `bridge[shared=true]`).
    pub fn from_spec(spec: &Spec) -> Result<Self, SpecError> {
        let c = Chosen::check(spec, Self::OPTIONS, "controller")?;
        Ok(Bridge { shared: c.index(SHARED) == 1 })
    }
}

impl Controller for Bridge {
    fn may_relabel(&self) -> bool {
        false
    }
    fn spec(&self) -> String {
        canonical("bridge", &[(SHARED, usize::from(self.shared))])
    }
    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some(sides) = Sides::of(view, out) else { return };
        out.push(Action::RouteDomain {
            domain: sides.k8s,
            route: Route { scheduler: sides.slurm, whole_node: !self.shared },
        });
        for node in 0..view.cluster().node_count() {
            if view.node_domain(NodeId(node)) != sides.slurm {
                out.push(Action::SetNodeDomain { node: NodeId(node), domain: sides.slurm, reclaim: None });
            }
        }
    }
}
