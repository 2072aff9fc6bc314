#!/usr/bin/env bash
# A real one-node Slurm (Debian's slurm-wlm: slurmctld + slurmd, with munge)
# on loopback, for the Slurm launch tests and for trying `target: slurm` by
# hand. Runs as root; everything lives in one folder, nothing in /etc.
#   scripts/slurm-local.sh start    # idempotent; prints SLURM_CONF=<path>
#   scripts/slurm-local.sh stop     # stops the daemons, cancels every job
#   scripts/slurm-local.sh status   # exit 0 when the controller answers
# Environment: RLWB_SLURM_DIR (default /tmp/rlwb-slurm-$UID), RLWB_SLURM_PORT
# (default 16817; slurmd uses the next port).
set -euo pipefail
dir="${RLWB_SLURM_DIR:-/tmp/rlwb-slurm-$(id -u)}"
port="${RLWB_SLURM_PORT:-16817}"
conf="$dir/slurm.conf"
export SLURM_CONF="$conf"

answers() { [ -f "$conf" ] && timeout 5 scontrol ping 2>/dev/null | grep -q "is UP"; }

stop() {
  [ -f "$conf" ] && timeout 10 scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

start() {
  if answers; then echo "SLURM_CONF=$conf"; return 0; fi
  for tool in slurmctld slurmd munged scontrol srun; do
    command -v "$tool" >/dev/null || { echo "slurm-local: $tool is not installed (apt-get install slurmctld slurmd slurm-client munge)" >&2; exit 1; }
  done
  [ "$(id -u)" -eq 0 ] || { echo "slurm-local: must run as root (slurmd starts jobs as their user)" >&2; exit 1; }
  stop
  rm -rf "$dir"
  mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
  chmod 700 "$dir/munge"
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" -f
  local host cpus mem
  host="$(hostname)"
  # nproc honours OMP_NUM_THREADS, which ctest sets to 1 for every test
  # (tests/CMakeLists.txt); the node has all the cores the host gives us.
  cpus="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
  cat > "$conf" <<EOF
# Written by scripts/slurm-local.sh: one node, on loopback, state in $dir.
ClusterName=rlwb
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Tasks may share the node's cores: a test pool of 4 runs on 2 cores.
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
  slurmctld -i
  slurmd
  for _ in $(seq 100); do
    if answers && sinfo -h -o %t 2>/dev/null | grep -qE "idle|mix|alloc"; then echo "SLURM_CONF=$conf"; return 0; fi
    sleep 0.1
  done
  echo "slurm-local: slurmctld did not come up; its log:" >&2
  tail -20 "$dir/log/slurmctld.log" >&2 || true
  exit 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) answers ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
