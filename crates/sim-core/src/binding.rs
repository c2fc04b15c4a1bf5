//! [`Binding`]: where a job's tasks run, one [`TaskBinding`] per task, kept as runs.
//!
//! An SWF log's job asks for processors (`-n N`): thousands of one-CPU tasks, packed a
//! node's worth at a time. Kept as runs of consecutive tasks on the same node, a binding
//! costs what its nodes do, not what its tasks do, wherever the engine takes, holds and
//! gives back its resources (the CEA-Curie log binds 218 million tasks on 5,544 nodes).

use crate::ledger::TaskBinding;

/// Where a job's tasks run, in task order: one [`TaskBinding`] per task, as runs of
/// consecutive tasks without GPUs on the same node (each task with GPUs a run of its own,
/// as the ledger takes those one at a time).
///
/// ```
/// use sim_core::{Binding, NodeId, TaskBinding};
/// let on = |n: u32, gpus: Vec<u8>| TaskBinding { node: NodeId(n), gpus };
/// let b: Binding = vec![on(0, vec![]), on(0, vec![]), on(1, vec![]), on(1, vec![0]), on(1, vec![0])].into();
/// assert_eq!(b.len(), 5);
/// assert_eq!(b.runs().map(|(t, n)| (t.node.0, n)).collect::<Vec<_>>(), [(0, 2), (1, 1), (1, 1), (1, 1)]);
/// assert_eq!(b.iter().filter(|t| t.node == NodeId(1)).count(), 3);
/// assert_eq!(b.nodes(), [0, 1]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Binding {
    runs: Vec<(TaskBinding, u32)>,
    tasks: usize,
}

impl Binding {
    /// No task.
    pub const fn new() -> Binding {
        Binding { runs: Vec::new(), tasks: 0 }
    }

    /// An empty binding with room for `runs` runs (a job's nodes, where its tasks have no
    /// GPUs), so that a binding built node by node is not copied as it grows.
    pub fn with_capacity(runs: usize) -> Binding {
        Binding { runs: Vec::with_capacity(runs), tasks: 0 }
    }

    /// `n` tasks bound as `b` (without GPUs: one run; with GPUs, each its own).
    pub fn repeat(b: TaskBinding, n: u32) -> Binding {
        let mut out = Binding::new();
        out.push_run(b, n);
        out
    }

    /// How many tasks.
    pub fn len(&self) -> usize {
        self.tasks
    }

    /// Whether it binds no task.
    pub fn is_empty(&self) -> bool {
        self.tasks == 0
    }

    /// One more task, bound as `b`.
    pub fn push(&mut self, b: TaskBinding) {
        self.push_run(b, 1);
    }

    /// `n` more tasks, each bound as `b`.
    pub fn push_run(&mut self, b: TaskBinding, n: u32) {
        if n == 0 {
            return;
        }
        self.tasks += n as usize;
        if !b.gpus.is_empty() {
            self.runs.extend(std::iter::repeat_n((b, 1), n as usize));
            return;
        }
        match self.runs.last_mut() {
            Some((last, m)) if last.node == b.node && last.gpus.is_empty() => *m += n,
            _ => self.runs.push((b, n)),
        }
    }

    /// Appends the tasks of `other`, after these.
    pub fn append(&mut self, other: Binding) {
        if self.is_empty() {
            *self = other;
            return;
        }
        for (b, n) in other.runs {
            self.push_run(b, n);
        }
    }

    /// Each run: (how its tasks are bound, how many), in task order.
    pub fn runs(&self) -> impl ExactSizeIterator<Item = (&TaskBinding, u32)> + '_ {
        self.runs.iter().map(|(b, n)| (b, *n))
    }

    /// Each task's binding, in task order.
    pub fn iter(&self) -> Tasks<'_> {
        Tasks { runs: self.runs.iter(), run: None }
    }

    /// The nodes it runs on, in order, once each.
    pub fn nodes(&self) -> Vec<u32> {
        let mut v: Vec<u32> = Vec::with_capacity(self.runs.len());
        for (b, _) in &self.runs {
            if v.last() != Some(&b.node.0) {
                v.push(b.node.0);
            }
        }
        if !v.is_sorted_by(|a, b| a < b) {
            v.sort_unstable();
            v.dedup();
        }
        v
    }

    /// Whether a task runs on `node`.
    pub fn runs_on(&self, node: crate::cluster::NodeId) -> bool {
        self.runs.iter().any(|(b, _)| b.node == node)
    }

    /// How many tasks run on `node`.
    pub fn tasks_on(&self, node: crate::cluster::NodeId) -> usize {
        self.runs.iter().filter(|(b, _)| b.node == node).map(|&(_, n)| n as usize).sum()
    }
}

impl From<Vec<TaskBinding>> for Binding {
    fn from(v: Vec<TaskBinding>) -> Binding {
        v.into_iter().collect()
    }
}

impl FromIterator<TaskBinding> for Binding {
    fn from_iter<I: IntoIterator<Item = TaskBinding>>(it: I) -> Binding {
        let mut out = Binding::new();
        out.extend(it);
        out
    }
}

impl Extend<TaskBinding> for Binding {
    fn extend<I: IntoIterator<Item = TaskBinding>>(&mut self, it: I) {
        it.into_iter().for_each(|b| self.push(b));
    }
}

/// A [`Binding`]'s tasks, one at a time ([`Binding::iter`]).
#[derive(Clone, Debug)]
pub struct Tasks<'a> {
    runs: std::slice::Iter<'a, (TaskBinding, u32)>,
    /// The run being read and how many of its tasks are left.
    run: Option<(&'a TaskBinding, u32)>,
}

impl<'a> Iterator for Tasks<'a> {
    type Item = &'a TaskBinding;

    fn next(&mut self) -> Option<&'a TaskBinding> {
        loop {
            if let Some((b, n)) = self.run.as_mut()
                && *n > 0
            {
                *n -= 1;
                return Some(b);
            }
            let (b, n) = self.runs.next()?;
            self.run = Some((b, *n));
        }
    }
}

impl<'a> IntoIterator for &'a Binding {
    type Item = &'a TaskBinding;
    type IntoIter = Tasks<'a>;

    fn into_iter(self) -> Tasks<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::NodeId;

    fn on(n: u32, gpus: &[u8]) -> TaskBinding {
        TaskBinding { node: NodeId(n), gpus: gpus.to_vec() }
    }

    #[test]
    fn runs_join_gpuless_tasks_on_one_node_only() {
        let tasks = vec![on(2, &[]), on(2, &[]), on(0, &[]), on(2, &[]), on(2, &[1]), on(2, &[1]), on(2, &[])];
        let b: Binding = tasks.clone().into();
        assert_eq!(b.len(), 7);
        let runs: Vec<(u32, usize, u32)> = b.runs().map(|(t, n)| (t.node.0, t.gpus.len(), n)).collect();
        assert_eq!(runs, [(2, 0, 2), (0, 0, 1), (2, 0, 1), (2, 1, 1), (2, 1, 1), (2, 0, 1)]);
        assert_eq!(b.iter().cloned().collect::<Vec<_>>(), tasks);
        assert_eq!(b.nodes(), [0, 2]);
        assert_eq!(b.tasks_on(NodeId(2)), 6);
        assert!(!b.runs_on(NodeId(1)));
    }

    #[test]
    fn append_keeps_task_order() {
        let mut b = Binding::repeat(on(1, &[]), 3);
        b.append(Binding::repeat(on(1, &[]), 2));
        b.append(Binding::repeat(on(3, &[0]), 2));
        assert_eq!(b.len(), 7);
        assert_eq!(
            b.runs().map(|(t, n)| (t.node.0, t.gpus.len(), n)).collect::<Vec<_>>(),
            [(1, 0, 5), (3, 1, 1), (3, 1, 1)]
        );
        assert_eq!(b.iter().take(6).filter(|t| !t.gpus.is_empty()).count(), 1);
        assert_eq!(b.tasks_on(NodeId(3)), 2);
        assert!(Binding::repeat(on(0, &[]), 0).is_empty());
    }
}
