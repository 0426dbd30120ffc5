-- wrk script for the pitcache benchmarks.
--   wrk -t T -c C -d D --latency -s paths.lua http://127.0.0.1:PORT -- PATHS_FILE API_KEY MODE
-- MODE "list": each request takes the next path of PATHS_FILE (each thread starts at its own
--   offset and wraps around), so every alternative answers the same spread of queries.
-- MODE "walk": a path starts a page chain; while a response has next_cursor, the thread's next
--   request is that path + cursor. Responses cannot be told apart per connection inside one
--   wrk thread, so "walk" must run with one connection per thread (-t C -c C).
-- done() prints one line "BENCH_JSON {...}" that the runner parses.

local threads = {}
local created = 0

function setup(thread)
  thread:set("tid", created)
  created = created + 1
  table.insert(threads, thread)
end

-- per-thread state (globals, so done() can read them with thread:get)
rows = 0
pages = 0
chains = 0
bad = 0

local paths = {}
local n = 0
local idx = 0
local mode = "list"
local headers = {}
local base = nil   -- path of the chain in progress (walk mode)
local cursor = nil -- its next cursor, if any

function init(args)
  local file, key = args[1], args[2]
  mode = args[3] or "list"
  for line in io.lines(file) do
    if #line > 0 then
      n = n + 1
      paths[n] = line
    end
  end
  if n == 0 then error("no paths in " .. tostring(file)) end
  headers["x-api-key"] = key
  -- A prime stride spreads the threads' starting points over the list.
  idx = (tid * 7919) % n
end

local function escape(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function request()
  local path
  if mode == "walk" and cursor ~= nil then
    local sep = base:find("?", 1, true) and "&" or "?"
    path = base .. sep .. "cursor=" .. escape(cursor)
  else
    idx = idx % n + 1
    path = paths[idx]
    base = path
    chains = chains + 1
  end
  return wrk.format("GET", path, headers)
end

function response(status, hdrs, body)
  if status < 200 or status > 299 then
    bad = bad + 1
    cursor = nil
    return
  end
  pages = pages + 1
  -- pitcache carries the envelope in headers in every format (x-count, x-next-cursor: CSV and
  -- Arrow have no envelope in the body); else count and next_cursor come before "data" in
  -- the JSON envelope: look only at the head.
  local c = hdrs["x-count"]
  local head = nil
  if c == nil then
    head = body:sub(1, 512)
    c = head:match('"count":(%d+)')
  end
  if c then rows = rows + tonumber(c) end
  if mode == "walk" then
    if hdrs["x-count"] ~= nil then
      cursor = hdrs["x-next-cursor"]
    else
      cursor = head:match('"next_cursor":"([^"]+)"')
    end
  end
end

function done(summary, latency, requests)
  local t_rows, t_pages, t_chains, t_bad = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    t_rows = t_rows + (t:get("rows") or 0)
    t_pages = t_pages + (t:get("pages") or 0)
    t_chains = t_chains + (t:get("chains") or 0)
    t_bad = t_bad + (t:get("bad") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"rows":%d,"pages":%d,"chains":%d,"non2xx":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout, t_rows, t_pages, t_chains, t_bad))
end
