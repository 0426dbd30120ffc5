#!/bin/bash
# VmRSS and VmHWM of `pitcache serve` once /readyz answers 200 (and 3 s more), then stops it.
# usage: bench/publish/rss-after-load.sh <main.js> <source> <keys> <port>
node $1 serve --source $2 --keys $3 --port $4 --workers 1 --no-access-log > /dev/null 2>&1 &
pid=$!
for i in $(seq 1 600); do
  code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$4/readyz)
  [ "$code" = 200 ] && break
  sleep 0.5
done
sleep 3
grep -E "VmRSS|VmHWM" /proc/$pid/status | tr '\n' ' '
kill $pid; wait $pid 2>/dev/null
echo
