-- `lunet load --out prometheus` against Debian's Prometheus 2.42 with its remote-write receiver
-- (started by scripts/test-servers, LUNET_PROMETHEUS; and private ones here, to kill and to put
-- behind basic auth), read back through its query API: every counter of three shards adds up to
-- the merged summary's, histogram_quantile of the summed buckets lands in the bucket of the
-- merged p95, the labels, the push at the end, a receiver killed mid-run and back, a 401, and a
-- receiver that never answers holding nothing up.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local json = require "lunet.json"
local series = require "lunet.load.prometheus_series"
local LUNET = h.lunet()
local NGINX = h.env("LUNET_NGINX")
local PROMETHEUS = h.env("LUNET_PROMETHEUS")
local HOSTILE = h.env("LUNET_HOSTILE")

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- A testid no other run of this file shares: the shared Prometheus keeps every run's series.
local function new_testid(what) return string.format("%s-%d-%d", what, os.time(), math.random(1e9)) end

-- One instant query's vector: a list of { metric = labels, value = number }.
local function query(base, expr, session)
  local r = (session or http.session({})):get(base .. "/api/v1/query", { params = { query = expr } })
  eq(r.status, 200, r.body)
  local out = {}
  for _, v in ipairs(r.json.data.result) do out[#out + 1] = { metric = v.metric, value = tonumber(v.value[2]) } end
  return out
end
local function scalar(base, expr, session)
  local v = query(base, expr, session)
  return v[1] and v[1].value
end

local SCRIPT = h.temp_file(string.format([[
options = { scenarios = { steady = { executor = "constant-vus", vus = 3, duration = "2s" } } }
local sizes = metrics.trend("reply_bytes")
return function(vu)
  local r = vu.session:get(%q)
  check(r, { ["is 200"] = function(r) return r.status == 200 end, ["is odd"] = function() return vu.iteration %% 2 == 1 end })
  sizes:add(#r.body)
  sleep(0.01)
end]], NGINX .. "/small.txt"))

test("three shards: every counter's sum is the merged summary's, p95 within a bucket, each shard labelled", function()
  local testid = new_testid("shards")
  local start = os.time() + 2
  local cmds, outs = {}, {}
  for i = 0, 2 do
    outs[i] = h.tmpname()
    cmds[#cmds + 1] = string.format("LUNET_PROMETHEUS_RW_TESTID=%s LUNET_PROMETHEUS_RW_PUSH_INTERVAL=500ms JOB_COMPLETION_INDEX=%d %s load -q %s --shards 3 --start-at %d --out json=%s --out prometheus=%s >%s.out 2>&1 &",
      q(testid), i, q(LUNET), q(SCRIPT), start, q(outs[i]), q(PROMETHEUS .. "/api/v1/write"), q(outs[i]))
  end
  h.run("{ " .. table.concat(cmds, " ") .. " wait; }")
  for i = 0, 2 do
    local said = h.read_file(outs[i] .. ".out")
    truthy(said:find("prometheus remote write: %d+ pushes sent") and not said:find("dropped"), said)
  end
  local export = h.tmpname()
  local code, out = h.run(q(LUNET) .. " load merge " .. q(outs[0]) .. " " .. q(outs[1]) .. " " .. q(outs[2]) .. " --summary-export " .. q(export))
  eq(code, 0, out)
  local m = json.decode(h.read_file(export)).metrics
  local sel = '{testid="' .. testid .. '"}'
  truthy(m.http_reqs.count > 30, "requests were made: " .. m.http_reqs.count)
  eq(scalar(PROMETHEUS, "sum(lunet_http_reqs_total" .. sel .. ")"), m.http_reqs.count, "http_reqs")
  eq(scalar(PROMETHEUS, "sum(lunet_iterations_total" .. sel .. ")"), m.iterations.count, "iterations")
  eq(scalar(PROMETHEUS, 'sum(lunet_checks_total{testid="' .. testid .. '",result="true"})'), m.checks.passes, "checks passed")
  eq(scalar(PROMETHEUS, 'sum(lunet_checks_total{testid="' .. testid .. '",result="false"})'), m.checks.fails, "checks failed")
  eq(scalar(PROMETHEUS, "sum(lunet_data_received_bytes_total" .. sel .. ")"), m.data_received.count, "bytes received")
  eq(scalar(PROMETHEUS, "sum(lunet_http_req_duration_seconds_count" .. sel .. ")"), m.http_req_duration and m.http_reqs.count, "every duration")
  eq(scalar(PROMETHEUS, "sum(lunet_reply_bytes_count" .. sel .. ")"), m.iterations.count, "a custom trend, in its own unit")
  -- The p95 of all shards' buckets lies in the bucket that holds the merged summary's exact p95.
  local p95 = m.http_req_duration["p(95)"] / 1000
  local got = scalar(PROMETHEUS, "histogram_quantile(0.95, sum by (le) (lunet_http_req_duration_seconds_bucket" .. sel .. "))")
  local lo, hi = 0, math.huge
  for _, b in ipairs(series.TIME_BUCKETS) do
    if b < p95 then lo = b elseif hi == math.huge then hi = b end
  end
  truthy(got >= lo and got <= hi * 1.001, string.format("histogram_quantile %.6f s; the summary's p95 %.6f s is in (%g, %g]", got, p95, lo, hi))
  -- Labels: each shard's series apart, with the request's tags.
  local v = query(PROMETHEUS, "lunet_http_reqs_total" .. sel)
  local shards = {}
  for _, s in ipairs(v) do
    shards[#shards + 1] = s.metric.shard
    eq({ s.metric.scenario, s.metric.method, s.metric.status, s.metric.name },
       { "steady", "GET", "200", NGINX .. "/small.txt" }, "a request's tags as labels")
  end
  table.sort(shards)
  eq(shards, { "0", "1", "2" }, "one series a shard")
  eq(scalar(PROMETHEUS, "count(lunet_vus_max" .. sel .. ")"), 3, "a gauge a shard")
end)

test("the push at the end: a run shorter than the interval lands its totals", function()
  local testid = new_testid("end")
  local code, out = h.run(string.format("LUNET_PROMETHEUS_RW_TESTID=%s LUNET_PROMETHEUS_RW_PUSH_INTERVAL=1h %s load %s --vus 1 --duration 1s --out prometheus=%s",
    q(testid), q(LUNET), q(SCRIPT), q(PROMETHEUS .. "/api/v1/write")))
  eq(code, 0, out)
  local reqs = tonumber(out:match("http_reqs%.*: (%d+)"))
  truthy(reqs and reqs > 0, out)
  truthy(out:find("prometheus remote write: 1 push sent", 1, true), out)
  eq(scalar(PROMETHEUS, 'sum(lunet_http_reqs_total{testid="' .. testid .. '"})'), reqs)
end)

test("a tag that is not UTF-8 goes as it is, and the push lands (Prometheus 2.42 takes it)", function()
  local testid = new_testid("utf8")
  local script = h.temp_file(string.format([[
return function(vu) vu.session:get(%q, { tags = { name = "caf\233 \255" } }) end]], NGINX .. "/small.txt"))
  local code, out = h.run(string.format("LUNET_PROMETHEUS_RW_TESTID=%s %s load %s --vus 1 --iterations 3 --out prometheus=%s",
    q(testid), q(LUNET), q(script), q(PROMETHEUS .. "/api/v1/write")))
  eq(code, 0, out)
  truthy(out:find("prometheus remote write: 1 push sent", 1, true), out)
  local v = query(PROMETHEUS, 'lunet_http_reqs_total{testid="' .. testid .. '"}')
  eq({ v[1] and v[1].value, v[1] and v[1].metric.name }, { 3, "caf\u{FFFD} \u{FFFD}" })
end)

-- A Prometheus of this file's own, on `port` (a free one when nil) with its data in `dir`;
-- `web` is a --web.config.file's text (basic auth, TLS: then `tls` is true and the URL is
-- https://localhost). Returns { url, port, dir, stop }.
local function own_prometheus(port, dir, web, tls)
  if not port then
    local _, p = h.run([[python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])']])
    port = tonumber(p:match("%d+"))
  end
  if not dir then
    dir = h.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. q(dir))
    h.write_file(dir .. "/prometheus.yml", "global:\n  scrape_interval: 1m\n")
  end
  local web_flag = ""
  if web then
    h.write_file(dir .. "/web.yml", web)
    web_flag = " --web.config.file=" .. q(dir .. "/web.yml")
  end
  local start = string.format("cd %s && { setsid prometheus --config.file=prometheus.yml --storage.tsdb.path=data --web.listen-address=127.0.0.1:%d --web.enable-remote-write-receiver%s </dev/null >>prometheus.log 2>&1 & echo $! > pid; }",
    q(dir), port, web_flag)
  local p = { url = (tls and "https://localhost:" or "http://127.0.0.1:") .. port, port = port, dir = dir, start_command = start }
  function p.stop() os.execute("kill -KILL $(cat " .. q(dir .. "/pid") .. ") 2>/dev/null; sleep 0.2") end
  h.run(start)
  local auth_session = http.session(tls and { ca_file = h.env("LUNET_TEST_CA") }
    or web and { auth = { basic = { "lunet", "s3cret" } } } or {})
  for _ = 1, 100 do
    local ok, r = pcall(auth_session.get, auth_session, p.url .. "/-/ready", { timeout = 1 })
    if ok and r.status == 200 then return p end
    task.sleep(0.2)
  end
  p.stop()   -- (the test fails here: nothing is left running)
  error("prometheus did not start: " .. tostring(h.read_file(dir .. "/prometheus.log")))
end

test("a receiver killed mid-run and started again: the totals land once it is back, the failed tries said", function()
  local p = own_prometheus()
  h.cleanup(after_all, p.stop)
  local testid = new_testid("killed")
  -- The run lasts 4 s; the receiver is down from 1 s to 2.5 s, then back on the same port and data.
  local code, out = h.run(string.format("{ LUNET_PROMETHEUS_RW_TESTID=%s LUNET_PROMETHEUS_RW_PUSH_INTERVAL=300ms %s load %s --vus 2 --duration 4s --out prometheus=%s > %s.out 2>&1 & pid=$!; sleep 1; kill -KILL $(cat %s); sleep 1.5; %s; wait $pid; echo \"lunet=$?\"; cat %s.out; }",
    q(testid), q(LUNET), q(SCRIPT), q(p.url .. "/api/v1/write"), q(p.dir), q(p.dir .. "/pid"), p.start_command, q(p.dir)))
  truthy(out:find("lunet=0", 1, true), out)
  truthy(out:find("tries failed, the last:", 1, true) or out:find("try failed, the last:", 1, true), "the failed tries are said: " .. out)
  local reqs = tonumber(out:match("http_reqs%.*: (%d+)"))
  local got
  for _ = 1, 50 do   -- the restarted Prometheus answers queries once it is ready
    local ok, v = pcall(scalar, p.url, 'sum(lunet_http_reqs_total{testid="' .. testid .. '"})')
    if ok and v then got = v break end
    task.sleep(0.2)
  end
  eq(got, reqs, "the last push carried every request")
  p.stop()
end)

test("a receiver that answers 401: one message naming it, the credentials never printed, the run goes on", function()
  local hash = select(2, h.run([[python3 -W ignore -c "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))"]])):match("%S+")
  local p = own_prometheus(nil, nil, "basic_auth_users:\n  lunet: '" .. hash .. "'\n")
  h.cleanup(after_all, p.stop)
  local testid = new_testid("auth")
  local code, out = h.run(string.format("LUNET_PROMETHEUS_RW_TESTID=%s LUNET_PROMETHEUS_RW_USERNAME=lunet LUNET_PROMETHEUS_RW_PASSWORD=wrong-hunter2 LUNET_PROMETHEUS_RW_PUSH_INTERVAL=200ms %s load %s --vus 1 --duration 1s --out prometheus=%s",
    q(testid), q(LUNET), q(SCRIPT), q(p.url .. "/api/v1/write")))
  eq(code, 0, "the run goes on and passes: " .. out)
  local _, stops = out:gsub("prometheus remote write stopped: [^\n]* answered HTTP 401", "")
  eq(stops, 1, "said once: " .. out)
  truthy(out:find("stopped: the receiver answered HTTP 401", 1, true), "and in the account under the summary: " .. out)
  truthy(not out:find("wrong-hunter2", 1, true), "the password is never printed")
  -- The right password: the data lands.
  code, out = h.run(string.format("LUNET_PROMETHEUS_RW_TESTID=%s LUNET_PROMETHEUS_RW_USERNAME=lunet LUNET_PROMETHEUS_RW_PASSWORD=s3cret %s load %s --vus 1 --duration 1s --out prometheus=%s",
    q(testid), q(LUNET), q(SCRIPT), q(p.url .. "/api/v1/write")))
  eq(code, 0, out)
  truthy(not out:find("s3cret", 1, true), "the password is never printed")
  local reqs = tonumber(out:match("http_reqs%.*: (%d+)"))
  eq(scalar(p.url, 'sum(lunet_http_reqs_total{testid="' .. testid .. '"})', http.session({ auth = { basic = { "lunet", "s3cret" } } })), reqs)
  p.stop()
end)

test("an https receiver: verified with LUNET_PROMETHEUS_RW_CA_FILE; without it the certificate problem is said, nothing sent", function()
  local tls_dir = h.env("LUNET_TEST_SERVERS") .. "/tls"
  local p = own_prometheus(nil, nil, string.format("tls_server_config:\n  cert_file: %s/server.pem\n  key_file: %s/server.key\n", tls_dir, tls_dir), true)
  h.cleanup(after_all, p.stop)
  local testid = new_testid("tls")
  local code, out = h.run(string.format("LUNET_PROMETHEUS_RW_TESTID=%s LUNET_PROMETHEUS_RW_CA_FILE=%s %s load %s --vus 1 --duration 1s --out prometheus=%s",
    q(testid), q(h.env("LUNET_TEST_CA")), q(LUNET), q(SCRIPT), q(p.url .. "/api/v1/write")))
  eq(code, 0, out)
  local reqs = tonumber(out:match("http_reqs%.*: (%d+)"))
  eq(scalar(p.url, 'sum(lunet_http_reqs_total{testid="' .. testid .. '"})', http.session({ ca_file = h.env("LUNET_TEST_CA") })), reqs)
  code, out = h.run(string.format("LUNET_PROMETHEUS_RW_FLUSH_TIMEOUT=1s %s load %s --vus 1 --duration 1s --out prometheus=%s",
    q(LUNET), q(SCRIPT), q(p.url .. "/api/v1/write")))
  eq(code, 0, out)
  truthy(out:find("0 pushes sent", 1, true) and out:find("failed, the last: [^\n]*certificate"), out)
  p.stop()
end)

test("a receiver that never answers holds nothing up: the run ends after its flush timeout, the pushes counted as dropped", function()
  local t0 = os.time()
  local code, out = h.run(string.format("LUNET_PROMETHEUS_RW_PUSH_INTERVAL=200ms LUNET_PROMETHEUS_RW_FLUSH_TIMEOUT=1s %s load %s --vus 2 --duration 2s --out prometheus=%s",
    q(LUNET), q(SCRIPT), q(HOSTILE .. "/stall")))
  eq(code, 0, out)
  truthy(os.time() - t0 <= 8, "a 2 s run with a 1 s flush timeout ended in " .. (os.time() - t0) .. " s")
  truthy(out:find("prometheus remote write: 0 pushes sent %(0 samples%); %d+ pushes dropped %(%d+ samples%); no answer from the receiver"), out)
  local reqs = tonumber(out:match("http_reqs%.*: (%d+)"))
  truthy(reqs and reqs > 50, "the VUs went on while the receiver hung: " .. tostring(reqs))
end)

test("bad settings are a usage error before any request: exit 2, the problem named", function()
  local code, out = h.run(string.format("LUNET_PROMETHEUS_RW_PUSH_INTERVAL=often %s load %s --vus 1 --duration 1s --out prometheus=%s",
    q(LUNET), q(SCRIPT), q(PROMETHEUS .. "/api/v1/write")))
  eq(code, 2, out)
  truthy(out:find("LUNET_PROMETHEUS_RW_PUSH_INTERVAL", 1, true) and not out:find("http_reqs", 1, true), out)
  code, out = h.run(string.format("%s load %s --out prometheus", q(LUNET), q(SCRIPT)))
  eq(code, 2, out)
  truthy(out:find("needs the receiver's URL", 1, true), out)
end)

h.done()
