#!/usr/bin/env bash
# Instruction-count regression gate: runs the gungraun (callgrind) benches
# `cargo bench -p benches --bench instructions --profile release` and compares each
# scenario's instruction count (Ir) with the committed baseline,
# benches/instructions.baseline.tsv.
#
#   scripts/bench-gate.sh            # fail (exit 1) when a scenario grows by more than 5 %
#   scripts/bench-gate.sh --update   # rewrite the baseline (an intended slowdown, a new
#                                    # scenario, a new toolchain): commit the file
#
# Counts repeat within about 0.1 % for a given binary, but depend on the compiler version
# and the release profile's flags: the baseline records the rustc it was taken with, and the
# gate says so when today's differs (it still compares). Environment:
#   BENCH_GATE_LIMIT_PCT   allowed growth in percent (default 5)
#   SCHEDLAB_GUNGRAUN_ROOT where gungraun-runner is installed (default
#                          ~/.cache/schedlab-gungraun; outside the clone, so it survives it)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNNER_VERSION=0.20.0
BASELINE=benches/instructions.baseline.tsv
LIMIT_PCT=${BENCH_GATE_LIMIT_PCT:-5}

mode=check
case "${1:-}" in
  "") ;;
  --update) mode=update ;;
  --install-only) mode=install ;;
  -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--update|--install-only]" >&2; exit 2 ;;
esac

for tool in valgrind python3 cargo; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench-gate: $tool is needed and was not found" >&2; exit 2; }
done

secs() { date +%s; }
t0=$(secs)

# gungraun-runner at exactly the version of the `gungraun` library (a mismatch is an error).
root=${SCHEDLAB_GUNGRAUN_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab-gungraun}
export PATH="$root/bin:$PATH"
if [ "$("$root/bin/gungraun-runner" --version 2>/dev/null)" != "gungraun-runner $RUNNER_VERSION" ]; then
  echo "== installing gungraun-runner $RUNNER_VERSION into $root (a few minutes, once)"
  cargo install --debug --locked --quiet gungraun-runner --version "$RUNNER_VERSION" --root "$root"
fi
t1=$(secs)
[ "$mode" = install ] && exit 0

# The release profile, not the bench one: CI has just built the workspace in release (the
# refsim cross-check), and a bench-profile build (full debuginfo) would redo it all (8 min
# cold here instead of 2). The counts are those of the code `sim` ships.
bench=(cargo bench -p benches --bench instructions --profile release --quiet)
echo "== building the instruction benches (release profile)"
"${bench[@]}" --no-run
t2=$(secs)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== running them under callgrind"
# JSON lines (one per benchmark) on stdout; gungraun's own report goes to stderr.
"${bench[@]}" -- --output-format=json > "$tmp/summary.jsonl"
t3=$(secs)

rustc_now=$(rustc --version)
valgrind_now=$(valgrind --version)
status=0
python3 - "$mode" "$BASELINE" "$tmp/summary.jsonl" "$LIMIT_PCT" "$rustc_now" "$valgrind_now" <<'EOF' || status=$?
import json, sys

mode, baseline_path, summary_path, limit, rustc_now, valgrind_now = sys.argv[1:]
limit = float(limit)

# Current counts, in run order: scenario = benchmark function / bench id.
now = {}
with open(summary_path) as f:
    for line in f:
        line = line.strip()
        if not line.startswith("{"):
            continue
        b = json.loads(line)
        ir = None
        for p in b.get("profiles", []):
            if str(p.get("tool", "")).lower() == "callgrind":
                ir = p["data"]["total"]["metrics"]["Ir"]["values"]["new"]
        if ir is None:
            sys.exit(f"bench-gate: no callgrind Ir for {b.get('module_path')} {b.get('id')}")
        now[f"{b['function_name']}/{b['id']}"] = int(ir)
if not now:
    sys.exit("bench-gate: the benches printed no results")

if mode == "update":
    with open(baseline_path, "w") as f:
        f.write(
            "# Instruction counts (callgrind Ir) of\n"
            "# `cargo bench -p benches --bench instructions --profile release`.\n"
            f"# CI (scripts/bench-gate.sh) fails when a scenario grows by more than {limit:g} %.\n"
            "# Written by `scripts/bench-gate.sh --update`; refresh it the same way after an\n"
            "# intended slowdown, a new scenario or a new toolchain, and commit it.\n"
            f"# rustc: {rustc_now}\n"
            f"# valgrind: {valgrind_now}\n"
            "scenario\tinstructions\n"
        )
        for k, v in now.items():
            f.write(f"{k}\t{v}\n")
    print(f"bench-gate: wrote {len(now)} scenarios to {baseline_path}")
    for k, v in now.items():
        print(f"  {k:<32} {v:>14,}")
    sys.exit(0)

base, meta = {}, {}
try:
    with open(baseline_path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                key, _, val = line[1:].strip().partition(":")
                meta[key.strip()] = val.strip()
            elif line and not line.startswith("scenario\t"):
                k, v = line.split("\t")[:2]
                base[k] = int(v)
except FileNotFoundError:
    sys.exit(f"bench-gate: no baseline {baseline_path}; write one with scripts/bench-gate.sh --update")

if meta.get("rustc") and meta["rustc"] != rustc_now:
    print(f"bench-gate: NOTE the baseline was taken with {meta['rustc']}, this is {rustc_now}:")
    print("  counts move with the compiler; if only that changed, refresh: scripts/bench-gate.sh --update")
if meta.get("valgrind") and meta["valgrind"] != valgrind_now:
    print(f"bench-gate: NOTE the baseline was taken with {meta['valgrind']}, this is {valgrind_now}")

failed, faster, missing = [], [], []
print(f"{'scenario':<32} {'baseline':>14} {'now':>14} {'change':>9}")
for k in list(base) + [k for k in now if k not in base]:
    b, n = base.get(k), now.get(k)
    if n is None:
        missing.append(k)
        print(f"{k:<32} {b:>14,} {'(not run)':>14}")
        continue
    if b is None:
        print(f"{k:<32} {'(none)':>14} {n:>14,}   new: add it with --update")
        continue
    pct = (n - b) / b * 100.0
    mark = ""
    if pct > limit:
        failed.append((k, b, n, pct))
        mark = f"  REGRESSION (> +{limit:g} %)"
    elif pct < -limit:
        faster.append(k)
        mark = "  faster"
    print(f"{k:<32} {b:>14,} {n:>14,} {pct:>+8.2f}%{mark}")

if faster:
    print(f"bench-gate: {len(faster)} scenario(s) got more than {limit:g} % cheaper; refresh the baseline")
    print("  (scripts/bench-gate.sh --update) so that the gate keeps its margin.")
if missing:
    print(f"bench-gate: FAILED: in the baseline but not run: {', '.join(missing)}")
    print("  (renamed or removed? refresh with scripts/bench-gate.sh --update)")
if failed:
    print(f"bench-gate: FAILED: instruction counts grew by more than {limit:g} %:")
    for k, b, n, pct in failed:
        print(f"  {k}: {b:,} -> {n:,} ({pct:+.2f} %)")
    print("  If the slowdown is intended, refresh the baseline: scripts/bench-gate.sh --update")
if failed or missing:
    sys.exit(1)
print(f"bench-gate: ok, no scenario grew by more than {limit:g} %")
EOF
echo "bench-gate: install $((t1 - t0)) s, build $((t2 - t1)) s, run $((t3 - t2)) s"
exit "$status"
