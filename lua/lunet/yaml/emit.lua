-- YAML written from json's data model (docs/yaml.md, "Writing"): block mappings and sequences;
-- every string double-quoted with escapes, except a text of several lines, which a literal block
-- scalar keeps byte for byte. No string is ever plain, so none reads back as a number, a boolean
-- or null ("no", "0755"). What it writes, lunet.yaml (and any YAML 1.2 or 1.1 reader) reads back
-- as the value it was given. Kubernetes manifests (`lunet load k8s`) are written with it.
local runtime = require "lunet.runtime"
local json = require "lunet.json"
local getmetatable, setmetatable = runtime.getmetatable, runtime.setmetatable

local M = {}

local MAP = {}
local ARRAY = getmetatable(json.array())
local NULL = json.null

--- An ordered mapping: map("key", value, "key", value, ...); keys with a nil value are left out.
--- (A plain table is a mapping too, its keys sorted.)
function M.map(...) return setmetatable({ n = select("#", ...), ... }, MAP) end

-- Characters YAML does not take raw in a scalar (C1 controls, NEL and the Unicode line and
-- paragraph separators that YAML 1.1 reads as line breaks, the BOM, U+FFFE/U+FFFF), as UTF-8.
local UNSAFE_UTF8 = { "\194[\128-\159]", "\226\128[\168\169]", "\239\187\191", "\239\191[\190\191]" }
local ESCAPES = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r" }

-- s (UTF-8) as a double-quoted scalar: `\`, `"`, controls and UNSAFE_UTF8 escaped.
local function quoted(s)
  s = s:gsub('[%c"\\]', function(c) return ESCAPES[c] or string.format("\\x%02X", c:byte()) end)
  for _, pattern in ipairs(UNSAFE_UTF8) do
    s = s:gsub(pattern, function(c) return string.format("\\u%04X", utf8.codepoint(c)) end)
  end
  return '"' .. s .. '"'
end

-- Whether a literal block scalar keeps s exactly: lines (not only line breaks), and no character
-- a block cannot hold raw (a CR would become a line break; other controls are not allowed).
local function block_safe(s)
  if not s:find("\n", 1, true) or not s:find("[^\n]") or s:find("[\0-\8\11-\31\127]") then return false end
  for _, pattern in ipairs(UNSAFE_UTF8) do if s:find(pattern) then return false end end
  return utf8.len(s) ~= nil
end

-- The header and the lines of s as a literal block scalar with its lines at `indent`. The
-- indentation indicator (2) is explicit, so a first line that starts with spaces stays as it is;
-- the chomping indicator keeps the final line breaks exactly: none (-), one, or more (+).
local function block_lines(s, indent, out, header_prefix)
  local trailing = #s:match("\n*$")
  out[#out + 1] = header_prefix .. " |2" .. (trailing == 0 and "-" or trailing == 1 and "" or "+")
  local body = s:sub(1, #s - trailing)
  for line in (body .. "\n"):gmatch("(.-)\n") do out[#out + 1] = line == "" and "" or indent .. line end
  for _ = 2, trailing do out[#out + 1] = "" end
end

local RESERVED = { y = true, n = true, yes = true, no = true, on = true, off = true, ["true"] = true, ["false"] = true, null = true }

local function key_text(k)
  if type(k) ~= "string" then error("YAML: a mapping key must be a string, got " .. type(k), 0) end
  if k:match("^[A-Za-z][A-Za-z0-9]*$") and not RESERVED[k:lower()] then return k end
  return quoted(k)
end

local function scalar(v)
  if type(v) == "string" then return quoted(v) end
  if math.type(v) == "integer" or type(v) == "boolean" then return tostring(v) end
  if math.type(v) == "float" then
    if v ~= v then return ".nan" end
    if v == math.huge or v == -math.huge then return v > 0 and ".inf" or "-.inf" end
    local text = string.format("%.17g", v)
    return text:find("[.eE]") and text or text .. ".0"   -- stays a float when read back
  end
  if v == NULL then return "null" end
  error("YAML: no scalar for a " .. type(v), 0)
end

-- What a table is: "map" (ordered, made with map), "object" (keys sorted), "list"; and its size.
local function kind(t)
  local mt = getmetatable(t)
  if mt == MAP then return "map", t.n end
  if mt == ARRAY then return "list", #t end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  if n > 0 and n == #t then return "list", n end
  return "object", n
end

local emit_map, emit_list

-- A value after `prefix` ("key:" or "-", indented): inline, a block scalar, or a nested
-- collection on the lines after, at indent + 2. `seen`: the tables being written (a cycle is refused).
local function emit_value(v, indent, prefix, out, seen)
  if type(v) == "table" and v ~= NULL then
    if seen[v] then error("YAML: a table contains itself", 0) end
    local k, n = kind(v)
    if n == 0 then out[#out + 1] = prefix .. (k == "list" and " []" or " {}") return end
    out[#out + 1] = prefix
    seen[v] = true
    if k == "list" then emit_list(v, indent .. "  ", out, seen) else emit_map(v, indent .. "  ", out, seen) end
    seen[v] = nil
  elseif type(v) == "string" and block_safe(v) then
    block_lines(v, indent .. "  ", out, prefix)
  else
    out[#out + 1] = prefix .. " " .. scalar(v)
  end
end

--- Levels of mappings and sequences written at most (the reader's max_depth by default): past
--- them the value is refused as nested too deeply, before Lua's stack or memory run out (a
--- 300,000-level value exhausted ThreadSanitizer's memory before Lua's stack overflowed).
M.MAX_DEPTH = 1000

-- A collection's indent is two spaces a level: level N (from 1) is indented 2 * (N - 1).
local function check_depth(indent)
  if #indent >= 2 * M.MAX_DEPTH then
    error(string.format("YAML: the value is nested too deeply to write (more than %d levels of mappings and sequences)", M.MAX_DEPTH), 0)
  end
end

function emit_map(m, indent, out, seen)
  check_depth(indent)
  if getmetatable(m) == MAP then
    for i = 1, m.n, 2 do
      if m[i + 1] ~= nil then emit_value(m[i + 1], indent, indent .. key_text(m[i]) .. ":", out, seen) end
    end
    return
  end
  local keys = {}
  for k in pairs(m) do keys[#keys + 1] = k end
  for _, k in ipairs(keys) do key_text(k) end   -- every key a string, before sorting them
  table.sort(keys)
  for _, k in ipairs(keys) do emit_value(m[k], indent, indent .. key_text(k) .. ":", out, seen) end
end

-- A sequence; an item that is a mapping starts on the dash's line ("- name: x").
function emit_list(list, indent, out, seen)
  check_depth(indent)
  for i = 1, #list do
    local v = list[i]
    local k, n = "scalar", 0
    if type(v) == "table" and v ~= NULL then k, n = kind(v) end
    if k ~= "list" and k ~= "scalar" and n > 0 then
      if seen[v] then error("YAML: a table contains itself", 0) end
      seen[v] = true
      local first = #out + 1
      emit_map(v, indent .. "  ", out, seen)
      seen[v] = nil
      out[first] = indent .. "- " .. out[first]:sub(#indent + 3)
    else
      emit_value(v, indent, indent .. "-", out, seen)
    end
  end
end

--- The YAML stream of `docs`, each after a `---` line.
function M.stream(docs)
  local out = {}
  for _, doc in ipairs(docs) do
    out[#out + 1] = "---"
    local k, n = "scalar", 0
    if type(doc) == "table" and doc ~= NULL then k, n = kind(doc) end
    if k == "scalar" then
      out[#out + 1] = scalar(doc)
    elseif n == 0 then
      out[#out + 1] = k == "list" and "[]" or "{}"
    elseif k == "list" then
      emit_list(doc, "", out, { [doc] = true })
    else
      emit_map(doc, "", out, { [doc] = true })
    end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
