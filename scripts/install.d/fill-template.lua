-- Fills a template's @NAME@ placeholders from the option tables of the lunet that runs it:
--   lunet scripts/install.d/fill-template.lua TEMPLATE > FILE
-- scripts/install runs it with the binary it installs, so the manual's and the completions'
-- option lists are those of that binary and cannot drift from lua/lunet/cli/args.lua
-- (M.OPTIONS) or `lunet test`'s usage text (lua/lunet/testing.lua).
local args = require "lunet.cli.args"
local testing = require "lunet.testing"

-- HTTP's methods, as Sources/lunet/CommandLine.swift recognises them; the common ones first.
local METHODS = { "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT" }

-- An option: { long =, short =, value = "WHAT" or nil, help =, choices = words or nil }.
-- completion_kinds(o) is what its value may be: "=word" (a literal), "file", "session" (a name,
-- or a path), or "text". `choices` (args.lua's, for a value such as TYPE) are its words.
local function completion_kinds(o)
  if not o.value then return nil end
  if o.choices then
    local kinds = {}
    for i, word in ipairs(o.choices) do kinds[i] = "=" .. word end
    return kinds
  end
  -- A session's NAME|PATH: names, and files once a '/' is typed (a path).
  if (o.long or ""):find("^session") then return { "session" } end
  local kinds = {}
  for part in o.value:gmatch("[^|]+") do
    if part:find("^[a-z][a-z-]*$") then kinds[#kinds + 1] = "=" .. part
    elseif part:find("FILE") or part == "PATH" then kinds[#kinds + 1] = "file" end
  end
  if #kinds == 0 then kinds[1] = "text" end
  return kinds
end

-- "this text" is what --help says of itself in its own output; elsewhere it needs saying.
local function own_words(help)
  return help == "this text" and "print a summary of the options" or help
end

local function request_options()
  local list = {}
  for _, dashed in ipairs(args.option_names()) do
    local name = dashed:sub(3)
    local o = args.OPTIONS[name]
    list[#list + 1] = { long = name, short = o.short, value = o.value, help = own_words(o.help), choices = o.choices }
  end
  return list
end

-- A command's options, read from its usage text: "  --jobs N, -j N     run N files ...",
-- "  --flag             what it does", "  -H VALUE   ..." (a short option alone), with
-- continuation lines indented under the help column.
local function options_from_usage(usage, what)
  local list = {}
  for line in usage:gmatch("[^\n]+") do
    local long, rest = line:match("^  %-%-([%w-]+)(.*)$")
    local short_only, short_rest = line:match("^  %-(%a) (.*)$")
    if long then
      local value = rest:match("^ ([^%s,]+)")
      if value then rest = rest:sub(#value + 2) end
      local short = rest:match("^, %-(%a)")
      if short then rest = rest:gsub("^, %-%a ?%S*", "") end
      list[#list + 1] = { long = long, short = short, value = value, help = own_words(assert(rest:match("^%s+(%S.*)$"), line)) }
    elseif short_only then
      local value, help = short_rest:match("^('[^']*'%S*)%s%s+(%S.*)$")
      if not value then value, help = short_rest:match("^([^%s,]+).-%s%s+(%S.*)$") end
      list[#list + 1] = { short = short_only, value = value, help = own_words(assert(help, line)) }
    elseif line:find("^%s%s%s%s+%S") and #list > 0 then
      list[#list].help = list[#list].help .. " " .. line:match("^%s*(.-)%s*$")
    end
  end
  assert(#list > 0, "no options found in " .. what .. "'s usage text")
  return list
end

local function test_options() return options_from_usage(testing.usage, "lunet test") end

-- The commands with options of their own: `name` as the completions call it, its usage text.
local COMMANDS = {
  { key = "LOAD", name = "load", usage = require("lunet.load.args").usage },
  { key = "LOAD_MERGE", name = "load-merge", usage = require("lunet.load.merge").usage },
  { key = "LOAD_K8S", name = "load-k8s", usage = require("lunet.load.k8s").usage },
  { key = "LOAD_COLLECT", name = "load-collect", usage = require("lunet.load.collect").usage },
  { key = "API", name = "api", usage = require("lunet.openapi.cli").USAGE },
  { key = "GRPC", name = "grpc", usage = require("lunet.grpc.cli").USAGE },
}
for _, c in ipairs(COMMANDS) do c.options = options_from_usage(c.usage, "lunet " .. c.name:gsub("%-", " ")) end

-- roff (man(7)) -----------------------------------------------------------------------------

local function roff(s)
  s = s:gsub("\\", "\\e"):gsub("%-", "\\-")
  if s:find("^[.']") then s = "\\&" .. s end
  return s
end

local function man_options(list)
  local out = {}
  for _, o in ipairs(list) do
    local value = o.value and (" \\fI" .. roff(o.value) .. "\\fR") or ""
    local forms = {}
    if o.long then forms[1] = "\\fB\\-\\-" .. roff(o.long) .. "\\fR" .. value end
    if o.short then forms[#forms + 1] = "\\fB\\-" .. o.short .. "\\fR" .. value end
    local flag = table.concat(forms, ", ")
    out[#out + 1] = ".TP\n" .. flag .. "\n" .. roff(o.help)
  end
  return table.concat(out, "\n")
end

-- bash ----------------------------------------------------------------------------------------

local function dashed(list)
  local words = {}
  for _, o in ipairs(list) do
    if o.long then words[#words + 1] = "--" .. o.long end
    if o.short then words[#words + 1] = "-" .. o.short end
  end
  return table.concat(words, " ")
end

-- The arms of a `case` that prints what follows an option taking a value.
local function bash_values(list)
  local out = {}
  for _, o in ipairs(list) do
    if o.value then
      local pattern = o.long and ("--" .. o.long .. (o.short and ("|-" .. o.short) or "")) or ("-" .. o.short)
      out[#out + 1] = string.format("  %s) echo '%s' ;;", pattern, table.concat(completion_kinds(o), " "))
    end
  end
  return table.concat(out, "\n")
end

-- zsh -------------------------------------------------------------------------------------------

local function zsh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function zsh_specs(list)
  local out = {}
  for _, o in ipairs(list) do
    local desc = "[" .. o.help:gsub("[%[%]\\]", "\\%0") .. "]"
    local value = ""
    if o.value then
      local kinds, words, action = completion_kinds(o), {}, nil
      for _, k in ipairs(kinds) do if k:sub(1, 1) == "=" then words[#words + 1] = k:sub(2) end end
      if kinds[1] == "session" then action = "_lunet_sessions"
      elseif kinds[1] == "text" then action = " "
      elseif #words > 0 then action = (kinds[#kinds] == "file" and "_lunet_words_or_files " or "_lunet_words ") .. table.concat(words, " ")
      else action = "_files" end
      value = ":" .. o.value:gsub("[:\\]", "\\%0") .. ":" .. action
    end
    if not o.long then
      out[#out + 1] = "    " .. zsh_quote("*-" .. o.short .. (o.value and "+" or "") .. desc .. value) .. " \\"
    elseif o.short then
      local excl = "(-" .. o.short .. " --" .. o.long .. ")"
      out[#out + 1] = "    " .. zsh_quote(excl) .. "{-" .. o.short .. (o.value and "+" or "") .. ",--" .. o.long ..
        (o.value and "=" or "") .. "}" .. zsh_quote(desc .. value) .. " \\"
    else
      out[#out + 1] = "    " .. zsh_quote("--" .. o.long .. (o.value and "=" or "") .. desc .. value) .. " \\"
    end
  end
  return table.concat(out, "\n")
end

-- fish -------------------------------------------------------------------------------------------

local function fish_quote(s) return "'" .. s:gsub("[\\']", "\\%0") .. "'" end

local function fish_lines(list, condition)
  local out = {}
  for _, o in ipairs(list) do
    local line = "complete -c lunet -n " .. fish_quote(condition) .. (o.long and (" -l " .. o.long) or "")
    if o.short then line = line .. " -s " .. o.short end
    if o.value then
      local kinds, words, files = completion_kinds(o), {}, false
      for _, k in ipairs(kinds) do
        if k:sub(1, 1) == "=" then words[#words + 1] = k:sub(2) elseif k == "file" then files = true end
      end
      if kinds[1] == "session" then line = line .. " -r -a '(__lunet_sessions)'"
      elseif files then line = line .. " -r -F" .. (#words > 0 and (" -a " .. fish_quote(table.concat(words, " "))) or "")
      elseif #words > 0 then line = line .. " -x -a " .. fish_quote(table.concat(words, " "))
      else line = line .. " -x" end
    end
    out[#out + 1] = line .. " -d " .. fish_quote(o.help)
  end
  return table.concat(out, "\n")
end

local function value_patterns(list)
  local words = {}
  for _, o in ipairs(list) do
    if o.value then
      if o.long then words[#words + 1] = "--" .. o.long end
      if o.short then words[#words + 1] = "-" .. o.short end
    end
  end
  return table.concat(words, " ")
end

-- The placeholders -----------------------------------------------------------------------------

local request, tests = request_options(), test_options()
-- The lunet running this file: the lowest arg index, as lua5.4 sets `arg`.
local function this_lunet()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end
local FILL = {
  VERSION = function()
    local p = io.popen("'" .. this_lunet():gsub("'", "'\\''") .. "' --version")
    local v = p and p:read("l") or ""
    if p then p:close() end
    return v:match("^lunet (%S+)") or "unknown"
  end,
  METHODS = function() return table.concat(METHODS, " ") end,
  MAN_REQUEST_OPTIONS = function() return man_options(request) end,
  MAN_TEST_OPTIONS = function() return man_options(tests) end,
  BASH_REQUEST_OPTIONS = function() return dashed(request) end,
  BASH_REQUEST_VALUES = function() return bash_values(request) end,
  BASH_TEST_OPTIONS = function() return dashed(tests) end,
  BASH_TEST_VALUES = function() return bash_values(tests) end,
  ZSH_REQUEST_SPECS = function() return zsh_specs(request) end,
  ZSH_TEST_SPECS = function() return zsh_specs(tests) end,
  FISH_REQUEST_OPTIONS = function() return fish_lines(request, "__lunet_plain") end,
  FISH_TEST_OPTIONS = function() return fish_lines(tests, "__lunet_testing") end,
  FISH_VALUE_OPTIONS = function() return value_patterns(request) end,
}

-- Each command's lists: MAN_LOAD_OPTIONS, ZSH_API_SPECS, ...; BASH_COMMANDS (two functions
-- answering for every command: its options, and what an option's value may be) and
-- FISH_COMMAND_OPTIONS (its options while __lunet_command NAME holds).
for _, c in ipairs(COMMANDS) do
  FILL["MAN_" .. c.key .. "_OPTIONS"] = function() return man_options(c.options) end
  FILL["ZSH_" .. c.key .. "_SPECS"] = function() return zsh_specs(c.options) end
end
FILL.BASH_COMMANDS = function()
  local options, values = {}, {}
  for _, c in ipairs(COMMANDS) do
    options[#options + 1] = string.format("  %s) echo '%s' ;;", c.name, dashed(c.options))
    values[#values + 1] = "  " .. c.name .. ")\n    case $2 in\n" .. bash_values(c.options):gsub("\n", "\n  "):gsub("^", "  ") .. "\n    esac ;;"
  end
  return "_lunet_command_options() {\n  case $1 in\n" .. table.concat(options, "\n") .. "\n  esac\n}\n" ..
    "_lunet_command_value_kinds() {\n  case $1 in\n" .. table.concat(values, "\n") .. "\n  esac\n}"
end
FILL.FISH_COMMAND_OPTIONS = function()
  local out = {}
  for _, c in ipairs(COMMANDS) do out[#out + 1] = fish_lines(c.options, "__lunet_command " .. c.name) end
  return table.concat(out, "\n")
end
FILL.FISH_COMMAND_VALUE_OPTIONS = function()
  local out = {}
  for _, c in ipairs(COMMANDS) do out[#out + 1] = value_patterns(c.options) end
  return table.concat(out, " ")
end

local path = assert(arg[1], "usage: lunet fill-template.lua TEMPLATE")
local f = assert(io.open(path, "rb"))
local text = f:read("a")
f:close()
local filled = text:gsub("@([A-Z][A-Z_]+)@", function(name)
  local fill = FILL[name]
  if not fill then
    io.stderr:write(path, ": unknown placeholder @", name, "@\n")
    os.exit(1)
  end
  return fill()
end)
io.write(filled)
