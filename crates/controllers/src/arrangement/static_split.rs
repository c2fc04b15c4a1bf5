//! `static`: a fixed split of the nodes between Slurm and Kubernetes, as most sites run
//! the two side by side (two sets of machines, nothing moves).

use super::Sides;
use sim_core::cluster::NodeId;
use sim_core::controller::{Action, Controller};
use sim_core::policy::SchedView;
use sim_core::spec::{Chosen, OptionInfo, Spec, SpecError, canonical_values};

/// `slurm_nodes=<n>`: how many nodes Slurm gets.
pub const SLURM_NODES: OptionInfo = OptionInfo {
    key: "slurm_nodes",
    values: &["pools", "<integer>"],
    doc: "nodes Slurm owns, the first ones in node order, Kubernetes the rest; pools: as the cluster \
          configuration's pools say (their `domain`)",
};

/// A fixed split (see the module documentation).
pub struct StaticSplit {
    slurm_nodes: Option<u32>,
}

impl StaticSplit {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[SLURM_NODES];

    /// Builds it from a spec.
    pub fn from_spec(spec: &Spec) -> Result<Self, SpecError> {
        let c = Chosen::check(spec, Self::OPTIONS, "controller")?;
        Ok(StaticSplit { slurm_nodes: c.number(SLURM_NODES).map(|n| n.min(u64::from(u32::MAX)) as u32) })
    }
}

impl Controller for StaticSplit {
    fn may_relabel(&self) -> bool {
        false
    }
    fn spec(&self) -> String {
        let n = self.slurm_nodes.map_or_else(|| "pools".to_string(), |n| n.to_string());
        canonical_values("static", &[("slurm_nodes", n)])
    }
    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some(sides) = Sides::of(view, out) else { return };
        let Some(n) = self.slurm_nodes else { return };
        for node in 0..view.cluster().node_count() {
            let domain = if node < n { sides.slurm } else { sides.k8s };
            if view.node_domain(NodeId(node)) != domain {
                out.push(Action::SetNodeDomain { node: NodeId(node), domain, reclaim: None });
            }
        }
    }
}
