#!/usr/bin/env bash
# A sweep run as a real Slurm job array (docs/sweeps.md): installs Debian's Slurm and
# munge packages when absent, starts a one-node Slurm (munged, slurmctld, slurmd) on
# loopback inside a private network namespace, submits the array `sim sweep slurm` writes
# for 2 traces × 4 policies × 5 seeds (the sweep of tests/it/sweep.rs) with its merge job after it, waits, and checks that
# each trace's merged comparison.csv and runs.txt are the bytes `sim compare` writes over
# the same cells. Stops the daemons it started. Needs root (or sudo).
#   usage: scripts/slurm-sweep-check.sh [path/to/sim]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
sim=${1:+$(realpath "$1")}
if [ -z "$sim" ]; then
  for c in target/release/sim target/debug/sim; do
    if [ -x "$c" ]; then sim="$root/$c"; break; fi
  done
fi
[ -n "$sim" ] && [ -x "$sim" ] || { echo "slurm-sweep-check: no sim binary (cargo build first)"; exit 1; }
as_root=""
if [ "$(id -u)" != 0 ]; then as_root="sudo"; fi
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1 \
   || ! command -v sbatch >/dev/null 2>&1 || ! command -v ip >/dev/null 2>&1; then
  echo "== installing slurmctld, slurmd, slurm-client, munge"
  $as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends \
    slurmctld slurmd slurm-client munge iproute2 >/dev/null
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-slurm.XXXXXX")
chmod 755 "$work"
echo "== one-node Slurm in $work"
$as_root env SIM="$sim" ROOT="$root" WORK="$work" unshare -n bash -s <<'INNER'
set -euo pipefail
cd "$WORK"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
# Loopback only; a second address because glibc's AI_ADDRCONFIG fails with 127.0.0.1 alone.
ip link set lo up
ip addr add 127.0.0.2/32 dev lo
mkdir -p munge state spool logs
chmod 700 munge
dd if=/dev/urandom bs=1 count=1024 of=munge/munge.key status=none
chmod 400 munge/munge.key
munged --force --key-file=munge/munge.key --socket="$WORK/munge/munge.sock" --pid-file="$WORK/munge/munged.pid" \
  --log-file="$WORK/logs/munged.log" --seed-file="$WORK/munge/munged.seed"
pids+=("$(cat munge/munged.pid)")
cpus=$(nproc)
cat > slurm.conf <<CONF
ClusterName=schedlab
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/logs/slurmctld.log
SlurmdLogFile=$WORK/logs/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=localhost CPUs=$cpus RealMemory=4000 State=UNKNOWN
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$WORK/slurm.conf"
slurmctld -D -i > logs/slurmctld.out 2>&1 & pids+=($!)
slurmd -D > logs/slurmd.out 2>&1 & pids+=($!)
for _ in $(seq 1 60); do
  if [ "$(sinfo -h -o %T 2>/dev/null | head -1)" = "idle" ]; then break; fi
  sleep 1
done
if [ "$(sinfo -h -o %T 2>/dev/null | head -1)" != "idle" ]; then
  echo "slurm-sweep-check: the node did not come up"; tail -20 logs/*.log logs/*.out; exit 1
fi
echo "== Slurm $(sinfo -V | cut -d' ' -f2): node idle with $cpus CPUs"
kth="$ROOT/data/KTH-SP2-1996-2.1-cln.first3000.swf.gz"
ctc="$ROOT/data/CTC-SP2-1996-3.1-cln.first2000.swf.gz"
cat > sweep.toml <<SWEEP
out = "out"
policies = ["fcfs", "easy", "conservative", "sjf-aging"]
seeds = "1..5"
perturb = "resample"
[[trace]]
name = "kth"
trace = "$kth"
[[trace]]
name = "ctc"
trace = "$ctc"
[slurm]
throttle = 4
mem = "500M"
time = "00:10:00"
SWEEP
"$SIM" sweep slurm sweep.toml --sim "$SIM"
bash out/submit.sh
for _ in $(seq 1 300); do
  if [ -z "$(squeue -h 2>/dev/null)" ]; then break; fi
  sleep 1
done
if [ -n "$(squeue -h)" ]; then echo "slurm-sweep-check: jobs still queued after 300 s"; squeue; exit 1; fi
cat out/logs/merge.out
for t in kth ctc; do
  f=$kth; [ "$t" = ctc ] && f=$ctc
  "$SIM" compare -q --trace "$f" --policies fcfs,easy,conservative,sjf-aging --seeds 1..5 --perturb resample --out "cmp-$t"
  for file in comparison.csv runs.txt; do
    cmp "cmp-$t/$file" "out/$t/$file" || { echo "slurm-sweep-check: $t/$file differs from sim compare's"; exit 1; }
  done
done
echo "== the job array's 40 cells, merged after it, are sim compare's bytes"
INNER
rm -rf "$work"
