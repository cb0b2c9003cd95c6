-- The options requests and sessions take, checked before anything is sent, and the rules for
-- what a response must be (accept_status, accept_types). Pure: no network, no state.
local errors = require "lunet.errors"

local M = {}

-- Options ------------------------------------------------------------------------------------

-- What a session takes, and what each request may override.
M.SESSION = {
  base_url = "string", headers = "table", timeout = "number", connect_timeout = "number",
  request = "any", response = "any", accept_status = "any", accept_types = "table",
  cookies = "any", cache = "any", auth = "table", proxy = "string", insecure = "boolean", ca_file = "string",
  http_version = "string", max_body = "any", follow = "boolean", max_redirects = "number",
  decompress = "boolean", max_concurrent = "number", retry = "any", wait_for_network = "boolean",
  name = "string", read_only = "boolean", host = "string",   -- a named session (lunet.session_store)
  cert = "string", cert_key = "string", cert_password = "string", netrc = "any",
  secret_names = "table",   -- header, parameter and field names that hold this API's credentials
}
M.REQUEST = {
  method = "string", url = "string", query = "any", headers = "table", json = "any", form = "table",
  multipart = "table",
  body = "string", content_type = "string", params = "any", timeout = "number",
  connect_timeout = "number", follow = "boolean", max_redirects = "number", max_body = "any",
  insecure = "boolean", ca_file = "string", proxy = "string", http_version = "string",
  response = "any", accept_status = "any", accept_types = "any", cancel = "table",
  decompress = "boolean", request = "any", retry = "any", wait_for_network = "boolean", cache = "string",
  offline_miss = "string", on_chunk = "function", stream = "boolean",
  cert = "string", cert_key = "string", cert_password = "string", netrc = "any",
  -- used by lunet.download: a file target, progress and chunk events, an upload from a file
  _download = "table", _progress = "boolean", _stream = "boolean", _on_events = "function", _upload_file = "string",
  -- used by lunet.sse: a connection that lives long (the stream pool, no connection caps)
  _long_lived = "boolean",
  -- used by lunet.grpc: a body sent in pieces (core.transfer_send), and the transfer's number
  -- handed over as soon as it is started
  _send_stream = "boolean", _on_transfer = "function",
  -- a unary answer's max_message, checked against each length prefix as the body arrives
  _grpc_max_message = "number",
  -- used by the command line (-v): keep the head libcurl sent
  _record_head = "boolean",
  -- used by lunet.auth: a token request is not recorded (its answer is the token)
  _unrecorded = "boolean",
}
local HTTP_VERSIONS = { ["1.0"] = true, ["1.1"] = true, ["2"] = true, ["2-prior-knowledge"] = true, ["3"] = true, ["3-only"] = true }

local function closest(name, known) return require("lunet.suggest").closest(name, known) end

function M.check(opts, known, where)
  for k, v in pairs(opts) do
    local want = known[k]
    if not want then
      local hint = type(k) == "string" and closest(k, known)
      errors.raise("argument", string.format("unknown option '%s' in %s%s", tostring(k), where,
        hint and (" (did you mean '" .. hint .. "'?)") or ""))
    end
    if want ~= "any" and type(v) ~= want then
      errors.raise("argument", string.format("option '%s' in %s must be a %s, got %s", k, where, want, type(v)))
    end
  end
  if opts.http_version and not HTTP_VERSIONS[opts.http_version] then
    errors.raise("argument", "option 'http_version' must be \"1.0\", \"1.1\", \"2\", \"2-prior-knowledge\", \"3\" or \"3-only\", got \"" .. opts.http_version .. "\"")
  end
end

local UNITS = { b = 1, k = 1024, kb = 1024, kib = 1024, m = 1024^2, mb = 1024^2, mib = 1024^2, g = 1024^3, gb = 1024^3, gib = 1024^3 }

--- "100MB" -> bytes (1 KB = 1024 bytes); numbers pass; false means no limit.
function M.parse_size(v, name)
  if v == false or v == nil then return v end
  if type(v) == "number" and v >= 0 then return math.floor(v) end
  if type(v) == "string" then
    local n, unit = string.match(string.lower(v), "^%s*([%d%.]+)%s*(%a*)%s*$")
    local mult = UNITS[unit == "" and "b" or unit]
    if n and tonumber(n) and mult then return math.floor(tonumber(n) * mult) end
  end
  errors.raise("argument", string.format("option '%s' must be a size like 100MB or a number of bytes, got %s", name, tostring(v)))
end

-- Validation ---------------------------------------------------------------------------------

--- accept_status: "2xx", a list of codes {200, 204}, ranges {{200, 299}} (a flat list is
--- always codes: guessing ranges from the numbers would accept codes nobody listed), or false.
function M.status_accepted(rule, status)
  if rule == nil or rule == false then return true end
  if type(rule) == "string" then
    local class = string.match(rule, "^(%d)xx$")
    if class then return math.floor(status / 100) == tonumber(class) end
    return tostring(status) == rule
  end
  if type(rule) == "number" then return status == rule end
  for _, item in ipairs(rule) do
    if type(item) == "table" then
      if status >= item[1] and status <= item[2] then return true end
    elseif M.status_accepted(item, status) then
      return true
    end
  end
  return false
end

function M.type_accepted(accept, content_type)
  if not accept then return true end
  local mime = string.lower(string.match(content_type or "", "^%s*([^;%s]+)") or "")
  for _, want in ipairs(accept) do
    want = string.lower(want)
    if want == mime or want == "*/*" then return true end
    local major = string.match(want, "^([^/]+)/%*$")
    if major and string.match(mime, "^([^/]+)/") == major then return true end
  end
  return false
end


--- The .netrc file a `netrc` option names: true means $NETRC, else ~/.netrc (as curl -n and
--- HTTPie read it); a string is a path. false: none (nil).
function M.netrc_file(v)
  if v == false then return "" end   -- none (also over a session that has one)
  if v == true then
    local home = os.getenv("HOME")
    return os.getenv("NETRC") or (home and home .. "/.netrc") or ".netrc"
  end
  if type(v) ~= "string" then errors.raise("argument", "option 'netrc' takes true, false or a file path, got " .. type(v)) end
  return v
end

return M
