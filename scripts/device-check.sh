#!/usr/bin/env bash
# Device check of `sim calibrate` on a machine with an NVIDIA GPU, made for a freshly lent
# machine that has no network and may have no Rust toolchain. One command:
#
#   scripts/device-check.sh                 # sim from target/release/sim, writes ./device-out
#   OUT=/abs/dir SIM=/path/to/sim DURATION=30 scripts/device-check.sh
#   scripts/device-check.sh --self-test     # the same steps on recorded NVML answers and a
#                                           # stand-in nvidia-smi: no GPU, no network
#
# The sim binary: $SIM, default target/release/sim, carried along from a machine that built
# it. Without it, and only when cargo exists and every dependency is already on this
# machine, it is built with `cargo build --release --offline --locked --bin sim`; otherwise
# the script says "build elsewhere and carry the binary" and exits 2. It never goes online.
#
# Steps, each command, its exit status and its output in $OUT/device-check.log:
#   1. probe:    sim calibrate probe --out $OUT/probe.toml
#   2. workload: a CUDA program (nvcc), else a PyTorch loop (torch with CUDA), else an idle
#                `sleep`; the real ones hold $WORKLOAD_MIB (2048) MiB and step their duty
#                cycle through 0, 25, 50, 75 and 100 % for $DURATION (30) s. WORKLOAD (a
#                command line) and WORKLOAD_MIB replace it. It runs under `timeout`.
#   3. sample:   sim calibrate sample --interval-ms 1000 --out $OUT/sample-job.toml -- WORKLOAD
#                in its own process group, all of which is stopped at the end, while
#                `nvidia-smi --query-gpu=… --format=csv -lms 1000 -f $OUT/nvidia-smi.csv`
#                logs the same seconds (stopped with SIGINT, also by the exit trap).
#   4. import:   sim calibrate import $OUT/nvidia-smi.csv --out $OUT/import.toml
#                --job-out $OUT/import-job.toml
#   5. checks:   the probe's GPU count is nvidia-smi -L's; every model's idle power is below
#                its power limit; the workload's sampled peak memory is at least what it
#                allocates; the memory source the sample used is named.
# Readings are 1 s apart: NVML's utilization covers the last 1/6 to 1 s and power is a 1 s
# average on recent boards (instantaneous on GA100), so faster samples would pair
# utilization and power of different periods.
#
# $OUT receives at most 8 files (the log, probe.toml, sample-job.toml, import.toml,
# import-job.toml, nvidia-smi.csv, nvidia-smi-q.txt); the workload's sources and binaries go
# to a temporary folder. Exit status: 0 every step and check passed; 1 a step or a check
# failed (the log says which); 2 no sim binary; 3 no NVIDIA driver (GPU steps skipped).
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd -P)"
abspath() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }

if [ "${1:-}" = "--self-test" ]; then
  # Recorded NVML answers and a stand-in nvidia-smi (crates/hw-calibrate/tests/fixtures).
  export SCHEDLAB_RECORDED_NVML="$ROOT/crates/hw-calibrate/tests/fixtures/device-check-nvml.toml"
  NVIDIA_SMI="${NVIDIA_SMI:-$ROOT/crates/hw-calibrate/tests/fixtures/fake-nvidia-smi}"
  DURATION="${DURATION:-3}"
  WORKLOAD="${WORKLOAD:-sleep $DURATION}"
  SELF_TEST=1
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/device-check.sh [--self-test]   (settings through OUT, SIM, DURATION, WORKLOAD, WORKLOAD_MIB, NVIDIA_SMI)" >&2
  exit 2
else
  SELF_TEST=0
fi

# Absolute paths, before anything changes folder.
OUT="$(abspath "${OUT:-device-out}")"
SIM="$(abspath "${SIM:-$ROOT/target/release/sim}")"
DURATION="${DURATION:-30}"
WORKLOAD_MIB="${WORKLOAD_MIB:-2048}"
NVIDIA_SMI="${NVIDIA_SMI:-$(command -v nvidia-smi || true)}"
[ -n "$NVIDIA_SMI" ] && NVIDIA_SMI="$(abspath "$NVIDIA_SMI")"
CARGO="${CARGO:-cargo}"
case "$DURATION" in '' | *[!0-9]*) echo "DURATION=$DURATION: expected whole seconds" >&2; exit 2 ;; esac

mkdir -p "$OUT" || exit 2
LOG="$OUT/device-check.log"
: >"$LOG"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/device-check.XXXXXX")"
SMI_PID=
SAMPLE_PGID=

stop_group() { # stops a process group: SIGTERM, then SIGKILL after 5 s
  local pgid="$1"
  [ -n "$pgid" ] || return 0
  kill -TERM -- "-$pgid" 2>/dev/null || return 0
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 -- "-$pgid" 2>/dev/null || return 0
    sleep 0.5
  done
  kill -KILL -- "-$pgid" 2>/dev/null || true
}
stop_smi() { # nvidia-smi -f finishes its file on SIGINT
  [ -n "$SMI_PID" ] || return 0
  kill -INT "$SMI_PID" 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 "$SMI_PID" 2>/dev/null || break
    sleep 0.5
  done
  kill -TERM "$SMI_PID" 2>/dev/null || true
  wait "$SMI_PID" 2>/dev/null || true
  SMI_PID=
}
cleanup() {
  stop_smi
  stop_group "$SAMPLE_PGID"
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" | tee -a "$LOG"; }
FAILED=()
# step NAME CMD...: runs CMD with its output in the log, records its exit status.
step() {
  local name="$1"
  shift
  { printf '+'; printf ' %q' "$@"; printf '\n'; } | tee -a "$LOG"
  "$@" >>"$LOG" 2>&1
  local rc=$?
  log "status $name: $rc"
  return "$rc"
}
check() { # check NAME OK(0|1) DETAIL
  if [ "$2" = 0 ]; then log "check $1: ok ($3)"; else log "check $1: FAILED ($3)"; FAILED+=("$1"); fi
}

log "== device check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname 2>/dev/null || echo unknown)"
log "out: $OUT; sim: $SIM; duration: $DURATION s; nvidia-smi: ${NVIDIA_SMI:-none}"
[ "$SELF_TEST" = 1 ] && log "self-test: recorded NVML answers $SCHEDLAB_RECORDED_NVML, nvidia-smi stand-in $NVIDIA_SMI"

log "== sim binary"
if [ ! -x "$SIM" ]; then
  if command -v "$CARGO" >/dev/null 2>&1 && (cd "$ROOT" && "$CARGO" metadata --offline --locked --format-version 1 >/dev/null 2>&1); then
    step build bash -c "cd \"\$1\" && \"\$2\" build --release --offline --locked --bin sim" _ "$ROOT" "$CARGO" \
      && SIM="$ROOT/target/release/sim"
  fi
  if [ ! -x "$SIM" ]; then
    log "no sim binary at $SIM, and it cannot be built here offline (no cargo, or its dependencies are not on this machine): build elsewhere and carry the binary (cargo build --release --locked --bin sim, then SIM=/path/to/sim)"
    exit 2
  fi
fi
log "using $SIM"

log "== machine"
if [ -n "$NVIDIA_SMI" ] && [ -x "$NVIDIA_SMI" ]; then
  step nvidia-smi-L "$NVIDIA_SMI" -L
  "$NVIDIA_SMI" -q >"$OUT/nvidia-smi-q.txt" 2>&1
  log "status nvidia-smi-q: $? (in nvidia-smi-q.txt)"
else
  NVIDIA_SMI=
  log "no nvidia-smi: no CSV log, no import, no GPU count check"
fi

log "== 1. probe"
step probe "$SIM" calibrate probe --out "$OUT/probe.toml"
PROBE_RC=$?
if [ "$PROBE_RC" = 2 ] && grep -q "no NVIDIA driver" "$LOG"; then
  log "no NVIDIA driver on this machine (NVML cannot be loaded): the GPU steps are skipped"
  exit 3
fi
[ "$PROBE_RC" = 0 ] || FAILED+=(probe)

log "== 2. workload"
KIND=given
if [ -n "${WORKLOAD:-}" ]; then
  read -r -a CMD <<<"$WORKLOAD"
elif command -v nvcc >/dev/null 2>&1; then
  cat >"$TMP/burn.cu" <<'CU'
// A small GPU load: holds MIB MiB (argv[2]) and runs FMA kernels with a duty cycle
// stepping through 0, 25, 50, 75 and 100 % (of each 100 ms) over argv[1] seconds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <cuda_runtime.h>

__global__ void fma_loop(float *x, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i];
  for (int k = 0; k < iters; ++k) a = a * 1.0001f + 0.9999f;
  x[i] = a;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 30.0;
  size_t hold_bytes = (size_t)(argc > 2 ? atol(argv[2]) : 2048) << 20;
  const int n = 1 << 24;
  float *x = nullptr;
  void *hold = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&hold, hold_bytes) != cudaSuccess) {
    fprintf(stderr, "burn: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(x, 0, n * sizeof(float));
  cudaMemset(hold, 1, hold_bytes);
  const double duty[] = {0.0, 0.25, 0.5, 0.75, 1.0};
  using clk = std::chrono::steady_clock;
  auto since = [](clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); };
  auto start = clk::now();
  while (since(start) < seconds) {
    int phase = (int)(since(start) / (seconds / 5));
    double busy = duty[phase > 4 ? 4 : phase] * 0.1;
    auto t0 = clk::now();
    while (since(t0) < busy) {
      fma_loop<<<(n + 255) / 256, 256>>>(x, n, 256);
      cudaDeviceSynchronize();
    }
    double rest = 0.1 - since(t0);
    if (rest > 0) std::this_thread::sleep_for(std::chrono::duration<double>(rest));
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "burn: %s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("burn: done\n");
  return 0;
}
CU
  if step nvcc nvcc -O2 -o "$TMP/burn" "$TMP/burn.cu"; then
    KIND=cuda
    CMD=("$TMP/burn" "$DURATION" "$WORKLOAD_MIB")
  fi
fi
if [ -z "${CMD+x}" ] && command -v python3 >/dev/null 2>&1 \
  && python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  cat >"$TMP/burn.py" <<'PY'
# A small GPU load: holds MIB MiB (argv[2]) and runs FP16 matmuls with a duty cycle
# stepping through 0, 25, 50, 75 and 100 % (of each 100 ms) over argv[1] seconds.
import sys
import time

import torch

secs = float(sys.argv[1])
dev = torch.device("cuda")
hold = torch.ones(int(sys.argv[2]) << 20, dtype=torch.uint8, device=dev)
a = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
b = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
duty = [0.0, 0.25, 0.5, 0.75, 1.0]
start = time.time()
while time.time() - start < secs:
    busy = duty[min(int((time.time() - start) / (secs / 5)), 4)] * 0.1
    t0 = time.time()
    while time.time() - t0 < busy:
        c = a @ b
        torch.cuda.synchronize()
    rest = 0.1 - (time.time() - t0)
    if rest > 0:
        time.sleep(rest)
print("burn: done")
PY
  KIND=torch
  CMD=(python3 "$TMP/burn.py" "$DURATION" "$WORKLOAD_MIB")
fi
if [ -z "${CMD+x}" ]; then
  KIND=idle
  CMD=(sleep "$DURATION")
  log "no nvcc and no torch with CUDA: the workload is 'sleep $DURATION' (the GPU stays idle)"
fi
LIMIT=$((DURATION + 60))
log "workload ($KIND, at most $LIMIT s): ${CMD[*]}"

log "== 3. sample"
if [ -n "$NVIDIA_SMI" ]; then
  QUERY=timestamp,name,index,uuid,memory.total,memory.used,utilization.gpu,utilization.memory,power.draw,power.limit,clocks.sm,clocks.max.sm
  { printf '+'; printf ' %q' "$NVIDIA_SMI" --query-gpu="$QUERY" --format=csv -lms 1000 -f "$OUT/nvidia-smi.csv"; printf ' &\n'; } | tee -a "$LOG"
  "$NVIDIA_SMI" --query-gpu="$QUERY" --format=csv -lms 1000 -f "$OUT/nvidia-smi.csv" >>"$LOG" 2>&1 &
  SMI_PID=$!
  sleep 2
fi
SAMPLE=("$SIM" calibrate sample --interval-ms 1000 --out "$OUT/sample-job.toml" -- timeout -k 10 "$LIMIT" "${CMD[@]}")
{ printf '+ setsid'; printf ' %q' "${SAMPLE[@]}"; printf '\n'; } | tee -a "$LOG"
setsid "${SAMPLE[@]}" >>"$LOG" 2>&1 &
SAMPLE_PID=$!
SAMPLE_PGID=$SAMPLE_PID
# The sample's own limit: the workload's and a margin for sim (a timer in its own group).
setsid bash -c 'sleep "$1"; kill -TERM -- "-$2"' _ $((LIMIT + 30)) "$SAMPLE_PGID" >/dev/null 2>&1 &
WATCHDOG=$!
wait "$SAMPLE_PID"
SAMPLE_RC=$?
kill -- "-$WATCHDOG" 2>/dev/null
wait "$WATCHDOG" 2>/dev/null
log "status sample: $SAMPLE_RC"
stop_group "$SAMPLE_PGID"
SAMPLE_PGID=
[ "$SAMPLE_RC" = 0 ] || FAILED+=(sample)
if [ -n "$SMI_PID" ]; then
  sleep 2
  stop_smi
  log "status nvidia-smi-log: $(grep -c , "$OUT/nvidia-smi.csv" 2>/dev/null || echo 0) lines in nvidia-smi.csv"
fi

log "== 4. import"
if [ -n "$NVIDIA_SMI" ]; then
  step import "$SIM" calibrate import "$OUT/nvidia-smi.csv" --out "$OUT/import.toml" --job-out "$OUT/import-job.toml" \
    || FAILED+=(import)
else
  log "status import: skipped (no nvidia-smi)"
fi

log "== 5. checks"
value() { # value FILE KEY: the first `KEY = number` of FILE
  awk -v k="$2" '$1 == k && $2 == "=" { print $3; exit }' "$1" 2>/dev/null
}
if [ -f "$OUT/probe.toml" ]; then
  devices=$(grep -c '^\[\[gpu\.devices\]\]' "$OUT/probe.toml")
  if [ -n "$NVIDIA_SMI" ]; then
    listed=$("$NVIDIA_SMI" -L 2>/dev/null | grep -c '^GPU ')
    [ "$devices" = "$listed" ]
    check gpu-count $? "probe read $devices GPU(s), nvidia-smi -L lists $listed"
  else
    log "check gpu-count: skipped (no nvidia-smi; the probe read $devices GPU(s))"
  fi
  # Per [[gpu]] entry: idle_power_w < power_limit_w.
  idle_check=$(awk '
    function flush() { if (model != "") { if (idle == "" || limit == "") printf "%s: idle %s W, limit %s W (not both known); ", model, idle == "" ? "?" : idle, limit == "" ? "?" : limit; else if (idle + 0 < limit + 0) printf "%s: idle %s W < limit %s W; ", model, idle, limit; else { printf "%s: idle %s W >= limit %s W; ", model, idle, limit; bad = 1 } } model = ""; idle = ""; limit = "" }
    /^\[\[gpu\]\]/ { flush(); ingpu = 1; next }
    /^\[/ { ingpu = 0; next }
    ingpu && /^model = / { model = substr($0, 9) }
    ingpu && $1 == "idle_power_w" { idle = $3 }
    ingpu && $1 == "power_limit_w" { limit = $3 }
    END { flush(); exit bad }' "$OUT/probe.toml")
  check idle-below-limit $? "$idle_check"
else
  check probe-profile 1 "no probe.toml"
fi
if [ -f "$OUT/sample-job.toml" ]; then
  peak=$(value "$OUT/sample-job.toml" peak_memory_mib)
  # The source of the peak: `peak_memory_mib = "..."` in the profile's [sources] table.
  source=$(awk '/^\[sources\]$/ { s = 1; next } /^\[/ { s = 0 }
    s && $1 == "peak_memory_mib" && $2 == "=" { sub(/^[^=]*= */, ""); print substr($0, 2, length($0) - 2); exit }' \
    "$OUT/sample-job.toml")
  if [ "$KIND" = idle ]; then
    log "check workload-peak: skipped (idle workload; sampled peak ${peak:-?} MiB)"
  else
    [ "${peak:-0}" -ge "$WORKLOAD_MIB" ]
    check workload-peak $? "sampled peak ${peak:-?} MiB, the workload allocates $WORKLOAD_MIB MiB"
  fi
  [ -n "$source" ]
  check memory-source $? "${source:-none named}"
  case "$source" in device-wide*) log "note: the sample used device-wide memory: other tenants count in it" ;; esac
else
  check sample-profile 1 "no sample-job.toml"
fi

log "== summary"
log "files in $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
for f in probe.toml sample-job.toml import.toml import-job.toml; do
  [ -f "$OUT/$f" ] && { log "--- $f"; cat "$OUT/$f" >>"$LOG"; }
done
if [ "${#FAILED[@]}" -gt 0 ]; then
  log "FAILED: ${FAILED[*]}"
  exit 1
fi
log "all steps and checks passed"
exit 0
