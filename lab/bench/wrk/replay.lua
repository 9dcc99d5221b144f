-- Replay a file of prepared requests with wrk; one line per request, tab-separated:
--   METHOD  PATH  SESSION-KEY  CSRF-SECRET  FORM-BODY  API-TOKEN  MORE-COOKIES  KIND
-- Thread i of n takes lines i, i+n, i+2n, ...  Modes:
--   once: every line exactly once, then the thread stops (a burst of distinct shoppers);
--   loop: cycle through the lines until wrk's --duration ends.
-- Arguments (after `--`): requests-file mode result-json-file thread-count
-- done() writes wrk's latency percentiles and, per thread, HTTP status counts, envelope
-- `code` counts and the sign of an integer `data` (the result endpoint's order id / 0 / -1).
-- In `once` mode it also writes each answer's latency by its `code`: a burst's answers are of
-- two kinds (a sold-out costs a fraction of an accepted buy), and one distribution over both
-- puts one kind at the median and the other at the tail. wrk's callbacks do not say which
-- connection answered, so every request carries an X-Request-ID naming its line, which the
-- shop echoes, and the latency is the time from request() to response() for that line.
-- The id also names the line's KIND (`bench-12-page`), and the HTTP statuses and the edge's
-- X-Cache answers are counted by it: an edge's cached copy carries the id of the request that
-- filled it, another line, but of the same URL and so of the same kind (a kind is a URL's).

local ffi = require("ffi")
ffi.cdef([[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock_id, bench_timespec *tp);
]])
local timespec = ffi.new("bench_timespec")

local function now_us() -- CLOCK_MONOTONIC
  ffi.C.clock_gettime(1, timespec)
  return tonumber(timespec.tv_sec) * 1000000 + math.floor(tonumber(timespec.tv_nsec) / 1000)
end

local threads = {}
local thread_count = 0

function setup(thread)
  thread:set("id", thread_count)
  thread_count = thread_count + 1
  table.insert(threads, thread)
end

function init(args)
  mode = args[2]
  result_file = args[3]
  local every = tonumber(args[4])
  requests = {}
  local index = 0
  for line in io.lines(args[1]) do
    if index % every == id then
      local method, path, session, csrf, body, token, cookies, kind =
        line:match("^(%u+)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
      local rid = "bench-" .. (#requests + 1)
      if kind ~= "" then
        rid = rid .. "-" .. kind
      end
      local headers = { ["Accept"] = "application/json", ["X-Request-ID"] = rid }
      local jar = {}
      if session ~= "" then
        jar[#jar + 1] = "sessionid=" .. session .. "; csrftoken=" .. csrf
        headers["X-CSRFToken"] = csrf
      end
      if cookies ~= "" then
        jar[#jar + 1] = cookies
      end
      if #jar > 0 then
        headers["Cookie"] = table.concat(jar, "; ")
      end
      if token ~= "" then
        headers["Authorization"] = "Token " .. token
      end
      if body ~= "" then
        headers["Content-Type"] = "application/x-www-form-urlencoded"
      else
        body = nil
      end
      requests[#requests + 1] = wrk.format(method, path, headers, body)
    end
    index = index + 1
  end
  planned = #requests
  sent, received, armed = 0, 0, 0
  first_sent_us, last_received_us = 0, 0
  statuses, codes, data = {}, {}, { positive = 0, zero = 0, negative = 0 }
  -- Two flat lists, not a table of lists: wrk's thread:get() copies one level of a table.
  sent_at, timed_codes, timed_us = {}, {}, {}
  x_cache = {} -- "kind X-Cache" -> answers
  kind_statuses = {} -- "kind status" -> answers
end

-- wrk calls delay() before every request a connection sends. It also calls request() once
-- on its own, before any connection, to verify the script: that call is not preceded by
-- delay() and must not use up a line.
function delay()
  -- Nothing left to send in `once` mode: park the connection until the thread stops.
  if mode == "once" and sent + armed >= #requests then
    return 3600000
  end
  armed = armed + 1
  return 0
end

function request()
  if armed == 0 then
    return requests[1]
  end
  armed = armed - 1
  sent = sent + 1
  local line = (sent - 1) % #requests + 1
  sent_at[line] = now_us()
  if sent == 1 then
    first_sent_us = sent_at[line]
  end
  return requests[line]
end

function response(status, headers, body)
  received = received + 1
  statuses[status] = (statuses[status] or 0) + 1
  -- Django's JSON has a space after the colon, DRF's compact JSON has none.
  local code = body and body:match('^{"code": ?(%-?%d+)')
  code = code or "none"
  codes[code] = (codes[code] or 0) + 1
  -- The order id of a result answer: the page's `"data": 12}`, the API's `"orderId":12`.
  local value = body and (body:match('"data": ?(%-?%d+)}$') or body:match('"orderId": ?(%-?%d+)'))
  if value then
    value = tonumber(value)
    if value > 0 then
      data.positive = data.positive + 1
    elseif value == 0 then
      data.zero = data.zero + 1
    else
      data.negative = data.negative + 1
    end
  end
  last_received_us = now_us()
  local rid = headers and (headers["X-Request-ID"] or headers["x-request-id"])
  local line = rid and tonumber(rid:match("^bench%-(%d+)"))
  local kind = rid and rid:match("^bench%-%d+%-([%w_]+)$") or ""
  local cache = headers and (headers["X-Cache"] or headers["x-cache"]) or "none"
  local pair = kind .. " " .. cache
  x_cache[pair] = (x_cache[pair] or 0) + 1
  local answered = kind .. " " .. status
  kind_statuses[answered] = (kind_statuses[answered] or 0) + 1
  if mode == "once" and line and sent_at[line] then
    timed_codes[#timed_codes + 1] = code
    timed_us[#timed_us + 1] = last_received_us - sent_at[line]
  end
  if mode == "once" and received >= #requests then
    -- wrk's main thread sleeps for --duration whatever its threads do: this file tells the
    -- harness to end it (SIGINT) now.
    io.open(result_file .. ".done." .. id, "w"):close()
    wrk.thread:stop()
  end
end

local function json_lists(codes, values)
  local lists = {}
  for i, code in ipairs(codes) do
    lists[code] = lists[code] or {}
    table.insert(lists[code], values[i])
  end
  local parts = {}
  for key, list in pairs(lists) do
    parts[#parts + 1] = string.format('"%s": [%s]', tostring(key), table.concat(list, ","))
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function json_counts(counts)
  local parts = {}
  for key, value in pairs(counts) do
    parts[#parts + 1] = string.format('"%s": %d', tostring(key), value)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

function done(summary, latency, _)
  local out = io.open(threads[1]:get("result_file"), "w")
  local percentiles = {}
  for _, p in ipairs({ 50, 90, 95, 99, 99.9 }) do
    percentiles[#percentiles + 1] = string.format('"%s": %d', tostring(p), latency:percentile(p))
  end
  local per_thread = {}
  for _, thread in ipairs(threads) do
    per_thread[#per_thread + 1] = string.format(
      '{"sent": %d, "received": %d, "planned": %d, "first_sent_us": %d, "last_received_us": %d,'
        .. ' "statuses": %s, "codes": %s, "data": %s, "latency_us_by_code": %s, "x_cache": %s,'
        .. ' "kind_statuses": %s}',
      thread:get("sent"), thread:get("received"), thread:get("planned"),
      thread:get("first_sent_us"), thread:get("last_received_us"),
      json_counts(thread:get("statuses")), json_counts(thread:get("codes")), json_counts(thread:get("data")),
      json_lists(thread:get("timed_codes"), thread:get("timed_us")), json_counts(thread:get("x_cache")),
      json_counts(thread:get("kind_statuses"))
    )
  end
  out:write(string.format(
    '{"duration_us": %d, "requests": %d, "latency_us": {"min": %d, "mean": %.1f, "max": %d, "percentiles": {%s}},'
      .. ' "errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, "threads": [%s]}\n',
    summary.duration, summary.requests, latency.min, latency.mean, latency.max, table.concat(percentiles, ", "),
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout,
    table.concat(per_thread, ", ")
  ))
  out:close()
end
