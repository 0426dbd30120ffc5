#!/bin/bash
# Bytes the serving threads allocate per request over HTTP, per workload: the server's own
# pitcache_heap_allocated_bytes_total across a wrk run, divided by the requests wrk counted
# (the "KiB allocated per request" of the hand sections in RESULTS.md). One build, 1 or 2
# threads; run it on two roots one after the other to compare builds.
# Usage: bench/hand/alloc.sh ROOT WORKERS DUR workload...   (paths from bench/hand/paths.mjs)
# SERVE_ARGS: more `serve` flags; WARM: warm-up seconds (3).
set -eu
root=$1; W=$2; D=$3; shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${DATA:-$here/bench/.data/main}; paths=${PATHS_DIR:-$here/bench/.data/paths}
CPUS=0; [ "$W" = 2 ] && CPUS=0-1
PORT=18613
scrape() { curl -s -H "x-api-key: pitcache-bench-admin-key" "http://127.0.0.1:$PORT/metrics"; }
allocated() { scrape | awk '/^pitcache_heap_allocated_bytes_total/{s+=$2} END{printf "%.0f", s}'; }
# the response cache's events over the run: "hit miss eviction rejected" (summed over threads)
events() { scrape | awk '/^pitcache_cache_events_total\{cache="response"/{split($0,a,"event=\""); split(a[2],b,"\""); v[b[1]]+=$NF} END{printf "%d %d %d %d", v["hit"], v["miss"], v["eviction"], v["rejected"]}'; }
(
  cd "$root"
  taskset -c $CPUS node dist/src/cli/main.js serve --source "$data" --keys "$data/keys.json" --host 127.0.0.1 --port $PORT \
    --no-access-log --log-level warn --refresh-interval 0 --drain-seconds 0 --workers "$W" ${SERVE_ARGS:-} </dev/null >/dev/null 2>&1 &
  echo $! >"/tmp/pitcache-alloc-$PORT.pid"
)
PID=$(cat "/tmp/pitcache-alloc-$PORT.pid")
trap 'kill $PID 2>/dev/null' EXIT
for _ in $(seq 1 600); do curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz" 2>/dev/null | grep -q 200 && break; sleep 0.5; done
for w in "$@"; do
  taskset -c 1 wrk -t1 -c64 -d"${WARM:-3}"s -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$PORT" -- "$paths/$w.paths" pitcache-bench-key list >/dev/null
  a0=$(allocated); e0=$(events)
  out=$(taskset -c 1 wrk -t1 -c64 -d"${D}"s -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$PORT" -- "$paths/$w.paths" pitcache-bench-key list)
  a1=$(allocated); e1=$(events)
  n=$(echo "$out" | grep -o '"requests":[0-9]*' | head -1 | cut -d: -f2)
  cache=$(node -e "const [a,b]=['$e0','$e1'].map(s=>s.split(' ').map(Number)); const d=b.map((x,i)=>x-a[i]); console.log('response-cache hits=' + (100*d[0]/Math.max(1,d[0]+d[1])).toFixed(1) + '% evictions/s=' + (d[2]/$D).toFixed(0) + ' rejected/s=' + (d[3]/$D).toFixed(0))")
  echo "$(basename "$root") workers=$W $w requests=$n KiB/request=$(node -e "console.log((($a1 - $a0) / $n / 1024).toFixed(2))") $cache"
done
