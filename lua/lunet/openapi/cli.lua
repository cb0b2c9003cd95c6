--- `lunet api SPEC [OPERATION [ITEM ...]] [options]`: an API's operations from the shell.
---   lunet api SPEC                       the operations, a line each
---   lunet api SPEC OPERATION --help      what one takes and answers
---   lunet api SPEC OPERATION ITEM...     calls it: name==value parameters, field=value and
---                                        field:=json body fields (HTTPie's items), Name:value
---                                        headers; checked against the document before sending
---   lunet api SPEC --check [...]         property-based checks (lunet.openapi.check)
--- The one-shot command line's options apply to a call (-v, --print, --check-status,
--- --offline, -a/-A, --timeout...): the call is handed to it as the request it builds, and its
--- response is checked against the document after it is printed.
local json = require "lunet.json"
local url = require "lunet.url"
local errors = require "lunet.errors"
local items = require "lunet.cli.items"
local cli_args = require "lunet.cli.args"

local M = {}

M.USAGE = [[
usage: lunet api SPEC                              list the operations
       lunet api SPEC OPERATION [ITEM ...] [options] call one (name==value, field=value, field:=json, Name:value)
       lunet api SPEC OPERATION --help              what it takes and answers
       lunet api SPEC --check [--seed N] [--max-examples N] [--operation ID]
SPEC is the OpenAPI document's path or URL (JSON or YAML; 3.0, 3.1, Swagger 2.0).
  --base-url URL        send to URL instead of the document's server
  --no-validate         skip the checks of requests and responses against the document
  --ids                 the operation ids alone, one a line (for scripts and completions)
  --check               call every operation with requests made from its schemas
  --seed N              the same N makes the same requests (--check)
  --max-examples N      requests per operation (--check; 20)
  --operation ID        check this operation only (--check)
  --help                this text
The one-shot options apply to a call: -v, --print, --check-status, --offline, -a, -A, --timeout ...]]

-- Splits argv into our words (SPEC, OPERATION, items), our options, and the one-shot command
-- line's options (with their values), which are handed on as they are: the commands' one reader
-- (lunet.cli.argv) reads ours, and hands the others to `pass_on`.
local OWN = {
  takes = { ["--base-url"] = "base_url", ["--seed"] = "seed", ["--max-examples"] = "max_examples", ["--operation"] = "operation" },
  flags = { ["--check"] = "check", ["--no-validate"] = "no_validate", ["--help"] = "help", ["--ids"] = "ids" },
}
local function split(argv)
  local words, passed = {}, {}
  OWN.unknown = function(_, a, take_value)
    passed[#passed + 1] = a
    local o
    if a:sub(1, 2) == "--" then
      o = not a:find("=", 1, true) and cli_args.OPTIONS[a:sub(3)]
    elseif #a == 2 then
      o = cli_args.OPTIONS[cli_args.SHORT[a:sub(-1)] or ""]
    end
    if o and o.value then passed[#passed + 1] = take_value() end
    return true
  end
  local ok, own = pcall(require("lunet.cli.argv").read, argv, OWN, function(m) error({ usage = m }, 0) end,
    function(_, word) words[#words + 1] = word end)
  if not ok then
    if type(own) == "table" and own.usage then return nil, own.usage end
    error(own, 0)
  end
  return words, own, passed
end

-- A parameter's text from the command line as its schema's type says (integer, number,
-- boolean; a list for an array); anything else stays text.
local function typed(api, p, text)
  local s = p.has_schema and api:schema_at(p.schema) or {}
  local t = s.type
  if type(t) == "table" then t = t[1] end
  local items_type = t == "array" and type(s.items) == "table" and s.items.type
  local function one(v, ty)
    if ty == "integer" then return math.tointeger(tonumber(v)) or v end
    if ty == "number" then return tonumber(v) or v end
    if ty == "boolean" then if v == "true" then return true elseif v == "false" then return false end end
    return v
  end
  if t == "array" then return one(text, items_type) end
  return one(text, t)
end

-- The parameter of an operation (by = in:name lower-cased) a name gives, any location.
local function param_named(by, name)
  local lower = name:lower()
  return by["path:" .. lower] or by["query:" .. lower] or by["header:" .. lower] or by["cookie:" .. lower]
end

-- The operation's arguments from items: parameters, the body (nested JSON, as HTTPie builds
-- it), and headers that are not parameters (handed on).
local function arguments(api, op, list)
  -- typed: a header parameter's name as the user typed it (X-Request-Id), sent so, not as the
  -- document spells it (x-request-id).
  local args, fields, headers, typed_names = {}, {}, {}, {}
  local by = {}
  for _, p in ipairs(op.parameters) do by[p["in"] .. ":" .. p.name:lower()] = p end
  for _, text in ipairs(list) do
    local item, err = items.parse(text)
    if not item then return nil, err end
    if item.kind == "query" then
      local p = by["query:" .. item.name:lower()] or by["path:" .. item.name:lower()] or by["cookie:" .. item.name:lower()] or by["header:" .. item.name:lower()]
      if not p then return nil, string.format("'%s': %s has no parameter '%s'", text, op.id, item.name) end
      local v = typed(api, p, item.value)
      local prior = args[p.name]
      if prior ~= nil then
        if type(prior) ~= "table" then prior = json.array({ prior }) end
        prior[#prior + 1] = v
        v = prior
      elseif p.has_schema and (api:schema_at(p.schema).type == "array") then v = json.array({ v }) end
      args[p.name] = v
    elseif item.kind == "header" and by["header:" .. item.name:lower()] then
      local p = by["header:" .. item.name:lower()]
      args[p.name] = typed(api, p, item.value)
      typed_names[p.name] = item.name
    elseif item.kind == "header" or item.kind == "empty_header" then headers[#headers + 1] = text
    elseif (item.kind == "data" or item.kind == "json") and not op.body and param_named(by, item.name) then
      -- `id=3` for an operation with no body and a parameter `id`: HTTPie's `==` was meant.
      local p = param_named(by, item.name)
      return nil, string.format("'%s' is a body field, and %s takes no body: '%s' is a %s parameter, given as %s==%s",
        text, op.id, p.name, p["in"], item.name, item.kind == "data" and tostring(item.value) or text:match("^[^:]*:=(.*)$") or "VALUE")
    elseif item.kind == "data" then fields[#fields + 1] = { item.name, json.encode(item.value), item = text }
    elseif item.kind == "json" then fields[#fields + 1] = { item.name, item.value, item = text }
    else return nil, string.format("'%s': lunet api takes name==value, field=value, field:=json and Name:value items", text) end
  end
  if #fields > 0 then
    local body_text, err = require("lunet.cli.nested_json").body(fields)
    if not body_text then return nil, err end
    local ok, body = pcall(json.decode, body_text)
    if not ok then return nil, "the body fields do not make JSON: " .. errors.describe(body) end
    args.body = body
  end
  return args, headers, typed_names
end

-- The one-shot command line's words for request options `opts` (what lunet.openapi.call made).
local function one_shot(api, opts, headers, passed, typed_names)
  local argv = {}
  for _, a in ipairs(passed) do argv[#argv + 1] = a end
  local target = api:session().base_url .. opts.url
  if opts.query then target = url.with_query(target, opts.query) end
  argv[#argv + 1] = opts.method
  argv[#argv + 1] = target
  for name, value in pairs(opts.headers or {}) do argv[#argv + 1] = (typed_names[name] or name) .. ":" .. value end
  for _, h in ipairs(headers) do argv[#argv + 1] = h end
  if opts.json ~= nil then
    argv[#argv + 1] = "--raw=" .. json.encode(opts.json)
    argv[#argv + 1] = "Content-Type:" .. (opts.content_type or "application/json")
  elseif opts.form then
    argv[#argv + 1] = "--raw=" .. url.query(opts.form)
    argv[#argv + 1] = "Content-Type:application/x-www-form-urlencoded"
  elseif opts.body then
    argv[#argv + 1] = "--raw=" .. opts.body
    argv[#argv + 1] = "Content-Type:" .. opts.content_type
  end
  return argv
end

-- What a document says (summaries, descriptions: a server's text) printed to a terminal has
-- its control bytes shown escaped, never obeyed; so has a message on standard error (an
-- operation id, a server's answer): lunet.output.
local output = require "lunet.output"
local say = output.say
local function complain(text) output.complain("lunet api: ", text) end

-- Whether the call carries a credential the user gave: -a/--auth (alone or in a cluster such
-- as -va), or an Authorization, Cookie or API-key header (an item, or a header parameter).
local function credentials_given(passed, headers, opts)
  local secrets = require "lunet.secrets"
  local function secret(name) return name and (secrets.is_secret_name(name) or name:lower() == "cookie") end
  for _, a in ipairs(passed) do
    local long = a:match("^%-%-([%w-]+)")
    if long == "auth" then return true end
    if not long and a:match("^%-%w+$") then
      for c in a:sub(2):gmatch(".") do if cli_args.SHORT[c] == "auth" then return true end end
    end
  end
  for _, text in ipairs(headers) do if secret(text:match("^([^:]+):")) then return true end end
  for name in pairs(opts.headers or {}) do if secret(name) then return true end end
  return false
end

-- A fetched document naming a server on another host than its own gets the command line's
-- credentials only when the user names that host with --base-url (as http.openapi does for a
-- session's); else an error saying so, and false.
local function host_named(api, own, passed, headers, opts)
  local root = rawget(api, "_set").root_uri
  local from = not own.base_url and root:match("^https?://") and url.origin(root)
  local base = api:session().base_url
  if not from or url.origin(base) == from or not credentials_given(passed, headers, opts) then return true end
  local mask = require("lunet.secrets").mask_url
  complain(string.format("the document from %s names its server %s, another host: credentials given on the command line " ..
    "go only to a host you name: give --base-url %s to send them there", from, mask(url.origin(base)), mask(base)))
  return false
end

local function list_operations(api)
  local ops = api:operations()
  local width = 0
  local path_width = 0
  for _, op in ipairs(ops) do
    width = math.max(width, #op.id)
    if op.summary then path_width = math.max(path_width, #op.path) end
  end
  -- Columns: the id, the method, the path padded when a summary follows it.
  for _, op in ipairs(ops) do
    local path = op.summary and string.format("%-" .. path_width .. "s  %s", op.path, op.summary) or op.path
    say(string.format("%-" .. width .. "s  %-6s %s", op.id, op.method, path))
  end
  return 0
end

-- The one-shot --timeout among the words passed on (a number of seconds), or nil: the
-- document's fetch keeps it too, not only the call.
local function timeout_of(passed)
  for i, a in ipairs(passed) do
    local v = a:match("^%-%-timeout=(.+)$") or (a == "--timeout" and passed[i + 1])
    if v then return tonumber(v) end
  end
  return nil
end

--- Runs `lunet api` with the words after `api`; the exit status.
function M.main(argv)
  local words, own, passed = split(argv)
  if not words then complain(own) return 2 end
  if #words == 0 then io.stdout:write(M.USAGE, "\n") return own.help and 0 or 2 end
  local ok, api = pcall(require("lunet.openapi").open, words[1],
    { base_url = own.base_url, validate = not own.no_validate, timeout = timeout_of(passed) })
  if not ok then complain(errors.describe(api)) return 2 end
  if own.check then return require("lunet.openapi.check").main(api, own, words) end
  if #words == 1 then
    if own.help then io.stdout:write(M.USAGE, "\n") end
    if own.ids then
      for _, id in ipairs(api:operation_ids()) do say(id) end
      return 0
    end
    return list_operations(api)
  end
  local op = rawget(api, "_by_id")[words[2]]
  if not op then
    local near = require("lunet.suggest").closest(words[2], api:operation_ids())
    complain(string.format("no operation '%s'%s (lunet api %s lists them)", words[2], near and ("; did you mean '" .. near .. "'?") or "", words[1]))
    return 2
  end
  if own.help then say(op:help_text()) return 0 end
  local args, headers, typed_names = arguments(api, op, table.move(words, 3, #words, 1, {}))
  if not args then complain(headers) return 2 end
  local built, opts = pcall(require("lunet.openapi.call").request, api, op, args)
  if not built then complain(errors.describe(opts)) return 2 end   -- nothing was sent
  if not host_named(api, own, passed, headers, opts) then return 2 end
  return require("lunet.cli.main").main(one_shot(api, opts, headers, passed, typed_names), {
    on_response = function(r)
      local fine, problem = pcall(require("lunet.openapi.call").check_response, api, op, r)
      if not fine then complain(errors.describe(problem)) return 1 end
    end,
  })
end

return M
