#!/bin/bash
# Who uses the server's CPU during a wrk run: CPU time per thread of the server process
# (utime + stime from /proc/PID/task/*/stat across the run), as a share of the run's
# wall time, by thread (name and id), plus the ceiling's figures for the same workload
# when CEILING=1. With 1 worker pinned to CPU 0, what is not the serving thread competes
# with it for the one CPU.
# Usage: bench/hand/threads.sh ROOT WORKERS DUR workload...   (paths from bench/hand/paths.mjs)
set -eu
root=$1; W=$2; D=$3; shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${DATA:-$here/bench/.data/main}; paths=${PATHS_DIR:-$here/bench/.data/paths}
CPUS=0; [ "$W" = 2 ] && CPUS=0-1
PORT=18617
(
  cd "$root"
  taskset -c $CPUS node dist/src/cli/main.js serve --source "$data" --keys "$data/keys.json" --host 127.0.0.1 --port $PORT \
    --no-access-log --log-level warn --refresh-interval 0 --drain-seconds 0 --workers "$W" ${SERVE_ARGS:-} </dev/null >/dev/null 2>&1 &
  echo $! >"/tmp/pitcache-threads-$PORT.pid"
)
PID=$(cat "/tmp/pitcache-threads-$PORT.pid")
trap 'kill $PID 2>/dev/null' EXIT
for _ in $(seq 1 600); do curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz" 2>/dev/null | grep -q 200 && break; sleep 0.5; done
ticks() { # "tid name ticks" per thread
  for t in /proc/$PID/task/*; do
    tid=${t##*/}
    # the name is in parentheses and may hold spaces: strip through ") "
    stat=$(cat "$t/stat" 2>/dev/null) || continue
    rest=${stat##*) }
    name=$(cat "$t/comm" 2>/dev/null | tr ' ' '_')
    echo "$tid $name $(echo "$rest" | awk '{print $12 + $13}')"
  done
}
hz=$(getconf CLK_TCK)
for w in "$@"; do
  taskset -c 1 wrk -t1 -c64 -d"${WARM:-3}"s -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$PORT" -- "$paths/$w.paths" pitcache-bench-key list >/dev/null
  ticks >/tmp/pitcache-threads-before
  out=$(taskset -c 1 wrk -t1 -c64 -d"${D}"s --latency -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$PORT" -- "$paths/$w.paths" pitcache-bench-key list)
  ticks >/tmp/pitcache-threads-after
  echo "$w: $(echo "$out" | awk '/Requests\/sec/{print $2}') req/s, p99 $(echo "$out" | awk '/ 99%/{print $2}')"
  join <(sort /tmp/pitcache-threads-before) <(sort /tmp/pitcache-threads-after) |
    awk -v d="$D" -v hz="$hz" '{ used = ($5 - $3) / hz; if (used > 0) printf "  %-8s %-16s %5.1f%% of the run\n", $1, $2, 100 * used / d }' | sort -k3 -rn
done
