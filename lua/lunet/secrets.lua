-- What is a secret, decided once for everything lunet prints or records: the prompt's history,
-- HAR recordings, r:curl(), the command line's -v. Strings in, strings out; the one state is the
-- names sessions declare secret (declare_name).
--
-- A name is a credential's by what it contains, not by a short list of exact names:
-- "X-Api-Key", "api_key", "apikey", "access_token", "Proxy-Authorization", "session_id",
-- "client_secret", "db-password" all are. Names are compared lower-cased, without "-", "_", "."
-- and spaces.
local M = {}

M.MASK = "***"

-- Which names are credentials' is decided in one place for the whole program
-- (CredentialFields.swift: the words, the short names, how names are compared); the cache and
-- redirects use the same rule.
local core = select(2, ...)   -- lunet.core, from the module's loader
local core_is_secret_name = core.is_secret_name

local function normal(name) return (string.gsub(string.lower(name), "[-_%. ]", "")) end

-- Names a session declared secret (an API key's header or parameter, whatever it is called),
-- for the rest of the program: a recording written later still masks them.
local declared = {}

--- Declares a header or parameter name a credential's from now on, for everything: what is
--- printed and recorded here, and the core's cache keys and redirects (core.declare_secret_name).
function M.declare_name(name)
  if type(name) == "string" and name ~= "" then
    declared[normal(name)] = true
    core.declare_secret_name(name)
  end
end

--- True when a header, field, parameter or key name names a credential.
function M.is_secret_name(name)
  if type(name) ~= "string" then return false end
  return declared[normal(name)] == true or core_is_secret_name(name)
end

local function decode(s)
  return (string.gsub(string.gsub(s, "+", " "), "%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

--- A query string or form body with the values of secret names masked; the rest as sent.
function M.mask_query(q)
  if not q then return q end
  return (string.gsub(q, "([^&;=]*)=([^&;]*)", function(name, value)
    if M.is_secret_name(decode(name)) then return name .. "=" .. M.MASK end
    return name .. "=" .. value
  end))
end

--- A URL with its userinfo password and its secret query parameters masked.
function M.mask_url(u)
  if type(u) ~= "string" then return u end
  local before, mark, query, fragment = string.match(u, "^([^?#]*)(%??)([^#]*)(.*)$")
  if not before then return u end
  before = string.gsub(before, "^(%a[%w+.-]*://[^/@:]*:)[^/@]*@", "%1" .. M.MASK .. "@")
  return before .. mark .. M.mask_query(query) .. fragment
end

-- Masks, in place, the values of secret keys anywhere in a decoded JSON value.
local function mask_tree(v)
  if type(v) ~= "table" then return v end
  for k, item in pairs(v) do
    if type(k) == "string" and M.is_secret_name(k) and type(item) ~= "table" then
      v[k] = M.MASK
    else
      mask_tree(item)
    end
  end
  return v
end

--- A JSON text with the values of secret keys masked (re-encoded), or the text as it was when
--- it is not JSON.
function M.mask_json_text(text)
  local json = require "lunet.json"
  local ok, value = pcall(json.decode, text)
  if not ok or type(value) ~= "table" then return text end
  local encoded_ok, out = pcall(json.encode, mask_tree(value))
  return encoded_ok and out or text
end

--- A header's value as it may be shown: masked whole when the header is a credential's.
function M.mask_header(name, value)
  if M.is_secret_name(name) then return M.MASK end
  return value
end

--- Header fields { { name, value }, ... } as they may be shown: credentials' values masked.
function M.mask_fields(fields)
  local out = {}
  for i, f in ipairs(fields) do out[i] = { f[1], M.mask_header(f[1], f[2]) } end
  return out
end

-- Credentials known by their shape wherever they stand (`t = "ghp_..."` has no telling name):
-- a prefix the issuer puts on every token, the characters that follow it, and the fewest of
-- them a real token has (so that "sk-1" in a sentence is not taken for one).
local TOKEN_SHAPES = {
  { "gh[pousr]_", "[%w]", 30 },                  -- GitHub tokens
  { "github_pat_", "[%w_]", 30 },                -- GitHub fine-grained tokens
  { "glpat%-", "[%w_%-]", 20 },                  -- GitLab personal access tokens
  { "xox[abposr]%-", "[%w%-]", 10 },             -- Slack tokens
  { "sk%-", "[%w_%-]", 20 },                     -- OpenAI, Anthropic and like API keys
  { "[sr]k_live_", "[%w]", 16 },                 -- Stripe secret and restricted keys
  { "A[KS]IA", "[%u%d]", 16 },                   -- AWS access key ids
  { "AIza", "[%w_%-]", 35 },                     -- Google API keys
  { "eyJ", "[%w_%-]", 8, "%.eyJ[%w_%-]+%.[%w_%-]+" },   -- JWTs: a header and a payload that decode to JSON, a signature
}

--- True when `text` holds a token of a well-known shape (GitHub, GitLab, Slack, OpenAI-style
--- sk-, Stripe, AWS access key ids, Google API keys, JWTs).
function M.has_token_shape(text)
  for _, shape in ipairs(TOKEN_SHAPES) do
    local prefix, chars, fewest, rest = shape[1], shape[2], shape[3], shape[4]
    local pattern = "%f[%w_%-]" .. prefix .. "(" .. chars .. "+)" .. (rest and ("(" .. rest .. ")") or "")
    for body in string.gmatch(text, pattern) do
      if #body >= fewest then return true end
    end
  end
  return false
end

--- True when a line of Lua typed at the prompt holds a secret: an auth table, a URL with a
--- password, a credential-named field, key or header given a value ("password = ...",
--- ["X-Api-Key"] = ..., "Authorization: ...", ?api_key=...), a bearer or basic credential, or
--- a token of a well-known shape anywhere (`t = "ghp_..."`).
function M.line_has_secret(line)
  if string.find(line, "%f[%w_]auth%s*=") then return true end
  if M.has_token_shape(line) then return true end
  if string.find(line, "%a[%w+.-]*://[^/%s\"'@]*:[^/%s\"'@]*@") then return true end
  if string.find(string.lower(line), "bearer%s+[%w%-%._~+/]+") then return true end
  -- identifiers or quoted names followed by = or : (a field, a key, a header line, a parameter)
  for name in string.gmatch(line, "([%a_][%w_%-]*)%s*[\"'%]]*%s*[=:]") do
    if M.is_secret_name(name) then return true end
  end
  for name in string.gmatch(line, "[?&]([^=&%s\"']+)=") do
    if M.is_secret_name(name) then return true end
  end
  return false
end

return M
