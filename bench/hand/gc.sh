#!/bin/bash
# What V8's collector does while one serving thread answers a workload: scavenges and
# mark-compacts (count, median and longest pause, KB promoted per collection) from
# --trace-gc-nvp over a measured wrk run after a warm-up, with req/s and p99 of that run.
# Usage: bench/hand/gc.sh ROOT DUR workload...   (ROOT: a checkout with `npx tsc -p
# tsconfig.build.json` run; paths from bench/hand/paths.mjs). SERVE_ARGS: more `serve` flags.
set -eu
root=$1; D=$2; shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${DATA:-$here/bench/.data/main}; paths=${PATHS_DIR:-$here/bench/.data/paths}
PORT=18777
if pgrep -f 'main.js serve' >/dev/null; then echo 'another pitcache server is running: stop it first' >&2; exit 1; fi
for w in "$@"; do
  log=$(mktemp)
  (
    cd "$root"
    taskset -c 0 node --trace-gc-nvp dist/src/cli/main.js serve --source "$data" --keys "$data/keys.json" --host 127.0.0.1 --port $PORT \
      --no-access-log --log-level warn --refresh-interval 0 --drain-seconds 0 --workers 1 ${SERVE_ARGS:-} </dev/null >"$log" 2>&1 &
    echo $! >"$log.pid"
  )
  PID=$(cat "$log.pid")
  trap 'kill $PID 2>/dev/null; sleep 1; kill -9 $PID 2>/dev/null' EXIT
  for _ in $(seq 1 600); do curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz" 2>/dev/null | grep -q 200 && break; sleep 0.5; done
  taskset -c 1 wrk -t1 -c64 -d3s -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$PORT" -- "$paths/$w.paths" pitcache-bench-key list >/dev/null
  n0=$(wc -l <"$log")
  out=$(taskset -c 1 wrk -t1 -c64 -d"$D"s --latency -s "$here/bench/wrk/paths.lua" "http://127.0.0.1:$PORT" -- "$paths/$w.paths" pitcache-bench-key list)
  gc=$(tail -n +$((n0 + 1)) "$log" | node -e '
    const lines = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l.includes("gc="));
    const f = (l, k) => (l.match(new RegExp("(?:^|\\s)" + k + "=([^ ]+)")) ?? [])[1];
    const by = {};
    for (const l of lines) (by[f(l, "gc")] ??= []).push(l);
    const parts = Object.entries(by).map(([g, ls]) => {
      const p = ls.map((l) => Number(f(l, "pause"))).sort((a, b) => a - b);
      const promoted = ls.reduce((s, l) => s + Number(f(l, "promoted") ?? 0), 0) / ls.length / 1024;
      return `gc=${g} n=${ls.length} pause median=${p[p.length >> 1].toFixed(1)}ms max=${p[p.length - 1].toFixed(1)}ms promoted=${promoted.toFixed(0)}KB`;
    });
    console.log(parts.join("; "));')
  kill $PID; sleep 1; kill -9 $PID 2>/dev/null || true; rm -f "$log" "$log.pid"
  echo "$(basename "$root") $w req/s=$(echo "$out" | awk '/Requests\/sec/{print $2}') p99=$(echo "$out" | awk '/ 99%/{print $2}') $gc"
done
