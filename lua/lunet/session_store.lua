--- Named sessions: a session's headers, auth and cookies kept in a file between runs, as HTTPie
--- sessions are. The command line's --session NAME and http.session{ name = NAME } read the
--- same file. A bare name is kept per host, as HTTPie keeps it, so that credentials saved
--- against one host are never sent to another under the same name:
--- $XDG_CONFIG_HOME/lunet/sessions/HOST/NAME.json (~/.config when unset; HOST as host_port,
--- the default port left out). A name with a '/' in it is that file, for any host (the user
--- chose it). The file is JSON, written 0600 in a 0700 folder (it holds credentials),
--- replaced atomically.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local json = require "lunet.json"
local errors = require "lunet.errors"

local M = {}

local DEFAULT_PORT = { http = "80", https = "443", ws = "80", wss = "443" }

--- The folder name of a host: `host` is a URL or host[:port] ("127.0.0.1:8080" ->
--- "127.0.0.1_8080", "https://Example.com:443/x" -> "example.com"). nil when it names none.
function M.host_dir(host)
  if type(host) ~= "string" or host == "" then return nil end
  local scheme, rest = host:match("^(%a[%w+.-]*)://(.*)$")
  local authority = (rest or host):match("^([^/?#]*)")
  authority = authority:gsub("^.*@", ""):lower()
  local name, port = authority:match("^(%[[^%]]*%])(.*)$")
  if not name then name, port = authority:match("^([^:]*)(.*)$") end
  port = port:gsub("^:", "")
  if scheme and DEFAULT_PORT[scheme:lower()] == port then port = "" end
  if name == "" or not (name .. port):match("^[%w%.%-_%[%]:]+$") then return nil end
  local dir = name .. (port ~= "" and ("_" .. port) or "")
  return (dir:gsub(":", "_"))
end

-- The loopback host's spellings: one machine, one folder ("localhost"; the `:8080` shorthand
-- means localhost, and docs write 127.0.0.1).
local LOOPBACK = { ["localhost"] = true, ["127.0.0.1"] = true, ["[::1]"] = true }

--- The folder of a host as sessions are kept: host_dir's, with every loopback spelling as
--- "localhost" (and the folders a loopback session may have been saved in before, to read).
function M.host_dirs(host)
  local dir = M.host_dir(host)
  if not dir then return nil end
  local name, port = dir:match("^(.-)(_%d+)$")
  name, port = name or dir, port or ""
  if not LOOPBACK[name] and not LOOPBACK[(name:gsub("_", ":"))] then return dir, {} end
  return "localhost" .. port, { "127.0.0.1" .. port, "[__1]" .. port }
end

--- The file a session name stands for, for requests to `host` (a URL or host[:port]).
function M.path(name, host)
  if type(name) ~= "string" or name == "" then errors.raise("argument", "a session name must be a non-empty string") end
  if name:find("/", 1, true) then return name end
  if not name:find("^[%w._-]+$") or name:find("^%.") then
    errors.raise("argument", string.format("session name '%s' may only have letters, digits, '.', '_' and '-' (or give a path with a '/')", name))
  end
  local dir, older = M.host_dirs(host)
  if not dir then
    errors.raise("argument", string.format("session '%s' is kept per host (so that its credentials go to that host only): give the session a base_url or host = \"HOST:PORT\", or give a file path", name))
  end
  local base = os.getenv("XDG_CONFIG_HOME")
  if not base or base == "" then base = (os.getenv("HOME") or ".") .. "/.config" end
  local path = base .. "/lunet/sessions/" .. dir .. "/" .. name .. ".json"
  -- A loopback session saved under another spelling before: found where it is.
  for _, d in ipairs(older) do
    local other = base .. "/lunet/sessions/" .. d .. "/" .. name .. ".json"
    local f = io.open(path, "rb")
    if f then f:close() break end
    f = io.open(other, "rb")
    if f then f:close() return other end
  end
  return path
end

-- Headers a session never keeps: they describe one request's body or condition (as HTTPie).
local function kept(name)
  local lower = name:lower()
  return not (lower:find("^content%-") or lower:find("^if%-"))
end

--- The stored data { headers, auth, cookies, base_url }, or nil when there is no such file.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  if text == "" then return nil end   -- an empty file (a new temporary file) holds no session
  local ok, data = pcall(json.decode, text)
  if not ok or type(data) ~= "table" or data.lunet_session ~= 1 then
    errors.raise("argument", string.format("%s is not a lunet session file (%s)", path, ok and "no \"lunet_session\": 1" or tostring(data)))
  end
  return data
end

-- A cookie line's identity: domain, path and name (Netscape fields 1, 3 and 6).
local function cookie_key(line)
  local f = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = field end
  return (f[1] or "") .. "\t" .. (f[3] or "") .. "\t" .. (f[6] or "")
end

-- What this run changed since it read the file (`loaded`), laid over what the file holds now
-- (`current`, maybe written by another run meanwhile): headers it added, changed or removed,
-- its auth when it changed it, its cookies over the file's (by domain, path and name); the
-- rest of the file stays. Two runs saving one session then both keep their updates.
local function merged(current, mine, loaded)
  current, loaded = current or {}, loaded or {}
  local headers = {}
  for k, v in pairs(current.headers or {}) do headers[k] = v end
  local before = loaded.headers or {}
  for k, v in pairs(mine.headers or {}) do
    if json.encode(v) ~= json.encode(before[k]) then headers[k] = v end
  end
  for k in pairs(before) do if (mine.headers or {})[k] == nil then headers[k] = nil end end
  local auth = current.auth
  if json.encode(mine.auth) ~= json.encode(loaded.auth) then auth = mine.auth end
  local cookies, index = {}, {}
  for _, line in ipairs(current.cookies or {}) do
    cookies[#cookies + 1] = line
    index[cookie_key(line)] = #cookies
  end
  for _, line in ipairs(mine.cookies or {}) do
    local at = index[cookie_key(line)]
    if at then cookies[at] = line else cookies[#cookies + 1] = line; index[cookie_key(line)] = #cookies end
  end
  -- A cookie this run had when it read the file, and has no more (the server removed it or
  -- it expired), goes from the file too.
  local still = {}
  for _, line in ipairs(mine.cookies or {}) do still[cookie_key(line)] = true end
  local gone = {}
  for _, line in ipairs(loaded.cookies or {}) do if not still[cookie_key(line)] then gone[cookie_key(line)] = true end end
  if next(gone) then
    local kept_cookies = {}
    for _, line in ipairs(cookies) do if not gone[cookie_key(line)] then kept_cookies[#kept_cookies + 1] = line end end
    cookies = kept_cookies
  end
  return {
    lunet_session = 1, headers = next(headers) and headers or nil, auth = auth,
    base_url = mine.base_url or current.base_url, cookies = json.array(cookies),
  }
end

--- Writes a session's headers, auth and cookies to `path` (0600, atomically), merged with what
--- another run wrote there since this session read it (see `merged`), under a lock.
function M.write(path, session)
  local headers = {}
  for k, v in pairs(session.headers or {}) do
    if type(k) == "string" and kept(k) and (type(v) == "string" or type(v) == "table") then headers[k] = v end
  end
  local mine = {
    headers = headers,
    auth = require("lunet.auth").storable(session._options.auth),
    base_url = session.base_url,
    cookies = session:cookies(),
  }
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then
    local ok, err = core.make_private_dirs(dir)
    if not ok then errors.raise("io", err) end
  end
  -- The folder is the lock (a file beside the session's would stay behind after every save).
  local lock, lerr = core.lock_file(dir and dir ~= "" and dir or ".")
  if not lock then errors.raise("io", lerr) end
  local ok, err = pcall(function()
    local current = M.read(path)
    local loaded = session._store and session._store.path == path and session._store.loaded or nil
    local data = merged(current, mine, loaded)
    local written, werr = core.write_private(path, json.encode(data, { pretty = true, sort_keys = true }) .. "\n")
    if not written then errors.raise("io", werr) end
    -- What the file holds now is what a later save of this session is measured against.
    if session._store and session._store.path == path then session._store.loaded = data end
  end)
  core.unlock_file(lock)
  if not ok then error(err, 0) end
  return path
end

--- http.session{ name = NAME, host = HOST, read_only = bool, ... }: the stored session under
--- the options given (theirs win), with its cookies in memory. The host is `host` or the
--- base_url's. `make` makes a session from options.
function M.open(make, opts)
  local host = opts.host or opts.base_url
  local path = M.path(opts.name, host)
  local stored = M.read(path)
  if not stored and not M.quiet_new then
    -- Say so: a name misspelt, or kept for another host, would otherwise open empty in silence.
    -- (The command line's --session makes one on first use, as HTTPie's does: M.quiet_new.)
    io.stderr:write(string.format("lunet: session '%s' has no file yet (%s): it starts empty%s\n", opts.name,
      require("lunet.terminal_safe").line(path), opts.read_only and "" or ", and is saved there"))
  end
  stored = stored or {}
  local o = {}
  for k, v in pairs(opts) do if k ~= "name" and k ~= "read_only" and k ~= "host" then o[k] = v end end
  local headers = {}
  for k, v in pairs(stored.headers or {}) do headers[k] = v end
  for k, v in pairs(opts.headers or {}) do headers[k] = v end
  o.headers = headers
  if o.auth == nil then o.auth = stored.auth end
  if o.base_url == nil then o.base_url = stored.base_url end
  if o.cookies == nil or o.cookies == true then o.cookies = true end
  local s = make(o)
  for _, line in ipairs(stored.cookies or {}) do core.session_add_cookie(s._core, line) end
  s._store = { path = path, read_only = opts.read_only == true, host = host, loaded = stored }
  return s
end

return M
