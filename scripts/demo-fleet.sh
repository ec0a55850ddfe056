#!/usr/bin/env bash
# make demo-fleet: a fleet of three hosts on this machine, captured as one
# session (docs/demo-fleet.md).
#
# Each "host" is a network namespace (its own address on a bridge,
# 10.200.0.1-3/24) and a UTS namespace (its own hostname, fleet-a/b/c)
# with a cgroup of its own (acceltrace-demo-fleet/<host>), a simulated
# TPU trainer in that cgroup and an acceltrace daemon scoped to it
# (--cgroup), serving its metrics on <address>:9464. fleet-b's trainer is
# slower (its steps 30% longer). One Prometheus scrapes the three daemons;
# then one capture of all three hosts into one session directory of a
# shared logdir (through the daemons' ProfilerService with a comma list of
# addresses, as XProf's capture dialog does; through each daemon's control
# socket where the daemon has no ProfilerService yet), and acceltrace
# report over that session. Everything it made is torn down on exit, on
# failure and on Ctrl-C; leftovers of a run that was killed are removed
# first.
#
# Usage: scripts/demo-fleet.sh [--check] [OUTPUT_DIR]
#   --check  CI's mode: also asserts what the demo shows (three host files
#            in the session, each decodes and holds only its own host's
#            trainer, Prometheus saw all three, the report names fleet-b
#            as the straggler by about the slowdown), exit 1 when not.
# DEMO_LOGDIR (default demo-fleet-logdir; with --check a temporary one; a
# bucket, gs://B/P or s3://B/P, with the store's settings in the environment)
# keeps the session for XProf.
set -euo pipefail

check=0
if [[ ${1:-} == --check ]]; then
	check=1
	shift
fi
out=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
acceltrace=$(realpath "$out/acceltrace")
trainer=$(realpath "$out/sim/tpu-trainer")
helper=$here/demo-fleet-check.py
py=/usr/bin/python3

hosts=(fleet-a fleet-b fleet-c)
addrs=(10.200.0.1 10.200.0.2 10.200.0.3)
step_us=(4000 5200 4000)		# fleet-b: 30% longer steps
slow_host=fleet-b
slow_pct=30
net=10.200.0
bridge=atfleet-br0
bridge_addr=$net.254
prom_addr=$bridge_addr:9090
metrics_port=9464
profiler_port=8466
cg_name=acceltrace-demo-fleet
# Under /run: root's own, so nobody can plant a link where root writes.
work=/run/acceltrace-demo-fleet
capture_ms=2000

say() { printf '== %s\n' "$*"; }
die() { printf 'make demo-fleet: %s\n' "$*" >&2; exit 1; }

if [[ $(id -u) -ne 0 ]]; then
	die "it makes namespaces and cgroups and loads BPF programs; run it as root (sudo make demo-fleet)"
fi
for tool in ip nsenter unshare prometheus; do
	command -v "$tool" >/dev/null || die "'$tool' is missing (scripts/install-deps.sh installs it)"
done
[[ -x $acceltrace && -x $trainer ]] || die "build first: $out/acceltrace and $out/sim/tpu-trainer"

# The cgroup v2 hierarchy: alone, or beside v1 on a hybrid host.
cg_mount=
for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [[ $(stat -f -c %T "$m" 2>/dev/null) == cgroup2fs ]]; then
		cg_mount=$m
		break
	fi
done
[[ -n $cg_mount ]] || die "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified"
cg_root=$cg_mount/$cg_name

ns_of() { echo "atfleet-${1#fleet-}"; }

# Kills @pids (TERM, then KILL after @2 seconds), each by its id.
stop_pids() {
	local grace=$1; shift
	local pid left
	[[ $# -gt 0 ]] || return 0
	kill -TERM "$@" 2>/dev/null || true
	for _ in $(seq $((grace * 10))); do
		left=0
		for pid in "$@"; do
			kill -0 "$pid" 2>/dev/null && left=1
		done
		[[ $left == 0 ]] && return 0
		sleep 0.1
	done
	kill -KILL "$@" 2>/dev/null || true
}

# Everything this demo makes, whether this run or a killed one made it.
teardown() {
	local h ns pids pid
	# The daemons first (they finish a capture in progress), then the
	# trainers: every process in the hosts' network namespaces.
	for h in "${hosts[@]}"; do
		ns=$(ns_of "$h")
		[[ -e /run/netns/$ns ]] || continue
		# shellcheck disable=SC2207
		pids=($(ip netns pids "$ns" 2>/dev/null || true))
		stop_pids 15 "${pids[@]}"
	done
	# Anything left in the hosts' cgroups.
	for h in "${hosts[@]}"; do
		[[ -f $cg_root/$h/cgroup.procs ]] || continue
		# shellcheck disable=SC2207
		pids=($(cat "$cg_root/$h/cgroup.procs"))
		stop_pids 5 "${pids[@]}"
	done
	if [[ -f $work/prometheus.pid ]]; then
		pid=$(cat "$work/prometheus.pid")
		# Only ours: a pid file left by a killed run may name a reused pid.
		if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == prometheus ]] &&
		   tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--storage.tsdb.path=$work/"; then
			stop_pids 10 "$pid"
		fi
	fi
	for h in "${hosts[@]}"; do
		ns=$(ns_of "$h")
		ip netns del "$ns" 2>/dev/null || true
		ip link del "veth-${ns#atfleet-}" 2>/dev/null || true
	done
	ip link del "$bridge" 2>/dev/null || true
	for h in "${hosts[@]}"; do
		[[ -d $cg_root/$h ]] || continue
		for _ in $(seq 50); do
			rmdir "$cg_root/$h" 2>/dev/null && break
			sleep 0.1
		done
	done
	[[ -d $cg_root ]] && rmdir "$cg_root" 2>/dev/null || true
	rm -rf "$work"
}

finished=0
on_exit() {
	local rc=$?
	[[ $finished == 1 ]] && return
	finished=1
	if [[ $rc -ne 0 && $rc -ne 130 && $rc -ne 143 && -d $work ]]; then
		echo "make demo-fleet: failed; the daemons' last words:" >&2
		for h in "${hosts[@]}"; do
			[[ -f $work/$h/daemon.log ]] && sed "s/^/  $h: /" "$work/$h/daemon.log" | tail -n 5 >&2
		done
	fi
	say "tearing down: daemons, trainers, Prometheus, namespaces, links, cgroups, $work"
	teardown
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- the fleet

teardown			# a killed run's leftovers
mkdir -m 0700 "$work"
if [[ $check == 1 ]]; then
	logdir=$work/logs
elif [[ ${DEMO_LOGDIR:-} == s3://* || ${DEMO_LOGDIR:-} == gs://* ]]; then
	# A bucket (docs/buckets.md): every daemon uploads its host's file
	# into the one session; their credentials and endpoint come from
	# this environment, which must reach the store from the namespaces.
	logdir=$DEMO_LOGDIR
else
	logdir=$(realpath -m "${DEMO_LOGDIR:-demo-fleet-logdir}")
fi
[[ $logdir == *://* ]] || mkdir -p "$logdir"

if ip -o -4 addr show | grep -q " $net\." || ip -4 route show | grep -q "^$net\."; then
	die "$net.0/24 is in use on this machine; the demo needs it free"
fi

say "network: bridge $bridge ($bridge_addr/24), a namespace and a veth per host"
ip link add "$bridge" type bridge
ip addr add "$bridge_addr/24" dev "$bridge"
ip link set "$bridge" up
mkdir -p "$cg_root"
for i in "${!hosts[@]}"; do
	h=${hosts[$i]}
	ns=$(ns_of "$h")
	v=veth-${ns#atfleet-}
	ip netns add "$ns"
	ip link add "$v" type veth peer name eth0 netns "$ns"
	ip link set "$v" master "$bridge" up
	ip -n "$ns" addr add "${addrs[$i]}/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	mkdir -p "$cg_root/$h" "$work/$h"
done

profiler=0
# The help read whole first: grep -q stops at its match, and under pipefail
# the writer it left behind (SIGPIPE past a pipe buffer) fails the test.
if grep -q -- --profiler-listen <<<"$("$acceltrace" daemon --help 2>&1)"; then
	profiler=1
fi

# One host: its own UTS namespace (hostname), the trainer entering its
# cgroup before exec, and the daemon exec'd in the same namespaces.
# nsenter, not `ip netns exec`: that one remounts /sys, and with it the
# cgroup hierarchy the daemon's --cgroup names.
start_host() {
	local i=$1 h=${hosts[$1]} a=${addrs[$1]} dir=$work/${hosts[$1]}
	local -a dargs=(daemon --cgroup "$cg_name/$h" --listen "$a:$metrics_port"
			--socket "$dir/daemon.sock" --logdir "$logdir" --flight-recorder 5s
			--rule-crash false)
	if [[ $profiler == 1 ]]; then
		dargs+=(--profiler-listen "$a:$profiler_port")
	fi
	nsenter --net="/run/netns/$(ns_of "$h")" -- unshare --uts -- \
		/bin/bash -c '
			hostname "$1"
			(echo $BASHPID >"$2/cgroup.procs" &&
			 exec "$3" --steps 0 --duration 600s --step-time "$4us" --readers 0 \
				--data-dir "$5/data") 2>"$5/trainer.log" &
			echo $! >"$5/trainer.pid"
			shift 5
			exec "$@"' \
		_ "$h" "$cg_root/$h" "$trainer" "${step_us[$i]}" "$dir" \
		"$acceltrace" "${dargs[@]}" 2>"$dir/daemon.log" &
	echo $! >"$dir/daemon.pid"
}

for i in "${!hosts[@]}"; do
	start_host "$i"
done

# Waits for @2 (a fixed string) in file @1, @3 seconds at most.
wait_line() {
	for _ in $(seq $(($3 * 10))); do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

for h in "${hosts[@]}"; do
	wait_line "$work/$h/trainer.log" " running " 20 ||
		die "$h: the simulated trainer did not start: $(cat "$work/$h/trainer.log")"
	wait_line "$work/$h/daemon.log" "watching every accelerator user" 60 ||
		die "$h: the daemon did not start: $(cat "$work/$h/daemon.log")"
done
for i in "${!hosts[@]}"; do
	h=${hosts[$i]}
	printf '   %-8s %-11s trainer pid %-7s (%s us steps), daemon pid %s, cgroup %s\n' \
		"$h" "${addrs[$i]}" "$(cat "$work/$h/trainer.pid")" "${step_us[$i]}" \
		"$(cat "$work/$h/daemon.pid")" "$cg_name/$h"
done

# ---------------------------------------------------------------- Prometheus

targets=
for a in "${addrs[@]}"; do
	targets+="${targets:+, }'$a:$metrics_port'"
done
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: acceltrace
    static_configs:
      - targets: [$targets]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
	--web.listen-address="$prom_addr" >"$work/prometheus.log" 2>&1 &
echo $! >"$work/prometheus.pid"
say "Prometheus on http://$prom_addr scraping ${addrs[*]/%/:$metrics_port}"
hostmap=
for i in "${!hosts[@]}"; do
	hostmap+="${hostmap:+,}${addrs[$i]}:$metrics_port=${hosts[$i]}"
done
"$py" "$helper" prometheus "http://$prom_addr" "$hostmap" 60 "$work/prometheus.json" ||
	die "Prometheus did not see all three daemons and their step times"

# ---------------------------------------------------------------- capture

session=fleet_$(date +%Y_%m_%d_%H_%M_%S)
list=
for a in "${addrs[@]}"; do
	list+="${list:+,}grpc://$a:$profiler_port"
done
if [[ $profiler == 1 ]]; then
	say "one capture of the fleet: profile-fleet.py --service-addr $list"
	"$py" "$here/profile-fleet.py" --service-addr "$list" --logdir "$logdir" \
		--duration-ms "$capture_ms" --session-id "$session" \
		--override-hostnames "$(IFS=,; echo "${hosts[*]}")" >"$work/session.txt" ||
		die "the fleet capture failed"
else
	# Until the daemon answers the ProfilerService: the same session from
	# every daemon at the same wall-clock time, through its control socket.
	say "(this acceltrace has no --profiler-listen yet: one trigger per daemon, same --at and --session)"
	at=$(($(date +%s) + 1))
	pids=()
	for h in "${hosts[@]}"; do
		"$acceltrace" trigger --socket "$work/$h/daemon.sock" --at "$at" \
			--duration "$((capture_ms / 1000))s" --session "$session" \
			>"$work/$h/trigger.out" 2>"$work/$h/trigger.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || die "${hosts[$i]}: trigger failed: $(cat "$work/${hosts[$i]}/trigger.err")"
	done
	echo "$logdir/plugins/profile/$session" >"$work/session.txt"
fi
session_dir=$(cat "$work/session.txt")
say "session $session_dir:"
if [[ $session_dir == *://* ]]; then
	say "   (in the bucket: report reads it from there)"
else
	ls -l "$session_dir" | sed 1d | sed 's/^/   /'
fi

# ---------------------------------------------------------------- report

echo
say "acceltrace report $session_dir"
"$acceltrace" report "$session_dir"
"$acceltrace" report -j "$session_dir" >"$work/report.json"

if [[ $check == 1 ]]; then
	echo
	say "checking"
	pidmap=
	for h in "${hosts[@]}"; do
		pidmap+="${pidmap:+,}$h=$(cat "$work/$h/trainer.pid")"
	done
	"$py" "$helper" check "$session_dir" "$pidmap" "$work/prometheus.json" \
		"$work/report.json" "$slow_host" "$slow_pct"
fi
