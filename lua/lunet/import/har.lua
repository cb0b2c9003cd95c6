--- `lunet import har FILE`: a HAR 1.2 file (a browser's network panel, lunet's own --har) as the
--- requests it holds, in order, grouped by page, with the gaps between them (docs/import.md).
--- Pure: the file's text in, a model out (lunet.import.har_render writes it as a `lunet test`
--- file or a `lunet load` script). Credentials never reach the model as values: a Cookie, an
--- Authorization or any header or query parameter lunet.secrets names secret becomes an
--- environment variable the output reads. Bad input raises { import = message } with its place:
--- line and column for JSON, a JSON pointer for a HAR that is JSON but not HAR.
local secrets = require "lunet.secrets"

local M = {}

local function fail(fmt, ...) error({ import = string.format(fmt, ...) }, 0) end

-- Headers a HAR records that a request must not repeat: HTTP/2's pseudo-headers, what libcurl
-- or lunet work out themselves, and hop-by-hop fields.
local DROPPED = { host = true, ["content-length"] = true, ["accept-encoding"] = true, connection = true, ["keep-alive"] = true,
                  ["transfer-encoding"] = true, te = true, upgrade = true, ["proxy-connection"] = true }

-- What --no-static leaves out: by the URL's extension, or by the response's type.
local STATIC_EXT = { css = true, js = true, mjs = true, map = true, png = true, jpg = true, jpeg = true, gif = true,
                     webp = true, avif = true, svg = true, ico = true, woff = true, woff2 = true, ttf = true, otf = true,
                     eot = true, mp4 = true, webm = true, mp3 = true }
local STATIC_TYPE = { "^image/", "^font/", "^text/css", "javascript", "^video/", "^audio/" }

local function is_static(url, mime)
  local ext = url:match("^[^?#]*%.(%w+)$") or url:match("^[^?#]*%.(%w+)[?#]")
  if ext and STATIC_EXT[ext:lower()] then return true end
  for _, p in ipairs(STATIC_TYPE) do if (mime or ""):lower():find(p) then return true end end
  return false
end

-- ISO 8601 (what HAR's startedDateTime is) as milliseconds since the epoch, or nil.
function M.time_ms(text)
  if type(text) ~= "string" then return nil end
  local y, mo, d, h, mi, s, frac, zone = text:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d):(%d%d)([.,]?%d*)(.*)$")
  if not y then return nil end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  -- days from 1970-01-01 (Howard Hinnant's days_from_civil)
  local yy = mo <= 2 and y - 1 or y
  local era = (yy >= 0 and yy or yy - 399) // 400
  local yoe = yy - era * 400
  local doy = (153 * (mo + (mo > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  local ms = ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60000 + tonumber(s) * 1000
  if frac ~= "" then ms = ms + math.floor(tonumber("0." .. frac:sub(2)) * 1000 + 0.5) end
  local sign, zh, zm = zone:match("^([+-])(%d%d):?(%d%d)$")
  if sign then
    local off = (tonumber(zh) * 60 + tonumber(zm)) * 60000
    ms = sign == "+" and ms - off or ms + off
  elseif zone ~= "Z" and zone ~= "" then return nil end
  return ms
end

-- The environment variables credentials become: one a header name (and value: a second value
-- of the same header gets _2, ...), named LUNET_HAR_<NAME>.
local function vault()
  local v = { by_key = {}, list = {}, used = {} }
  function v.variable(kind, name, value)
    local key = kind .. "\0" .. name:lower() .. "\0" .. value
    local var = v.by_key[key]
    if var then return var end
    local base = "LUNET_HAR_" .. (kind == "url" and "URL_" or "") .. name:upper():gsub("[^%w]", "_")
    var = base
    local n = 1
    while v.used[var] do n = n + 1; var = base .. "_" .. n end
    v.used[var] = true
    v.by_key[key] = var
    v.list[#v.list + 1] = { var = var, what = (kind == "query" and "the query parameter " or kind == "url" and "the URL's " or "the header ") .. name }
    return var
  end
  return v
end

-- A URL whose password (user:password@) and secret query values are variables: a list of
-- pieces, strings and { env = VAR }.
local function url_pieces(url, v)
  local pieces = {}
  local scheme_user, password, after = url:match("^(%a[%w+.-]*://[^:@/?#]*:)([^@/?#]*)(@.*)$")
  if scheme_user then
    pieces[1], pieces[2] = scheme_user, { env = v.variable("url", "password", password) }
    url = after
  end
  local before, query = url:match("^([^?#]*)%?([^#]*)")   -- (a fragment is never sent)
  if not before then pieces[#pieces + 1] = (url:gsub("#.*$", "")) return pieces end
  pieces[#pieces + 1] = before .. "?"
  local first = true
  for pair in query:gmatch("[^&]+") do
    if not first then pieces[#pieces + 1] = "&" end
    first = false
    local name, value = pair:match("^([^=]*)=(.*)$")
    if name and secrets.is_secret_name(name) then
      pieces[#pieces + 1] = name .. "="
      pieces[#pieces + 1] = { env = v.variable("query", name, value) }
    else
      pieces[#pieces + 1] = pair
    end
  end
  return pieces
end

local function check(cond, pointer, what) if not cond then fail("not a HAR file: %s at %s", what, pointer) end end

--- The model of HAR text `text`: { pages = { { id, title, entries = { entry, ... } }, ... },
--- variables = { { var, what }, ... }, notes = { ... } }; each entry { method, url = pieces,
--- headers = { { name, value (a string or { env = VAR }) } }, body, content_type, status,
--- started (ms), time (ms) }. opts.hosts (a set: only these hosts), opts.no_static.
function M.read(text, opts)
  opts = opts or {}
  local ok, doc = pcall(require("lunet.json").decode, text)
  if not ok then fail("not JSON: %s", (tostring(type(doc) == "table" and doc.message or doc):gsub("^.-JSON: ", ""))) end
  check(type(doc) == "table" and type(doc.log) == "table", "/log", "no log object")
  local entries = doc.log.entries
  check(type(entries) == "table", "/log/entries", "no entries array")
  local v, notes = vault(), {}
  local pages, by_id = {}, {}
  for i, p in ipairs(type(doc.log.pages) == "table" and doc.log.pages or {}) do
    check(type(p) == "table", "/log/pages/" .. (i - 1), "a page that is not an object")
    local page = { id = tostring(p.id), title = type(p.title) == "string" and p.title or tostring(p.id), entries = {} }
    pages[#pages + 1] = page
    by_id[page.id] = page
  end
  local loose = { id = "", title = "requests", entries = {} }   -- entries of no page
  local skipped_static, skipped_host = 0, 0
  for i, e in ipairs(entries) do
    local at = "/log/entries/" .. (i - 1)
    check(type(e) == "table", at, "an entry that is not an object")
    local rq = e.request
    check(type(rq) == "table", at .. "/request", "no request object")
    check(type(rq.method) == "string" and rq.method:match("^%u+$"), at .. "/request/method", "no method")
    check(type(rq.url) == "string" and rq.url:match("^https?://"), at .. "/request/url", "no http(s) URL")
    local host = rq.url:match("^https?://([^/?#:]+)")
    local mime = type(e.response) == "table" and type(e.response.content) == "table" and e.response.content.mimeType or nil
    if opts.hosts and not opts.hosts[host:lower()] then skipped_host = skipped_host + 1
    elseif opts.no_static and is_static(rq.url, mime) then skipped_static = skipped_static + 1
    else
      local entry = { method = rq.method, url = url_pieces(rq.url, v), headers = {},
                      status = type(e.response) == "table" and math.tointeger(e.response.status) or nil,
                      started = M.time_ms(e.startedDateTime), time = tonumber(e.time) or 0 }
      -- (HAR 1.2 requires the time; files written by hand often leave it out: then no gap is known)
      check(entry.started or e.startedDateTime == nil, at .. "/startedDateTime", "no ISO 8601 time")
      for j, hd in ipairs(type(rq.headers) == "table" and rq.headers or {}) do
        check(type(hd) == "table" and type(hd.name) == "string" and type(hd.value) == "string", at .. "/request/headers/" .. (j - 1), "a header without a name and a value")
        local lname = hd.name:lower()
        if hd.name:sub(1, 1) ~= ":" and not DROPPED[lname] then
          local value = hd.value
          if lname == "cookie" or lname == "authorization" or lname == "proxy-authorization" or secrets.is_secret_name(hd.name) then
            value = { env = v.variable("header", hd.name, hd.value) }
          end
          entry.headers[#entry.headers + 1] = { hd.name, value }
        end
      end
      local pd = rq.postData
      if type(pd) == "table" then
        entry.content_type = type(pd.mimeType) == "string" and pd.mimeType ~= "" and pd.mimeType or nil
        if type(pd.text) == "string" then entry.body = pd.text
        elseif type(pd.params) == "table" then
          local parts = {}
          for _, p in ipairs(pd.params) do parts[#parts + 1] = tostring(p.name) .. "=" .. tostring(p.value or "") end
          entry.body = table.concat(parts, "&")
        end
        if entry.body and entry.content_type and entry.content_type:find("^multipart/") then
          notes[#notes + 1] = string.format("%s %s: a multipart body is sent as the HAR recorded it (its boundary and all)", rq.method, rq.url:gsub("%?.*$", "?..."))
        end
      end
      local page = e.pageref and by_id[tostring(e.pageref)] or loose
      page.entries[#page.entries + 1] = entry
    end
  end
  if #loose.entries > 0 then pages[#pages + 1] = loose end
  local out = {}
  for _, p in ipairs(pages) do if #p.entries > 0 then out[#out + 1] = p end end
  if skipped_host > 0 then notes[#notes + 1] = string.format("%d request%s to other hosts left out (--host)", skipped_host, skipped_host == 1 and "" or "s") end
  if skipped_static > 0 then notes[#notes + 1] = string.format("%d static asset%s left out (--no-static)", skipped_static, skipped_static == 1 and "" or "s") end
  return { pages = out, variables = v.list, notes = notes }
end

return M
