#!/usr/bin/env bash
# A real Slurm on this machine, for the cluster tests: munged, slurmctld and two compute nodes of one CPU each
# (two slurmd daemons on their own ports, named n1 and n2: no network namespaces needed), all under one
# private folder, on free ports, with their own munge key. Nothing of the system's Slurm or munge
# configuration is read or changed.
#   scripts/slurm-local.sh start DIR   installs Debian's packages when missing, starts everything, waits for
#                                      both nodes to be idle; then SLURM_CONF=DIR/slurm.conf sbatch ... works
#   scripts/slurm-local.sh stop DIR    stops what start started (by the pid files in DIR)
# start exits 3 when the packages cannot be installed or slurmd cannot run (no apt, no network, not root).
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a folder}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

install() {
  if [ "$(id -u)" != 0 ]; then
    echo "slurm-local: slurmd runs jobs as root only, and this is $(id -un)" >&2
    exit 3
  fi
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null &&
    command -v sbatch >/dev/null && return
  { [ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ] || apt-get update -qq; } &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null ||
    { echo "slurm-local: Debian's slurmctld, slurmd, slurm-client and munge could not be installed" >&2; exit 3; }
}

# free_ports prints three TCP ports, different, that nothing listens on: slurmctld's and the two slurmd's.
free_ports() {
  python3 -c 'import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))'
}

daemons="slurmd-n1 slurmd-n2 slurmctld munged"

stop() {
  for daemon in $daemons; do
    if [ -s "$dir/$daemon.pid" ]; then
      kill "$(cat "$dir/$daemon.pid")" 2>/dev/null || true
    fi
  done
  for daemon in $daemons; do
    for _ in $(seq 50); do
      [ -s "$dir/$daemon.pid" ] && kill -0 "$(cat "$dir/$daemon.pid")" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$dir/$daemon.pid"
  done
}

start() {
  install
  mkdir -p "$dir/state" "$dir/munge"
  chmod 700 "$dir/munge"
  dd if=/dev/urandom bs=1 count=1024 of="$dir/munge/key" 2>/dev/null
  chmod 400 "$dir/munge/key"
  munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munge/log" --seed-file="$dir/munge/seed"
  local host ports
  host=$(hostname -s)
  read -r -a ports <<<"$(free_ports)"
  cat > "$dir/slurm.conf" <<CONF
ClusterName=ecpitest
SlurmctldHost=$host
SlurmctldPort=${ports[0]}
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=5
MinJobAge=600
SchedulerParameters=sched_interval=1
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[1]} CPUs=1 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[2]} CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF" -N n1
  slurmd -f "$SLURM_CONF" -N n2
  for _ in $(seq 100); do
    if [ "$(sinfo -h -N -o %T 2>/dev/null | grep -c -x idle)" = 2 ]; then
      return 0
    fi
    sleep 0.2
  done
  echo "slurm-local: the nodes are not idle after 20 s: $(sinfo -N 2>&1 | tail -2)" >&2
  tail -5 "$dir/slurmctld.log" "$dir"/slurmd-n*.log >&2 || true
  return 1
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
