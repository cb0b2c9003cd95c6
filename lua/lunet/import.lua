--- `lunet import curl|har ...`: brings requests written for another tool into lunet
--- (docs/import.md). The curl command line comes as one argument, as the words after `curl`,
--- or on standard input ("Copy as cURL" pasted into a heredoc); a HAR file by name. What is
--- written goes to standard output or, whole or not at all, to FILE. main(args) returns the
--- exit status: 0, or 2 with the problem named (its place: a line and column, a JSON pointer)
--- and nothing written.
local M = {}

M.usage = [[
usage: lunet import postman COLLECTION.json [--environment ENV.json] [-o FILE]
                                     a Postman collection (v2.0, v2.1) as a lunet test file
       lunet import har FILE.har [--to test|load] [--host HOST]... [--no-static] [-o FILE]
                                     a HAR file's requests as a lunet test file (a test a
                                     request, grouped by page) or a lunet load script
       lunet import curl 'curl ...' [--to script|test|cli] [-o FILE]
                                     a curl command line as a lunet script (or a test, or a
                                     lunet one-shot command line)
       lunet import curl [-o FILE] < command.sh    ... read from standard input
  --to script|test|cli     what to write (default script: sends it, prints status and body)
  -o FILE, --output FILE   write to FILE (whole, or not at all) instead of stdout
What lunet cannot carry over is named in NOTE lines at the script's top (docs/import.md).]]

--- At the prompt: whether `code` is a curl command line pasted there (it starts with the word
--- curl, and no global `curl` is defined to read it as Lua). Returns nil when it is not;
--- "incomplete" when more lines are needed (a line that ends with a backslash, a quote left
--- open); else a function that sends it and returns the response (the prompt shows it and
--- keeps it in `_`), saying on stderr what was not carried over.
function M.at_prompt(code)
  if not code:match("^%s*curl%s") or rawget(_G, "curl") ~= nil then return nil end
  if code:match("\\%s*$") then return "incomplete" end
  local split = require "lunet.import.shell_words"
  local ok, words = pcall(split.split, code)
  if not ok then
    if type(words) == "table" and words.import and words.import:find("not closed", 1, true) then return "incomplete" end
    return function() error(type(words) == "table" and words.import or words, 0) end
  end
  return function()
    local curl = require "lunet.import.curl"
    local okp, r = pcall(curl.parse, words)
    if not okp then error(type(r) == "table" and r.import or r, 0) end
    for _, n in ipairs(r.notes) do io.stderr:write("note: ", n, "\n") end
    local opts, session = curl.options(r)
    if session then return http.session(session):request(opts) end
    return http.request(opts)
  end
end

-- Writes `text` to `out` (whole or not at all) or to stdout; the exit status.
local function deliver(text, out, stdout, stderr)
  if out then
    local written, err = require("lunet.whole_file").write(out, text)
    if not written then stderr:write("lunet import: cannot write ", out, ": ", tostring(err), "\n") return 1 end
  else
    stdout:write(text)
  end
  return 0
end

--- The largest file an importer reads (a HAR of a long session runs to tens of MiB).
M.MAX_FILE = 256 * 1024 * 1024

-- A whole file's text, or nil and the problem: one over MAX_FILE is refused by its size before
-- any of it is read (a pipe, which has none, is read a MiB at a time up to the limit).
local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, "cannot read " .. tostring(err) end
  local too_big = path .. " is larger than " .. (M.MAX_FILE // (1024 * 1024)) .. " MiB: not imported"
  local size = f:seek("end")
  if size and size > M.MAX_FILE then f:close() return nil, too_big end
  if size then f:seek("set") end
  local parts, total = {}, 0
  while true do
    local piece, rerr = f:read(1024 * 1024)
    if rerr then f:close() return nil, "cannot read " .. path .. ": " .. tostring(rerr) end
    if not piece then break end
    total = total + #piece
    if total > M.MAX_FILE then f:close() return nil, too_big end
    parts[#parts + 1] = piece
  end
  f:close()
  return table.concat(parts)
end

-- Runs `build` (which raises { import = message } on bad input) and delivers its text; a bad
-- input is a usage error, `place` (a file's name, or nil) before its message.
local function convert(build, place, out, stdout, stderr, usage_error)
  local ok, result = pcall(build)
  if not ok then
    if type(result) == "table" and result.import then return usage_error((place and (place .. ": ") or "") .. result.import) end
    error(result, 0)
  end
  return deliver(result, out, stdout, stderr)
end

-- The words of a file importer (har, postman): its options by `spec` (argv's) and one file;
-- c, or nil and the usage error's exit status.
local function file_args(args, spec, what, usage_error)
  spec.help = "lunet import --help"
  local ok, c = pcall(require("lunet.cli.argv").read, args, spec,
    function(message) error({ import = message }, 0) end,
    function(c, word)
      if c.file then error({ import = "one " .. what .. ": '" .. c.file .. "' and '" .. word .. "'" }, 0) end
      c.file = word
    end)
  if not ok then return nil, usage_error(type(c) == "table" and c.import or tostring(c)) end
  if not c.file then return nil, usage_error("which " .. what .. "? lunet import --help") end
  return c
end

--- `lunet import har FILE [--to test|load] [--host HOST]... [--no-static] [-o FILE]`.
function M.har(args, stdout, stderr, usage_error)
  local c, status = file_args(args, { takes = { ["--to"] = "to", ["-o"] = "out", ["--output"] = "out", ["--host"] = "hosts" },
    flags = { ["--no-static"] = "no_static" }, lists = { hosts = true } }, "HAR file", usage_error)
  if not c then return status end
  local to = c.to or "test"
  if to ~= "test" and to ~= "load" then return usage_error("--to takes test or load for a HAR, got '" .. require("lunet.terminal_safe").line(to) .. "'") end
  local text, err = read_file(c.file)
  if not text then return usage_error(err) end
  local hosts
  if #c.hosts > 0 then
    hosts = {}
    for _, h in ipairs(c.hosts) do hosts[h:lower()] = true end
  end
  return convert(function()
    local model = require("lunet.import.har").read(text, { hosts = hosts, no_static = c.no_static })
    if #model.pages == 0 then error({ import = "no request left to import" .. (#model.notes > 0 and (" (" .. table.concat(model.notes, "; ") .. ")") or "") }, 0) end
    return require("lunet.import.har_render")[to](model, c.file:match("[^/]*$"))
  end, c.file, c.out, stdout, stderr, usage_error)
end

--- `lunet import postman COLLECTION [--environment ENV] [-o FILE]`.
function M.postman(args, stdout, stderr, usage_error)
  local c, status = file_args(args, { takes = { ["-o"] = "out", ["--output"] = "out", ["--environment"] = "environment",
    ["-e"] = "environment" } }, "collection", usage_error)
  if not c then return status end
  local text, err = read_file(c.file)
  if not text then return usage_error(err) end
  local env_text
  if c.environment then
    env_text, err = read_file(c.environment)
    if not env_text then return usage_error(err) end
  end
  return convert(function()
    local model = require("lunet.import.postman").read(text, env_text)
    if model.requests == 0 then error({ import = "no request to import (folders only, or none)" }, 0) end
    return require("lunet.import.postman_render").test(model, c.file:match("[^/]*$"))
  end, c.file, c.out, stdout, stderr, usage_error)
end

function M.main(args, stdout, stderr)
  stdout, stderr = stdout or io.stdout, stderr or io.stderr
  local function usage_error(message)
    stderr:write("lunet import: ", message, "\n")
    return 2
  end
  if args[1] == "--help" or args[1] == "-h" then stdout:write(M.usage, "\n") return 0 end
  if args[1] == "har" then return M.har(table.move(args, 2, #args, 1, {}), stdout, stderr, usage_error) end
  if args[1] == "postman" then return M.postman(table.move(args, 2, #args, 1, {}), stdout, stderr, usage_error) end
  if args[1] ~= "curl" then
    return usage_error(args[1] and ("imports from 'curl', 'har' or 'postman', not '" .. require("lunet.terminal_safe").line(args[1]) .. "'")
      or "import what? lunet import curl 'curl ...', lunet import har FILE, lunet import postman FILE")
  end
  local words, out, to = {}, nil, "script"
  local i = 2
  while i <= #args do
    if (args[i] == "-o" or args[i] == "--output" or args[i] == "--to") and words[1] ~= "curl" then
      local v = args[i + 1]
      if not v then return usage_error(args[i] .. " needs a value") end
      if args[i] == "--to" then to = v else out = v end
      i = i + 2
    else
      words[#words + 1] = args[i]
      i = i + 1
    end
  end
  local render = require "lunet.import.render"
  if to ~= "script" and to ~= "test" and to ~= "cli" then
    return usage_error("--to takes script, test or cli, got '" .. require("lunet.terminal_safe").line(to) .. "'")
  end
  local split = require "lunet.import.shell_words"
  local curl = require "lunet.import.curl"
  return convert(function()
    local list, notes
    if #words == 0 or (#words == 1 and words[1] == "-") then
      list, notes = split.split(io.stdin:read("a") or "")
    elseif #words == 1 then
      list, notes = split.split(words[1])
    else
      list, notes = words, {}
    end
    if list[1] ~= "curl" then error({ import = "not a curl command line: it starts with '" .. tostring(list[1]) .. "', not 'curl'" }, 0) end
    local r = curl.parse(list)
    for _, n in ipairs(notes) do table.insert(r.notes, 1, n) end
    return render[to](r, "a curl command line")
  end, nil, out, stdout, stderr, usage_error)
end

return M
