-- The prompt's Lua half: completion candidates, dot-commands, history rules.
local pretty = require "lunet.pretty"

local M = { lines = {}, ok_lines = {} }

-- Completion ---------------------------------------------------------------------------------

-- out[name] = true for a key found in t or its __index tables; "said" for a name the
-- metatable's __complete(t, sep) gave: fields an __index function makes (a response's lazy
-- fields, an OpenAPI api's operations) say themselves, and for sep ":" only methods, so that
-- completion never reads a lazy field to learn its type (a response's json would decode).
local function keys_of(t, out, sep, seen)
  seen = seen or {}
  if type(t) ~= "table" or seen[t] then return end
  seen[t] = true
  for k in pairs(t) do if type(k) == "string" and out[k] == nil then out[k] = true end end
  local mt = getmetatable(t)
  if type(mt) == "table" and type(rawget(mt, "__index")) == "table" then keys_of(rawget(mt, "__index"), out, sep, seen) end
  if type(mt) == "table" and type(rawget(mt, "__complete")) == "function" then
    local ok, names = pcall(rawget(mt, "__complete"), t, sep)
    if ok and type(names) == "table" then for _, k in ipairs(names) do out[k] = "said" end end
  end
end

-- Whether `v[name]` is a method: said by __complete for ":", or a function found by reading it.
local function is_method(v, name, how)
  if how == "said" then return true end
  local ok, is = pcall(function() return type(v[name]) == "function" end)
  return ok and is
end

local function resolve(path)
  local v = _G
  for part in path:gmatch("[^.:]+") do
    if type(v) ~= "table" then return nil end
    local ok, nextv = pcall(function() return v[part] end)
    if not ok then return nil end
    v = nextv
  end
  return v
end

-- Inside `f{ ...` or `f({ ...` where f says which names it takes (__complete_args: an OpenAPI
-- operation's parameters), the name being typed; nil elsewhere.
local function argument_names(line)
  local callee, rest = line:match("([%w_%.:]+)%s*%(?%s*{([^{}]*)$")
  if not callee then return nil end
  local partial = rest:match("[,{%s]([%a_][%w_]*)$") or rest:match("^%s*([%a_][%w_]*)$") or (rest:match("[,%s]$") or rest == "") and ""
  if not partial then return nil end
  local v = resolve(callee)
  local mt = type(v) == "table" and getmetatable(v)
  local f = type(mt) == "table" and rawget(mt, "__complete_args")
  if type(f) ~= "function" then return nil end
  local ok, names = pcall(f, v)
  if not ok or type(names) ~= "table" then return nil end
  local out = {}
  for _, name in ipairs(names) do
    if name:match("^[%a_][%w_]*$") and name:sub(1, #partial) == partial then out[#out + 1] = name end
  end
  table.sort(out)
  return out, partial
end

local KEYWORDS = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto",
                   "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }


-- Candidates replace the text from byte `from` of `line` (the word they complete) to its end;
-- readline replaces from its own word start `start` (0-based: after the last word-break
-- character, an '=' or '&' inside a URL too), so each candidate is cut or extended to begin
-- there. Otherwise a URL completed after `?q=` would come back whole after the '='.
local function from_start(out, line, from, start)
  if not start or start + 1 == from then return out end
  for i, c in ipairs(out) do
    if start + 1 > from then out[i] = c:sub(start + 2 - from) else out[i] = line:sub(start + 1, from - 1) .. c end
  end
  return out
end

--- Candidates for the word ending `line` (the text before the cursor): globals, fields and
--- methods (through metatables), keywords; inside a string, URLs seen in this session. With
--- `start`, where readline's word begins (0-based), candidates replace the text from there.
function M.complete(line, start)
  local out = {}
  local inside_string = select(2, line:gsub('"', "")) % 2 == 1 or select(2, line:gsub("'", "")) % 2 == 1
  if inside_string then
    local prefix = line:match("[\"']([^\"']*)$") or ""
    local found = {}
    -- The URLs http.lua saw, if it was loaded (completion does not load it, and reads no global).
    local http = package.loaded["lunet.http"]
    for u in pairs(http and http._seen_urls or {}) do
      local path = u:match("^%a+://[^/]+/(.*)$")       -- sessions take paths relative to base_url
      for _, candidate in ipairs({ u, path }) do
        if candidate and candidate:sub(1, #prefix) == prefix and not found[candidate] then
          found[candidate] = true
          out[#out + 1] = candidate
        end
      end
    end
    table.sort(out)
    return from_start(out, line, #line - #prefix + 1, start)
  end
  local args, typed = argument_names(line)
  if args then return from_start(args, line, #line - #typed + 1, start) end
  local word = line:match("[%w_%.:]*$") or ""
  local base, sep, partial = word:match("^(.*)([%.:])([%w_]*)$")
  local names = {}
  if base then
    local v = resolve(base)
    keys_of(v, names, sep)
    -- Internals ('_raw') only once '_' is typed.
    local internals = partial:sub(1, 1) == "_"
    for name, how in pairs(names) do
      if name:sub(1, #partial) == partial and (internals or name:sub(1, 1) ~= "_")
         and (sep == "." or is_method(v, name, how)) then
        out[#out + 1] = base .. sep .. name
      end
    end
  else
    keys_of(_G, names, "")
    for _, k in ipairs(KEYWORDS) do names[k] = true end
    for name in pairs(names) do
      if name:sub(1, #word) == word and not name:find("^_") then out[#out + 1] = name end
    end
  end
  table.sort(out)
  return from_start(out, line, #line - #word + 1, start)
end

-- History -------------------------------------------------------------------------------------

--- Whether a line may go into the history file (no secrets on disk).
-- A line that holds a secret is left out of the history file whole (lunet.secrets decides):
-- a masked line would replay as something else than what was typed.
function M.may_remember(line)
  return not require("lunet.secrets").line_has_secret(line)
end

-- Dot-commands --------------------------------------------------------------------------------

local HELP = [[
lunet: Lua 5.4 with an HTTP client. Type Lua; expressions print their value, `_` is the last one.

  r = http.get("http://127.0.0.1:8080/get")      a request (r.status, r.headers, r.json, r.text)
  api = http.session{ base_url = "http://127.0.0.1:8080/" }
  api:get("anything", { query = { q = "lua" } })  relative to base_url
  t = api:get_async("delay/3")                    goes on in the background; t.state, t:await()
  Ctrl-C cancels what the line started; Ctrl-D (or Ctrl-C on an empty line twice) leaves.

  .help            this text          .vars            your variables
  .history         earlier lines      .save FILE       this session's lines as a script
  .load FILE       run a Lua file here
  .save session NAME [VARIABLE]       a session's headers, auth and cookies, for
                                      http.session{ name = NAME, host = "HOST:PORT" } and
                                      lunet --session NAME HOST:PORT/...]]

local BUILTIN = (package.loaded["lunet.prelude"] or {}).builtins or {}
-- The command line's `arg`, there before the first line (M.started): not one of the user's
-- variables for .vars.
local STARTUP_ARG
function M.started() STARTUP_ARG = rawget(_G, "arg") end

--- Records a line the user ran and whether it succeeded (for .save), as the script line that
--- does what the prompt did (lunet.repl_replay), `_` included.
function M.record(line, ok)
  M.lines[#M.lines + 1] = line
  if not ok then return end
  local host = package.loaded["lunet.prelude"]
  local replay = require("lunet.repl_replay").line(line, host and host.last_line_kept)
  if replay then M.ok_lines[#M.ok_lines + 1] = replay end
end

-- `.save session NAME [VAR]`: the session in global VAR (or the only session among the
-- globals) written as named session NAME, which http.session{ name = NAME } and
-- `lunet --session NAME` then load.
local function save_session(args)
  local name, var = args:match("^(%S+)%s*(%S*)$")
  if not name then return nil, ".save session needs a name: .save session NAME [VARIABLE]" end
  local http = package.loaded["lunet.http"]
  -- Sessions are tables; _G itself (_G._G) is skipped before getmetatable sees it: the
  -- prelude's getmetatable(_G) loads every lazy global into _G, which must not change while
  -- pairs walks it (a key was seen twice, one time in thirty).
  local function is_session(v)
    return http ~= nil and type(v) == "table" and not rawequal(v, _G) and getmetatable(v) == http.Session
  end
  if var == "" then
    local found = {}
    for k, v in pairs(_G) do if type(k) == "string" and k ~= "_" and is_session(v) then found[#found + 1] = k end end
    table.sort(found)
    if #found == 0 then return nil, "no session to save: make one first (api = http.session{ base_url = ... })" end
    if #found > 1 then
      return nil, string.format("which session? %s: .save session %s VARIABLE", table.concat(found, ", "), name)
    end
    var = found[1]
  elseif not is_session(rawget(_G, var)) then
    return nil, string.format("%s is not a session (make one with %s = http.session{ ... })", var, var)
  end
  local ok, path = pcall(_G[var].save, _G[var], name)
  if not ok then return nil, require("lunet.errors").describe(path) end
  -- What loads it: a bare name is kept per host, so the host goes with it (the session's own).
  local host = _G[var].base_url and require("lunet.url").origin(_G[var].base_url)
  local how = host and string.format("http.session{ name = %q, host = %q }", name, host)
    or string.format("http.session{ name = %q }", path)
  return string.format("saved session %s as %s (%s); %s loads it", var, name, path, how)
end

--- Runs a dot-command; returns the text to print (or nil, error message).
function M.command(line, history, color)
  local cmd, arg = line:match("^%.(%a+)%s*(.-)%s*$")
  if cmd == "help" then return HELP end
  if cmd == "history" then
    local out = {}
    for i, l in ipairs(history or {}) do out[#out + 1] = string.format("%4d  %s", i, l) end
    return table.concat(out, "\n")
  end
  if cmd == "vars" then
    local out = {}
    local names = {}
    for k, v in pairs(_G) do
      if type(k) == "string" and not BUILTIN[k] and k ~= "_" and not (k == "arg" and rawequal(v, STARTUP_ARG)) then
        names[#names + 1] = k
      end
    end
    table.sort(names)
    for _, k in ipairs(names) do
      local text = pretty.value(_G[k], { color = color, depth = 1 }):gsub("\n.*", " …")
      out[#out + 1] = k .. " = " .. text
    end
    return #out > 0 and table.concat(out, "\n") or "(no variables yet)"
  end
  if cmd == "save" and arg:find("^session%f[%s%z]") then return save_session(arg:match("^session%s*(.-)$")) end
  if cmd == "save" then
    if arg == "" then return nil, ".save needs a file name" end
    local f, err = io.open(arg, "w")
    if not f then return nil, err end
    f:write("-- saved from the lunet prompt\n")
    for _, l in ipairs(M.ok_lines) do f:write(l, "\n") end
    f:close()
    return string.format("saved %d lines to %s", #M.ok_lines, arg)
  end
  if cmd == "load" then
    if arg == "" then return nil, ".load needs a file name" end
    return { load_file = arg }
  end
  return nil, "unknown command ." .. tostring(cmd) .. " (try .help)"
end

return M
