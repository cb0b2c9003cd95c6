--- Named sessions: a session's headers, auth and cookies kept in a file between runs, as HTTPie
--- sessions are. The command line's --session NAME and http.session{ name = NAME } read the
--- same file: $XDG_CONFIG_HOME/lunet/sessions/NAME.json (~/.config when unset), or the path
--- given when the name has a '/' in it. The file is JSON, written 0600 in a 0700 folder (it holds
--- credentials), replaced atomically.
local core = require "lunet.core"
local json = require "lunet.json"
local errors = require "lunet.errors"

local M = {}

--- The file a session name stands for.
function M.path(name)
  if type(name) ~= "string" or name == "" then errors.raise("argument", "a session name must be a non-empty string") end
  if name:find("/", 1, true) then return name end
  if not name:find("^[%w._-]+$") or name:find("^%.") then
    errors.raise("argument", string.format("session name '%s' may only have letters, digits, '.', '_' and '-' (or give a path with a '/')", name))
  end
  local base = os.getenv("XDG_CONFIG_HOME")
  if not base or base == "" then base = (os.getenv("HOME") or ".") .. "/.config" end
  return base .. "/lunet/sessions/" .. name .. ".json"
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
  local ok, data = pcall(json.decode, text)
  if not ok or type(data) ~= "table" or data.lunet_session ~= 1 then
    errors.raise("argument", string.format("%s is not a lunet session file (%s)", path, ok and "no \"lunet_session\": 1" or tostring(data)))
  end
  return data
end

--- Writes a session's headers, auth and cookies to `path` (0600, atomically).
function M.write(path, session)
  local headers = {}
  for k, v in pairs(session.headers or {}) do
    if type(k) == "string" and kept(k) and (type(v) == "string" or type(v) == "table") then headers[k] = v end
  end
  local data = {
    lunet_session = 1,
    headers = next(headers) and headers or nil,
    auth = require("lunet.auth").storable(session._options.auth),
    base_url = session.base_url,
    cookies = json.array(session:cookies()),
  }
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then
    local ok, err = core.make_private_dirs(dir)
    if not ok then errors.raise("io", err) end
  end
  local ok, err = core.write_private(path, json.encode(data, { pretty = true, sort_keys = true }) .. "\n")
  if not ok then errors.raise("io", err) end
  return path
end

--- http.session{ name = NAME, read_only = bool, ... }: the stored session under the options
--- given (theirs win), with its cookies in memory. `make` makes a session from options.
function M.open(make, opts)
  local path = M.path(opts.name)
  local stored = M.read(path) or {}
  local o = {}
  for k, v in pairs(opts) do if k ~= "name" and k ~= "read_only" then o[k] = v end end
  local headers = {}
  for k, v in pairs(stored.headers or {}) do headers[k] = v end
  for k, v in pairs(opts.headers or {}) do headers[k] = v end
  o.headers = headers
  if o.auth == nil then o.auth = stored.auth end
  if o.base_url == nil then o.base_url = stored.base_url end
  if o.cookies == nil or o.cookies == true then o.cookies = true end
  local s = make(o)
  for _, line in ipairs(stored.cookies or {}) do core.session_add_cookie(s._core, line) end
  s._store = { path = path, read_only = opts.read_only == true }
  return s
end

return M
