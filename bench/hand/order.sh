#!/bin/bash
# Does a workload run slower on a server that has just served another one (as in
# `npm run bench`, which serves its workloads one after another from one server) than on a
# fresh server? Per trial, two fresh servers of one build (1 worker each, CPU 0): A serves
# BEFORE for PRIOR seconds, B serves it for 3 s (the same JIT warm-up, none of the state);
# then AFTER runs on both, alternately first, with the bench's warm-up of 5 s then DUR s.
# Usage: bench/hand/order.sh ROOT TRIALS DUR BEFORE AFTER   (PRIOR: 35; SERVE_ARGS: more flags)
set -eu
root=$1; trials=$2; dur=$3; before=$4; after=$5
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${DATA:-$here/bench/.data/main}; paths=${PATHS_DIR:-$here/bench/.data/paths}
start() { # port
  (
    cd "$root"
    taskset -c 0 node dist/src/cli/main.js serve --source "$data" --keys "$data/keys.json" --host 127.0.0.1 --port "$1" \
      --no-access-log --log-level warn --refresh-interval 0 --drain-seconds 0 --workers 1 ${SERVE_ARGS:-} </dev/null >/dev/null 2>&1 &
    echo $!
  )
}
wait_ready() { for _ in $(seq 1 600); do curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz" 2>/dev/null | grep -q 200 && return; sleep 0.5; done; }
wrkrun() { taskset -c 1 wrk -t1 -c64 -d"$2"s --latency -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$1" -- "$paths/$3.paths" pitcache-bench-key list 2>&1; }
measure() { # port -> "req/s p99"
  wrkrun "$1" 5 "$after" >/dev/null
  out=$(wrkrun "$1" "$dur" "$after")
  echo "$(echo "$out" | awk '/Requests\/sec/{print $2}') $(echo "$out" | awk '/ 99%/{print $2}')"
}
for t in $(seq 1 "$trials"); do
  PA=$((18300 + RANDOM % 300)); PB=$((PA + 400))
  A=$(start $PA); B=$(start $PB)
  trap 'kill $A $B 2>/dev/null' EXIT
  wait_ready $PA; wait_ready $PB
  wrkrun $PA "${PRIOR:-35}" "$before" >/dev/null
  wrkrun $PB 3 "$before" >/dev/null
  if [ $((t % 2)) = 1 ]; then a=$(measure $PA); b=$(measure $PB); first=A; else b=$(measure $PB); a=$(measure $PA); first=B; fi
  echo "trial $t ($first first) $after after $before: A(after)=${a% *} p99 ${a#* }  B(fresh)=${b% *} p99 ${b#* }  A/B=$(node -e "console.log((${a% *}/${b% *}).toFixed(3))")"
  kill $A $B 2>/dev/null; wait $A $B 2>/dev/null || true
done
