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
  if o.long:find("^session") then return { "session" } end
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

-- `lunet test`'s options, read from its usage text: "  --jobs N, -j N     run N files ...",
-- with continuation lines indented under the help column.
local function test_options()
  local list = {}
  for line in testing.usage:gmatch("[^\n]+") do
    local long, rest = line:match("^  %-%-([%w-]+)(.*)$")
    if long then
      local value = rest:match("^ ([A-Z]+)")
      if value then rest = rest:sub(#value + 2) end
      local short = rest:match("^, %-(%a)")
      if short then rest = rest:gsub("^, %-%a ?[A-Z]*", "") end
      list[#list + 1] = { long = long, short = short, value = value, help = own_words(assert(rest:match("^%s+(%S.*)$"), line)) }
    elseif line:find("^%s%s%s%s+%S") and #list > 0 then
      list[#list].help = list[#list].help .. " " .. line:match("^%s*(.-)%s*$")
    end
  end
  assert(#list > 0, "no options found in lunet.testing's usage text")
  return list
end

-- roff (man(7)) -----------------------------------------------------------------------------

local function roff(s)
  s = s:gsub("\\", "\\e"):gsub("%-", "\\-")
  if s:find("^[.']") then s = "\\&" .. s end
  return s
end

local function man_options(list)
  local out = {}
  for _, o in ipairs(list) do
    local flag = "\\fB\\-\\-" .. roff(o.long) .. "\\fR"
    if o.value then flag = flag .. " \\fI" .. roff(o.value) .. "\\fR" end
    if o.short then
      flag = flag .. ", \\fB\\-" .. o.short .. "\\fR" .. (o.value and (" \\fI" .. roff(o.value) .. "\\fR") or "")
    end
    out[#out + 1] = ".TP\n" .. flag .. "\n" .. roff(o.help)
  end
  return table.concat(out, "\n")
end

-- bash ----------------------------------------------------------------------------------------

local function dashed(list)
  local words = {}
  for _, o in ipairs(list) do
    words[#words + 1] = "--" .. o.long
    if o.short then words[#words + 1] = "-" .. o.short end
  end
  return table.concat(words, " ")
end

-- The arms of a `case` that prints what follows an option taking a value.
local function bash_values(list)
  local out = {}
  for _, o in ipairs(list) do
    if o.value then
      local pattern = "--" .. o.long .. (o.short and ("|-" .. o.short) or "")
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
    if o.short then
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
    local line = "complete -c lunet -n " .. fish_quote(condition) .. " -l " .. o.long
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
      words[#words + 1] = "--" .. o.long
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
  FISH_REQUEST_OPTIONS = function() return fish_lines(request, "not __lunet_testing") end,
  FISH_TEST_OPTIONS = function() return fish_lines(tests, "__lunet_testing") end,
  FISH_VALUE_OPTIONS = function() return value_patterns(request) end,
}

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
