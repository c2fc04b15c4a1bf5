//! kube-scheduler's `percentageOfNodesToScore`: how many feasible nodes a scheduling cycle
//! finds before it scores, the order it scans nodes in, and an index that answers a
//! sampling placement without scanning (kubernetes v1.31 `pkg/scheduler/schedule_one.go`,
//! `numFeasibleNodesToFind`, `findNodesThatPassFilters`; the same in v1.20.5
//! `pkg/scheduler/core/generic_scheduler.go`).

use sim_core::ledger::NodeUse;

/// How many feasible nodes a placement looks for before it scores them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum NodesToScore {
    /// Every node (100 %; the FGD simulator sets this).
    #[default]
    All,
    /// Upstream's default, 0: `max(5, 50 − nodes/125)` % of the nodes.
    Adaptive,
    /// That percentage (1–99).
    Percent(u32),
}

/// Clusters below this many nodes are always searched whole, and a sample is never
/// smaller (`minFeasibleNodesToFind`).
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;

/// The adaptive percentage never goes below this (`minFeasibleNodesPercentageToFind`).
pub const MIN_FEASIBLE_NODES_PERCENTAGE: usize = 5;

impl NodesToScore {
    /// How many feasible nodes to find among `nodes` (all of them when that is `nodes`).
    pub fn to_find(self, nodes: usize) -> usize {
        let percent = match self {
            _ if nodes < MIN_FEASIBLE_NODES_TO_FIND => return nodes,
            NodesToScore::All => return nodes,
            NodesToScore::Adaptive => (50usize.saturating_sub(nodes / 125)).max(MIN_FEASIBLE_NODES_PERCENTAGE),
            NodesToScore::Percent(p) => (p as usize).min(100),
        };
        (nodes * percent / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
    }
}

/// The nodes in the order kube-scheduler's snapshot lists them (kubernetes v1.31
/// `pkg/scheduler/backend/cache/node_tree.go`, `list`; the same in v1.20.5): zones in the
/// order their first node appears, then round-robin over the zones — the first node of
/// each zone, then the second of each, … — each zone's nodes in node order. A node's zone
/// is its region and zone (`topology.kubernetes.io/region`, `…/zone` labels or its network
/// position's zone); nodes without either share one zone.
pub fn zone_interleaved(nodes: &[NodeUse]) -> Vec<u32> {
    let mut index: std::collections::BTreeMap<(String, String), usize> = Default::default();
    let mut zones: Vec<Vec<u32>> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let region = n.meta.labels.get("topology.kubernetes.io/region").cloned().unwrap_or_default();
        let zone = n.domain(i, "topology.kubernetes.io/zone").unwrap_or_default();
        let z = *index.entry((region, zone)).or_insert_with(|| {
            zones.push(Vec::new());
            zones.len() - 1
        });
        zones[z].push(i as u32);
    }
    let longest = zones.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest).flat_map(|k| zones.iter().filter_map(move |z| z.get(k).copied())).collect()
}

/// What a sampling placement found: the chosen scan position (`None`: no node fits) and
/// how many nodes it looked at.
pub(super) struct Sampled {
    pub position: Option<usize>,
    pub processed: usize,
}

/// A pod type's feasible nodes by scan position, each with its decisive score (the
/// weighted sum that alone decides between nodes, see `Placement::decisive`): a segment
/// tree of (feasible count, best score, how many have it), so that a sampling placement —
/// the first `to_find` feasible nodes from a start, the best among them, one of its ties
/// drawn — takes O(log n) instead of a scan, and a changed node O(log n) to update.
#[derive(Clone)]
pub(super) struct SampleTree {
    size: usize,
    n: usize,
    t: Vec<Agg>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Agg {
    count: u32,
    best: i64,
    ties: u32,
}

const EMPTY: Agg = Agg { count: 0, best: i64::MIN, ties: 0 };

fn join(a: Agg, b: Agg) -> Agg {
    let best = a.best.max(b.best);
    let ties = if a.best == best { a.ties } else { 0 } + if b.best == best { b.ties } else { 0 };
    Agg { count: a.count + b.count, best, ties }
}

fn leaf(key: Option<i64>) -> Agg {
    key.map_or(EMPTY, |k| Agg { count: 1, best: k, ties: 1 })
}

impl SampleTree {
    /// The tree of `keys` (by scan position; `None`: the node does not fit).
    pub fn new(keys: &[Option<i64>]) -> Self {
        let n = keys.len();
        let size = n.next_power_of_two().max(1);
        let mut t = vec![EMPTY; 2 * size];
        for (j, k) in keys.iter().enumerate() {
            t[size + j] = leaf(*k);
        }
        for v in (1..size).rev() {
            t[v] = join(t[2 * v], t[2 * v + 1]);
        }
        SampleTree { size, n, t }
    }

    /// Sets the key of scan position `pos`.
    pub fn set(&mut self, pos: usize, key: Option<i64>) {
        let mut v = self.size + pos;
        let new = leaf(key);
        if self.t[v] == new {
            return;
        }
        self.t[v] = new;
        while v > 1 {
            v /= 2;
            let j = join(self.t[2 * v], self.t[2 * v + 1]);
            if self.t[v] == j {
                // The ancestors hold what they held.
                return;
            }
            self.t[v] = j;
        }
    }

    /// The aggregate over positions `[lo, hi)`.
    fn range(&self, lo: usize, hi: usize) -> Agg {
        let (mut l, mut r) = (lo + self.size, hi + self.size);
        let mut acc = EMPTY;
        while l < r {
            if l & 1 == 1 {
                acc = join(acc, self.t[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                acc = join(acc, self.t[r]);
            }
            l /= 2;
            r /= 2;
        }
        acc
    }

    /// The position of the `k`-th feasible node (0-based) in position order.
    fn kth(&self, mut k: u32) -> usize {
        let mut v = 1;
        while v < self.size {
            if self.t[2 * v].count > k {
                v *= 2;
            } else {
                k -= self.t[2 * v].count;
                v = 2 * v + 1;
            }
        }
        v - self.size
    }

    /// The position of the `k`-th node (0-based, in position order) of `[lo, hi)` whose key
    /// is `best`, the best key there; `k` is lowered by the ties passed when there is none.
    fn kth_best(&self, v: usize, span: (usize, usize), range: (usize, usize), best: i64, k: &mut u32) -> Option<usize> {
        let ((nl, nr), (lo, hi)) = (span, range);
        if nr <= lo || hi <= nl || self.t[v].best < best {
            return None;
        }
        if lo <= nl && nr <= hi && *k >= self.t[v].ties {
            // Wholly inside the range, so nothing there is above `best`.
            *k -= self.t[v].ties;
            return None;
        }
        if v >= self.size {
            return Some(v - self.size);
        }
        let mid = (nl + nr) / 2;
        self.kth_best(2 * v, (nl, mid), range, best, k).or_else(|| self.kth_best(2 * v + 1, (mid, nr), range, best, k))
    }

    /// A sampling placement from scan position `start`: the first `to_find` feasible nodes
    /// in scan order (wrapping around), the best of them, and of its ties the one `draw`
    /// picks given how many there are (called only when some node fits).
    pub fn sample(&self, start: usize, to_find: usize, draw: impl FnOnce(usize) -> usize) -> Sampled {
        let (n, k) = (self.n, to_find as u32);
        let total = self.t[1].count;
        if total == 0 {
            return Sampled { position: None, processed: n };
        }
        let before = self.range(0, start).count;
        let after = total - before;
        // The scanned ranges (in scan order) and how many nodes they hold.
        let (ranges, processed) = if total < k {
            ([(start, n), (0, start)], n)
        } else if after >= k {
            let p = self.kth(before + k - 1);
            ([(start, p + 1), (0, 0)], p + 1 - start)
        } else {
            let p = self.kth(k - after - 1);
            ([(start, n), (0, p + 1)], n - start + p + 1)
        };
        let agg = join(self.range(ranges[0].0, ranges[0].1), self.range(ranges[1].0, ranges[1].1));
        let mut k = draw(agg.ties as usize) as u32;
        let span = (0, self.size);
        let position = ranges.iter().find_map(|&r| self.kth_best(1, span, r, agg.best, &mut k));
        Sampled { position, processed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample by brute force: scan from `start`, stop at the `to_find`-th feasible node.
    fn scanned(keys: &[Option<i64>], start: usize, to_find: usize, pick: usize) -> (Option<usize>, usize) {
        let n = keys.len();
        let mut found: Vec<(usize, i64)> = Vec::new();
        let mut processed = n;
        for j in 0..n {
            let pos = (start + j) % n;
            if let Some(k) = keys[pos] {
                found.push((pos, k));
                if found.len() == to_find {
                    processed = j + 1;
                    break;
                }
            }
        }
        let best = found.iter().map(|f| f.1).max();
        let ties: Vec<usize> = found.iter().filter(|f| Some(f.1) == best).map(|f| f.0).collect();
        (ties.get(pick % ties.len().max(1)).copied(), processed)
    }

    #[test]
    fn the_tree_answers_as_a_scan_does() {
        // Keys from a small generator: some nodes infeasible, many ties.
        let mut x: u64 = 7;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        for n in [1, 2, 5, 17, 64, 100] {
            let mut keys: Vec<Option<i64>> = (0..n).map(|_| (next() % 4 != 0).then(|| (next() % 5) as i64)).collect();
            let mut tree = SampleTree::new(&keys);
            for round in 0..200 {
                let (start, to_find, pick) = (next() % n, 1 + next() % (n + 2), next());
                let want = scanned(&keys, start, to_find, pick);
                let got = tree.sample(start, to_find, |ties| pick % ties);
                assert_eq!((got.position, got.processed), want, "n {n} round {round}");
                let pos = next() % n;
                keys[pos] = (next() % 3 != 0).then(|| (next() % 5) as i64);
                tree.set(pos, keys[pos]);
            }
        }
    }
}
