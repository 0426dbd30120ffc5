#!/bin/bash
# pitcache (this checkout's dist/) and then the uWS fixed-body ceiling with pitcache's mean
# answer size, the same thread count and the same wrk script, one workload after another:
# the share of the ceiling of issue 11, outside a full `npm run bench`.
# Usage: bench/hand/share.sh WORKERS DUR workload...   (paths from bench/hand/paths.mjs)
# SERVE_ARGS: more `serve` flags (e.g. "--row-cache-mb 1024"); WARM: warm-up seconds (3).
set -eu
W=$1; D=$2; shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${DATA:-$here/bench/.data/main}; paths=${PATHS_DIR:-$here/bench/.data/paths}
CPUS=0; [ "$W" = 2 ] && CPUS=0-1
measure() { # port workload
  taskset -c 1 wrk -t1 -c64 -d"${WARM:-3}"s -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$1" -- "$paths/$2.paths" pitcache-bench-key list >/dev/null
  taskset -c 1 wrk -t1 -c64 -d"${D}"s --latency -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$1" -- "$paths/$2.paths" pitcache-bench-key list
}
for w in "$@"; do
  taskset -c $CPUS node "$here/dist/src/cli/main.js" serve --source "$data" --keys "$data/keys.json" --host 127.0.0.1 --port 18611 \
    --no-access-log --log-level warn --refresh-interval 0 --drain-seconds 0 --workers "$W" ${SERVE_ARGS:-} >/dev/null 2>&1 &
  PID=$!
  for _ in $(seq 1 240); do curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18611/readyz 2>/dev/null | grep -q 200 && break; sleep 0.5; done
  out=$(measure 18611 "$w")
  bytes=$(echo "$out" | grep -o '"bytes":[0-9]*' | head -1 | cut -d: -f2); reqs=$(echo "$out" | grep -o '"requests":[0-9]*' | head -1 | cut -d: -f2)
  mean=$((bytes / reqs)); prps=$(echo "$out" | awk '/Requests\/sec/{print $2}'); pp99=$(echo "$out" | awk '/ 99%/{print $2}')
  kill -9 $PID; wait $PID 2>/dev/null || true
  taskset -c $CPUS node "$here/dist/bench/servers/ceiling-server.js" --port 18612 --bytes $mean --workers "$W" >/dev/null 2>&1 &
  CP=$!; sleep 1.5
  out=$(measure 18612 "$w")
  crps=$(echo "$out" | awk '/Requests\/sec/{print $2}'); cp99=$(echo "$out" | awk '/ 99%/{print $2}')
  kill -9 $CP; wait $CP 2>/dev/null || true
  echo "workers=$W $w mean=${mean}B pitcache=$prps p99=$pp99 ceiling=$crps p99=$cp99 share=$(node -e "console.log((100*$prps/$crps).toFixed(0)+'%')")"
done
