-- Retry decisions, as a pure function: given a retry policy, the attempt that just ended (its
-- error or response), the method and a random number, whether to try again and after how long.
-- Tested without the network; http.lua carries it out.
local M = {}

local IDEMPOTENT = { GET = true, HEAD = true, OPTIONS = true, PUT = true, DELETE = true, TRACE = true }

M.defaults = { max = 3, backoff = 0.25, max_delay = 30, max_retry_after = 60, on = { "connect", "timeout", "dns", "5xx" } }

--- Seconds an HTTP Retry-After value asks for (delta-seconds or an HTTP date), or nil.
function M.retry_after_seconds(value, now_epoch)
  if value == nil then return nil end
  local n = tonumber(value)
  if n then return n >= 0 and n or nil end
  -- IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  local d, mon, y, hh, mm, ss = tostring(value):match("^%a+, (%d%d) (%a%a%a) (%d%d%d%d) (%d%d):(%d%d):(%d%d) GMT$")
  if not d then return nil end
  local months = { Jan = 1, Feb = 2, Mar = 3, Apr = 4, May = 5, Jun = 6, Jul = 7, Aug = 8, Sep = 9, Oct = 10, Nov = 11, Dec = 12 }
  local m = months[mon]
  if not m then return nil end
  -- days from civil (UTC), without os.time's local-time interpretation
  local yy, mm2 = tonumber(y), m
  if mm2 <= 2 then yy = yy - 1 end
  local era = (yy >= 0 and yy or yy - 399) // 400
  local yoe = yy - era * 400
  local doy = (153 * (mm2 + (mm2 > 2 and -3 or 9)) + 2) // 5 + tonumber(d) - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  local epoch = days * 86400 + tonumber(hh) * 3600 + tonumber(mm) * 60 + tonumber(ss)
  return math.max(0, epoch - (now_epoch or os.time()))
end

local function matches(rule, err, response)
  local status = response and response.status
  local kind = err and err.kind
  if type(rule) == "number" then return status == rule end
  if rule == "5xx" then return status ~= nil and status >= 500 and status <= 599 end
  if rule == "4xx" then return status ~= nil and status >= 400 and status <= 499 end
  if rule == "429" then return status == 429 end
  if type(rule) == "string" then return kind == rule end
  return false
end

--- policy: { max, backoff, max_delay, max_retry_after, jitter (default true), on = classes |
--- function(err, response) -> bool, methods = "idempotent" (default) | "all" }
--- attempt: 1 for the first try. Returns { retry = bool, delay = seconds, reason = text }.
function M.decide(policy, attempt, err, response, method, random, now_epoch)
  policy = policy or {}
  local max = policy.max or M.defaults.max
  if attempt > max then return { retry = false, reason = "no retries left" } end
  if (policy.methods or "idempotent") ~= "all" and not IDEMPOTENT[method] then
    return { retry = false, reason = method .. " is not idempotent" }
  end
  local on = policy.on or M.defaults.on
  local wanted
  if type(on) == "function" then
    wanted = on(err, response) and true or false
  else
    wanted = false
    for _, rule in ipairs(on) do if matches(rule, err, response) then wanted = true break end end
  end
  if not wanted then return { retry = false, reason = "not a retryable outcome" } end
  local base = (policy.backoff or M.defaults.backoff) * 2 ^ (attempt - 1)
  local delay = math.min(base, policy.max_delay or M.defaults.max_delay)
  if policy.jitter ~= false then
    -- equal jitter: half the delay, plus a random part of the other half
    delay = delay / 2 + (random or math.random()) * delay / 2
  end
  local header = response and response.headers and response.headers["retry-after"]
  local asked = M.retry_after_seconds(header, now_epoch)
  if asked then delay = math.min(asked, policy.max_retry_after or M.defaults.max_retry_after) end
  return { retry = true, delay = delay, reason = "retrying" }
end

return M
