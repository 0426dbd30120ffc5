#!/usr/bin/env bash
# The real third-party programs the tests talk to, from Debian's packages, installed when
# missing (a fresh machine has none of them): promtool (package prometheus) checks
# /metrics and the cluster test runs Prometheus; nginx and HAProxy run the shipped proxy
# configs (deploy/) in front of real servers; chromium (at PITCACHE_CHROMIUM, default
# /usr/bin/chromium, where playwright-core drives it) opens the explorer page
# (test/explore-browser.test.ts); wrk drives the bench harness, which test/bench-pair.test.ts
# runs at a tiny size; python3-pandas runs the README's pandas recipes. Run by `npm test` and `npm run test:cluster`
# before they start (package.json's pre-scripts), and by .ci/run.
set -euo pipefail
need=()
command -v promtool >/dev/null || need+=(prometheus)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || need+=(haproxy)
[ -x "${PITCACHE_CHROMIUM:-/usr/bin/chromium}" ] || need+=(chromium)
command -v wrk >/dev/null || need+=(wrk)
# Debian's python3 and pandas run the README's pandas recipes (test/readme-recipes.test.ts).
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pandas' 2>/dev/null || need+=(python3-pandas)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "the tests need Debian's ${need[*]}: install them (apt-get install ${need[*]}) and run again" >&2
  exit 1
fi
echo "installing ${need[*]} from Debian's packages (the tests run them)" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
