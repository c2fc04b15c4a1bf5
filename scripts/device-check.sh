#!/usr/bin/env bash
# Device check of `sim calibrate` on a machine with an NVIDIA GPU (written for the
# project's H200 device runs; any NVIDIA GPU works). One command:
#
#   scripts/device-check.sh                  # builds target/release/sim, writes ./device-out
#   OUT=/tmp/x SIM=path/to/sim DURATION=30 scripts/device-check.sh
#
# It builds `sim` (release; or uses $SIM, e.g. a binary built elsewhere and carried over,
# since a machine without network cannot fetch crates), then
#   1. probes the GPUs:            sim calibrate probe --out $OUT/h200-probe.toml
#   2. samples a small GPU workload for $DURATION s (default 30):
#                                  sim calibrate sample --interval-ms 200 --out $OUT/h200-sample.toml -- WORKLOAD
#      while nvidia-smi logs the same seconds to $OUT/nvidia-smi-log.csv (every 500 ms);
#   3. imports that log:           sim calibrate import $OUT/nvidia-smi-log.csv --out $OUT/h200-import.toml
#                                  --job-out $OUT/h200-import-job.toml
# The workload is a tiny CUDA program when nvcc exists, else a PyTorch matmul loop when
# torch with CUDA imports, else `sleep` (then the workload was idle, and says so). Both
# real workloads hold 2 GiB and step their duty cycle through 0, 25, 50, 75 and 100 %
# so that power can be fitted against utilization. A failing workload does not stop the
# script. Every command run is printed and kept in $OUT/commands.txt; the exit status is
# 0 when the probe and the import succeeded.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-./device-out}"
DURATION="${DURATION:-30}"
mkdir -p "$OUT"
CMDS="$OUT/commands.txt"
: >"$CMDS"
STATUS="$OUT/status.txt"
: >"$STATUS"

say() { echo "== $*"; }
show() { printf '+'; printf ' %q' "$@"; printf '\n'; }
# Runs a command, printing and recording it; records its exit status, never fails.
run() {
  show "$@" | tee -a "$CMDS"
  local rc=0
  "$@" || rc=$?
  echo "$rc $*" >>"$STATUS"
  return "$rc"
}

say "sim binary"
if [ -n "${SIM:-}" ]; then
  [ -x "$SIM" ] || { echo "SIM=$SIM is not an executable" >&2; exit 2; }
else
  SIM=target/release/sim
  if ! run cargo build --release --offline --bin sim; then
    run cargo build --release --bin sim
  fi
fi
echo "using $SIM"

say "machine"
if command -v nvidia-smi >/dev/null 2>&1; then
  HAVE_SMI=1
  run nvidia-smi || true
  show nvidia-smi -q | tee -a "$CMDS"
  nvidia-smi -q >"$OUT/nvidia-smi-q.txt" 2>&1 || true
else
  HAVE_SMI=0
  echo "no nvidia-smi on this machine: no CSV log, no import"
fi

say "1. probe"
PROBE_RC=0
run "$SIM" calibrate probe --out "$OUT/h200-probe.toml" || PROBE_RC=$?

say "2. workload"
WORKLOAD_KIND=idle
WORKLOAD=(sleep "$DURATION")
if command -v nvcc >/dev/null 2>&1; then
  cat >"$OUT/burn.cu" <<'CU'
// A small GPU load for `sim calibrate sample`: holds 2 GiB and runs FMA kernels with a
// duty cycle stepping through 0, 25, 50, 75 and 100 % (of each 100 ms) over the run.
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
  const int n = 1 << 24;
  float *x = nullptr;
  void *hold = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&hold, (size_t)2 << 30) != cudaSuccess) {
    fprintf(stderr, "burn: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(x, 0, n * sizeof(float));
  cudaMemset(hold, 1, (size_t)2 << 30);
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
  if run nvcc -O2 -o "$OUT/burn" "$OUT/burn.cu"; then
    WORKLOAD_KIND=cuda
    WORKLOAD=("$OUT/burn" "$DURATION")
  fi
fi
if [ "$WORKLOAD_KIND" = idle ] && command -v python3 >/dev/null 2>&1 \
  && python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  cat >"$OUT/burn.py" <<'PY'
# A small GPU load for `sim calibrate sample`: holds 2 GiB and runs FP16 matmuls with a
# duty cycle stepping through 0, 25, 50, 75 and 100 % (of each 100 ms) over the run.
import sys
import time

import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
dev = torch.device("cuda")
hold = torch.ones(2 << 30, dtype=torch.uint8, device=dev)
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
  WORKLOAD_KIND=torch
  WORKLOAD=(python3 "$OUT/burn.py" "$DURATION")
fi
if [ "$WORKLOAD_KIND" = idle ]; then
  echo "no nvcc and no torch with CUDA: the workload is 'sleep $DURATION' (the GPU stays idle)"
fi
echo "workload ($WORKLOAD_KIND): ${WORKLOAD[*]}"
echo "$WORKLOAD_KIND" >"$OUT/workload.txt"

SMI_PID=
if [ "$HAVE_SMI" = 1 ]; then
  QUERY=timestamp,name,index,uuid,memory.total,memory.used,utilization.gpu,utilization.memory,power.draw,power.limit,clocks.sm,clocks.max.sm
  show nvidia-smi --query-gpu="$QUERY" --format=csv -lms 500 | tee -a "$CMDS"
  nvidia-smi --query-gpu="$QUERY" --format=csv -lms 500 >"$OUT/nvidia-smi-log.csv" 2>"$OUT/nvidia-smi-log.err" &
  SMI_PID=$!
  sleep 1
fi

say "2. sample"
SAMPLE_RC=0
run "$SIM" calibrate sample --interval-ms 200 --out "$OUT/h200-sample.toml" -- "${WORKLOAD[@]}" || SAMPLE_RC=$?
if [ "$SAMPLE_RC" = 2 ] && [ -n "$SMI_PID" ]; then
  echo "sim calibrate sample could not sample (exit 2): running the workload alone for the nvidia-smi log"
  run "${WORKLOAD[@]}" || true
fi
if [ -n "$SMI_PID" ]; then
  sleep 1
  kill "$SMI_PID" 2>/dev/null || true
  wait "$SMI_PID" 2>/dev/null || true
fi
case "$SAMPLE_RC" in
  0) ;;
  1) echo "the workload or NVML failed during sampling (exit 1); continuing" ;;
  *) echo "sim calibrate sample failed (exit $SAMPLE_RC); continuing" ;;
esac

say "3. import"
IMPORT_RC=0
if [ "$HAVE_SMI" = 1 ]; then
  run "$SIM" calibrate import "$OUT/nvidia-smi-log.csv" --out "$OUT/h200-import.toml" \
    --job-out "$OUT/h200-import-job.toml" || IMPORT_RC=$?
else
  IMPORT_RC=2
fi

say "summary"
echo "workload: $WORKLOAD_KIND; probe exit $PROBE_RC, sample exit $SAMPLE_RC, import exit $IMPORT_RC"
ls -l "$OUT"
for f in h200-probe.toml h200-sample.toml h200-import.toml h200-import-job.toml; do
  if [ -f "$OUT/$f" ]; then
    echo "--- $OUT/$f"
    cat "$OUT/$f"
  fi
done
[ "$PROBE_RC" = 0 ] && [ "$IMPORT_RC" = 0 ]
