-- `lunet load --out prometheus`'s pure parts (docs/load.md, "Live metrics in Prometheus"): the
-- remote-write protobuf (read back by protoc against prompb's schema), the series a registry
-- makes (names, labels, exact histogram buckets), the push queue's decisions, snappy, and the
-- settings read from the environment with each bad one named.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local core = require "lunet.core"
local rw = require "lunet.load.remote_write"
local series = require "lunet.load.prometheus_series"
local push_queue = require "lunet.load.push_queue"
local prometheus = require "lunet.load.prometheus"
local metrics = require "lunet.load.metrics"
local hdr = require "lunet.load.hdr"

-- prompb's messages as remote write 1.0 defines them, for protoc --decode.
local PROTO = [[
syntax = "proto3";
package prometheus;
message WriteRequest { repeated TimeSeries timeseries = 1; }
message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
message Label { string name = 1; string value = 2; }
message Sample { double value = 1; int64 timestamp = 2; }
]]

local function decode(bytes)
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p '" .. dir .. "'")
  h.write_file(dir .. "/remote.proto", PROTO)
  h.write_file(dir .. "/body.bin", bytes)
  local code, out = h.run("cd '" .. dir .. "' && protoc --decode=prometheus.WriteRequest remote.proto < body.bin")
  eq(code, 0, out)
  return out
end

test("a WriteRequest reads back with protoc: labels sorted by name, empty ones left out, value and timestamp", function()
  local labels = rw.labels({ { "testid", "t1" }, { "__name__", "lunet_http_reqs_total" }, { "Zed", "upper" },
                             { "method", "GET" }, { "empty", "" } })
  local body = rw.request({ rw.series(labels, 42, 1796689573582), rw.series(labels, 0.25, 1796689573583) })
  local text = decode(body)
  local names = {}
  for name in text:gmatch('name: "([^"]*)"') do names[#names + 1] = name end
  eq(names, { "Zed", "__name__", "method", "testid", "Zed", "__name__", "method", "testid" }, "byte order, twice")
  truthy(text:find("value: 42\n", 1, true) and text:find("timestamp: 1796689573582", 1, true), text)
  truthy(text:find("value: 0.25\n", 1, true) and text:find("timestamp: 1796689573583", 1, true), text)
  truthy(not text:find("empty", 1, true), "a label with no value is not sent")
  -- Long values cross a varint's first byte: 300 bytes of label value.
  local long = ("x"):rep(300)
  text = decode(rw.request({ rw.series(rw.labels({ { "__name__", "m" }, { "k", long } }), 1, 1) }))
  truthy(text:find(long, 1, true), "a 300-byte label value, whole")
end)

test("varint: protobuf's encoding at each length boundary", function()
  eq({ rw.varint(0), rw.varint(127), rw.varint(128), rw.varint(300), rw.varint(16384) },
     { "\0", "\127", "\128\1", "\172\2", "\128\128\1" })
end)

test("snappy: core.snappy round-trips through libsnappy, and unsnappy refuses a block larger than its limit", function()
  local text = ("lunet_http_reqs_total "):rep(1000) .. "\0\1\2\255"
  local packed = core.snappy(text)
  truthy(#packed < #text / 10, "repetitive text compresses: " .. #packed .. " bytes")
  eq(core.unsnappy(packed), text)
  local ok, err = pcall(core.unsnappy, packed, 100)
  truthy(not ok and err.kind == "too_large", tostring(err))
  ok, err = pcall(core.unsnappy, "\255\255\255\255\255\255 not snappy")
  truthy(not ok and (err.kind == "decode" or err.kind == "too_large"), tostring(err))
  eq(core.unsnappy(core.snappy("")), "", "empty in, empty out")
end)

-- A registry with a trend of known durations (ms) under one tag set.
local function registry_with(values)
  local r = metrics.registry()
  local m = r:metric("http_req_duration", "trend", "time")
  local tags = { scenario = "default", name = "GET /x", method = "GET", status = "200", ["my-tag"] = "v", le = "mine" }
  for _, v in ipairs(values) do r:add(m, v, tags) end
  r:add(r:metric("http_reqs", "counter"), #values, { scenario = "default" })
  r:add(r:metric("data_received", "counter", "data"), 1234, { scenario = "default" })
  local checks = r:metric("checks", "rate")
  r:add(checks, true, { check = "ok" }); r:add(checks, true, { check = "ok" }); r:add(checks, false, { check = "ok" })
  r:add(r:metric("vus", "gauge"), 3, {})
  return r
end

-- The decoded series of a registry: { [name .. "{" .. sorted labels .. "}"] = value }.
local function collected(r, builder)
  local text = decode(rw.request((builder or series.new({ labels = { { "testid", "T" }, { "shard", "1" } } })):collect(r, 1000)))
  local out = {}
  for block in text:gmatch("timeseries {(.-)\n}") do
    local labels, name = {}, nil
    for k, v in block:gmatch('name: "([^"]*)"%s*value: "([^"]*)"') do
      if k == "__name__" then name = v else labels[#labels + 1] = k .. "=" .. v end
    end
    out[name .. "{" .. table.concat(labels, ",") .. "}"] = tonumber(block:match("samples {%s*value: ([^%s]+)"))
  end
  return out
end

test("series: counters _total (bytes _bytes_total), a rate by result, a gauge, a trend as a histogram in seconds", function()
  local values = {}
  for i = 1, 1000 do values[i] = i * 0.37 end   -- 0.37 ms .. 370 ms
  local s = collected(registry_with(values))
  local L = "my_tag=v,name=GET /x,scenario=default,shard=1,status=200,tag_le=mine,testid=T"
  eq(s["lunet_http_reqs_total{scenario=default,shard=1,testid=T}"], 1000)
  eq(s["lunet_data_received_bytes_total{scenario=default,shard=1,testid=T}"], 1234)
  eq(s["lunet_checks_total{check=ok,result=true,shard=1,testid=T}"], 2)
  eq(s["lunet_checks_total{check=ok,result=false,shard=1,testid=T}"], 1)
  eq(s["lunet_vus{shard=1,testid=T}"], 3)
  eq(s["lunet_http_req_duration_seconds_count{method=GET," .. L .. "}"], 1000)
  local sum = 0
  for _, v in ipairs(values) do sum = sum + math.floor(v * 1000 + 0.5) end
  truthy(math.abs(s["lunet_http_req_duration_seconds_sum{method=GET," .. L .. "}"] - sum / 1e6) < 1e-9, "the sum in seconds")
  -- Each le's count: the values at most le, exactly (every value here sits on a slot's start or
  -- inside a slot that lies wholly on one side of each bound).
  for _, b in ipairs(series.TIME_BUCKETS) do
    local want = 0
    for _, v in ipairs(values) do if v / 1000 <= b then want = want + 1 end end
    local le = string.format("%.10g", b)
    local key = "lunet_http_req_duration_seconds_bucket{le=" .. le .. ",method=GET," .. L .. "}"
    eq(s[key], want, key)
  end
  eq(s["lunet_http_req_duration_seconds_bucket{le=+Inf,method=GET," .. L .. "}"], 1000, "+Inf holds every sample")
end)

test("cumulative buckets: a bound inside an HDR slot moves a count by the slot's width at most", function()
  local h1 = hdr.new()
  for v = 100000, 100200 do h1:record(v) end   -- µs around 100 ms, where a slot is 64 µs wide
  local bounds = series.bounds({ 0.1 }, 1e6)
  local counts = series.cumulative(h1, bounds)
  local exact = 1   -- only 100000 µs is at most 0.1 s
  truthy(math.abs(counts[1] - exact) <= 64, "under 0.1 s: " .. counts[1])
  eq(counts[2], 201, "+Inf: all")
end)

test("label names: what Prometheus would refuse is renamed, its own names prefixed", function()
  eq({ series.label_name("my-tag"), series.label_name("9lives"), series.label_name("le"), series.label_name("result"),
       series.label_name("__x"), series.label_name("ok_1"), series.label_name("") },
     { "my_tag", "_9lives", "tag_le", "tag_result", "tag___x", "ok_1", "_" })
end)

test("the push queue: sent in order, retried with backoff, a 4xx stops it, a full queue drops the oldest", function()
  local q = push_queue.new(3)
  q:add("a", 10); q:add("b", 20)
  eq(q:head().payload, "a")
  local what, wait = q:answered(503)
  eq({ what, wait }, { "retry", 0.5 })
  what, wait = q:answered(nil, "connection refused")
  eq({ what, wait, q.last_error }, { "retry", 1.0, "connection refused" })
  what, wait = q:answered(429)
  eq({ what, wait }, { "retry", 2.0 }, "429 is retried")
  for _ = 1, 10 do what, wait = q:answered(500) end
  eq(wait, push_queue.CAP, "the backoff has a ceiling")
  eq(q:answered(204), "sent")
  eq({ q.sent, q.samples_sent, q:head().payload }, { 1, 10, "b" })
  eq(q:answered(408), "retry", "408 is retried")
  q:add("c", 30); q:add("d", 40)
  eq({ q.dropped, q:head().payload }, { 0, "b" }, "three fit")
  q:add("e", 50)
  eq({ q.dropped, q.samples_dropped, q:head().payload }, { 1, 20, "c" }, "the oldest dropped for the newest")
  eq(q:answered(401), "stop")
  eq({ q.stopped, q.dropped, q.samples_dropped, q:head() }, { "HTTP 401", 4, 140, nil }, "what waited counts as dropped")
  q:add("f", 5)
  eq({ q.dropped, q:head() }, { 5, nil }, "nothing is queued after a stop")
  local line = prometheus.summary(q)
  truthy(line:find("1 push sent (10 samples)", 1, true) and line:find("5 pushes dropped (145 samples)", 1, true)
    and line:find("stopped: the receiver answered HTTP 401", 1, true), line)
end)

local function env(t) return function(k) return t[k] end end

test("settings: the URL from --out or the environment; credentials in the URL, bad durations and buckets refused", function()
  local c = assert(prometheus.config("http://127.0.0.1:9090/api/v1/write", env({})))
  eq({ c.url, c.interval, c.flush_timeout, c.auth, c.insecure }, { "http://127.0.0.1:9090/api/v1/write", 5, 10, nil, false })
  c = assert(prometheus.config(nil, env({ LUNET_PROMETHEUS_RW_SERVER_URL = "https://p/api/v1/write", LUNET_PROMETHEUS_RW_PUSH_INTERVAL = "500ms",
    LUNET_PROMETHEUS_RW_BEARER_TOKEN = "tok", LUNET_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY = "true", LUNET_PROMETHEUS_RW_BUCKETS = "0.01, 0.1,1" })))
  eq({ c.url, c.interval, c.auth, c.insecure, c.buckets }, { "https://p/api/v1/write", 0.5, { bearer = "tok" }, true, { 0.01, 0.1, 1 } })
  c = assert(prometheus.config("http://p/w", env({ LUNET_PROMETHEUS_RW_USERNAME = "u", LUNET_PROMETHEUS_RW_PASSWORD = "p" })))
  eq(c.auth, { basic = { "u", "p" } })
  local function refused(url, e, pattern)
    local ok, err = prometheus.config(url, env(e))
    truthy(not ok and err:find(pattern, 1, true), tostring(err))
    return err
  end
  refused(nil, {}, "needs the receiver's URL")
  refused("ftp://p/w", {}, "takes an http:// or https:// URL")
  local err = refused("http://user:hunter2@p/w", {}, "the URL holds credentials")
  truthy(not err:find("hunter2", 1, true), "the password is not repeated")
  refused("http://p/w", { LUNET_PROMETHEUS_RW_PUSH_INTERVAL = "soon" }, "LUNET_PROMETHEUS_RW_PUSH_INTERVAL")
  refused("http://p/w", { LUNET_PROMETHEUS_RW_PUSH_INTERVAL = "0s" }, "must be more than 0")
  refused("http://p/w", { LUNET_PROMETHEUS_RW_BUCKETS = "1,0.5" }, "rising seconds")
  refused("http://p/w", { LUNET_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY = "yes" }, "true or false")
  refused("http://p/w", { LUNET_PROMETHEUS_RW_BEARER_TOKEN = "t", LUNET_PROMETHEUS_RW_USERNAME = "u" }, "give one")
end)

test("--out: json and prometheus together, LUNET_OUT adds outputs, an unknown kind named", function()
  local args = require "lunet.load.args"
  local c = args.parse({ "s.lua", "--out", "json=r.json", "--out", "prometheus=http://p/w" }, env({}))
  eq({ c.out, c.prometheus }, { "r.json", "http://p/w" })
  c = args.parse({ "s.lua" }, env({ LUNET_OUT = "prometheus" }))
  eq(c.prometheus, true, "the URL then comes from LUNET_PROMETHEUS_RW_SERVER_URL")
  local ok, err = pcall(args.parse, { "s.lua", "--out", "influxdb=http://x" }, env({}))
  truthy(not ok and err.usage:find("json=FILE or prometheus[=URL], got 'influxdb=http://x'", 1, true), tostring(err.usage))
  ok, err = pcall(args.parse, { "s.lua", "-o", "prometheus=http://a", "--out", "prometheus=http://b" }, env({}))
  truthy(not ok and err.usage:find("one receiver", 1, true))
end)

h.done()
