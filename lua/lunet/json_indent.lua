-- JSON text indented by four spaces (pure: a string in, a string out). The one-shot command
-- (lunet.cli.render) and the prompt (lunet.pretty) print a body this way, so both show what the
-- server sent, as HTTPie and xh do.
--- JSON text indented by four spaces, members in the order they came and numbers as written
--- (decoding and encoding again would reorder the keys and respell the numbers). The text must
--- be valid JSON: the caller checks with json.decode first.
return function(text)
  local out, depth, i, n = {}, 0, 1, #text
  local function newline() out[#out + 1] = "\n" .. string.rep("    ", depth) end
  while i <= n do
    local s, e = text:find('["{}%[%],:]', i)
    if not s then break end
    local c = text:sub(s, s)
    local before = text:sub(i, s - 1):match("^%s*(.-)%s*$")
    if before ~= "" then out[#out + 1] = before end
    if c == '"' then
      -- the string's end: the next quote not escaped by an odd number of backslashes
      local j = s
      repeat
        j = text:find('"', j + 1, true)
        local k = j - 1
        while text:sub(k, k) == "\\" do k = k - 1 end
      until (j - 1 - k) % 2 == 0
      out[#out + 1] = text:sub(s, j)
      e = j
    elseif c == "{" or c == "[" then
      local close = c == "{" and "}" or "]"
      local after = text:find("%S", e + 1)
      if after and text:sub(after, after) == close then
        out[#out + 1] = c .. close
        e = after
      else
        out[#out + 1] = c
        depth = depth + 1
        newline()
      end
    elseif c == "}" or c == "]" then
      depth = depth - 1
      newline()
      out[#out + 1] = c
    elseif c == "," then
      out[#out + 1] = ","
      newline()
    else
      out[#out + 1] = ": "
    end
    i = e + 1
  end
  local rest = text:sub(i):match("^%s*(.-)%s*$")
  if rest ~= "" then out[#out + 1] = rest end
  return table.concat(out)
end
