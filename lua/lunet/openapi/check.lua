--- Property-based checks of a server against its OpenAPI document, as Schemathesis runs them
--- (`lunet api SPEC --check`, `api:check{}` from a test): for each operation, requests its
--- schemas allow (lunet.openapi.generate: bounds, enums, formats, optional parts present and
--- absent) and a few they forbid. A failure is a 5xx, a response that breaks its declared
--- schema, or a forbidden request answered 2xx; each kind of failure of an operation is kept
--- once, shrunk to a small example, with a curl command line that sends it again. The same
--- seed makes the same requests.
local errors = require "lunet.errors"
local generate = require "lunet.openapi.generate"
local call = require "lunet.openapi.call"

local M = {}

-- Arguments for `op`: every required parameter, optional ones half the time, and the body.
local function arguments(api, op, rand)
  local args = {}
  for _, p in ipairs(op.parameters) do
    if p.required or rand:chance(0.5) then
      local ctx = { rand = rand, set = api._set, uri = op.uri }
      local s = p.has_schema and api:schema_at(p.schema) or { type = "string" }
      args[p.name] = generate.valid(ctx, s)
    end
  end
  if op.body and (op.body.required or rand:chance(0.7)) then
    local media, m = next(op.body.content)
    if op.body.content["application/json"] then media, m = "application/json", op.body.content["application/json"] end
    local s = m.schema and api:schema_at(m.schema) or m.inline or {}
    args.body = generate.valid({ rand = rand, set = api._set, uri = op.uri }, s)
    if media ~= "application/json" then args.options = { content_type = media } end
  end
  return args
end

-- Sends `args` to `op`; a failure { kind, detail, response } or nil. `forbidden`: the
-- request breaks the document on purpose (sent unchecked), so a 2xx answer is a failure.
local function try(api, op, args, forbidden)
  local unchecked = setmetatable({ validate = false }, { __index = api })
  local built, opts = pcall(call.request, forbidden and unchecked or api, op, args)
  if not built then return nil, opts end   -- could not make a valid request from it: skipped
  local session = api._security:apply(op, opts, api._session)
  local sent, r = pcall(session.request, session, opts)
  if not sent then return { kind = "no response", detail = errors.describe(r) } end
  if r.status >= 500 then return { kind = "server error", detail = string.format("answered %d", r.status), response = r } end
  if forbidden then
    if r.status < 300 then return { kind = "forbidden request accepted", detail = string.format("answered %d", r.status), response = r } end
    return nil
  end
  local fine, problem = pcall(call.check_response, api, op, r)
  if not fine then return { kind = "response breaks its schema", detail = errors.describe(problem), response = r } end
  return nil
end

-- Smaller arguments that fail the same way: optional parameters dropped, then body
-- properties dropped one by one, as long as the failure stays (bounded tries).
local function shrink(api, op, args, failure, forbidden)
  local best, tries = args, 0
  local function still(candidate)
    tries = tries + 1
    local f = try(api, op, candidate, forbidden)
    return f and f.kind == failure.kind and f or nil
  end
  local required = {}
  for _, p in ipairs(op.parameters) do required[p.name] = p.required end
  for name in pairs(args) do
    if tries > 40 then break end
    if name ~= "body" and name ~= "options" and not required[name] then
      local candidate = {}
      for k, v in pairs(best) do if k ~= name then candidate[k] = v end end
      local f = still(candidate)
      if f then best, failure = candidate, f end
    end
  end
  if type(best.body) == "table" and not forbidden then
    for key in pairs(best.body) do
      if tries > 40 then break end
      local body = {}
      for k, v in pairs(best.body) do if k ~= key then body[k] = v end end
      local candidate = {}
      for k, v in pairs(best) do candidate[k] = v end
      candidate.body = body
      local f = still(candidate)
      if f then best, failure = candidate, f end
    end
  end
  return best, failure
end

--- Runs the checks; a report { checked = operations, requests = n, failures = { { operation,
--- kind, detail, args, curl } }, skipped = { { operation, reason } } }. opts: seed,
--- max_examples (per operation, default 20), operation (an id: only that one).
function M.run(api, opts)
  opts = opts or {}
  local rand = generate.random(opts.seed or 1)
  local report = { checked = 0, requests = 0, failures = {}, skipped = {} }
  for _, op in ipairs(api._list) do
    if not opts.operation or opts.operation == op.id then
      report.checked = report.checked + 1
      local seen = {}
      local n = opts.max_examples or 20
      for i = 1, n + math.max(1, n // 4) do
        local forbidden = i > n
        local made, args = pcall(arguments, api, op, rand)
        if not made then
          report.skipped[#report.skipped + 1] = { operation = op.id, reason = errors.describe(args) }
          break
        end
        if forbidden then
          local target = op.body and "body" or nil
          local bad, how
          if target then
            local m = op.body.content["application/json"] or select(2, next(op.body.content))
            bad, how = generate.invalid({ rand = rand, set = api._set, uri = op.uri }, m.schema and api:schema_at(m.schema) or m.inline or {})
            args.body = bad
          end
          if bad == nil then
            -- no body to break: a parameter with a schema instead
            for _, p in ipairs(op.parameters) do
              if p.has_schema and bad == nil then
                bad, how = generate.invalid({ rand = rand, set = api._set, uri = op.uri }, api:schema_at(p.schema))
                if bad ~= nil then args[p.name], how = bad, "parameter " .. p.name .. ": " .. how end
              end
            end
          end
          if bad == nil then break end
          args._how = how
        end
        local how = args._how
        args._how = nil
        report.requests = report.requests + 1
        local failure, skipped = try(api, op, args, forbidden)
        if skipped and not failure and not forbidden then report.skipped[#report.skipped + 1] = { operation = op.id, reason = errors.describe(skipped) } end
        if failure and not seen[failure.kind] then
          seen[failure.kind] = true
          local small, f = shrink(api, op, args, failure, forbidden)
          report.failures[#report.failures + 1] = {
            operation = op.id, kind = f.kind, detail = f.detail .. (how and (" (" .. how .. ")") or ""), args = small,
            curl = f.response and f.response:curl() or nil,
          }
        end
      end
    end
  end
  return report
end

local function show(v) return require("lunet.json").encode(v) end
local print = require("lunet.output").say   -- escaped on a terminal

--- `lunet api SPEC --check`: prints each failure once with its curl line; exit 1 on any.
function M.main(api, own, words)
  local seed = tonumber(own.seed or "1")
  local report = M.run(api, { seed = seed and math.tointeger(seed) or 1, max_examples = tonumber(own.max_examples or "20"), operation = own.operation })
  if own.operation and report.checked == 0 then io.stderr:write("lunet api: no operation '", own.operation, "'\n") return 2 end
  for _, f in ipairs(report.failures) do
    print(string.format("✗ %s: %s: %s", f.operation, f.kind, f.detail))
    local args = {}
    for k, v in pairs(f.args) do if k ~= "options" then args[k] = v end end
    print("  arguments: " .. show(args))
    if f.curl then print("  again: " .. f.curl) end
  end
  local reasons = {}
  for _, s in ipairs(report.skipped) do reasons[s.operation] = s.reason end
  for op, reason in pairs(reasons) do io.stderr:write("lunet api: some requests for ", op, " could not be made: ", reason, "\n") end
  print(string.format("%d operations, %d requests, %d failure%s (seed %d)", report.checked, report.requests,
    #report.failures, #report.failures == 1 and "" or "s", seed or 1))
  return #report.failures > 0 and 1 or 0
end

return M
