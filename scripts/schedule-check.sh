#!/usr/bin/env bash
# Checks that no schedule changed: replays the scenarios of
# benches/examples/schedule_hashes.rs (SWF slices under the processor policies, node
# failures, the openb slice under kube variants with and without GPU memory, the shipped
# examples, the synthetic gang workload at 1k/10k/100k jobs) and compares each
# schedule's SHA-256 with benches/schedules.baseline.tsv. About 2 min on 2 cores after the
# release build. `--update` rewrites the baseline (only for an intended change of results).
set -euo pipefail
cd "$(dirname "$0")/.."
now=$(mktemp)
trap 'rm -f "$now"' EXIT
cargo run -q --release -p benches --example schedule_hashes > "$now"
if [ "${1:-}" = "--update" ]; then
  cp "$now" benches/schedules.baseline.tsv
  echo "baseline updated: $(wc -l < "$now") schedules"
  exit 0
fi
if diff -u benches/schedules.baseline.tsv "$now"; then
  echo "all $(wc -l < "$now") schedules identical to the baseline"
else
  echo "schedules changed against benches/schedules.baseline.tsv (see the diff above)" >&2
  exit 1
fi
