//! Matching the GPU model names a trace asks for to the models a cluster has.
//!
//! Traces and clusters name the same GPU differently: Slurm's typed GRES is whatever the
//! site wrote as `Type=` in gres.conf (`gres/gpu:a100`), Kubernetes clusters label nodes
//! with NVML's product name (`nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB`), cluster
//! configurations often use the short name (`A100-SXM4-80GB`). Comparing them verbatim
//! leaves jobs that can never run. The rule used here, applied to names written in any
//! case:
//!
//! 1. A name is normalised: lower case, spaces and underscores read as `-`, and a leading
//!    `nvidia-` or `tesla-` dropped (`NVIDIA A100_SXM4` → `a100-sxm4`).
//! 2. A cluster model is known by its own name and, when a shipped hardware profile
//!    (`profiles/public-specs.toml`) has it as model or alias, by that profile's model
//!    and every alias (`H100` ↔ `NVIDIA H100 80GB HBM3`, `H100-SXM5-80GB`, …).
//! 3. A requested name matches a cluster model when it equals one of the model's
//!    normalised names, or is a family prefix of one: the name followed by `-` (`a100`
//!    matches `a100-sxm4-80gb` and `a100-sxm4-40gb`; `a10` matches neither, nor does
//!    `a100` match `a10`).
//!
//! A job asking for several models accepts any of them; after [`map_job_models`] it
//! names every cluster model its names match, exactly as the cluster spells them.

use sim_core::{Cluster, Job};
use std::collections::BTreeMap;

/// `name` normalised (rule 1 of the module docs).
pub fn normalise(name: &str) -> String {
    let n: String =
        name.trim().chars().map(|c| if c == ' ' || c == '_' { '-' } else { c.to_ascii_lowercase() }).collect();
    for prefix in ["nvidia-", "tesla-"] {
        if let Some(rest) = n.strip_prefix(prefix)
            && !rest.is_empty()
        {
            return rest.to_string();
        }
    }
    n
}

/// Every normalised name cluster model `model` is known by (rule 2).
pub fn names_of(model: &str) -> Vec<String> {
    let mut names = vec![normalise(model)];
    if let Some(p) = crate::shipped().find(model).or_else(|| {
        let n = normalise(model);
        crate::shipped().gpu.iter().find(|g| g.names().any(|x| normalise(x) == n))
    }) {
        names.extend(p.names().map(normalise));
    }
    names.sort();
    names.dedup();
    names
}

/// Whether a job asking for `request` accepts GPUs of cluster model `model` (rule 3).
pub fn matches(request: &str, model: &str) -> bool {
    let r = normalise(request);
    !r.is_empty() && names_of(model).iter().any(|n| is_family_of(&r, n))
}

/// `n` is `r`, or `r` followed by `-` and more.
fn is_family_of(r: &str, n: &str) -> bool {
    n == r || n.strip_prefix(r).is_some_and(|rest| rest.starts_with('-'))
}

/// Jobs whose GPU model names match no model of the cluster, by requested name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unmatched {
    /// Jobs asking for GPUs whose names all match nothing.
    pub jobs: u64,
    /// Each unmatched requested name with the number of such jobs asking for it.
    pub by_name: BTreeMap<String, u64>,
}

impl Unmatched {
    /// A warning line, or `None` when every job found its models.
    pub fn warning(&self, total_jobs: usize, cluster: &Cluster) -> Option<String> {
        if self.jobs == 0 {
            return None;
        }
        let names: Vec<String> = self.by_name.iter().map(|(n, c)| format!("'{n}' ({c})")).collect();
        let mut have: Vec<&str> = cluster.pools.iter().filter_map(|p| p.spec.gpus.first()).map(|g| &*g.model).collect();
        have.sort_unstable();
        have.dedup();
        let have = if have.is_empty() { "none".to_string() } else { have.join(", ") };
        Some(format!(
            "{} of {total_jobs} jobs ask for GPU models no node has: {}; the cluster's models: {have}. Policies that \
             place GPUs reject them (no_matching_gpu_model)",
            self.jobs,
            names.join(", ")
        ))
    }
}

/// Rewrites each GPU job's model names to the cluster models they match (in pool
/// order, as the cluster spells them), so placement compares names exactly. A job
/// whose names match no model keeps them and is counted in the result.
pub fn map_job_models(cluster: &Cluster, jobs: &mut [Job]) -> Unmatched {
    let mut m = ModelMapper::new(cluster);
    jobs.iter_mut().for_each(|j| m.map(j));
    m.unmatched
}

/// [`map_job_models`] a job at a time (a streamed replay's).
#[derive(Clone, Debug)]
pub struct ModelMapper {
    /// The cluster's models, in pool order.
    models: Vec<String>,
    /// Requests repeat: each distinct list of names is resolved once.
    resolved: BTreeMap<Vec<String>, Vec<String>>,
    /// The jobs mapped so far whose names match nothing.
    pub unmatched: Unmatched,
}

impl ModelMapper {
    /// For `cluster`'s models.
    pub fn new(cluster: &Cluster) -> Self {
        let mut models: Vec<String> = Vec::new();
        for p in &cluster.pools {
            if let Some(g) = p.spec.gpus.first()
                && !models.contains(&g.model)
            {
                models.push(g.model.clone());
            }
        }
        ModelMapper { models, resolved: BTreeMap::new(), unmatched: Unmatched::default() }
    }

    /// Maps one job's model names.
    pub fn map(&mut self, job: &mut Job) {
        if job.gpu_models.is_empty() {
            return;
        }
        let models = &self.models;
        let to = self.resolved.entry(job.gpu_models.clone()).or_insert_with(|| {
            models.iter().filter(|m| job.gpu_models.iter().any(|r| matches(r, m))).cloned().collect()
        });
        if to.is_empty() {
            if job.task.gpus > 0 {
                self.unmatched.jobs += 1;
                for n in &job.gpu_models {
                    *self.unmatched.by_name.entry(n.clone()).or_default() += 1;
                }
            }
        } else if *to != job.gpu_models {
            job.gpu_models = to.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_case_separators_and_vendor_prefixes() {
        assert_eq!(normalise("NVIDIA A100_SXM4-80GB"), "a100-sxm4-80gb");
        assert_eq!(normalise(" Tesla V100-SXM2-16GB "), "v100-sxm2-16gb");
        assert_eq!(normalise("nvidia"), "nvidia");
    }

    #[test]
    fn family_names_match_every_member_and_nothing_else() {
        assert!(matches("a100", "A100-SXM4-80GB"));
        assert!(matches("a100", "A100-SXM4-40GB"));
        assert!(matches("A100", "NVIDIA-A100-SXM4-80GB"));
        assert!(!matches("a10", "A100-SXM4-80GB"));
        assert!(!matches("a100", "A10"));
        assert!(matches("a10", "A10"));
        assert!(!matches("", "A10"));
    }

    #[test]
    fn aliases_of_shipped_profiles_match() {
        // H100's shipped aliases include the NVML name and H100-SXM5-80GB.
        assert!(matches("NVIDIA H100 80GB HBM3", "H100"));
        assert!(matches("h100-sxm5-80gb", "H100"));
        assert!(matches("a100-80gb", "A100-SXM4-80GB"));
        assert!(!matches("a100-80gb", "A100-SXM4-40GB"));
        // openb's anonymised models have no profile: only their own names.
        assert!(matches("G2", "G2"));
        assert!(!matches("G2", "G3"));
        assert!(!matches("V100M16", "V100M32"));
    }
}
