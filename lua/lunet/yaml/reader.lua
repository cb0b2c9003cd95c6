-- The YAML decoder's input and its errors: the text checked and made uniform once (UTF-8,
-- printable characters, line breaks as "\n"), the parser's state, the skipping of spaces,
-- comments and blank lines, and errors that say where (line, column, byte of the caller's text).
--
-- The parser keeps one position into one string and moves it with anchored string.find
-- patterns, so that work is linear in the text: no substring is made to look at a line, and
-- no search may run past the end of the line it is about (an unanchored find for a character a
-- document may never contain would scan to the end of the text from every line).
local errors = require "lunet.errors"
local find, byte, sub, gsub = string.find, string.byte, string.sub, string.gsub

local M = {}

-- The position in the caller's text of `pos` in the uniform one: a BOM was dropped, and each
-- "\r\n" became one byte. Only errors need it, so it walks the original lines then.
local function original_position(P, pos)
  local s, orig = P.s, P.orig
  local base = P.bom and 3 or 0
  if not P.had_cr then return pos + base end
  local line_start, o = 1, base + 1   -- the start of one line in both texts
  while true do
    local nl = find(s, "\n", line_start, true)
    if not nl or nl >= pos then return o + (pos - line_start) end
    local c = find(orig, "[\r\n]", o)
    o = (sub(orig, c, c + 1) == "\r\n") and c + 2 or c + 1
    line_start = nl + 1
  end
end

--- Where `pos` is: line and column (both from 1; the column counts characters) and byte.
function M.where(P, pos)
  local s = P.s
  if pos > P.n + 1 then pos = P.n + 1 end
  local line, line_start = 1, 1
  while true do
    local nl = find(s, "\n", line_start, true)
    if not nl or nl >= pos then break end
    line, line_start = line + 1, nl + 1
  end
  local column = (utf8.len(s, line_start, pos - 1, true) or (pos - line_start)) + 1
  return line, column, original_position(P, pos)
end

--- Raises the decode error for a problem at `pos`: "YAML: problem at line L, column C (byte B)".
function M.fail(P, pos, problem)
  local line, column, position = M.where(P, pos)
  error(errors.new("decode", string.format("YAML: %s at line %d, column %d (byte %d)", problem, line, column, position),
    { line = line, column = column, position = position }), 0)
end

--- `text` from the document for a message: at most 100 bytes (cut at a character's start), so
--- that an error quoting a 1 MB key or tag stays short.
function M.shown(text)
  if #text <= 100 then return text end
  local cut = 100
  while cut > 1 and (byte(text, cut + 1) or 0) >= 0x80 and byte(text, cut + 1) < 0xC0 do cut = cut - 1 end
  return sub(text, 1, cut) .. string.format("... (%d bytes)", #text)
end

--- The line number of `pos`, for messages that name an earlier place ("first on line 3").
function M.line_of(P, pos)
  return (M.where(P, pos))
end

-- The first place at or after `from` where the plain string `lead` is followed by a byte in
-- [lo, hi] (the rare characters after a common lead byte), or nil.
local function find_after(s, lead, from, lo, hi, except)
  while true do
    local at = find(s, lead, from, true)
    if not at then return nil end
    local b = byte(s, at + #lead)
    if b and b >= lo and b <= hi and b ~= except then return at end
    from = at + 1
  end
end

-- C0 controls other than tab and line breaks, DEL, C1 controls other than NEL (U+0085), and
-- U+FFFE/U+FFFF are not printable YAML characters. One anchored run over what is allowed finds
-- the first control byte: an unanchored search for a class costs six times as much.
local function check_printable(P)
  local s = P.s
  local _, e = find(s, "^[\t\n\r -~\128-\255]*")
  if e < P.n then
    M.fail(P, e + 1, string.format("control character U+%04X is not allowed (escape it in a double-quoted string)", byte(s, e + 1)))
  end
  local at = find_after(s, "\194", 1, 128, 159, 133)
  if at then M.fail(P, at, string.format("control character U+%04X is not allowed", byte(s, at + 1))) end
  at = find_after(s, "\239\191", 1, 190, 191)
  if at then M.fail(P, at, "the non-character U+FFFE or U+FFFF is not allowed") end
end

--- The parser's state for `text`: checked (UTF-8, printable), a leading BOM dropped, line
--- breaks made "\n" (YAML reads "\r\n" and a lone "\r" as one line break, in scalars too).
function M.new(text, opts)
  local P = { orig = text, s = text, pos = 1, lstart = 1, depth = 0, anchors = {}, alias_nodes = 0,
              max_depth = opts.max_depth, max_aliases = opts.max_aliases }
  if sub(text, 1, 3) == "\239\187\191" then P.s, P.bom = sub(text, 4), true end
  if find(P.s, "\r", 1, true) then
    P.had_cr = true
    P.s = gsub(gsub(P.s, "\r\n", "\n"), "\r", "\n")
  end
  P.n = #P.s
  local ok, bad = utf8.len(P.s)
  if not ok then M.fail(P, bad, string.format("invalid UTF-8 (byte 0x%02X)", byte(P.s, bad))) end
  check_printable(P)
  return P
end

--- Skips spaces, tabs, comments and line breaks from P.pos to the next content (or the end):
--- returns whether a line break was crossed. P.lstart is then the start of the content's line.
--- A '#' right after content, with no space before it, is not a comment and is left for the
--- caller to refuse.
function M.skip(P)
  local s, pos, crossed = P.s, P.pos, false
  -- A block collection that ends goes back to the end of its last entry, and the one holding it
  -- skips the same lines again: remembered, or blank lines after a 1,000-deep nest would be
  -- read 1,000 times.
  if pos == P.skip_from then
    P.pos, P.lstart = P.skip_to, P.skip_ls
    return P.skip_crossed
  end
  P.skip_from = pos
  while true do
    local _, e = find(s, "^[ \t]*", pos)
    local c = byte(s, e + 1)
    if c == 35 and (e >= pos or pos == P.lstart or byte(s, pos - 1) == 10) then
      e = (find(s, "\n", e + 1, true) or P.n + 1) - 1
      c = byte(s, e + 1)
    end
    if c ~= 10 then
      P.pos, P.skip_to, P.skip_ls, P.skip_crossed = e + 1, e + 1, P.lstart, crossed
      return crossed
    end
    pos, crossed = e + 2, true
    P.lstart = pos
  end
end

--- As M.skip, in block context: content on a new line must be indented with spaces only.
function M.skip_block(P)
  local crossed = M.skip(P)
  if crossed and P.pos <= P.n then
    local _, e = find(P.s, "^ *", P.lstart)
    if e + 1 < P.pos then M.fail(P, e + 1, "a tab cannot indent a block (use spaces)") end
  end
  return crossed
end

--- The column (from 0, in bytes: indentation is spaces) of P.pos on its line.
function M.column(P)
  return P.pos - P.lstart
end

--- Whether P.pos, at the start of a line, is a document marker: "---" or "..." followed by a
--- space, a line break or the end.
function M.at_marker(P, pos)
  pos = pos or P.pos
  local s = P.s
  if pos ~= 1 and byte(s, pos - 1) ~= 10 then return false end
  local three = sub(s, pos, pos + 2)
  if three ~= "---" and three ~= "..." then return false end
  local c = byte(s, pos + 3)
  return c == nil or c == 32 or c == 10 or c == 9, three
end

--- After a value: the rest of the line must be spaces and a comment. Raises otherwise.
function M.end_of_line(P, what)
  local s = P.s
  local _, e = find(s, "^[ \t]*", P.pos)
  local c = byte(s, e + 1)
  if c == nil or c == 10 or (c == 35 and e >= P.pos) then return end
  if c == 35 then M.fail(P, e + 1, "a comment needs a space before its '#'") end
  M.fail(P, e + 1, "unexpected text after " .. what)
end

return M
