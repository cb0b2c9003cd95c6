-- YAML's scalars as text: plain, single-quoted and double-quoted (with line folding and
-- escapes) and the block scalars `|` and `>`. Each function starts at P.pos, on the scalar's
-- first character, and leaves P.pos just after the scalar's last character (block scalars: on
-- the line break ending their last line), P.lstart on that line. What the text means (null,
-- a number, ...) is lunet.yaml.schema's business.
--
-- Pieces are gathered in a table and joined once: a long scalar built by repeated `..` would
-- copy itself on every line.
local R = require "lunet.yaml.reader"
local find, byte, sub, rep, concat, char = string.find, string.byte, string.sub, string.rep, table.concat, utf8.char

local M = {}

local FLOW_INDICATOR = { [44] = true, [91] = true, [93] = true, [123] = true, [125] = true }   -- , [ ] { }
M.FLOW_INDICATOR = FLOW_INDICATOR

--- One line's piece of a plain scalar from `pos`: the position of its last character (trailing
--- blanks left out; pos - 1 when empty) and of what stopped it (": ", " #", a line break, the
--- end, or in flow context a flow indicator or ':' before one).
function M.plain_segment(s, pos, flow)
  local pattern = flow and "^[^\n#:,%[%]{}]*" or "^[^\n#:]*"
  local q = pos
  while true do
    local _, e = find(s, pattern, q)
    q = e + 1
    local c = byte(s, q)
    if c == 58 then
      local d = byte(s, q + 1)
      if d == nil or d == 32 or d == 10 or d == 9 or (flow and FLOW_INDICATOR[d]) then break end
    elseif c == 35 then
      local b = byte(s, q - 1)
      if q == pos or b == 32 or b == 9 then break end
    else
      break
    end
    q = q + 1
  end
  local e = q - 1
  while e >= pos do
    local b = byte(s, e)
    if b ~= 32 and b ~= 9 then break end
    e = e - 1
  end
  return e, q
end

-- The next line that continues a plain scalar, from the line break at `q`: the position of its
-- first character and the number of empty lines before it, or nil when the scalar ends there
-- (a line indented `indent` or less in block context, a comment, a document marker, the end).
local function continuation(P, q, indent, flow)
  local s, breaks, ls = P.s, 0, q + 1
  while true do
    local _, sp = find(s, "^ *", ls)
    local w, c = sp, byte(s, sp + 1)
    if c == 9 then
      _, w = find(s, "^[ \t]*", sp + 1)
      c = byte(s, w + 1)
    end
    if c ~= 10 then
      if c == nil or c == 35 or (not flow and sp - ls + 1 <= indent) or (sp < ls and R.at_marker(P, ls)) then return nil end
      return w + 1, breaks, ls
    end
    breaks, ls = breaks + 1, w + 2
  end
end

--- A plain scalar, maybe on several lines (each line break between two lines read as a space,
--- each empty line as "\n"): its text, and whether it spans lines. `indent` is the indentation
--- of the block holding it.
function M.plain(P, indent, flow)
  local s, start = P.s, P.pos
  local e, q = M.plain_segment(s, start, flow)
  local at, breaks, ls
  if byte(s, q) == 10 then at, breaks, ls = continuation(P, q, indent, flow) end
  if not at then
    P.pos = e + 1
    return sub(s, start, e), false
  end
  local pieces, n = { sub(s, start, e) }, 1
  while at do
    local e2, q2 = M.plain_segment(s, at, flow)
    if e2 < at then break end
    pieces[n + 1] = breaks == 0 and " " or rep("\n", breaks)
    pieces[n + 2] = sub(s, at, e2)
    n, e, q, P.lstart = n + 2, e2, q2, ls
    at = nil
    if byte(s, q) == 10 then at, breaks, ls = continuation(P, q, indent, flow) end
  end
  P.pos = e + 1
  return concat(pieces), n > 1
end

-- After a line break inside a quoted scalar at `nl`: the blanks and empty lines that follow,
-- folded (one break is a space, k empty lines are k "\n"); the position of the next character.
local function fold_break(P, nl, open, escaped)
  local s, breaks, ls = P.s, 0, nl + 1
  while true do
    if R.at_marker(P, ls) then R.fail(P, ls, "a document marker inside a quoted string") end
    local _, w = find(s, "^[ \t]*", ls)
    local c = byte(s, w + 1)
    if c == nil then R.fail(P, open, "a quoted string that is never closed") end
    P.lstart = ls
    if c ~= 10 then
      if escaped then return w + 1, rep("\n", breaks) end
      return w + 1, breaks == 0 and " " or rep("\n", breaks)
    end
    breaks, ls = breaks + 1, w + 2
  end
end

-- The position of the last non-blank character before `e` (inclusive), not before `from`.
local function trim_end(s, from, e)
  while e >= from do
    local b = byte(s, e)
    if b ~= 32 and b ~= 9 then break end
    e = e - 1
  end
  return e
end

--- A single-quoted scalar ('' is a quote): its text, and whether it spans lines.
function M.single(P)
  local s, open = P.s, P.pos
  local pos, pieces, n, multi = open + 1, {}, 0, false
  while true do
    local j = find(s, "['\n]", pos)
    if not j then R.fail(P, open, "a quoted string that is never closed") end
    if byte(s, j) == 39 then
      n = n + 1
      pieces[n] = sub(s, pos, j - 1)
      if byte(s, j + 1) ~= 39 then
        P.pos = j + 1
        return concat(pieces), multi
      end
      n, pieces[n + 1], pos = n + 1, "'", j + 2
    else
      n, multi = n + 2, true
      pieces[n - 1] = sub(s, pos, trim_end(s, pos, j - 1))
      pos, pieces[n] = fold_break(P, j, open, false)
    end
  end
end

local ESCAPES = {
  ["0"] = "\0", a = "\a", b = "\b", t = "\t", ["\t"] = "\t", n = "\n", v = "\v", f = "\f", r = "\r",
  e = "\27", [" "] = " ", ['"'] = '"', ["/"] = "/", ["\\"] = "\\", N = "\u{85}", _ = "\u{A0}",
  L = "\u{2028}", P = "\u{2029}",
}
local HEX_DIGITS = { x = 2, u = 4, U = 8 }

-- The escape at `at` (its backslash): its text and the position after it.
local function escape(P, at)
  local s = P.s
  local c = sub(s, at + 1, at + 1)
  local simple = ESCAPES[c]
  if simple then return simple, at + 2 end
  local digits = HEX_DIGITS[c]
  if not digits then R.fail(P, at, "unknown escape \\" .. (c == "" and "at the end" or c)) end
  local hex = sub(s, at + 2, at + 1 + digits)
  if not find(hex, "^%x+$") or #hex ~= digits then
    R.fail(P, at, string.format("\\%s needs %d hexadecimal digits", c, digits))
  end
  local code, after = tonumber(hex, 16), at + 2 + digits
  -- A pair of \u escapes for one character beyond U+FFFF, as JSON writes it.
  if code >= 0xD800 and code <= 0xDBFF and c == "u" and find(s, "^\\u[dD][c-fC-F]%x%x", after) then
    local low = tonumber(sub(s, after + 2, after + 5), 16)
    return char(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), after + 6
  end
  if code >= 0xD800 and code <= 0xDFFF then R.fail(P, at, "a lone UTF-16 surrogate") end
  if code > 0x10FFFF then R.fail(P, at, "an escape beyond U+10FFFF") end
  return char(code), after
end

--- A double-quoted scalar with its escapes: its text, and whether it spans lines.
function M.double(P)
  local s, open = P.s, P.pos
  local pos, pieces, n, multi = open + 1, {}, 0, false
  while true do
    local j = find(s, '["\\\n]', pos)
    if not j then R.fail(P, open, "a quoted string that is never closed") end
    local c = byte(s, j)
    if c == 34 then
      pieces[n + 1] = sub(s, pos, j - 1)
      P.pos = j + 1
      return concat(pieces, "", 1, n + 1), multi
    elseif c == 92 then
      if byte(s, j + 1) == 10 then
        n, multi = n + 2, true
        pieces[n - 1] = sub(s, pos, j - 1)
        pos, pieces[n] = fold_break(P, j + 1, open, true)
      else
        n = n + 2
        pieces[n - 1] = sub(s, pos, j - 1)
        pieces[n], pos = escape(P, j)
      end
    else
      n, multi = n + 2, true
      pieces[n - 1] = sub(s, pos, trim_end(s, pos, j - 1))
      pos, pieces[n] = fold_break(P, j, open, false)
    end
  end
end

return M
