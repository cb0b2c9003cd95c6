--- A HAR file's model (lunet.import.har) written as a `lunet test` file (a describe a page, a
--- test a request, expecting the status the HAR recorded) or a `lunet load` script (one VU's
--- iteration: every request in order, with the HAR's gaps between them as sleeps). Credentials
--- are read from the environment by name (need("LUNET_HAR_COOKIE")), never written. Redirects
--- are not followed: a browser's HAR records each hop as a request of its own.
local render = require "lunet.import.render"
local literal = render.literal

local M = {}

-- A value: a string literal, or the environment variable a credential became.
local function value(v)
  if type(v) == "table" then return string.format("need(%q)", v.env) end
  return literal(v)
end

-- A URL's pieces (strings and { env = VAR }) as one Lua expression.
local function url_expr(pieces)
  local parts, text = {}, {}
  local function flush()
    if #text > 0 then parts[#parts + 1] = literal(table.concat(text)); text = {} end
  end
  for _, p in ipairs(pieces) do
    if type(p) == "table" then flush(); parts[#parts + 1] = value(p) else text[#text + 1] = p end
  end
  flush()
  return table.concat(parts, " .. ")
end

local function url_text(pieces)
  local out = {}
  for _, p in ipairs(pieces) do out[#out + 1] = type(p) == "table" and ("${" .. p.env .. "}") or p end
  return table.concat(out)
end

-- The lines of one request's options table at `indent`.
local function request_lines(e, indent, call)
  local lines = { indent .. call .. "{" }
  local function add(s) lines[#lines + 1] = indent .. "  " .. s end
  add("method = " .. literal(e.method) .. ",")
  add("url = " .. url_expr(e.url) .. ",")
  if #e.headers > 0 then
    add("headers = {")
    local by_name, names = {}, {}
    for _, h in ipairs(e.headers) do
      if not by_name[h[1]] then by_name[h[1]] = {}; names[#names + 1] = h[1] end
      table.insert(by_name[h[1]], h[2])
    end
    for _, name in ipairs(names) do
      local vs = by_name[name]
      local text = #vs == 1 and value(vs[1]) or ("{ " .. table.concat((function()
        local t = {}
        for i, x in ipairs(vs) do t[i] = value(x) end
        return t
      end)(), ", ") .. " }")
      add("  [" .. literal(name) .. "] = " .. text .. ",")
    end
    add("},")
  end
  if e.body then
    add("body = " .. literal(e.body) .. ",")
    add("content_type = " .. literal(e.content_type or "application/octet-stream") .. ",")
  end
  add("follow = false,")
  lines[#lines + 1] = indent .. "}"
  return lines
end

local function head(model, what)
  local lines = { "-- Imported from " .. render.comment_text(what) .. " by `lunet import har`." }
  local list = {}
  for i, v in ipairs(model.variables) do list[i] = { v.var, v.what } end
  render.credentials(lines, "Credentials the HAR held", list)
  for _, n in ipairs(model.notes) do lines[#lines + 1] = "-- NOTE: " .. render.comment_text(n) end
  render.need_function(lines, "the HAR this was imported from")
  return lines
end

--- A `lunet test` file.
function M.test(model, what)
  local lines = head(model, what)
  for _, page in ipairs(model.pages) do
    lines[#lines + 1] = ""
    lines[#lines + 1] = "describe(" .. literal(page.title) .. ", function()"
    for _, e in ipairs(page.entries) do
      lines[#lines + 1] = "  test(" .. literal(e.method .. " " .. url_text(e.url)) .. ", function()"
      for _, l in ipairs(request_lines(e, "    ", "local r = http.request")) do lines[#lines + 1] = l end
      if e.status and e.status > 0 then
        lines[#lines + 1] = "    expect(r).to.have_status(" .. e.status .. ")"
      else
        lines[#lines + 1] = "    -- the HAR recorded no answer (status 0): only that one came"
        lines[#lines + 1] = "    expect(r.status).to.be_truthy()"
      end
      lines[#lines + 1] = "  end)"
    end
    lines[#lines + 1] = "end)"
  end
  return table.concat(lines, "\n") .. "\n"
end

--- A `lunet load` script: one VU, one iteration by default (--vus and --duration change it).
function M.load(model, what)
  local lines = head(model, what)
  lines[#lines + 1] = ""
  lines[#lines + 1] = 'options = { scenarios = { har = { executor = "per-vu-iterations", vus = 1, iterations = 1 } } }'
  lines[#lines + 1] = ""
  lines[#lines + 1] = "return function(vu)"
  local last_end
  for _, page in ipairs(model.pages) do
    lines[#lines + 1] = "  -- " .. render.comment_text(page.title)
    for _, e in ipairs(page.entries) do
      if last_end and e.started then
        local gap = (e.started - last_end) / 1000
        if gap >= 0.05 then lines[#lines + 1] = string.format("  sleep(%.2f)", gap) end
      end
      if e.started then last_end = math.max(last_end or 0, e.started + math.floor(e.time + 0.5)) end
      for _, l in ipairs(request_lines(e, "  ", "vu.session:request")) do lines[#lines + 1] = l end
    end
  end
  lines[#lines + 1] = "end"
  return table.concat(lines, "\n") .. "\n"
end

return M
