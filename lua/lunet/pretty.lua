-- Values as people want to read them at the prompt: responses as a status line, their main
-- headers and a pretty body; tables as depth-limited Lua; tasks and errors by their state.
-- Colour only when asked (the REPL asks on a terminal without NO_COLOR).
local errors = require "lunet.errors"

local M = {}

local CODES = { reset = "0", bold = "1", dim = "2", red = "31", green = "32", yellow = "33",
                blue = "34", magenta = "35", cyan = "36", gray = "90" }

local function painter(color)
  if not color then return function(_, s) return s end end
  return function(name, s) return "\27[" .. CODES[name] .. "m" .. s .. "\27[0m" end
end

local function is_identifier(k)
  return type(k) == "string" and k:match("^[%a_][%w_]*$") ~= nil
end

local function short_string(s, limit)
  if #s > limit then return string.format("%q", s:sub(1, limit)) .. "…(" .. #s .. " bytes)" end
  return string.format("%q", s)
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

--- A Lua-like rendering of `v`, `depth` levels deep, at most `items` entries per table.
function M.lua(v, opts, depth, seen, indent)
  opts = opts or {}
  local paint = painter(opts.color)
  depth = depth or (opts.depth or 3)
  seen = seen or {}
  indent = indent or ""
  local tv = type(v)
  if tv == "string" then
    -- A URL the prompt shows (r.url) with its secret query parameters and password masked, as
    -- the history keeps no secret; print(v) writes it whole.
    if v:find("^%a[%w+.-]*://") then v = require("lunet.secrets").mask_url(v) end
    return paint("green", short_string(v, opts.string_limit or 200))
  end
  if tv == "number" or tv == "boolean" or tv == "nil" then return paint("cyan", tostring(v)) end
  if tv ~= "table" then return paint("gray", tostring(v)) end
  local mt = getmetatable(v)
  if mt and mt.__tostring and mt.__name ~= "json.array" then
    local ok, s = pcall(tostring, v)
    if ok then return paint("gray", s) end
  end
  if seen[v] then return paint("gray", "<cycle>") end
  if depth <= 0 then return paint("gray", "{…}") end
  seen[v] = true
  local n = #v
  local parts, count, limit = {}, 0, opts.items or 50
  for i = 1, n do
    count = count + 1
    if count > limit then break end
    parts[#parts + 1] = M.lua(v[i], opts, depth - 1, seen, indent .. "  ")
  end
  for _, k in ipairs(sorted_keys(v)) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      count = count + 1
      if count > limit then break end
      local key = is_identifier(k) and paint("blue", k) or ("[" .. M.lua(k, opts, 1, seen) .. "]")
      parts[#parts + 1] = key .. " = " .. M.lua(v[k], opts, depth - 1, seen, indent .. "  ")
    end
  end
  seen[v] = nil
  local total = 0
  for _ in pairs(v) do total = total + 1 end
  if count > limit then parts[#parts + 1] = paint("gray", "…" .. (total - limit) .. " more") end
  if #parts == 0 then return "{}" end
  local flat = "{ " .. table.concat(parts, ", ") .. " }"
  if #flat <= 80 and not flat:find("\n") then return flat end
  return "{\n" .. indent .. "  " .. table.concat(parts, ",\n" .. indent .. "  ") .. "\n" .. indent .. "}"
end

-- JSON text with colours: keys blue, strings green, numbers cyan, literals magenta. The text is
-- valid JSON (encoded or indented by lunet), read token by token: what looks like a number
-- inside a string ("127.0.0.1:8080") stays the string's colour.
local function highlight_json(text, paint)
  local out, i, n = {}, 1, #text
  while i <= n do
    local s = text:find('["%-%dtfn]', i)
    if not s then break end
    out[#out + 1] = text:sub(i, s - 1)
    local c = text:sub(s, s)
    local e
    if c == '"' then
      e = s
      repeat                                  -- to the closing quote, past escaped characters
        e = text:find('["\\]', e + 1) or n
        local escaped = text:sub(e, e) == "\\"
        if escaped then e = e + 1 end
      until not escaped or e >= n
      out[#out + 1] = paint(text:find("^%s*:", e + 1) and "blue" or "green", text:sub(s, e))
    elseif c == "-" or c:find("%d") then
      e = s + #text:match("^%-?[%d.eE+%-]*", s) - 1
      out[#out + 1] = paint("cyan", text:sub(s, e))
    else
      e = s + #text:match("^%a*", s) - 1
      out[#out + 1] = paint("magenta", text:sub(s, e))
    end
    i = e + 1
  end
  out[#out + 1] = text:sub(i)
  return table.concat(out)
end

local MAIN_HEADERS = { "content-type", "content-length", "content-encoding", "location", "etag",
                       "last-modified", "cache-control", "set-cookie", "retry-after" }

local function cut(lines, max_lines, note)
  if #lines <= max_lines then return table.concat(lines, "\n") end
  local kept = {}
  for i = 1, max_lines do kept[i] = lines[i] end
  return table.concat(kept, "\n") .. "\n" .. note(#lines - max_lines)
end

--- A response: coloured status line, main headers, pretty body (cut when long).
function M.response(r, opts)
  opts = opts or {}
  local paint = painter(opts.color)
  local status_color = r.status < 300 and "green" or r.status < 400 and "yellow" or "red"
  local out = {}
  out[1] = paint("bold", paint(status_color, string.format("HTTP/%s %d %s", r.http_version, r.status, r.reason)))
    .. paint("gray", string.format("  %s %s  %d bytes  %.0f ms", r.request.method, require("lunet.secrets").mask_url(r.url), #r.body, (r.elapsed or 0) * 1000))
  for _, name in ipairs(MAIN_HEADERS) do
    for _, value in ipairs(r.headers:all(name)) do
      out[#out + 1] = paint("blue", name) .. ": " .. value
    end
  end
  local body = r.body
  if #body > 0 then
    out[#out + 1] = ""
    local ctype = (r.headers["content-type"] or ""):lower()
    local text
    if ctype:find("json", 1, true) then
      -- The server's text, in its order and with its numbers, once it is known to be JSON.
      local ok, decoded = pcall(function()
        local _ = r.json   -- raises when the body is not JSON
        return r.text
      end)
      if ok then text = highlight_json(require("lunet.json_indent")(decoded), paint) end
    end
    if not text then
      local ok, decoded = pcall(function() return r.text end)
      if ok and not decoded:find("[%z\1-\8\14-\31]") then
        text = decoded
      else
        text = paint("gray", string.format("<%d bytes of %s: _.body has them>", #body, ctype ~= "" and ctype or "binary data"))
      end
    end
    local lines = {}
    for line in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
    out[#out + 1] = cut(lines, opts.max_lines or 40, function(more)
      return paint("gray", string.format("… %d more lines (print(_.text) shows all)", more))
    end)
  end
  return table.concat(out, "\n")
end

M.painter = painter
M.highlight_json = highlight_json

--- Any value, as the REPL prints it.
function M.value(v, opts)
  opts = opts or {}
  local paint = painter(opts.color)
  local mt = getmetatable(v)
  local name = type(mt) == "table" and rawget(mt, "__name") or nil
  if name == "lunet.Response" then return M.response(v, opts) end
  if errors.is(v) then return paint("red", tostring(v)) end
  if name == "lunet.Task" then
    local color = v.state == "done" and "green" or v.state == "pending" and "yellow" or "red"
    return paint(color, tostring(v))
  end
  if type(v) == "string" then
    -- A URL (r.url) with its secret query parameters and password masked: the prompt shows no
    -- credential, as its history keeps none; print(v) writes it whole.
    if v:find("^%a[%w+.-]*://") then return require("lunet.secrets").mask_url(v) end
    return v
  end
  return M.lua(v, opts)
end

return M
