-- lunet.core, the private bindings lunet's modules are written on (core.send with a made-up
-- task, and the like), is lunet's own: a script's `require "lunet.core"` (or a look at
-- package.loaded) finds nothing. lunet's modules get it from their loader, which runs each
-- module's chunk as chunk(name, core): no name decides who may have it. LUNET_INTERNALS=1 in
-- the environment opens it to any code: lunet's own tests and benchmarks read its counters and
-- clock.
--
-- A chunk's name still tells lunet's functions from a script's for the debug library's guard
-- below, so a script may not take that name (issue 46, item 16): a text chunk named "@lua/lunet/..." (load, loadfile, dofile, require from
-- a lua/lunet folder) is renamed "@./lua/lunet/...", and a binary chunk, which carries the
-- names of its functions inside it, is refused when one of them is lunet's. The debug library
-- shows neither lunet's functions' upvalues nor core itself, and does not change lunet's
-- functions' upvalues. Runs once, from lunet.prelude, in the program and in module mode.
local getinfo, sub, find = debug.getinfo, string.sub, string.find

local OWN = "@lua/lunet/"

-- core out of package.loaded and package.preload: lunet's modules get it from their loader
-- (chunk(name, core), lunet_wrap_module_chunk), so `require "lunet.core"` answers only when
-- LUNET_INTERNALS opens it to all.
local function guard_require(core, open_to_all)
  local loaded = package.loaded
  loaded["lunet.core"] = nil
  rawset(package.preload, "lunet.core", nil)
  local mt = getmetatable(loaded)
  if mt == nil and open_to_all then
    setmetatable(loaded, { __index = function(_, name)
      if name == "lunet.core" then return core end
    end })
  end
end

-- Chunks ------------------------------------------------------------------------------------

local function guard_chunks()
  local raw_load, raw_loadfile, raw_dofile = load, loadfile, dofile
  local function renamed(name)
    if type(name) == "string" and sub(name, 1, 11) == OWN then return "@./" .. sub(name, 2) end
    return name
  end
  local function forged(bytes)
    return type(bytes) == "string" and sub(bytes, 1, 4) == "\27Lua" and find(bytes, "lua/lunet/", 1, true) ~= nil
  end
  local FORGED = "a binary chunk naming lunet's own sources is not loaded"

  function load(chunk, chunkname, ...)
    if type(chunk) == "function" then   -- a reader: its pieces, then the checks below
      local parts = {}
      while true do
        local piece = chunk()
        if piece == nil or piece == "" then break end
        if type(piece) ~= "string" then return nil, "reader function must return a string" end
        parts[#parts + 1] = piece
      end
      chunk, chunkname = table.concat(parts), chunkname or "=(load)"
    end
    if forged(chunk) then return nil, FORGED end
    return raw_load(chunk, renamed(chunkname), ...)
  end

  -- A file whose chunk name would be lunet's, or a binary one, is read here and loaded as text
  -- named "@./lua/lunet/..." (or refused); any other file as lua5.4 loads it.
  local function needs_reading(filename)
    if type(filename) ~= "string" then return false end
    if sub(filename, 1, 10) == "lua/lunet/" then return true end
    local f = io.open(filename, "rb")
    if not f then return false end
    local head = f:read(4)
    f:close()
    return head == "\27Lua"
  end
  local function guarded_loadfile(filename, ...)
    if not needs_reading(filename) then return raw_loadfile(filename, ...) end
    local f, err = io.open(filename, "rb")
    if not f then return nil, err end
    local text = f:read("a") or ""
    f:close()
    if sub(text, 1, 1) == "#" then text = text:gsub("^#[^\n]*", "") end   -- a #! line, as loadfile skips it
    return load(text, "@" .. filename, ...)
  end
  loadfile = guarded_loadfile
  function dofile(filename)
    if not needs_reading(filename) then return raw_dofile(filename) end
    local f, err = guarded_loadfile(filename)
    if not f then error(err, 2) end
    return f()
  end
  -- require's Lua-file searcher, for a module found under a lua/lunet folder or in a binary file.
  local raw_searcher = package.searchers[2]
  if type(raw_searcher) == "function" then
    package.searchers[2] = function(name)
      local filename = package.searchpath(name, package.path)
      if not needs_reading(filename) then return raw_searcher(name) end
      local f, err = guarded_loadfile(filename)
      if not f then error(string.format("error loading module '%s' from file '%s':\n\t%s", name, filename, err), 0) end
      return f, filename
    end
  end
end

-- The debug library -------------------------------------------------------------------------

local function guard_debug(core)
  local function lunets_function(f)
    if type(f) ~= "function" then return false end
    local info = getinfo(f, "S")
    return info ~= nil and sub(info.source, 1, 11) == OWN
  end
  local raw = { getupvalue = debug.getupvalue, setupvalue = debug.setupvalue, upvaluejoin = debug.upvaluejoin,
                getlocal = debug.getlocal }
  -- A function that holds core as an upvalue (a module's loader, package.preload's __index:
  -- C closures, lunet_wrap_module_chunk) may not have its upvalues replaced: one replaced
  -- chunk would be handed core on the next require.
  local function holds_core(f)
    if type(f) ~= "function" then return false end
    for i = 1, 255 do
      local name, value = raw.getupvalue(f, i)
      if name == nil then return false end
      if rawequal(value, core) then return true end
    end
    return false
  end
  -- lunet's functions have no upvalues to show; no function shows core.
  debug.getupvalue = function(f, n)
    if lunets_function(f) then return nil end
    local name, value = raw.getupvalue(f, n)
    if rawequal(value, core) then return name, nil end
    return name, value
  end
  debug.setupvalue = function(f, n, value)
    if lunets_function(f) or holds_core(f) then error("debug.setupvalue: lunet's own functions are not changed", 2) end
    return raw.setupvalue(f, n, value)
  end
  debug.upvaluejoin = function(f1, n1, f2, n2)
    if lunets_function(f1) or lunets_function(f2) or holds_core(f1) or holds_core(f2) then
      error("debug.upvaluejoin: lunet's own functions are not changed", 2)
    end
    return raw.upvaluejoin(f1, n1, f2, n2)
  end
  -- A local holding core (a module's chunk while it loads) shows as nil. Levels counted from
  -- the caller's, as the real one counts them: one more here for this function.
  debug.getlocal = function(thread, level, n)
    if type(thread) ~= "thread" then thread, level, n = nil, thread, level end
    if type(level) == "number" and thread == nil then level = level + 1 end
    local name, value
    if thread then name, value = raw.getlocal(thread, level, n) else name, value = raw.getlocal(level, n) end
    if rawequal(value, core) then return name, nil end
    return name, value
  end
end

return function(core)
  local open_to_all = os.getenv("LUNET_INTERNALS") == "1"
  guard_require(core, open_to_all)
  if open_to_all then return end
  guard_chunks()
  guard_debug(core)
end
