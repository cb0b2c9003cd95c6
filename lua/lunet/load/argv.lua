--- The words of `lunet load` and its subcommands (merge, k8s, collect), read one way: options
--- that take a value (`--out FILE` or `--out=FILE`), flags, `--` that hands the rest to someone
--- else, and the positional words; an unknown option is named with the nearest known one.
local M = {}

--- Reads `args` by `spec` into a new table: spec.takes = { [option] = field }, spec.flags =
--- { [option] = field } (set to true), spec.lists = { [field] = true } (an option given again
--- adds to a list), spec.rest = field (after `--`, the words go there), spec.help (the usage
--- hint, "lunet load merge --help"). on_word(c, word) takes each positional word. A problem
--- calls fail(message), which must raise.
function M.read(args, spec, fail, on_word)
  local c = {}
  local takes, flags, lists = spec.takes or {}, spec.flags or {}, spec.lists or {}
  for field in pairs(lists) do c[field] = {} end
  local i = 1
  while i <= #args do
    local a = args[i]
    local name, inline = a:match("^(%-%-[%w-]+)=(.*)$")
    name = name or a
    if a == "--" and spec.rest then
      c[spec.rest] = table.move(args, i + 1, #args, 1, {})
      break
    elseif flags[a] then c[flags[a]] = true
    elseif takes[name] then
      local v = inline
      if v == nil then
        i = i + 1
        v = args[i]
        if v == nil then fail(name .. " needs a value") end
      end
      local field = takes[name]
      if lists[field] then c[field][#c[field] + 1] = v else c[field] = v end
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      local known = {}
      for k in pairs(takes) do if k:sub(1, 2) == "--" then known[#known + 1] = k end end
      for k in pairs(flags) do if k:sub(1, 2) == "--" then known[#known + 1] = k end end
      table.sort(known)
      local near = require("lunet.suggest").closest(name, known)
      fail(string.format("unknown option '%s'%s (%s)", a, near and ("; did you mean '" .. near .. "'?") or "", spec.help))
    else on_word(c, a) end
    i = i + 1
  end
  if spec.rest and not c[spec.rest] then c[spec.rest] = {} end
  return c
end

return M
