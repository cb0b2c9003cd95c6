-- Pure unit tests of `lunet load`'s HDR histogram (lua/lunet/load/hdr.lua) and thresholds
-- (lua/lunet/load/thresholds.lua); the schedules and options are in load_units2_test.lua.
-- No network, no clock: every figure is checked against one worked out here.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local hdr = require "lunet.load.hdr"
local thresholds = require "lunet.load.thresholds"

math.randomseed(20240611)

-- fn must raise a usage error ({ usage = "..." }) whose message holds each of the needles.
local function usage(fn, needles, what)
  local ok, err = pcall(fn)
  truthy(not ok, what .. " should fail")
  truthy(type(err) == "table" and type(err.usage) == "string", what .. ": a usage error, got " .. h.show(err))
  for _, n in ipairs(type(needles) == "table" and needles or { needles }) do
    truthy(err.usage:find(n, 1, true), what .. ": the message names " .. n .. ": " .. err.usage)
  end
  return err.usage
end

-- A histogram fed the list; the list itself, sorted.
local function fed(list)
  local hist = hdr.new()
  for _, v in ipairs(list) do hist:record(v) end
  return hist
end

local function gauss() return math.sqrt(-2 * math.log(1 - math.random())) * math.cos(2 * math.pi * math.random()) end

-- Sample sets of integer microseconds, by name.
local function samples()
  local s = { uniform = {}, lognormal = {}, constant = {}, single = { 777777 }, bimodal = {}, small = {}, wide = {} }
  for _ = 1, 5000 do s.uniform[#s.uniform + 1] = math.random(0, 1000000) end
  for _ = 1, 5000 do s.lognormal[#s.lognormal + 1] = math.floor(math.exp(9 + 1.5 * gauss())) end
  for _ = 1, 100 do s.constant[#s.constant + 1] = 12345 end
  for k = 1, 3001 do s.bimodal[k] = k % 3 == 0 and math.random(1900000, 2100000) or math.random(150, 250) end
  for _ = 1, 997 do s.small[#s.small + 1] = math.random(0, 50) end
  for _ = 1, 2000 do s.wide[#s.wide + 1] = math.floor(2 ^ (math.random() * 31.7)) end   -- 1 µs .. 1 h
  return s
end

local PS = { 0, 0.001, 0.1, 1, 5, 10, 25, 33.3, 50, 66.6, 75, 90, 95, 99, 99.9, 99.99, 100 }
for p = 0, 100 do PS[#PS + 1] = p end

test("hdr: index_of and value_at round trip; buckets in order, none wider than 1/1024", function()
  eq({ hdr.index_of(0), hdr.index_of(1), hdr.index_of(2047), hdr.index_of(2048), hdr.index_of(2049) },
     { 0, 1, 2047, 2048, 2048 }, "below 2048 one value a slot; then two")
  eq({ hdr.index_of(4095), hdr.index_of(4096), hdr.value_at(3071), hdr.value_at(3072) },
     { 3071, 3072, 4094, 4096 }, "around 4096: slots of 2, then of 4")
  eq({ hdr.highest_equivalent(2047), hdr.highest_equivalent(2048), hdr.highest_equivalent(4096) },
     { 2047, 2049, 4099 }, "highest equivalents")
  local values = { 0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097, 10 ^ 6, 123456789,
                   hdr.HIGHEST - 1, hdr.HIGHEST }
  for _ = 1, 3000 do values[#values + 1] = math.random(0, hdr.HIGHEST) end
  for _ = 1, 3000 do values[#values + 1] = math.floor(2 ^ (math.random() * 31.74)) end
  for _, v in ipairs(values) do
    v = math.tointeger(v)
    local i = hdr.index_of(v)
    local lo, hi = hdr.value_at(i), hdr.highest_equivalent(v)
    truthy(lo <= v and v <= hi, v .. " in its slot [" .. lo .. ", " .. hi .. "]")
    eq({ hdr.index_of(lo), hdr.index_of(hi), hdr.index_of(hi + 1), hdr.value_at(i + 1) }, { i, i, i + 1, hi + 1 },
       "the slot of " .. v .. " ends where the next begins")
    truthy(hi - lo <= lo / 1024, "the slot of " .. v .. " is at most 1/1024 of its values: " .. (hi - lo + 1))
    if v < 2048 then eq(lo, v, "exact below 2048") end
  end
  table.sort(values)
  for k = 2, #values do truthy(hdr.index_of(values[k]) >= hdr.index_of(values[k - 1]), "index_of is monotone") end
  local last = hdr.index_of(hdr.HIGHEST)
  eq(last, 23 * 1024 - 1 - (2047 - (hdr.HIGHEST >> 21)), "the hour's slot")
  local prev = -1
  for i = 0, last do
    local v = hdr.value_at(i)
    if v <= prev or hdr.index_of(v) ~= i then error("slot " .. i .. ": value_at " .. v .. " after " .. prev) end
    prev = v
  end
end)

test("hdr: count, sum, min, max and mean are exact; negatives are 0; past an hour is clamped", function()
  local e = hdr.new()
  eq({ e:percentile(50), e:mean(), e:percentiles({ 50, 99 }), e.count, e.clamped }, { nil, nil, {}, 0, 0 }, "empty")
  local x = fed{ 1.4, 1.5, 1000, -5, -0.4, 2500000 }
  eq({ x.count, x.sum, x.min, x.max, x.clamped }, { 6, 1 + 2 + 1000 + 0 + 0 + 2500000, 0, 2500000, 0 }, "figures")
  eq(x:mean(), 2501003 / 6, "mean")
  eq(x:percentile(0), 0, "p(0): the negatives counted as 0")
  eq({ x:percentile(100), hdr.highest_equivalent(2500000) > 2500000 }, { 2500000, true }, "p(100) is the exact max")
  local big = fed{ hdr.HIGHEST, hdr.HIGHEST + 1, 1e12, math.huge, 5 }
  eq({ big.count, big.clamped, big.max, big.min }, { 5, 3, hdr.HIGHEST, 5 }, "three past the hour, clamped")
  eq(big.sum, 4 * hdr.HIGHEST + 5, "the clamped count as an hour")
  eq({ big:percentile(100), big:percentile(50) }, { hdr.HIGHEST, hdr.HIGHEST }, "at the hour")
  eq(math.type(fed{ 2.5 }.sum), "integer", "values are whole microseconds")
  local edge = fed{ hdr.HIGHEST + 0.4, hdr.HIGHEST + 0.5, 0 / 0, -math.huge, -0.0, 2.5, 7 }
  eq({ edge.count, edge.clamped, edge.min, edge.max, edge.sum }, { 6, 1, 0, hdr.HIGHEST, 2 * hdr.HIGHEST + 3 + 7 },
     "NaN is not kept; -inf is 0; an hour and 0.4 rounds to the hour, and 0.5 more is past it")
  eq({ math.type(edge.min), math.type(edge.max) }, { "integer", "integer" }, "min and max whole too")
end)

test("hdr: every percentile within 0.1% of the exact one, and within [min, max]", function()
  for name, list in pairs(samples()) do
    local hist = fed(list)
    table.sort(list)
    local n = #list
    eq({ hist.count, hist.min, hist.max }, { n, list[1], list[n] }, name .. ": count, min, max")
    local sum = 0
    for _, v in ipairs(list) do sum = sum + v end
    eq({ hist.sum, hist:mean() }, { sum, sum / n }, name .. ": sum and mean")
    local all = hist:percentiles(PS)
    for _, p in ipairs(PS) do
      local exact = list[math.max(1, math.floor(p / 100 * n + 0.5))]   -- the nearest rank
      local got = hist:percentile(p)
      local what = string.format("%s p(%s): exact %d, got %s", name, p, exact, tostring(got))
      truthy(got >= exact and got - exact <= exact / 1024, what)
      truthy(got >= list[1] and got <= list[n], what .. " within [min, max]")
      eq(all[p], got, what .. ": percentiles() as percentile()")
    end
  end
end)

test("hdr: a merge is exact: the same counts and percentiles as one histogram fed both", function()
  local s = samples()
  local a, b, both = fed(s.lognormal), fed(s.bimodal), fed(s.lognormal)
  for _, v in ipairs(s.bimodal) do both:record(v) end
  b:record(7200e6); both:record(7200e6)           -- the other's clamped one travels too
  eq(a:merge(b), a, "merge returns the histogram")
  eq(a.counts, both.counts, "counts")
  eq({ a.count, a.sum, a.min, a.max, a.clamped }, { both.count, both.sum, both.min, both.max, both.clamped }, "figures")
  eq(a:percentiles(PS), both:percentiles(PS), "percentiles")
  eq({ a.clamped, b.count }, { 1, #s.bimodal + 1 }, "the clamped one counted; the other left as it was")
  local lone = fed{ 10, 20 }
  local into_empty = hdr.new():merge(lone)
  eq({ into_empty.count, into_empty.min, into_empty.max, into_empty:percentile(50) }, { 2, 10, 20, 10 }, "into an empty one")
  lone:merge(hdr.new())
  eq({ lone.count, lone.min, lone.max, lone.sum }, { 2, 10, 20, 30 }, "an empty one merged in changes nothing")
end)

test("hdr: encode and decode round trip, through JSON too", function()
  local hist = fed(samples().wide)
  hist:record(-3); hist:record(1e13)
  local e = hist:encode()
  eq({ e.unit, e.count, e.sum, e.min, e.max, e.clamped }, { "us", hist.count, hist.sum, 0, hdr.HIGHEST, 1 }, "the figures")
  eq(#e.counts % 2, 0, "index, count pairs")
  local total = 0
  for k = 1, #e.counts, 2 do
    if k > 1 then truthy(e.counts[k] > e.counts[k - 2], "indexes ascending") end
    eq(hist.counts[e.counts[k]], e.counts[k + 1], "the count at " .. e.counts[k])
    total = total + e.counts[k + 1]
  end
  eq(total, hist.count, "every count is there")
  for _, back in ipairs{ hdr.decode(e), hdr.decode(json.decode(json.encode(e))) } do
    eq(back.counts, hist.counts, "counts back")
    eq({ back.count, back.sum, back.min, back.max, back.clamped }, { hist.count, hist.sum, hist.min, hist.max, 1 }, "figures back")
    eq(back:percentiles(PS), hist:percentiles(PS), "percentiles back")
  end
  local empty = hdr.decode(hdr.new():encode())
  eq({ empty.count, empty:percentile(50), hdr.new():encode().min }, { 0, nil, nil }, "an empty one")
  eq(empty:merge(fed{ 5 }).min, 5, "an empty one decoded still merges (its min is no 0)")
end)

test("hdr: the counts kept in C land where index_of says, for every bucket's edges", function()
  local values = { 0, 1, 2047, 2048, 2049, 4095, 4096, hdr.HIGHEST - 1, hdr.HIGHEST }
  for b = 11, 31 do
    local p = 1 << b
    for _, v in ipairs{ p - 1, p, p + 1, p + (p >> 1) } do if v <= hdr.HIGHEST then values[#values + 1] = v end end
  end
  for _ = 1, 2000 do values[#values + 1] = math.random(0, hdr.HIGHEST) end
  for _, v in ipairs(values) do
    local one = fed{ v }
    eq(one.counts, { [hdr.index_of(v)] = 1 }, "the slot of " .. v)
  end
  local all = fed(values)
  local want = {}
  for _, v in ipairs(values) do want[hdr.index_of(v)] = (want[hdr.index_of(v)] or 0) + 1 end
  eq(all.counts, want, "every value in one histogram")
end)

test("hdr: a histogram of few values stays small; few and many merge either way", function()
  collectgarbage(); collectgarbage()
  local before = collectgarbage("count")
  local keep = {}
  for k = 1, 2000 do keep[k] = fed{ k % 7, 500 + k % 3, 100000 } end
  local per = (collectgarbage("count") - before) * 1024 / #keep
  truthy(per < 400, string.format("%.0f bytes a histogram of three values (tag sets keep seven each)", per))
  local many = {}
  for v = 1, 3000, 7 do many[#many + 1] = v end
  local few_list = { 3, 3, 9, 2500, 7200e6 }
  local function both_ways(a_list, b_list, what)
    local a, b, all = fed(a_list), fed(b_list), fed(a_list)
    for _, v in ipairs(b_list) do all:record(v) end
    a:merge(b)
    eq({ a.counts, a.count, a.sum, a.min, a.max, a.clamped }, { all.counts, all.count, all.sum, all.min, all.max, all.clamped }, what)
  end
  both_ways(few_list, many, "few, then many merged in")
  both_ways(many, few_list, "many, then few merged in")
  both_ways(few_list, { 4, 5, 6, 7 }, "few and few, past the inline pairs together")
end)

test("hdr: hostile calls get a message, never memory: not a histogram, not a number, itself", function()
  local function raises(fn, needle, what)
    local ok, e = pcall(fn)
    truthy(not ok and tostring(e):find(needle, 1, true), what .. ": " .. tostring(e))
  end
  local real = hdr.new()
  raises(function() hdr.record({ counts = {}, count = 0 }, 5) end, "not a histogram", "a table shaped like one")
  raises(function() hdr.record(io.stdout, 5) end, "not a histogram", "another userdata")
  raises(function() hdr.record(real, "5 ms") end, "a number of microseconds", "a string")
  raises(function() real:merge(real) end, "merged into itself", "a merge into itself")
  raises(function() real:merge({}) end, "not a histogram", "a merge of a table")
  raises(function() real.count = 3 end, "index", "its figures cannot be set")
  eq(getmetatable(real), "lunet.hdr", "its metatable is not handed out")
  raises(function() hdr.decode({ counts = { hdr.index_of(hdr.HIGHEST) + 1, 1 }, count = 1, sum = 1 }) end,
    "out of range", "a decoded slot past the hour")
  raises(function() hdr.decode({ counts = { 5, -1 }, count = 0, sum = 0 }) end, "whole number", "a negative count")
  raises(function() hdr.decode({ counts = {}, count = 0, sum = 1.5 }) end, "whole number", "a fractional sum")
  raises(function() hdr.group(real) end, "not a list of histograms", "a group of a histogram")
  raises(function() hdr.group({ real, {} }) end, "list item 2 is not a histogram", "a group of a list with a table")
  raises(function() hdr.group({}) end, "1 to 16 histograms", "an empty group")
  local seventeen = {}
  for k = 1, 17 do seventeen[k] = hdr.new() end
  raises(function() hdr.group(seventeen) end, "1 to 16 histograms", "a group of seventeen")
  local g1 = hdr.group({ real })
  raises(function() hdr.record_group({ real }, 1) end, "not a group of histograms", "record_group of a list")
  raises(function() hdr.record_group(real, 1) end, "not a group of histograms", "record_group of a histogram")
  raises(function() hdr.record_group(io.stdout, 1) end, "not a group of histograms", "record_group of another userdata")
  raises(function() hdr.record_group(g1, "1") end, "not a number", "record_group of a string")
  raises(function() hdr.record_group(g1, 1, 2) end, "2 values for a group of 1", "more values than histograms")
  raises(function() hdr.record(g1, 1) end, "not a histogram", "a group is not a histogram")
  eq(getmetatable(g1), "lunet.hdr.group", "a group's metatable is not handed out")
  eq({ real.count, real.sum, real.min, real.max }, { 0, 0, math.huge, -math.huge }, "and the real one is untouched")
  local a, b, c = hdr.new(), hdr.new(), hdr.new()
  local abc = hdr.group({ a, b, c })
  hdr.record_group(abc, 1.4, 2500, 0 / 0)
  hdr.record_group(abc, 7200e6)
  eq({ a.count, a.sum, a.clamped, b.count, b.sum, c.count }, { 2, 1 + hdr.HIGHEST, 1, 1, 2500, 0 },
     "record_group: the k-th value into the k-th histogram, rounded, clamped, NaN not kept; fewer values than histograms")
  -- Sixteen histograms whose inline pairs are full, each made chunked by the one call (the
  -- group makes their storage with each on the stack), and recorded again into the chunks.
  local full, values = {}, {}
  for k = 1, 16 do
    full[k] = fed{ 1, 2, 3, 4, 5, 6 }
    values[k] = 100 * k
  end
  local g16 = hdr.group(full)
  hdr.record_group(g16, table.unpack(values))
  for k = 1, 16 do eq({ full[k].count, full[k].counts[hdr.index_of(100 * k)] }, { 7, 1 }, "histogram " .. k .. " of 16") end
  values[3] = 5e9   -- a new chunk of a chunked histogram, and a clamped value
  hdr.record_group(g16, table.unpack(values))
  eq({ full[1].count, full[1].counts[hdr.index_of(100)], full[3].clamped, full[3].counts[hdr.index_of(hdr.HIGHEST)] },
    { 8, 2, 1, 1 }, "again: into the chunks, and a new chunk past them")
  -- The group keeps its histograms: with every other reference gone, a full collection, and
  -- the values still land in them.
  local kept = hdr.group({ hdr.new(), hdr.new() })
  local list = {}
  for k = 1, 7 do list[k] = k * 1000 end
  collectgarbage("collect")
  for _, v in ipairs(list) do hdr.record_group(kept, v, v * 2) end
  collectgarbage("collect")
  hdr.record_group(kept, 1, 2)
  eq(debug.getuservalue(kept, 1)[1].count, 8, "a group keeps its histograms alive across collections")
  -- The debug library replacing a group's table of histograms: an error when the group needs
  -- one of them on the stack (new storage), not a crash.
  local broken_list = { fed{ 1, 2, 3, 4, 5, 6 } }
  local broken = hdr.group(broken_list)
  debug.setuservalue(broken, {}, 1)
  raises(function() hdr.record_group(broken, 5000) end, "histograms were replaced", "a group whose table was replaced")
  eq(broken_list[1].count, 6, "and nothing was counted")
  eq({ real[1], real.nothing }, { nil, nil }, "other keys are nil: a number is not read as a name")
  local empty = hdr.decode({ unit = "us", count = 0, sum = 0, clamped = 0, counts = {}, min = json.null, max = json.null })
  eq({ empty.count, empty.min, empty.max }, { 0, math.huge, -math.huge }, "an empty one from JSON with null min and max")
end)

test("thresholds: expressions with each aggregate and operator, spaces or none", function()
  local cases = {
    { "p(99) < 200", "p", 99, "<", 200 }, { "p(99.9)<=1.5", "p", 99.9, "<=", 1.5 },
    { "  p( 95 )  >  0 ", "p", 95, ">", 0 }, { "p(0)>=1", "p", 0, ">=", 1 }, { "p(100) < 1e3", "p", 100, "<", 1000 },
    { "avg<100", "avg", nil, "<", 100 }, { "rate < 0.01", "rate", nil, "<", 0.01 }, { "count > 10", "count", nil, ">", 10 },
    { "med<=5", "med", nil, "<=", 5 }, { "max!=3", "max", nil, "!=", 3 }, { "value==1", "value", nil, "==", 1 },
    { "min >= -2", "min", nil, ">=", -2 }, { "max === 7", "max", nil, "===", 7 },
  }
  for _, c in ipairs(cases) do
    local e = thresholds.expression(c[1], "here")
    eq({ e.source, e.aggregate, e.p, e.op, e.value }, { c[1], c[2], c[3], c[4], c[5] }, c[1])
  end
end)

test("thresholds: a bad expression is a usage error naming where and what", function()
  local function bad(text, needle)
    usage(function() thresholds.expression(text, "thresholds['m'][2]") end, { "thresholds['m'][2]", needle }, tostring(text))
  end
  for _, text in ipairs{ "p99 < 2", "avg <", "avg <> 3", "avg => 3", "avg < abc", "avg < 1.2.3", "< 3", "avg 3", "" } do
    bad(text, "'" .. text .. "' is not a threshold")
  end
  bad("mean < 3", "'mean' is not an aggregate")
  bad("AVG < 3", "'AVG' is not an aggregate")
  bad("p(101) < 1", "p(101) must be between 0 and 100")
  bad("p < 3", "p takes a percentile")          -- was accepted, with no percentile: never judged
  bad("p(1.2.3) < 3", "p takes a percentile")   -- likewise
  bad(5, "a threshold is a string")
  bad(nil, "got nil")
end)

test("thresholds: selectors name a metric and the tags it is filtered by", function()
  eq({ thresholds.selector("http_req_duration") }, { "http_req_duration", {} }, "a bare name")
  eq({ thresholds.selector("http_req_duration{name:login,method:GET}") },
     { "http_req_duration", { name = "login", method = "GET" } }, "two tags")
  eq({ thresholds.selector("http_req_duration { name : login , method:GET }") },
     { "http_req_duration", { name = "login", method = "GET" } }, "spaces")
  eq({ thresholds.selector("checks{url:http://h/x}") }, { "checks", { url = "http://h/x" } }, "a value with colons")
  usage(function() thresholds.selector("http-req") end, "'http-req' is not a metric name", "a dash")
  usage(function() thresholds.selector("") end, "'' is not a metric name", "empty")
  usage(function() thresholds.selector("a{b:c") end, "'a{b:c' is not a metric name", "no closing brace")
  usage(function() thresholds.selector("a{b}") end, "each tag is name:value", "a tag without a value")
end)

test("thresholds: parse takes strings, lists and the object form, in key order", function()
  local list = thresholds.parse{
    ["http_req_duration{name:login}"] = "p(95) < 300",
    http_req_duration = { "p(99) < 200", "avg<100" },
    checks = { { threshold = "rate > 0.99", abort_on_fail = true, delay_abort_eval = "10s" },
               { threshold = "rate > 0.5", delay_abort_eval = "1m30s" }, { threshold = "rate > 0", delay_abort_eval = 2.5 } },
  }
  local got = {}
  for _, t in ipairs(list) do
    got[#got + 1] = { t.key, t.metric, t.tags, t.expression.source, t.abort_on_fail, t.delay_abort_eval }
  end
  eq(got, {
    { "checks", "checks", {}, "rate > 0.99", true, 10 },
    { "checks", "checks", {}, "rate > 0.5", false, 90 },
    { "checks", "checks", {}, "rate > 0", false, 2.5 },
    { "http_req_duration", "http_req_duration", {}, "p(99) < 200", false, 0 },
    { "http_req_duration", "http_req_duration", {}, "avg<100", false, 0 },
    { "http_req_duration{name:login}", "http_req_duration", { name = "login" }, "p(95) < 300", false, 0 },
  }, "the thresholds")
  eq(list[1].expression, { source = "rate > 0.99", aggregate = "rate", op = ">", value = 0.99 }, "a parsed expression")
  eq({ thresholds.parse(nil), thresholds.parse{} }, { {}, {} }, "none")
  usage(function() thresholds.parse{ [1] = { "avg < 1" } } end, "keys are metric names, got number", "a number key")
  usage(function() thresholds.parse{ m = 5 } end, "thresholds['m'] must be a list", "not a list")
  usage(function() thresholds.parse{ m = { "avg < 1", "avg ! 2" } } end, { "thresholds['m'][2]", "'avg ! 2'" }, "the second bad")
  usage(function() thresholds.parse{ m = { { threshold = "avg < 1", delay_abort_eval = "soon" } } } end,
        { "thresholds['m'][1].delay_abort_eval", "'soon' is not a duration" }, "a bad delay")
  usage(function() thresholds.parse{ m = { { threshold = "avg < 1", abortOnFail = true } } } end,
        { "thresholds['m'][1]", "unknown key 'abortOnFail'" }, "k6's spelling, unknown here")   -- was silently ignored
  usage(function() thresholds.parse{ m = { { abort_on_fail = true } } } end, "a threshold is a string", "no threshold")
  usage(function() thresholds.parse{ ["m{x}"] = "avg < 1" } end, "each tag is name:value", "a bad selector")
end)

test("thresholds: judge by each operator and aggregate; nil without the figure", function()
  local function j(text, figures) return thresholds.judge(thresholds.expression(text, "t"), figures) end
  local ops = { { "<", true, false, false }, { "<=", true, true, false }, { ">", false, false, true },
                { ">=", false, true, true }, { "==", false, true, false }, { "===", false, true, false },
                { "!=", true, false, true } }
  for _, o in ipairs(ops) do
    eq({ j("avg " .. o[1] .. " 100", { avg = 99 }), j("avg " .. o[1] .. " 100", { avg = 100 }),
         j("avg " .. o[1] .. " 100", { avg = 101 }) }, { o[2], o[3], o[4] }, "avg " .. o[1] .. " 100 at 99, 100, 101")
  end
  local f = { avg = 5, min = 1, max = 9, med = 4, count = 0, rate = 0.02, value = 3, p = { [95] = 299, [99.9] = 301 } }
  eq({ j("p(95) < 300", f), j("p(99.9) < 300", f), j("p(99) < 300", f) }, { true, false, nil }, "percentiles; p(99) absent")
  eq({ j("min > 0", f), j("max <= 9", f), j("med == 4", f), j("value != 3", f) }, { true, true, true, false }, "min max med value")
  eq({ j("count > 0", f), j("count == 0", f), j("rate < 0.01", f) }, { false, true, false }, "0 is a figure, not a missing one")
  eq({ j("avg < 1", {}), j("p(95) < 1", {}), j("rate < 1", { count = 3 }) }, { nil, nil, nil }, "no figure: nil")
end)

h.done()
