//! The running jobs of each node, in start order: what a node that fails, comes back or
//! is reclaimed touches, found without looking at every running job. Kept only in runs
//! whose nodes may change (controllers or node events), so that others pay nothing.

use crate::job::JobId;

/// Each node's running (not suspended) jobs as `(start sequence, job)`, in start order;
/// empty when not kept.
#[derive(Clone, Debug, Default)]
pub struct RunningOnNodes {
    lists: Option<Vec<Vec<(u64, JobId)>>>,
}

impl RunningOnNodes {
    /// An index of `nodes` nodes when `kept`, else one that keeps nothing.
    pub fn new(nodes: usize, kept: bool) -> Self {
        RunningOnNodes { lists: kept.then(|| vec![Vec::new(); nodes]) }
    }

    /// Whether it is kept (else every query answers `None`).
    pub fn kept(&self) -> bool {
        self.lists.is_some()
    }

    /// Job `j`, started as the `seq`-th start (or resumed), runs on `nodes`.
    pub fn insert(&mut self, seq: u64, j: JobId, nodes: &[u32]) {
        let Some(lists) = &mut self.lists else { return };
        for &n in nodes {
            let list = &mut lists[n as usize];
            // A new start comes last; a resumed job goes back to its place.
            match list.last() {
                Some(&last) if last > (seq, j) => {
                    let at = list.partition_point(|&e| e < (seq, j));
                    list.insert(at, (seq, j));
                }
                _ => list.push((seq, j)),
            }
        }
    }

    /// Job `j`, the `seq`-th start, no longer runs on `nodes`.
    pub fn remove(&mut self, seq: u64, j: JobId, nodes: &[u32]) {
        let Some(lists) = &mut self.lists else { return };
        for &n in nodes {
            let list = &mut lists[n as usize];
            if let Ok(at) = list.binary_search(&(seq, j)) {
                list.remove(at);
            }
        }
    }

    /// The jobs running on `node`, in start order; `None` when not kept.
    pub fn on(&self, node: u32) -> Option<impl Iterator<Item = JobId> + '_> {
        let list = self.lists.as_ref()?.get(node as usize)?;
        Some(list.iter().map(|&(_, j)| j))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_start_order_through_suspension() {
        let mut ix = RunningOnNodes::new(3, true);
        ix.insert(0, JobId(7), &[0, 1]);
        ix.insert(1, JobId(3), &[1]);
        ix.insert(2, JobId(5), &[1, 2]);
        ix.remove(0, JobId(7), &[0, 1]);
        ix.insert(0, JobId(7), &[0, 1]);
        let on = |ix: &RunningOnNodes, n| ix.on(n).expect("kept").collect::<Vec<_>>();
        assert_eq!(on(&ix, 1), vec![JobId(7), JobId(3), JobId(5)]);
        ix.remove(1, JobId(3), &[1]);
        assert_eq!(on(&ix, 1), vec![JobId(7), JobId(5)]);
        assert_eq!(on(&ix, 2), vec![JobId(5)]);
        assert!(RunningOnNodes::new(3, false).on(1).is_none());
    }
}
