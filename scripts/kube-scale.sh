#!/usr/bin/env bash
# Issue 16's scale check, whole `sim run` wall time and peak memory: 1,000,000 jobs (or
# JOBS) of examples/models/gpu.toml with rate_per_hour = 4800, seed 3, on 1,250 nodes × 8
# shared GPUs (two pools of 625 under two leaf switches), under `kube` (or POLICY).
# The same workload as `cargo bench -p benches --bench gpu_1m -- kube_1m`. Needs GNU time.
#
#   scripts/kube-scale.sh            RUNS=3 JOBS=300000 POLICY='kube[preemption=off]' scripts/kube-scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-1000000}
policy=${POLICY:-kube}
runs=${RUNS:-1}
cargo build -q --release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scripts/kube-scale-inputs.sh "$tmp"
target/release/sim gen --model "$tmp/model.toml" --jobs "$jobs" --seed 3 --out "$tmp/jobs.jsonl" --quiet
for _ in $(seq "$runs"); do
  /usr/bin/time -f "$policy: %e s wall, %U s user, %M KB peak" \
    target/release/sim run --trace "$tmp/jobs.jsonl" --cluster "$tmp/cluster.toml" --policy "$policy" \
    --quiet --out "$tmp/out" >/dev/null
done
python3 -c "
import json; d = json.load(open('$tmp/out/summary.json'))
print('jobs', d['jobs_total'], 'wait_mean', round(d['wait_mean'], 1), 's; gpu_allocation', round(d['gpu_allocation'], 4))"
