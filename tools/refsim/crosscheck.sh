#!/usr/bin/env bash
# Cross-checks `sim run` against the independent reference implementation
# (tools/refsim/refsim.py) job for job: the first nine columns of jobs.csv must be equal.
#
#   tools/refsim/crosscheck.sh --quick            # the committed slices in data/ (CI)
#   tools/refsim/crosscheck.sh --full             # the whole logs in ../shared/traces (slow)
#   tools/refsim/crosscheck.sh --write-expected   # refresh data/expected/ from refsim
set -uo pipefail
cd "$(dirname "$0")/../.."

mode=${1:---quick}
sim="${CARGO_TARGET_DIR:-target}/release/sim"
[ -x "$sim" ] || cargo build --release -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# trace  spec  [flags]   (one case per line)
cases() {
  local traces=("$@")
  for t in "${traces[@]}"; do
    for spec in fcfs "fcfs[pass=per-event]" easy "easy[pass=per-event]" "easy[backfill_estimate=actual]" \
      conservative "conservative[pass=per-event]" "conservative[backfill_estimate=actual]" "conservative[replan=rebuild]"; do
      printf '%s\t%s\t\n' "$t" "$spec"
    done
    printf '%s\t%s\t--walltime-kill\n' "$t" easy
    printf '%s\t%s\t--walltime-kill\n' "$t" conservative
    # Node reservations: not on CEA-Curie's 93,312 processors (too slow for the Python
    # reference), and on whole logs only on the small machines.
    case "$mode:$t" in
      *Curie*) ;;
      --full:*SDSC*|--full:*LANL*) ;;
      *)
        printf '%s\t%s\t\n' "$t" "easy[reservation=nodes]"
        printf '%s\t%s\t\n' "$t" "conservative[reservation=nodes]" ;;
    esac
  done
}

case "$mode" in
  --quick|--write-expected) mapfile -t traces < <(ls data/*.swf.gz data/*.json) ;;
  --full) mapfile -t traces < <(ls ../shared/traces/swf/*.swf.gz ../shared/traces/batsim/*.json 2>/dev/null) ;;
  *) echo "usage: $0 [--quick|--full|--write-expected]" >&2; exit 2 ;;
esac
[ ${#traces[@]} -gt 0 ] || { echo "no traces found for $mode"; exit 0; }

if [ "$mode" = --write-expected ]; then
  rm -rf data/expected && mkdir -p data/expected
  printf 'file\ttrace\tpolicy\tflags\n' > data/expected/MANIFEST.tsv
fi

# One case: runs the reference (and, unless writing expected schedules, sim) and writes
# PASS or what went wrong to $tmp/<n>.result.
check_case() {
  local n=$1 t=$2 spec=$3 flags=$4 out="$tmp/$1"
  # shellcheck disable=SC2086
  if ! python3 tools/refsim/refsim.py "$t" --policy "$spec" $flags --out "$out.ref.csv" 2> "$out.err"; then
    echo "REFSIM FAILED: $t $spec $flags: $(tail -1 "$out.err")" > "$out.result"
    return
  fi
  if [ "$mode" = --write-expected ]; then
    echo PASS > "$out.result"
    return
  fi
  # shellcheck disable=SC2086
  if ! "$sim" run -q --trace "$t" --policy "$spec" $flags --out "$out.sim"; then
    echo "SIM FAILED: $t $spec $flags" > "$out.result"
  elif cmp -s <(cut -d, -f1-9 "$out.sim/jobs.csv") <(cut -d, -f1-9 "$out.ref.csv"); then
    echo PASS > "$out.result"
  else
    rows=$(diff <(cut -d, -f1-9 "$out.sim/jobs.csv") <(cut -d, -f1-9 "$out.ref.csv") | grep -c '^<')
    echo "DIFFERENT: $t $spec $flags: $rows rows differ" > "$out.result"
  fi
}

# The cases run CROSSCHECK_JOBS at a time (default: one per core); results are read back
# in case order, so the output does not depend on the timing.
jobs=${CROSSCHECK_JOBS:-$(nproc 2>/dev/null || echo 1)}
mapfile -t all < <(cases "${traces[@]}")
for i in "${!all[@]}"; do
  IFS=$'\t' read -r t spec flags <<< "${all[$i]}"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  check_case "$i" "$t" "$spec" "$flags" &
done
wait

same=0; diff=0
for i in "${!all[@]}"; do
  IFS=$'\t' read -r t spec flags <<< "${all[$i]}"
  r=$(cat "$tmp/$i.result" 2>/dev/null || echo "NO RESULT: $t $spec $flags")
  if [ "$r" != PASS ]; then
    echo "$r"
    diff=$((diff + 1))
  elif [ "$mode" = --write-expected ]; then
    name="$(basename "$t" | sed 's/\.swf\.gz$//; s/\.json$//')__$(echo "$spec$flags" | tr -c 'A-Za-z0-9._\n-' '_').csv.gz"
    cut -d, -f1-9 "$tmp/$i.ref.csv" | gzip -9n > "data/expected/$name"
    printf '%s\t%s\t%s\t%s\n' "$name" "$(basename "$t")" "$spec" "$flags" >> data/expected/MANIFEST.tsv
  else
    same=$((same + 1))
  fi
done

if [ "$mode" = --write-expected ]; then
  echo "wrote $(($(wc -l < data/expected/MANIFEST.tsv) - 1)) expected schedules to data/expected/"
  exit 0
fi
echo "$same passed, $diff failed"
[ "$diff" = 0 ]
