--- `lunet load --out prometheus=URL`: the run's metrics pushed live to Prometheus remote write
--- 1.0 (docs/load.md, "Live metrics in Prometheus"): every few seconds and once more at the end,
--- each push the run's totals so far (lunet.load.prometheus_series), protobuf
--- (lunet.load.remote_write), snappy-compressed (libsnappy, core.snappy). Pushing runs in tasks of
--- its own beside the VUs': a push is built in the ticker, sent by a sender task that waits on
--- the network, never on a VU. A receiver that is down, slow or answers 5xx, 408 or 429 is
--- retried with backoff while newer pushes wait in a bounded queue (lunet.load.push_queue); a 4xx
--- stops the output with one message and the run goes on. What was dropped is said at the end.
---
--- Its settings come from the environment, where a Kubernetes Job carries them and a shell's
--- history and `ps` do not show them (the credentials are never printed):
---   LUNET_PROMETHEUS_RW_SERVER_URL        the receiver, when --out prometheus names none
---   LUNET_PROMETHEUS_RW_PUSH_INTERVAL     seconds between pushes (5s)
---   LUNET_PROMETHEUS_RW_BEARER_TOKEN      Authorization: Bearer
---   LUNET_PROMETHEUS_RW_USERNAME, _PASSWORD  Authorization: Basic
---   LUNET_PROMETHEUS_RW_CA_FILE           PEM CA certificates for an https receiver
---   LUNET_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY  true: no verification of its certificate
---   LUNET_PROMETHEUS_RW_TESTID            the testid label (a new one each run by default)
---   LUNET_PROMETHEUS_RW_FLUSH_TIMEOUT     how long the end waits for the last pushes (10s)
---   LUNET_PROMETHEUS_RW_BUCKETS           a trend of durations' le bounds, in seconds
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local push_queue = require "lunet.load.push_queue"
local series = require "lunet.load.prometheus_series"
local rw = require "lunet.load.remote_write"
local options = require "lunet.load.options"

local M = {}

local ENV = "LUNET_PROMETHEUS_RW_"

-- A duration setting: seconds, or nil and the problem.
local function seconds(getenv, name, default)
  local text = getenv(ENV .. name)
  if text == nil or text == "" then return default end
  local s, err = options.duration(text, ENV .. name)
  if not s then return nil, err end
  if s <= 0 then return nil, ENV .. name .. " must be more than 0, got '" .. text .. "'" end
  return s
end

--- The output's settings from `url` (the --out value after prometheus=, or nil) and the
--- environment: a table, or nil and the problem (a usage error: said before the run starts).
function M.config(url, getenv)
  getenv = getenv or os.getenv
  url = url or getenv(ENV .. "SERVER_URL")
  if not url or url == "" then
    return nil, "--out prometheus needs the receiver's URL: --out prometheus=http://HOST:9090/api/v1/write, or " .. ENV .. "SERVER_URL"
  end
  local scheme, rest = url:match("^(%a[%w+.-]*)://(.*)$")
  if not scheme or (scheme:lower() ~= "http" and scheme:lower() ~= "https") then
    return nil, "--out prometheus takes an http:// or https:// URL, got '" .. require("lunet.terminal_safe").line(url) .. "'"
  end
  if (rest:match("^[^/?#]*") or ""):find("@", 1, true) then
    return nil, "--out prometheus: the URL holds credentials, which would be printed with it: give them in " ..
      ENV .. "USERNAME and " .. ENV .. "PASSWORD, or " .. ENV .. "BEARER_TOKEN"
  end
  local c = { url = url }
  local err
  c.interval, err = seconds(getenv, "PUSH_INTERVAL", 5)
  if not c.interval then return nil, err end
  c.flush_timeout, err = seconds(getenv, "FLUSH_TIMEOUT", 10)
  if not c.flush_timeout then return nil, err end
  local token, user, password = getenv(ENV .. "BEARER_TOKEN"), getenv(ENV .. "USERNAME"), getenv(ENV .. "PASSWORD")
  if token and token ~= "" then
    if user then return nil, ENV .. "BEARER_TOKEN and " .. ENV .. "USERNAME: give one" end
    c.auth = { bearer = token }
  elseif user and user ~= "" then
    c.auth = { basic = { user, password or "" } }
  end
  c.ca_file = getenv(ENV .. "CA_FILE")
  local insecure = getenv(ENV .. "INSECURE_SKIP_TLS_VERIFY")
  if insecure and insecure ~= "" and insecure ~= "true" and insecure ~= "false" then
    return nil, ENV .. "INSECURE_SKIP_TLS_VERIFY is true or false, got '" .. insecure .. "'"
  end
  c.insecure = insecure == "true"
  c.testid = getenv(ENV .. "TESTID")
  local buckets = getenv(ENV .. "BUCKETS")
  if buckets and buckets ~= "" then
    c.buckets = {}
    for word in buckets:gmatch("[^,%s]+") do
      local b = tonumber(word)
      if not b or b <= 0 or b == math.huge or (c.buckets[#c.buckets] and b <= c.buckets[#c.buckets]) then
        return nil, ENV .. "BUCKETS is a list of rising seconds (0.01,0.1,1), got '" .. buckets .. "'"
      end
      c.buckets[#c.buckets + 1] = b
    end
  end
  return c
end

--- A test id for the testid label when none is set: the test's (lunet.load.shard.identity) and
--- when it started, so that two runs of one script are two tests and a run's shards one
--- (they share --start-at; a Kubernetes Job sets LUNET_PROMETHEUS_RW_TESTID to its name).
function M.default_testid(identity, started)
  return identity:sub(1, 8) .. "-" .. os.date("!%Y%m%dT%H%M%S", math.floor(started))
end

local Out = {}
Out.__index = Out

--- Starts the output for `registry` with the run's labels ({ { name, value }, ... }): a
--- pusher that pushes every cfg.interval seconds and a sender that sends what is queued.
function M.start(cfg, registry, labels, stderr)
  local http = require "lunet.http"
  local o = setmetatable({ cfg = cfg, registry = registry, stderr = stderr, queue = push_queue.new(),
                           builder = series.new({ labels = labels, time_buckets = cfg.buckets }), pushes = 0 }, Out)
  o.session = http.session({ timeout = 10, connect_timeout = 5, follow = false, decompress = false,
    insecure = cfg.insecure, ca_file = cfg.ca_file, auth = cfg.auth,
    headers = { ["Content-Encoding"] = "snappy", ["X-Prometheus-Remote-Write-Version"] = "0.1.0" } })
  o.sender = task.spawn(function() o:send_all() end)
  o.pusher = task.spawn(function()
    while true do
      task.sleep(cfg.interval)
      o:push()
    end
  end)
  return o
end

--- Queues a push of every series' value now.
function Out:push()
  if self.queue.stopped then return end
  -- Each push a later millisecond than the one before: Prometheus refuses a second sample of a
  -- series at the same timestamp (the last push can follow a ticker's within one).
  local ts = math.max(math.floor(core.wall_time() * 1000), (self.last_ts or 0) + 1)
  self.last_ts = ts
  local list, n = self.builder:collect(self.registry, ts)
  self.queue:add(core.snappy(rw.request(list)), n)
  self.pushes = self.pushes + 1
  local wake = self.wake
  if wake then self.wake = nil; wake:resolve(true) end
end

-- The sender: the queue's head, tried until it is sent, retried after a backoff, or the
-- receiver refuses it; then the next. Waits for a push when the queue is empty.
function Out:send_all()
  while true do
    local item = self.queue:head()
    if not item then
      if self.queue.stopped then return end
      self.wake = task.source()
      self.wake.task:await()
    else
      local ok, r = pcall(self.session.post, self.session, self.cfg.url,
        { body = item.payload, content_type = "application/x-protobuf" })
      local status, err
      if ok then status = r.status else err = require("lunet.errors").describe(r) end
      local what, wait = self.queue:answered(status, err)
      if what == "stop" then
        self.stderr:write("lunet load: prometheus remote write stopped: ", self.cfg.url, " answered ", self.queue.last_error,
          (ok and r.body ~= "" and (": " .. require("lunet.terminal_safe").line(r.body:sub(1, 200))) or ""),
          "; the run goes on without it\n")
        return
      elseif what == "retry" then
        task.sleep(wait)
      end
    end
  end
end

--- The run's end: one last push, then up to cfg.flush_timeout seconds for the queue to be
--- sent; what is left is dropped. Returns the queue (its counts) for M.summary.
function Out:finish()
  self.pusher:cancel("the run ended")
  pcall(self.pusher.await, self.pusher)
  self:push()
  local deadline = core.now() + self.cfg.flush_timeout
  while self.queue:head() and self.sender.state == "pending" and core.now() < deadline do task.sleep(0.02) end
  self.queue:abandon()
  if self.sender.state == "pending" then self.sender:cancel("the run ended") end
  pcall(self.sender.await, self.sender)
  return self.queue
end

--- The output's line under the summary: pushes and samples sent, and what was dropped and why.
function M.summary(q)
  local line = string.format("prometheus remote write: %d push%s sent (%d samples)", q.sent, q.sent == 1 and "" or "es", q.samples_sent)
  if q.dropped > 0 then
    line = line .. string.format("; %d push%s dropped (%d samples)", q.dropped, q.dropped == 1 and "" or "es", q.samples_dropped)
  end
  if q.stopped then line = line .. "; stopped: the receiver answered " .. q.stopped
  elseif q.failures > 0 then line = line .. string.format("; %d tr%s failed, the last: %s", q.failures, q.failures == 1 and "y" or "ies", q.last_error)
  elseif q.dropped > 0 then line = line .. "; no answer from the receiver" end
  return line
end

return M
