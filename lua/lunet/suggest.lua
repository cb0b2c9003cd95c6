--- "Did you mean ...?": the known name closest to a mistyped one, by the optimal string
--- alignment distance (Levenshtein's insert, delete and substitute, plus swapping two neighbours,
--- each costing 1), so `timout`, `heders` and `tiemout` all find `timeout`/`headers`.
local M = {}

--- The edit distance between two strings (optimal string alignment).
function M.distance(a, b)
  local la, lb = #a, #b
  if la == 0 then return lb end
  if lb == 0 then return la end
  local prev2, prev, cur = {}, {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur[0] = i
    local ai = a:byte(i)
    for j = 1, lb do
      local bj = b:byte(j)
      local cost = ai == bj and 0 or 1
      local d = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      if i > 1 and j > 1 and ai == b:byte(j - 1) and a:byte(i - 1) == bj then
        d = math.min(d, prev2[j - 2] + 1)
      end
      cur[j] = d
    end
    prev2, prev, cur = prev, cur, prev2
  end
  return prev[lb]
end

--- The closest of `candidates` (a list, or the keys of a table) to `word`, or nil when none is
--- close: at most 1 edit for names up to 4 characters, 2 up to 8, else 3. Ties go to the first
--- in sorted order, so the answer does not depend on table order.
function M.closest(word, candidates)
  local list = {}
  if #candidates > 0 then
    for i, c in ipairs(candidates) do list[i] = c end
  else
    for k in pairs(candidates) do if type(k) == "string" then list[#list + 1] = k end end
  end
  table.sort(list)
  local limit = #word <= 4 and 1 or #word <= 8 and 2 or 3
  local best, best_d
  for _, c in ipairs(list) do
    local d = M.distance(word:lower(), c:lower())
    if d <= limit and (not best_d or d < best_d) then best, best_d = c, d end
  end
  return best
end

return M
