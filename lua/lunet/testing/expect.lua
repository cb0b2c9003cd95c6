-- expect(value).to.MATCHER(...): assertions whose failures say what was checked, where, what was
-- expected and what came instead. A failure is raised as a Failure object (message, at, source,
-- expected, actual, diff, request, response_status, response_body); tostring gives one
-- readable line.
local json = require "lunet.json"
local show = require "lunet.testing.show"
local jsonpath = require "lunet.testing.jsonpath"

local M = {}

local Failure = { __name = "lunet.testing.Failure" }
Failure.__index = Failure
function Failure.__tostring(f)
  local s = tostring(f.message)
  if f.expected and f.actual then s = s .. ": expected " .. f.expected .. ", got " .. f.actual end
  if f.at then s = f.at .. ": " .. s end
  return s
end
M.Failure = Failure

function M.is_failure(v) return getmetatable(v) == Failure end

local SELF = debug.getinfo(1, "S").source

-- Source lines, read once per file.
local files = {}

--- Line `n` of file `path` without its indentation, or nil. An expression that goes on over
--- the next lines (more brackets opened than closed) comes with them, up to 8 lines.
function M.source_line(path, n)
  local lines = files[path]
  if lines == nil then
    lines = false
    local f = io.open(path, "r")
    if f then
      lines = {}
      for line in f:lines() do lines[#lines + 1] = line end
      f:close()
    end
    files[path] = lines
  end
  if not lines or not lines[n] then return nil end
  local indent = string.match(lines[n], "^%s*")
  local out, depth = {}, 0
  for i = n, math.min(n + 7, #lines) do
    local line = lines[i]
    if string.sub(line, 1, #indent) == indent then line = string.sub(line, #indent + 1) end
    out[#out + 1] = line
    local code = string.gsub(string.gsub(line, "%-%-.*$", ""), "([\"'])[^\"']-%1", "")
    depth = depth + select(2, string.gsub(code, "[%(%{%[]", "")) - select(2, string.gsub(code, "[%)%}%]]", ""))
    if depth <= 0 then break end
  end
  if depth > 0 then out = { out[1] } end
  return table.concat(out, "\n")
end

--- Where the code that called into this module is: "path:line" and that line's text.
local function caller()
  for level = 2, 60 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.source ~= SELF and info.what ~= "C" and info.currentline and info.currentline > 0 then
      local path = string.sub(info.source, 1, 1) == "@" and string.sub(info.source, 2) or nil
      local at = (path or info.short_src) .. ":" .. info.currentline
      return at, path and M.source_line(path, info.currentline) or nil
    end
  end
  return nil
end

local function short(v) return show.show(v, { width = 72, max = 1500, lines = 25 }) end

--- Adds what a response tells (its request, status and the start of its body) to failure f.
function M.add_response(f, v)
  local r = show.response_of(v)
  if not r then return f end
  pcall(function()
    f.request = r.request.method .. " " .. r.request.url
    f.response_status = r.status
    local body = r.body
    if type(body) == "string" and #body > 0 then
      if utf8.len(body) then f.response_body = show.cut(show.clean((string.gsub(body, "%s+$", ""))), 600)
      else f.response_body = string.format("(%d bytes, not UTF-8 text)", #body) end
    end
  end)
  return f
end

-- Matchers: function(actual, ...) -> pass, info() where info returns the failure's fields
-- { message, negated (the message when negated), expected, actual, diff }. pass == nil means
-- the matcher does not apply to this value: a failure either way.
local matchers = {}

function matchers.equal(actual, expected)
  local pass = show.equal(actual, expected)
  return pass, function()
    local f = {
      message = "expected values to be equal",
      negated = "expected a value other than " .. short(expected),
      expected = short(expected), actual = short(actual),
    }
    if not pass then
      if show.plain_table(expected) and show.plain_table(actual) then
        f.diff = table.concat(show.diff(expected, actual), "\n")
      elseif type(expected) == "string" and type(actual) == "string" then
        f.diff = show.string_difference(expected, actual)
      end
    end
    return f
  end
end

function matchers.match(actual, pattern)
  if type(pattern) ~= "string" then
    return nil, function() return { message = "match() takes a Lua pattern (a string), got " .. type(pattern) } end
  end
  if type(actual) == "number" then actual = tostring(actual) end
  if type(actual) ~= "string" then
    return nil, function()
      return { message = "expected a string to match " .. show.quote(pattern) .. ", got a " .. type(actual), actual = short(actual) }
    end
  end
  local ok, found = pcall(string.find, actual, pattern)
  if not ok then
    return nil, function() return { message = "bad pattern " .. show.quote(pattern) .. ": " .. tostring(found) } end
  end
  return found ~= nil, function()
    return {
      message = "expected a string matching the pattern " .. show.quote(pattern),
      negated = "expected a string not matching the pattern " .. show.quote(pattern),
      actual = short(actual),
    }
  end
end

function matchers.be_truthy(actual)
  return actual ~= nil and actual ~= false, function()
    return { message = "expected a truthy value (not nil or false)", negated = "expected a falsy value (nil or false)", actual = short(actual) }
  end
end

function matchers.be_falsy(actual)
  return actual == nil or actual == false, function()
    return { message = "expected a falsy value (nil or false)", negated = "expected a truthy value (not nil or false)", actual = short(actual) }
  end
end

function matchers.be_nil(actual)
  return actual == nil, function()
    return { message = "expected nil", negated = "expected a value other than nil", actual = short(actual) }
  end
end

function matchers.contain(actual, item)
  if type(actual) == "string" and type(item) == "string" then
    return string.find(actual, item, 1, true) ~= nil, function()
      return { message = "expected the string to contain " .. show.quote(item, 200),
               negated = "expected the string not to contain " .. show.quote(item, 200), actual = short(actual) }
    end
  end
  if not show.plain_table(actual) then
    return nil, function() return { message = "contain() needs a string or a table, got a " .. type(actual), actual = short(actual) } end
  end
  local found = false
  for _, v in pairs(actual) do
    if show.equal(v, item) then found = true; break end
  end
  return found, function()
    return { message = "expected the table to contain " .. short(item), negated = "expected the table not to contain " .. short(item), actual = short(actual) }
  end
end

function matchers.be_within(actual, low, high)
  if type(low) ~= "number" or type(high) ~= "number" then
    return nil, function() return { message = "be_within(low, high) takes two numbers" } end
  end
  if type(actual) ~= "number" then
    return nil, function() return { message = "expected a number within [" .. low .. ", " .. high .. "], got a " .. type(actual), actual = short(actual) } end
  end
  return actual >= low and actual <= high, function()
    local range = "[" .. short(low) .. ", " .. short(high) .. "]"
    return { message = "expected a number within " .. range, negated = "expected a number outside " .. range, actual = short(actual) }
  end
end

local function status_matches(status, want)
  if type(want) == "number" then return status == want end
  local class = type(want) == "string" and string.match(want, "^(%d)[xX][xX]$")
  if class then return math.floor(status / 100) == tonumber(class) end
  return nil
end

function matchers.have_status(actual, want)
  local r = show.response_of(actual)
  local status = r and r.status or (type(actual) == "table" and not show.is_error(actual) and rawget(actual, "status")) or nil
  if type(status) ~= "number" then
    return nil, function()
      return { message = "have_status() needs a response, got " .. (show.is_error(actual) and "an error without one" or ("a " .. type(actual))), actual = short(actual) }
    end
  end
  local pass = status_matches(status, want)
  if pass == nil then
    return nil, function() return { message = "have_status() takes a status code (200) or a class (\"2xx\"), got " .. short(want) } end
  end
  return pass, function()
    return { message = "expected status " .. tostring(want) .. ", got " .. status,
             negated = "expected a status other than " .. tostring(want),
             expected = tostring(want), actual = tostring(status) }
  end
end

function matchers.have_header(actual, name, ...)
  local want_value = select("#", ...) > 0 and (...) or nil
  if type(name) ~= "string" then
    return nil, function() return { message = "have_header() takes a header name, got " .. type(name) } end
  end
  local r = show.response_of(actual)
  local headers = r and r.headers or (type(actual) == "table" and actual.headers) or actual
  if type(headers) ~= "table" then
    return nil, function() return { message = "have_header() needs a response (or a headers table), got a " .. type(actual), actual = short(actual) } end
  end
  local values = {}
  if type(headers.all) == "function" then
    values = headers:all(name)
  else
    for k, v in pairs(headers) do
      if type(k) == "string" and string.lower(k) == string.lower(name) then values[#values + 1] = tostring(v) end
    end
  end
  local pass
  if want_value == nil then
    pass = #values > 0
  else
    pass = table.concat(values, ", ") == tostring(want_value)
    for _, v in ipairs(values) do if v == tostring(want_value) then pass = true end end
  end
  return pass, function()
    local got = #values == 0 and "no such header" or short(#values == 1 and values[1] or values)
    if want_value == nil then
      return { message = "expected a header " .. show.quote(name), negated = "expected no header " .. show.quote(name), actual = got }
    end
    return { message = "expected the header " .. show.quote(name) .. " to be " .. show.quote(tostring(want_value)),
             negated = "expected the header " .. show.quote(name) .. " not to be " .. show.quote(tostring(want_value)),
             expected = show.quote(tostring(want_value)), actual = got }
  end
end

function matchers.have_json_path(actual, path, ...)
  local has_value = select("#", ...) > 0 and (...) ~= nil
  local want = (...)
  local ok, steps = pcall(jsonpath.parse, path)
  if not ok then return nil, function() return { message = tostring(steps) } end end
  local doc = actual
  local r = show.response_of(actual)
  if r then
    local decoded, v = pcall(function() return r.json end)
    if not decoded then
      return nil, function() return { message = "the response body is not JSON: " .. tostring(v) } end
    end
    doc = v
  elseif type(actual) == "string" then
    local decoded, v = pcall(json.decode, actual)
    if not decoded then return nil, function() return { message = "the string is not JSON: " .. tostring(v) } end end
    doc = v
  end
  local values, paths, stopped = jsonpath.find(doc, steps)
  local pass
  if has_value then
    pass = false
    for _, v in ipairs(values) do if show.equal(v, want) then pass = true; break end end
  else
    pass = #values > 0
  end
  return pass, function()
    local f = {}
    if has_value then
      f.message = "expected the JSON path " .. path .. " to be " .. short(want)
      f.negated = "expected the JSON path " .. path .. " not to be " .. short(want)
      f.expected = short(want)
    else
      f.message = "expected the JSON path " .. path .. " to match"
      f.negated = "expected the JSON path " .. path .. " to match nothing"
    end
    if #values == 0 then
      local where = stopped.paths[1] or "$"
      f.actual = "nothing matched; the path matched up to " .. where ..
        (#stopped.paths > 1 and (" (and " .. (#stopped.paths - 1) .. " more)") or "") .. ", which is " .. short(stopped.values[1])
    elseif #values == 1 then
      f.actual = short(values[1]) .. " at " .. paths[1]
    else
      local list = {}
      for i = 1, math.min(#values, 10) do list[i] = paths[i] .. " = " .. show.show(values[i], { width = 60, max = 200 }) end
      if #values > 10 then list[#list + 1] = "… and " .. (#values - 10) .. " more" end
      f.actual = #values .. " matches:\n" .. table.concat(list, "\n")
    end
    return f
  end
end

function matchers.fail_with(actual, kind)
  if type(actual) ~= "function" then
    return nil, function() return { message = "fail_with() needs a function to call, got a " .. type(actual), actual = short(actual) } end
  end
  local ok, err = pcall(actual)
  local got_kind = type(err) == "table" and err.kind or nil
  local pass = not ok and (kind == nil or got_kind == kind)
  return pass, function()
    local want = kind and ("with kind " .. show.quote(kind)) or "with an error"
    local f = { message = "expected the function to fail " .. want,
                negated = "expected the function not to fail " .. want,
                expected = kind and show.quote(kind) or nil, response_from = err }
    if ok then f.actual = "it returned " .. (err == nil and "normally" or short(err))
    elseif got_kind then f.actual = "it failed with kind " .. show.quote(tostring(got_kind)) .. ": " .. show.clean(tostring(err))
    else f.actual = "it failed with " .. short(err) end
    return f
  end
end

M.matchers = matchers

local function raise(info, negated, value, label)
  local fields = info()
  local f = setmetatable({}, Failure)
  f.message = negated and (fields.negated or ("not: " .. fields.message)) or fields.message
  if label then f.message = tostring(label) .. ": " .. f.message end
  local function text(v) if v == nil or type(v) == "string" then return v end return short(v) end
  f.expected, f.actual, f.diff = text(fields.expected), text(fields.actual), fields.diff
  if negated then f.diff = nil end
  f.at, f.source = caller()
  M.add_response(f, value)
  if not f.request and fields.response_from then M.add_response(f, fields.response_from) end
  error(f, 0)
end

local names
local function matcher_names()
  if not names then
    names = {}
    for k in pairs(matchers) do names[#names + 1] = k end
    table.sort(names)
  end
  return names
end

local make

-- Expectation objects: chain words (to, be, and_) return the object, never/not_ negate,
-- matchers are called with a dot: expect(x).to.equal(y).
make = function(value, label, negated)
  local self = {}
  return setmetatable(self, {
    __name = "lunet.testing.Expectation",
    __index = function(_, k)
      if k == "to" or k == "be" or k == "and_" then return self end
      if k == "never" or k == "not_" then return make(value, label, not negated) end
      local m = matchers[k]
      if m then
        return function(...)
          local args = table.pack(...)
          local first = 1
          if args.n >= 1 and args[1] == self then first = 2 end   -- called with ':' by mistake
          local pass, info = m(value, table.unpack(args, first, args.n))
          if pass == nil or (pass and true or false) == negated then raise(info, negated, value, label) end
          return self
        end
      end
      error("unknown matcher '" .. tostring(k) .. "' (there are: " .. table.concat(matcher_names(), ", ") .. ")", 2)
    end,
  })
end

--- expect(value [, label]): an expectation; label names the value in the failure message.
function M.expect(value, label)
  return make(value, label, false)
end

--- Fails the current test with `message` at once.
function M.fail(message)
  local f = setmetatable({ message = tostring(message or "failed") }, Failure)
  f.at, f.source = caller()
  error(f, 0)
end

return M
