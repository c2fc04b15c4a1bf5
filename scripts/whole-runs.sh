#!/usr/bin/env bash
# Whole `sim run` wall time and peak memory on the Parallel Workloads Archive logs in
# ../shared/traces/swf, EASY against conservative in one run: each log is replayed under
# both policies in turn, RUNS times (default 3), and the fastest time and the highest peak
# RSS of each are printed with their ratio. The two policies alternate so that a noisy
# machine slows both alike. Needs GNU time (/usr/bin/time) and the release build.
#
#   scripts/whole-runs.sh [LOG-NAME-PART...]     e.g. scripts/whole-runs.sh Curie
set -euo pipefail
cd "$(dirname "$0")/.."
dir=../shared/traces/swf
if [ ! -d "$dir" ]; then
  echo "note: $dir is absent; nothing to measure (the logs are not part of the repository)" >&2
  exit 0
fi
cargo build -q --release
runs=${RUNS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-28s %10s %10s %7s %12s %12s\n' log easy_s cons_s ratio easy_MB cons_MB
for log in "$dir"/*.swf.gz; do
  name=$(basename "$log" .swf.gz)
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qF -f - <(echo "$name"); then continue; fi
  for _ in $(seq "$runs"); do
    for p in easy conservative; do
      /usr/bin/time -f "$p %e %M" -a -o "$out/$name.times" \
        target/release/sim run --trace "$log" --policy "$p" --quiet --out "$out/run-$p" >/dev/null
    done
  done
  awk -v n="$name" '
    { if (!($1 in t) || $2 < t[$1]) t[$1] = $2; if ($3 > m[$1]) m[$1] = $3 }
    END { printf "%-28s %10.2f %10.2f %6.1fx %12.1f %12.1f\n", n, t["easy"], t["conservative"],
          t["conservative"] / t["easy"], m["easy"] / 1024, m["conservative"] / 1024 }' "$out/$name.times"
done
