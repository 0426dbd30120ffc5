#!/bin/bash
# Interleaved A/B of two builds over HTTP: both servers up at once (1 worker each, pinned to
# CPU 0), wrk on CPU 1 alternating between them every DUR seconds, ROUNDS times. On a VM
# whose speed drifts by 2x within minutes, only such paired ratios (B/A) mean anything.
# Usage: ROOT_A=/path/to/build-a ROOT_B=/path/to/build-b bench/hand/pair.sh ROUNDS DUR workload...
# (each root: a checkout with `npx tsc -p tsconfig.build.json` run; paths from bench/hand/paths.mjs)
set -eu
rounds=$1; dur=$2; shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${DATA:-$here/bench/.data/main}; paths=${PATHS_DIR:-$here/bench/.data/paths}
start() { # root port
  # only the server goes to the background (with its output away), so $(start ...) returns
  (
    cd "$1"
    taskset -c 0 node dist/src/cli/main.js serve --source "$data" --keys "$data/keys.json" --host 127.0.0.1 --port "$2" \
      --no-access-log --log-level warn --refresh-interval 0 --drain-seconds 0 --workers 1 </dev/null >/dev/null 2>&1 &
    echo $!
  )
}
wait_ready() { for _ in $(seq 1 600); do curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz" 2>/dev/null | grep -q 200 && return; sleep 0.5; done; }
wrkrun() { taskset -c 1 wrk -t1 -c64 -d"$2"s --latency -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$1" -- "$paths/$3.paths" pitcache-bench-key list 2>&1; }
PA=$((18300 + RANDOM % 300)); PB=$((PA + 400))
A=$(start "$ROOT_A" $PA); B=$(start "$ROOT_B" $PB)
trap 'kill $A $B 2>/dev/null' EXIT
wait_ready $PA; wait_ready $PB
for w in "$@"; do wrkrun $PA 3 "$w" >/dev/null; wrkrun $PB 3 "$w" >/dev/null; done
for r in $(seq 1 "$rounds"); do
  for w in "$@"; do
    a=$(wrkrun $PA "$dur" "$w"); b=$(wrkrun $PB "$dur" "$w")
    ra=$(echo "$a" | awk '/Requests\/sec/{print $2}'); rb=$(echo "$b" | awk '/Requests\/sec/{print $2}')
    pa=$(echo "$a" | awk '/ 99%/{print $2}'); pb=$(echo "$b" | awk '/ 99%/{print $2}')
    echo "round $r $w A=$ra B=$rb B/A=$(node -e "console.log(($rb/$ra).toFixed(3))") p99 A=$pa B=$pb"
  done
done
