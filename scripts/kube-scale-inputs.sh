#!/usr/bin/env bash
# Writes the inputs of issue 16's Kubernetes scale check into DIR: model.toml
# (examples/models/gpu.toml with rate_per_hour = 4800) and cluster.toml (1,250 nodes ×
# 8 P40 GPUs shared by memory, two pools of 625 under two leaf switches). Used by
# scripts/kube-scale.sh and scripts/replay-scale.sh.
#
#   scripts/kube-scale-inputs.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
sed 's/^rate_per_hour = .*/rate_per_hour = 4800/' examples/models/gpu.toml > "$dir/model.toml"
{
  printf '[[switch]]\nname = "spine"\n\n'
  for s in 1 2; do printf '[[switch]]\nname = "leaf%s"\nparent = "spine"\n\n' "$s"; done
  for p in a:r1:leaf1 b:r2:leaf2; do
    IFS=: read -r name rack leaf <<< "$p"
    printf '[[pool]]\nname = "%s"\ncount = 625\ncores = 96\nmemory_mib = 1048576\nsharing = "shared"\n' "$name"
    printf 'gpus = { count = 8, model = "P40", memory_mib = 24576 }\n'
    printf 'topology = { zone = "z1", rack = "%s", switch = "%s" }\n\n' "$rack" "$leaf"
  done
} > "$dir/cluster.toml"
