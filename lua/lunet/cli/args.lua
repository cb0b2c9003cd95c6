--- The one-shot command line's arguments (pure): `[METHOD] URL [ITEM ...]` with options
--- anywhere, as HTTPie takes them. parse(argv) gives a plain table, or nil and a message
--- for a usage error (the caller exits 2).
local items = require "lunet.cli.items"

local M = {}

-- name -> { short =, value = "WHAT" (takes one) }. Kept in one table: the parser, --help,
-- the suggestion for a typo and the shell completions all read it.
M.OPTIONS = {
  ["json"] = { short = "j", help = "data items as a JSON object (the default)" },
  ["form"] = { short = "f", help = "data items as a form (multipart if there are files)" },
  ["multipart"] = { help = "data items as multipart/form-data, files or not" },
  ["raw"] = { value = "BODY", help = "the request body, as given" },
  ["print"] = { short = "p", value = "WHAT", help = "what to print: H request head, B request body, h response head, b response body, m metadata" },
  ["headers"] = { short = "h", help = "print the response head only (--print=h)" },
  ["body"] = { short = "b", help = "print the response body only (--print=b)" },
  ["verbose"] = { short = "v", help = "print the request too (--print=HBhb)" },
  ["quiet"] = { short = "q", help = "print nothing (errors still go to stderr)" },
  ["pretty"] = { value = "all|colors|format|none", help = "colours and formatting (default: all on a terminal, none otherwise)" },
  ["offline"] = { help = "build and print the request; send nothing" },
  ["check-status"] = { help = "exit 3, 4 or 5 for a 3xx, 4xx or 5xx answer" },
  ["output"] = { short = "o", value = "FILE", help = "write the body (or with -v, everything printed) to FILE" },
  ["download"] = { short = "d", help = "save the body to a file (named by the response or URL) with a progress bar" },
  ["continue"] = { short = "c", help = "with --download, resume a partial file" },
  ["follow"] = { short = "F", help = "follow redirects" },
  ["max-redirects"] = { value = "N", help = "with --follow, at most N redirects (default 30)" },
  ["timeout"] = { value = "SECONDS", help = "give up after this long without progress" },
  ["verify"] = { value = "yes|no|CAFILE", help = "check the server's certificate (default yes)" },
  ["cert"] = { value = "FILE", help = "client certificate (PEM)" },
  ["cert-key"] = { value = "FILE", help = "its private key, if not in --cert" },
  ["cert-key-pass"] = { value = "PASS", help = "the key's passphrase" },
  ["http3"] = { help = "try HTTP/3 first, HTTP/2 and 1.1 beside it (needs a libcurl with HTTP/3)" },
  ["http3-only"] = { help = "HTTP/3 or nothing (needs a libcurl with HTTP/3)" },
  ["proxy"] = { value = "PROTOCOL:URL", help = "proxy for a protocol (http:http://127.0.0.1:3128), or URL for all" },
  ["auth"] = { short = "a", value = "USER[:PASS]|TOKEN", help = "credentials; a missing password is asked for (-A api-key: NAME:KEY or NAME==KEY)" },
  ["auth-type"] = { short = "A", value = "TYPE", help = "the auth scheme: basic (default), bearer, digest, ntlm, negotiate, aws-sigv4, api-key, oauth2",
                    choices = { "basic", "bearer", "digest", "ntlm", "negotiate", "aws-sigv4", "api-key", "oauth2" } },
  ["aws-sigv4"] = { value = "PROVIDER", help = "sign with AWS SigV4 (aws:amz:REGION:SERVICE); keys from -a KEY:SECRET or AWS_*" },
  ["ignore-netrc"] = { help = "do not read credentials from ~/.netrc" },
  ["ignore-stdin"] = { short = "I", help = "do not read a request body from standard input" },
  ["session"] = { value = "NAME|PATH", help = "keep headers, auth and cookies in a named session" },
  ["session-read-only"] = { value = "NAME|PATH", help = "use a session without updating it" },
  ["curl"] = { help = "print the request as a curl command (secrets masked) instead of sending it" },
  ["har"] = { value = "FILE", help = "record the exchange as a HAR file" },
  ["cache"] = { help = "use the HTTP cache (RFC 9111) in lunet's cache folder" },
  ["help"] = { help = "this text" },
}
M.SHORT = {}
for name, o in pairs(M.OPTIONS) do if o.short then M.SHORT[o.short] = name end end

--- Every option name with its dashes, sorted (for suggestions and completions).
function M.option_names()
  local names = {}
  for name in pairs(M.OPTIONS) do names[#names + 1] = "--" .. name end
  table.sort(names)
  return names
end

--- HTTPie's URL shorthands: ":3000/x" and ":/x" are localhost, no scheme means http://.
function M.expand_url(u)
  if u:find("^:") then
    local port, rest = u:match("^:(%d*)(.*)$")
    if not port then return nil end
    return "http://localhost" .. (port ~= "" and ":" .. port or "") .. (rest ~= "" and rest or "/")
  end
  if u:find("^%a[%w+.-]*://") then return u end
  return "http://" .. u
end

local METHOD = "^%a+$"
local STANDARD_METHODS = { GET = true, POST = true, PUT = true, PATCH = true, DELETE = true, HEAD = true,
                           OPTIONS = true, TRACE = true, CONNECT = true }

-- The reader's spec (lunet.cli.argv) from OPTIONS: "--name" and its short letter, clustered.
local SPEC = { takes = {}, flags = {}, what = {}, clusters = true,
               help = "lunet GET --help lists the request options; docs/cli.md and man lunet say more" }
for name, o in pairs(M.OPTIONS) do
  local kind = o.value and SPEC.takes or SPEC.flags
  kind["--" .. name] = name
  if o.value then SPEC.what["--" .. name] = o.value end
  if o.short then
    kind["-" .. o.short] = name
    if o.value then SPEC.what["-" .. o.short] = o.value end
  end
end

local function usage(message) error({ usage = message }, 0) end

function M.parse(argv)
  local p = { items = {}, positional = {} }
  local ok, read = pcall(require("lunet.cli.argv").read, argv, SPEC, usage, function(_, word) p.positional[#p.positional + 1] = word end)
  if not ok then
    if type(read) == "table" and read.usage then return nil, read.usage end
    error(read, 0)
  end
  p.options = read
  if p.options.help then return p end

  local pos = p.positional
  if #pos == 0 then return nil, "no URL given (lunet [METHOD] URL [ITEM ...])" end
  local first = 1
  if #pos == 1 and STANDARD_METHODS[pos[1]] then
    return nil, string.format("no URL given after %s (lunet [METHOD] URL [ITEM ...])", pos[1])
  end
  if #pos >= 2 and pos[1]:find(METHOD) then
    p.method = pos[1]:upper()
    first = 2
  end
  p.url = M.expand_url(pos[first])
  if not p.url then return nil, string.format("'%s' is not a URL", pos[first]) end
  for k = first + 1, #pos do
    local item, err = items.parse(pos[k])
    if not item then return nil, err end
    p.items[#p.items + 1] = item
  end
  return p
end

return M
