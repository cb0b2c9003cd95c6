-- Block scalars: literal `|` keeps its lines and their line breaks, folded `>` joins lines with a
-- space (not around lines that start with a blank, which stay as they are). The header may give
-- the indentation (a digit, from the parent's) and the chomping: `-` drops the final line
-- breaks, `+` keeps them all, neither keeps one. Otherwise the first non-empty line sets the
-- indentation, which is at least one more than the parent's.
local R = require "lunet.yaml.reader"
local find, byte, sub, rep, concat = string.find, string.byte, string.sub, string.rep, table.concat

local M = {}

-- The header from P.pos ('|' or '>'): folded?, the chomping byte ('+', '-' or nil), the
-- indentation digit (or nil) and the position of the line break that ends it (or n + 1).
local function header(P)
  local s, pos = P.s, P.pos
  local folded, chomp, digit = byte(s, pos) == 62, nil, nil
  pos = pos + 1
  for _ = 1, 2 do
    local c = byte(s, pos)
    if (c == 43 or c == 45) and not chomp then
      chomp, pos = c, pos + 1
    elseif c and c >= 49 and c <= 57 and not digit then
      digit, pos = c - 48, pos + 1
    end
  end
  local _, e = find(s, "^[ \t]*", pos)
  local c = byte(s, e + 1)
  if c == 35 and e >= pos then
    e = (find(s, "\n", e + 1, true) or P.n + 1) - 1
    c = byte(s, e + 1)
  end
  if c ~= nil and c ~= 10 then
    R.fail(P, e + 1, "a block scalar's header is '|' or '>', an indentation digit 1-9 and '+' or '-' (each optional), then a comment or the line's end")
  end
  return folded, chomp, digit, e + 1
end

-- The indentation of the content from the lines after `ls`: the first non-empty line's, when
-- that is deeper than `indent`. Empty lines before it must not have more spaces (they would be
-- content, and the text would start with spaces nobody sees). Without content, the widest
-- empty line's, so that every empty line stays empty.
local function detect(P, ls, indent)
  local s, n, widest, widest_at = P.s, P.n, 0, nil
  local least = math.max(indent + 1, 1)
  while ls <= n do
    local _, sp = find(s, "^ *", ls)
    local spaces, c = sp - ls + 1, byte(s, sp + 1)
    if c ~= 10 and c ~= nil then
      if spaces < least then break end
      if widest > spaces then
        R.fail(P, widest_at, "an empty line at the start of a block scalar has more spaces than its first line")
      end
      return spaces
    end
    if spaces > widest then widest, widest_at = spaces, ls end
    ls = sp + 2
  end
  return math.max(widest, least)
end

--- A block scalar at P.pos ('|' or '>') whose parent block is indented `indent`: its text.
function M.read(P, indent)
  local folded, chomp, digit, nl = header(P)
  local s, n = P.s, P.n
  local ind = digit and (indent >= 0 and indent or 0) + digit or detect(P, nl + 1, indent)
  local pieces, np = {}, 0
  local has_break, trailing, prev_blank = false, 0, false
  local last_end, last_ls, ls = nl, P.lstart, nl + 1
  while ls <= n do
    local _, sp = find(s, "^ *", ls)
    local spaces, c = sp - ls + 1, byte(s, sp + 1)
    if c == nil and spaces <= ind then break end
    if c == 10 and spaces <= ind then
      trailing, last_end, last_ls, ls = trailing + 1, sp + 1, ls, sp + 2
    elseif spaces < ind then
      break
    else
      local eol = find(s, "\n", ls + ind, true) or n + 1
      local first = byte(s, ls + ind)
      local blank = first == 32 or first == 9
      if folded and has_break and not prev_blank and not blank then
        if trailing == 0 then np, pieces[np + 1] = np + 1, " " end
      elseif has_break then
        np, pieces[np + 1] = np + 1, "\n"
      end
      if trailing > 0 then np, pieces[np + 1] = np + 1, rep("\n", trailing) end
      np, pieces[np + 1] = np + 1, sub(s, ls + ind, eol - 1)
      has_break, trailing, prev_blank = eol <= n, 0, blank
      last_end, last_ls, ls = eol, ls, eol + 1
    end
  end
  if chomp ~= 45 and has_break then np, pieces[np + 1] = np + 1, "\n" end
  if chomp == 43 and trailing > 0 then np, pieces[np + 1] = np + 1, rep("\n", trailing) end
  P.pos, P.lstart = last_end, last_ls
  return concat(pieces, "", 1, np)
end

return M
