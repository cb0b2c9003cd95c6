--- The one reader of every command's words: the one-shot line, `test`, `load` and its
--- subcommands (merge, k8s, collect), `api` and `grpc`. Options that take a value (`--out FILE`,
--- `--out=FILE`, `-o FILE`, and `-oFILE` where short options cluster), flags (`-vb` is -v -b
--- where they cluster), `--` that ends the options, and the positional words. An unknown option
--- is named with the nearest known one, or handed to the command (`api` passes the one-shot's
--- options on). Each command checks its values' meaning itself, after reading.
local M = {}

--- Reads `args` by `spec` into a new table c:
---   spec.takes    { [option] = field }: options with a value ("--out", "-o")
---   spec.flags    { [option] = field }: set to true
---   spec.lists    { [field] = true }: an option given again adds to a list
---   spec.rest     field: after `--`, the words go there (without it, they are positional)
---   spec.clusters true: single-letter options cluster ("-vb", "-ofile")
---   spec.what     { [option] = "FILE" }: shown when a value is missing
---   spec.help     where the options are listed, for an unknown one ("lunet load --help")
---   spec.unknown  function(c, arg, take_value) -> true when the command takes `arg` itself
--- on_word(c, word) takes each positional word. A problem calls fail(message), which must raise.
function M.read(args, spec, fail, on_word)
  local c = {}
  local takes, flags, lists = spec.takes or {}, spec.flags or {}, spec.lists or {}
  for field in pairs(lists) do c[field] = {} end
  local i, only_words = 1, false
  local function value_of(name, attached)
    if attached then return attached end
    i = i + 1
    local v = args[i]
    if v == nil then
      local what = spec.what and spec.what[name]
      fail(string.format("option '%s' needs a value%s", name, what and " (" .. what .. ")" or ""))
    end
    return v
  end
  local function set(name, v)
    local field = takes[name]
    if lists[field] then c[field][#c[field] + 1] = v else c[field] = v end
  end
  local function unknown(a)
    if spec.unknown and spec.unknown(c, a, function() i = i + 1; return args[i] end) then return end
    local known = {}
    for k in pairs(takes) do if k:sub(1, 2) == "--" then known[#known + 1] = k end end
    for k in pairs(flags) do if k:sub(1, 2) == "--" then known[#known + 1] = k end end
    table.sort(known)
    local near = require("lunet.suggest").closest(a:match("^[^=]*"), known)
    fail(string.format("unknown option '%s'%s%s", a, near and ("; did you mean '" .. near .. "'?") or "",
      spec.help and " (" .. spec.help .. ")" or ""))
  end
  while i <= #args do
    local a = args[i]
    if only_words or a == "-" or a:sub(1, 1) ~= "-" then
      on_word(c, a)
    elseif a == "--" then
      if spec.rest then
        c[spec.rest] = table.move(args, i + 1, #args, 1, {})
        break
      end
      only_words = true
    elseif a:sub(1, 2) == "--" then
      local name, attached = a:match("^(%-%-[^=]+)=(.*)$")
      name = name or a
      if takes[name] then set(name, value_of(name, attached))
      elseif flags[name] and attached then fail(string.format("option '%s' takes no value", name))
      elseif flags[name] then c[flags[name]] = true
      else unknown(a) end
    elseif spec.clusters then
      -- -vb (flags together), -ofile and -o file, -pHb
      local j = 2
      while j <= #a do
        local name = "-" .. a:sub(j, j)
        if takes[name] then
          set(name, value_of(name, j < #a and a:sub(j + 1) or nil))
          break
        elseif flags[name] then c[flags[name]] = true
        else
          unknown(name)
          break
        end
        j = j + 1
      end
    elseif takes[a] then set(a, value_of(a, nil))
    elseif flags[a] then c[flags[a]] = true
    else unknown(a) end
    i = i + 1
  end
  if spec.rest and not c[spec.rest] then c[spec.rest] = {} end
  return c
end

return M
