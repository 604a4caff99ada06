#!/usr/bin/env bash
# Starts and stops a private single-node Slurm cluster on this machine (Debian 12, as root, no
# systemd needed), for the tests that submit jobs through Slurm. munged, slurmctld and slurmd
# run as plain daemons with their own config, key, socket, state, pid and log files, all in
# STATE_DIR; nothing in /etc is used or changed.
#   scripts/slurm_local.sh start  [STATE_DIR]  start (or find running) the cluster, then print
#                                              `export SLURM_CONF=STATE_DIR/slurm.conf`
#   scripts/slurm_local.sh stop   [STATE_DIR]  cancel its jobs, stop the three daemons
#   scripts/slurm_local.sh status [STATE_DIR]  exit 0 when the cluster answers, 1 otherwise
# STATE_DIR defaults to ${SOHUSIM_SLURM_DIR:-/tmp/sohusim-slurm}; slurmctld listens on port
# ${SOHUSIM_SLURM_PORT:-6817}, slurmd on the next one. One node (this host, all its CPUs, one
# CPU per job), one partition `debug`. Each start begins with an empty job queue (slurmctld -c).
# Installs the packages (munge slurmctld slurmd slurm-client) through scripts/install-deps.sh
# when they are missing. stdout carries only the export line; diagnostics go to stderr.
# Exit 3, with a one-line reason on stderr, when the cluster cannot run on this machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() { echo "usage: $0 start|stop|status [STATE_DIR]" >&2; exit 2; }
{ [ $# -ge 1 ] && [ $# -le 2 ]; } || usage
action="$1"
case "$action" in start|stop|status) ;; *) usage;; esac
dir="${2:-${SOHUSIM_SLURM_DIR:-/tmp/sohusim-slurm}}"
port="${SOHUSIM_SLURM_PORT:-6817}"
wait_idle=30 # seconds start waits for the node to become idle
wait_stop=15 # seconds stop waits for each daemon to exit

say() { echo "slurm_local: $*" >&2; }
# The cluster cannot run here: one line naming the reason, exit 3 (the tests skip on it).
unavailable() { echo "slurm_local: $*" >&2; exit 3; }

if [ "$action" = start ]; then
  mkdir -p "$dir" 2>/dev/null || unavailable "cannot create state dir $dir"
fi
if [ -d "$dir" ]; then dir="$(cd "$dir" && pwd -P)"; fi
conf="$dir/slurm.conf"
socket="$dir/munge.socket"
export SLURM_CONF="$conf"

# whether process $1 is alive (not a zombie) and named $2
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ "$stat" == "$1 ($2) "[!ZX]* ]]
}
# pid of the running daemon $1 (munged, slurmctld, slurmd) of this STATE_DIR, or fail
daemon_pid() {
  local pid
  pid="$(cat "$dir/$1.pid" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" "$1" || return 1
  echo "$pid"
}
running() { daemon_pid "$1" >/dev/null; }
answers() { [ -f "$conf" ] && timeout 10 sinfo -h -o %P >/dev/null 2>&1; }
last_line() { # last non-empty line of the given files that exist, or "(no log)"
  local line="" f l
  for f in "$@"; do
    [ -s "$f" ] || continue
    l="$(sed '/^\s*$/d' "$f" | tail -n 1)"
    [ -n "$l" ] && line="$l"
  done
  echo "${line:-(no log)}"
}

stop_daemons() { # $@ names; TERM all, wait, KILL those still there after $wait_stop seconds
  local name pid i left
  local -A pids=()
  for name in "$@"; do
    if pid="$(daemon_pid "$name")"; then
      pids[$name]="$pid"
      kill -TERM "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/$name.pid" # the daemons leave theirs behind
  done
  for ((i = 0; i < wait_stop * 10; i++)); do
    left=0
    for name in "${!pids[@]}"; do
      alive "${pids[$name]}" "$name" && left=1
    done
    [ "$left" = 0 ] && return 0
    sleep 0.1
  done
  for name in "${!pids[@]}"; do
    pid="${pids[$name]}"
    if alive "$pid" "$name"; then
      say "$name (pid $pid) did not stop in ${wait_stop} s, killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  sleep 0.5
}

do_stop() {
  local i
  if running slurmctld && answers; then
    # cancel what is still queued or running, so that no job step outlives the cluster
    timeout 10 scancel -u "$(id -un)" >/dev/null 2>&1 || true
    for ((i = 0; i < 50; i++)); do
      [ -z "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  stop_daemons slurmd slurmctld munged
  rm -f "$socket" "$socket.lock"
}

case "$action" in
  status)
    running munged && running slurmctld && running slurmd && answers && exit 0
    exit 1
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    do_stop
    exit 0
    ;;
esac

# ---- start ----
if running munged && running slurmctld && running slurmd && answers; then
  echo "export SLURM_CONF=$conf"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || unavailable "needs root (slurmd runs jobs as any user and must be root)"
# Unix socket paths (munge's, slurmd's per-step ones in the spool dir) must fit in 108 bytes.
[ ${#dir} -le 70 ] || unavailable "state dir path too long for Unix sockets (${#dir} > 70 chars): $dir"

# The packages: install what is missing (needs root and the network).
declare -A pkg_of=([munged]=munge [mungekey]=munge [munge]=munge [slurmctld]=slurmctld
  [slurmd]=slurmd [sinfo]=slurm-client [squeue]=slurm-client [scancel]=slurm-client
  [scontrol]=slurm-client [sbatch]=slurm-client)
missing=()
for cmd in "${!pkg_of[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${pkg_of[$cmd]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  list="$(mktemp)"
  printf '%s\n' "${missing[@]}" | sort -u >"$list"
  pkgs="$(tr '\n' ' ' <"$list")"
  if ! "$here/install-deps.sh" "$list" </dev/null >&2; then
    rm -f "$list"
    unavailable "${pkgs% } not installed (scripts/install-deps.sh failed)"
  fi
  rm -f "$list"
  for cmd in "${!pkg_of[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || unavailable "$cmd not installed"
  done
fi

# Something half-running (a crash, a killed test): stop it and start from scratch.
do_stop
trap 'do_stop' EXIT # undone below once the cluster is up
mkdir -p "$dir/state" "$dir/spool"

# ---- munge ----
key="$dir/munge.key"
if [ ! -s "$key" ]; then
  mungekey --create --keyfile="$key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$key" bs=1024 count=1 status=none ||
    unavailable "cannot create the munge key $key"
fi
chmod 0600 "$key"
munged_args=(--socket="$socket" --key-file="$key" --pid-file="$dir/munged.pid"
  --log-file="$dir/munged.log" --seed-file="$dir/munged.seed")
if ! munged "${munged_args[@]}" </dev/null >"$dir/munged.out" 2>&1; then
  # munged refuses group/world-writable directories (e.g. a STATE_DIR made with umask 0);
  # --force turns these checks into warnings
  say "$(last_line "$dir/munged.out"); retrying with --force"
  munged --force "${munged_args[@]}" </dev/null >"$dir/munged.out" 2>&1 ||
    unavailable "munged failed to start: $(last_line "$dir/munged.log" "$dir/munged.out")"
fi
ok=""
for ((i = 0; i < 50; i++)); do
  if munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1; then ok=1; break; fi
  sleep 0.1
done
[ -n "$ok" ] || unavailable "munged failed to start: $(last_line "$dir/munged.log" "$dir/munged.out")"

# ---- slurm.conf ----
# slurmd -C prints this host as Slurm sees it: NodeName=<short hostname> CPUs=.. RealMemory=..
hw="$(slurmd -C 2>/dev/null | head -n 1)" || hw=""
field() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$hw"; }
node="$(field NodeName)"
cpus="$(field CPUs)"
mem="$(field RealMemory)"
[ -n "$node" ] || node="$(hostname -s 2>/dev/null || uname -n)"
node="${node%%.*}"
[[ "$cpus" =~ ^[0-9]+$ ]] || cpus="$(nproc)"
[[ "$mem" =~ ^[0-9]+$ ]] || mem="$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)"
[ -n "$node" ] || unavailable "cannot tell this host's name"
: >"$dir/plugstack.conf" # keep /etc/slurm/plugstack.conf out
# The addresses are 127.0.0.1 so that the host name need not resolve. The node is described
# by its CPU count only, so that each CPU counts as a core: with CR_Core every job (one task,
# one CPU) gets one CPU, and the tasks of an array run side by side.
cat >"$conf" <<EOF
# Generated by scripts/slurm_local.sh: a private single-node cluster; do not edit.
ClusterName=sohusim
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# schedule a job as soon as it is submitted or a CPU frees (the default defers batch jobs 3 s)
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=10
SlurmdTimeout=30
MessageTimeout=10
BatchStartTimeout=10
InactiveLimit=0
KillWait=5
Waittime=0
MinJobAge=60
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

# ---- slurmctld, slurmd ----
port_busy() { timeout 2 bash -c ": </dev/tcp/127.0.0.1/$1" 2>/dev/null; }
for p in "$port" "$((port + 1))"; do
  port_busy "$p" && unavailable "port $p is in use (another Slurm running? set SOHUSIM_SLURM_PORT)"
done
slurmctld -c -f "$conf" </dev/null >"$dir/slurmctld.out" 2>&1 ||
  unavailable "slurmctld failed to start: $(last_line "$dir/slurmctld.log" "$dir/slurmctld.out")"
ok=""
for ((i = 0; i < 100; i++)); do
  if running slurmctld && timeout 5 scontrol ping 2>/dev/null | grep -q UP; then ok=1; break; fi
  sleep 0.1
done
[ -n "$ok" ] || unavailable "slurmctld failed to start: $(last_line "$dir/slurmctld.log" "$dir/slurmctld.out")"
slurmd -f "$conf" </dev/null >"$dir/slurmd.out" 2>&1 ||
  unavailable "slurmd failed to start: $(last_line "$dir/slurmd.log" "$dir/slurmd.out")"

state=""
for ((i = 0; i < wait_idle * 5; i++)); do
  # (slurmd writes its pid file a moment after it forks)
  [ "$i" -lt 25 ] || running slurmd || unavailable "slurmd failed to start: $(last_line "$dir/slurmd.log" "$dir/slurmd.out")"
  state="$(timeout 5 sinfo -h -N -n "$node" -o %T 2>/dev/null | head -n 1)" || state=""
  [ "$state" = idle ] && running slurmd && break
  sleep 0.2
done
{ [ "$state" = idle ] && running slurmd; } ||
  unavailable "node $node not idle after ${wait_idle} s (state '${state:-none}'): $(last_line "$dir/slurmd.log")"
trap - EXIT
echo "export SLURM_CONF=$conf"
