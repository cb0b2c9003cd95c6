-- Transfers whose requests have the same header lines share one curl header list
-- (CurlHeaderList.swift). Requests with other lines, in turn or in flight together, must each
-- send exactly their own.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq = h.eq
local BIN = h.env("LUNET_HTTPBIN")

-- The headers httpbin saw that the test sets or that a body adds.
local function seen(r)
  local hs = r.json.headers
  return { a = hs["X-A"], b = hs["X-B"], ctype = hs["Content-Type"], ua = hs["User-Agent"] }
end

test("requests with different header fields in turn each send their own", function()
  local s = http.session{}
  local UA = s:get(BIN .. "/headers").json.headers["User-Agent"]   -- lunet's own
  local variants = {
    { nil, { ua = UA } },
    { { ["X-A"] = "1" }, { a = "1", ua = UA } },
    { { ["X-A"] = "2" }, { a = "2", ua = UA } },
    { { ["X-B"] = "b", ["User-Agent"] = "other" }, { b = "b", ua = "other" } },
  }
  for round = 1, 2 do
    for i, v in ipairs(variants) do
      local r = v[1] and s:get(BIN .. "/headers", { headers = v[1] }) or s:get(BIN .. "/headers")
      eq(seen(r), v[2], "round " .. round .. ", variant " .. i)
    end
  end
end)

test("a POST's added Content-Type does not stay for the GET after it", function()
  local s = http.session{}
  for _ = 1, 2 do
    local r = s:post(BIN .. "/anything", { body = "raw" })
    eq(r.json.headers["Content-Type"], "application/octet-stream", "the POST's default type")
    r = s:get(BIN .. "/headers")
    eq(r.json.headers["Content-Type"], nil, "the GET after it")
  end
end)

test("requests in flight together with different fields each send their own", function()
  local s = http.session{}
  local list = {}
  for i = 1, 32 do
    local want = i % 3 == 0 and nil or tostring(i % 3)
    list[i] = s:get_async(BIN .. "/headers", want and { headers = { ["X-A"] = want } } or nil)
      :next(function(r) return { r.json.headers["X-A"], want } end)
  end
  for i, got in ipairs(task.all(list):await()) do eq(got[1], got[2], "request " .. i) end
end)
