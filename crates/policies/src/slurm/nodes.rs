//! Node-level resources as `select/cons_tres` tracks them (CPUs, memory, GPUs per node),
//! and where a job's tasks go.
//!
//! Placement follows cons_tres's node order: usable nodes by `Weight`, then by their
//! place in `slurm.conf` (`SchedMD/slurm`, `src/plugins/select/cons_tres/job_test.c`,
//! 24.05: nodes are evaluated in weight order and the lowest weight that satisfies the
//! job is used), each node taking as many of the job's tasks as it has room for
//! (`--distribution=block`, the default). A job whose task has more than one CPU or any
//! GPU runs one task per node (the sacct and GPU-trace readers make one task per
//! allocated node, `-N`); a job of one-CPU tasks is `-n N`, packed. `select/linear`, a
//! partition with `OverSubscribe=EXCLUSIVE` and `--exclusive` take whole nodes.

use super::conf::SlurmConf;

/// What one job asks for, per task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Tasks.
    pub tasks: u32,
    /// CPUs per task.
    pub cpus: u32,
    /// Memory per task in MiB; `None`: the whole memory of each node it uses (Slurm's
    /// default with memory as a consumable resource and no `DefMemPerCPU`/`DefMemPerNode`).
    pub mem: Option<u64>,
    /// GPUs per task.
    pub gpus: u32,
    /// At most one task per node.
    pub one_per_node: bool,
    /// Whole nodes.
    pub whole_nodes: bool,
}

impl Request {
    /// CPUs in all.
    pub fn total_cpus(&self) -> u64 {
        u64::from(self.tasks) * u64::from(self.cpus)
    }
    /// Whether any free CPU serves it (one-CPU tasks asking nothing else, packed): it fits
    /// wherever enough CPUs are free in all.
    pub fn fungible(&self) -> bool {
        self.cpus == 1 && self.mem == Some(0) && self.gpus == 0 && !self.one_per_node && !self.whole_nodes
    }
}

/// The nodes' capacities and what is free on each.
#[derive(Debug, Clone)]
pub struct Nodes {
    /// CPUs per node.
    pub cpus: Vec<u32>,
    /// Memory per node, MiB (0: not tracked).
    pub mem: Vec<u64>,
    /// GPUs per node.
    pub gpus: Vec<u32>,
    /// Free CPUs.
    pub free_cpus: Vec<u32>,
    /// Free memory.
    pub free_mem: Vec<u64>,
    /// Free GPUs, one bit per GPU index.
    pub free_gpus: Vec<u64>,
    /// Each partition's nodes in allocation order (weight, then file order).
    pub order: Vec<Vec<u32>>,
    /// Per partition, whether each node is one of its nodes.
    pub member: Vec<Vec<bool>>,
    /// Per partition, its free CPUs.
    pub part_free: Vec<u64>,
    /// One bit per node with a free CPU.
    pub has_free: Vec<u64>,
    /// Per partition, its nodes, one bit each.
    pub member_bits: Vec<Vec<u64>>,
    /// Per partition, whether its allocation order is the nodes' own (equal weights).
    pub order_is_index: Vec<bool>,
    /// Per bitmap word, the CPUs of each of its nodes where they all have as many, else 0.
    pub uniform: Vec<u32>,
    /// How many takes and gives there have been: while it stays, so do the free CPUs.
    pub changes: u64,
}

/// What a job holds on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The node.
    pub node: u32,
    /// Tasks on it.
    pub tasks: u32,
    /// CPUs.
    pub cpus: u32,
    /// Memory, MiB.
    pub mem: u64,
    /// GPU indices, one bit each.
    pub gpus: u64,
}

impl Nodes {
    /// The nodes of `conf`, all free.
    pub fn new(conf: &SlurmConf) -> Self {
        let cpus: Vec<u32> = conf.nodes.iter().map(|n| n.cpus).collect();
        let mem: Vec<u64> = conf.nodes.iter().map(|n| if conf.select.memory { n.memory_mib } else { 0 }).collect();
        let gpus: Vec<u32> = conf.nodes.iter().map(|n| n.gpus.iter().map(|g| g.1).sum::<u32>().min(64)).collect();
        let free_gpus = gpus.iter().map(|&g| all_gpus(g)).collect();
        let order: Vec<Vec<u32>> = conf
            .partitions
            .iter()
            .map(|p| {
                let mut o = p.nodes.clone();
                o.sort_by_key(|&n| (conf.nodes[n as usize].weight, n));
                o
            })
            .collect();
        let member: Vec<Vec<bool>> = conf
            .partitions
            .iter()
            .map(|p| {
                let mut m = vec![false; cpus.len()];
                p.nodes.iter().for_each(|&n| m[n as usize] = true);
                m
            })
            .collect();
        let part_free =
            conf.partitions.iter().map(|p| p.nodes.iter().map(|&n| u64::from(cpus[n as usize])).sum()).collect();
        let member_bits = member.iter().map(|m| bits_of(m.iter().copied())).collect();
        let order_is_index = order.iter().map(|o: &Vec<u32>| o.windows(2).all(|w| w[0] < w[1])).collect();
        let has_free = bits_of(cpus.iter().map(|&c| c > 0));
        let uniform = cpus.chunks(64).map(|c| if c.iter().all(|&x| x == c[0]) { c[0] } else { 0 }).collect();
        Nodes {
            uniform,
            free_cpus: cpus.clone(),
            free_mem: mem.clone(),
            free_gpus,
            cpus,
            mem,
            gpus,
            order,
            member,
            part_free,
            has_free,
            member_bits,
            order_is_index,
            changes: 0,
        }
    }

    /// The same nodes with nothing allocated.
    pub fn emptied(&self) -> Nodes {
        let free_gpus = self.gpus.iter().map(|&g| all_gpus(g)).collect();
        let part_free = self.order.iter().map(|o| o.iter().map(|&n| u64::from(self.cpus[n as usize])).sum()).collect();
        let has_free = bits_of(self.cpus.iter().map(|&c| c > 0));
        Nodes {
            free_cpus: self.cpus.clone(),
            free_mem: self.mem.clone(),
            free_gpus,
            part_free,
            has_free,
            ..self.clone()
        }
    }

    /// Makes what is free here what is free in `other` (the same nodes), reusing the
    /// buffers.
    pub fn copy_free_from(&mut self, other: &Nodes) {
        self.free_cpus.clone_from(&other.free_cpus);
        self.free_mem.clone_from(&other.free_mem);
        self.free_gpus.clone_from(&other.free_gpus);
        self.part_free.clone_from(&other.part_free);
        self.has_free.clone_from(&other.has_free);
    }

    /// The free CPUs of partition `p`'s nodes outside `blocked` (one bit per node).
    pub fn free_outside(&self, p: usize, blocked: &[u64]) -> u64 {
        let mut sum = 0;
        for (w, (&m, &f)) in self.member_bits[p].iter().zip(&self.has_free).enumerate() {
            let mut x = m & f & !blocked.get(w).copied().unwrap_or(0);
            while x != 0 {
                sum += u64::from(self.free_cpus[w * 64 + x.trailing_zeros() as usize]);
                x &= x - 1;
            }
        }
        sum
    }

    /// [`Nodes::place`] on the nodes outside `blocked` that `usable` allows.
    pub fn place_outside(
        &self,
        p: usize,
        r: &Request,
        blocked: &[u64],
        mut usable: impl FnMut(u32) -> bool,
    ) -> Option<Vec<Held>> {
        let out = |n: u32| blocked.get(n as usize / 64).is_none_or(|w| w & (1u64 << (n % 64)) == 0);
        if !self.order_is_index[p] || r.cpus == 0 {
            return self.place_in_order(p, r, |n| out(n) && usable(n));
        }
        self.place_on_free(p, r, blocked, usable)
    }

    /// [`Nodes::place_outside`] where the allocation order is the nodes' own and a task
    /// needs a CPU: only the nodes with a free CPU can take one.
    fn place_on_free(
        &self,
        p: usize,
        r: &Request,
        blocked: &[u64],
        mut usable: impl FnMut(u32) -> bool,
    ) -> Option<Vec<Held>> {
        if r.fungible() && self.part_free[p] < r.total_cpus() {
            return None;
        }
        let mut left = r.tasks;
        // Room for the nodes of a job of many tasks from the start, so that the list is
        // not copied as it grows (each node takes one task at least).
        let mut held = Vec::with_capacity((r.tasks as usize).min(64));
        for (w, (&m, &f)) in self.member_bits[p].iter().zip(&self.has_free).enumerate() {
            let mut x = m & f & !blocked.get(w).copied().unwrap_or(0);
            while x != 0 && left > 0 {
                let n = (w * 64 + x.trailing_zeros() as usize) as u32;
                x &= x - 1;
                if !usable(n) {
                    continue;
                }
                let k = self.room(n as usize, r).min(left);
                if k > 0 {
                    left -= k;
                    held.push(self.hold(n, k, r));
                }
            }
            if left == 0 {
                break;
            }
        }
        (left == 0).then_some(held)
    }

    /// Whether node `n` has nothing allocated.
    pub fn idle(&self, n: usize) -> bool {
        self.free_cpus[n] == self.cpus[n]
            && self.free_mem[n] == self.mem[n]
            && self.free_gpus[n].count_ones() == self.gpus[n]
    }

    /// How many tasks of `r` node `n` takes with what it has free.
    fn room(&self, n: usize, r: &Request) -> u32 {
        if r.whole_nodes && !self.idle(n) {
            return 0;
        }
        let mut k = self.free_cpus[n].checked_div(r.cpus).unwrap_or(u32::MAX);
        if self.mem[n] > 0 {
            k = match r.mem {
                // The whole node's memory: one task per node, and only on an untouched one.
                None => k.min(u32::from(self.free_mem[n] == self.mem[n])),
                Some(0) => k,
                Some(m) => k.min((self.free_mem[n] / m).min(u64::from(u32::MAX)) as u32),
            };
        }
        if let Some(g) = self.free_gpus[n].count_ones().checked_div(r.gpus) {
            k = k.min(g);
        }
        if r.one_per_node || (self.mem[n] > 0 && r.mem.is_none()) {
            k = k.min(1);
        }
        k
    }

    /// Where `r` goes on partition `p`'s nodes that `usable` allows, with what is free
    /// now: one entry per node used, or `None` when it does not fit.
    pub fn place(&self, p: usize, r: &Request, usable: impl FnMut(u32) -> bool) -> Option<Vec<Held>> {
        if self.order_is_index[p] && r.cpus > 0 {
            return self.place_on_free(p, r, &[], usable);
        }
        self.place_in_order(p, r, usable)
    }

    /// [`Nodes::place`] walking the partition's nodes in allocation order.
    fn place_in_order(&self, p: usize, r: &Request, mut usable: impl FnMut(u32) -> bool) -> Option<Vec<Held>> {
        if r.fungible() && self.part_free[p] < r.total_cpus() {
            return None;
        }
        let mut left = r.tasks;
        let mut out = Vec::new();
        for &n in &self.order[p] {
            if left == 0 {
                break;
            }
            if !usable(n) {
                continue;
            }
            let k = self.room(n as usize, r).min(left);
            if k == 0 {
                continue;
            }
            left -= k;
            out.push(self.hold(n, k, r));
        }
        (left == 0).then_some(out)
    }

    /// What `k` tasks of `r` hold on node `n` (the lowest free GPU indices).
    fn hold(&self, n: u32, k: u32, r: &Request) -> Held {
        let i = n as usize;
        let mut gpus = 0u64;
        let mut want = k * r.gpus;
        let mut free = self.free_gpus[i];
        while want > 0 && free != 0 {
            let bit = free & free.wrapping_neg();
            gpus |= bit;
            free &= !bit;
            want -= 1;
        }
        let whole = r.whole_nodes || (self.mem[i] > 0 && r.mem.is_none());
        Held {
            node: n,
            tasks: k,
            cpus: if r.whole_nodes { self.cpus[i] } else { k * r.cpus },
            mem: if whole { self.mem[i] } else { u64::from(k) * r.mem.unwrap_or(0).min(self.mem[i]) },
            gpus,
        }
    }

    /// Takes what `h` holds.
    pub fn take(&mut self, h: &Held) {
        self.changes += 1;
        let i = h.node as usize;
        for (p, m) in self.member.iter().enumerate() {
            if m[i] {
                self.part_free[p] -= u64::from(h.cpus);
            }
        }
        self.free_cpus[i] -= h.cpus;
        // Most holds have no memory or GPUs counted (CR_Core, CR_CPU): left untouched.
        if h.mem != 0 {
            self.free_mem[i] -= h.mem;
        }
        if h.gpus != 0 {
            self.free_gpus[i] &= !h.gpus;
        }
        if self.free_cpus[i] == 0 {
            self.has_free[i / 64] &= !(1u64 << (i % 64));
        }
    }

    /// Gives back what `h` holds.
    pub fn give(&mut self, h: &Held) {
        self.changes += 1;
        let i = h.node as usize;
        for (p, m) in self.member.iter().enumerate() {
            if m[i] {
                self.part_free[p] += u64::from(h.cpus);
            }
        }
        self.free_cpus[i] += h.cpus;
        if h.mem != 0 {
            self.free_mem[i] += h.mem;
        }
        if h.gpus != 0 {
            self.free_gpus[i] |= h.gpus;
        }
        if self.free_cpus[i] > 0 {
            self.has_free[i / 64] |= 1u64 << (i % 64);
        }
    }
}

/// Adds node `n` to the node words (word index, bits) of `words` from `from` on (one
/// job's): most jobs hold their nodes in index order, so the last word is tried first.
pub fn add_node(words: &mut Vec<(u32, u64)>, from: usize, n: u32) {
    let (w, b) = (n / 64, 1u64 << (n % 64));
    if let Some(x) = words[from..].last_mut().filter(|x| x.0 == w) {
        x.1 |= b;
    } else if let Some(x) = words[from..].iter_mut().find(|x| x.0 == w) {
        x.1 |= b;
    } else {
        words.push((w, b));
    }
}

/// One bit per item of `it` that is true.
fn bits_of(it: impl Iterator<Item = bool>) -> Vec<u64> {
    let mut v = Vec::new();
    for (i, b) in it.enumerate() {
        if i % 64 == 0 {
            v.push(0);
        }
        if b {
            v[i / 64] |= 1u64 << (i % 64);
        }
    }
    v
}

/// The bit mask of `g` GPUs (at most 64).
fn all_gpus(g: u32) -> u64 {
    if g >= 64 { u64::MAX } else { (1u64 << g) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(text: &str) -> SlurmConf {
        SlurmConf::parse(text, "t").unwrap()
    }

    #[test]
    fn packs_by_weight_then_order_and_takes_gpus_low_first() {
        let c = conf(
            "NodeName=a CPUs=4 RealMemory=4000 Weight=2\nNodeName=b CPUs=4 RealMemory=4000 Gres=gpu:2\n\
             PartitionName=p Nodes=a,b\n",
        );
        let mut n = Nodes::new(&c);
        assert_eq!(n.order[0], [1, 0]);
        let r = Request { tasks: 6, cpus: 1, mem: Some(100), gpus: 0, one_per_node: false, whole_nodes: false };
        let p = n.place(0, &r, |_| true).unwrap();
        assert_eq!(p.iter().map(|h| (h.node, h.tasks)).collect::<Vec<_>>(), [(1, 4), (0, 2)]);
        for h in &p {
            n.take(h);
        }
        assert_eq!((n.free_cpus[0], n.free_mem[0]), (2, 3800));
        let g = Request { tasks: 1, cpus: 0, mem: Some(0), gpus: 1, one_per_node: true, whole_nodes: false };
        let h = n.place(0, &g, |_| true).unwrap();
        assert_eq!((h[0].node, h[0].gpus), (1, 0b01));
        // Without memory stated and no default, a job takes a whole node's memory.
        let whole = Request { tasks: 1, cpus: 1, mem: None, gpus: 0, one_per_node: true, whole_nodes: false };
        assert!(n.place(0, &whole, |_| true).is_none());
        for h in &p {
            n.give(h);
        }
        assert!(n.idle(0) && n.idle(1));
        assert_eq!(n.place(0, &whole, |x| x == 0).unwrap()[0].mem, 4000);
    }
}
