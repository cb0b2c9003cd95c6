-- What the in-process codec benchmarks share (more_json.lua and more_codecs.lua, their generators
-- more_json_gen.lua and more_codecs_gen.lua). Plain Lua 5.4: it runs in lunet (the baseline
-- build of codecs.sh included) and in lua5.4 (beside lua-cjson). Load it with
--   local lib = dofile((arg[0]:match("^(.*/)") or "") .. "more_lib.lua")
local lib = {}

-- A fixed-seed generator of its own, not math.random, so that documents are the same bytes in
-- every Lua and every run: a linear congruential generator (Knuth's MMIX constants), 64-bit
-- integer arithmetic. Returns rnd(n), an integer in 1..n, and pick(list), one of its items.
function lib.generator()
  local state = 0x2545F4914F6CDD1D
  local function rnd(n)
    state = state * 6364136223846793005 + 1442695040888963407
    return ((state >> 33) % n) + 1
  end
  local function pick(list) return list[rnd(#list)] end
  return rnd, pick
end

-- Calls fn(input) again and again, whole calls only, for at least `seconds` of CPU (os.clock()),
-- after a full collection and one warm-up call, and prints
--   "<name> codec=<codec> bytes=<bytes> out=<n> reps=<n> cpu=<s>"
-- where out is the length of what one call returned when it is a string (an encode), else bytes.
function lib.measure(name, codec, fn, input, bytes, seconds)
  collectgarbage()
  collectgarbage()
  local out = fn(input)
  local clock = os.clock
  local reps = 0
  local c0 = clock()
  local c1
  repeat
    fn(input)
    reps = reps + 1
    c1 = clock()
  until c1 - c0 >= seconds
  print(string.format("%s codec=%s bytes=%d out=%d reps=%d cpu=%.6f", name, codec, bytes,
    type(out) == "string" and #out or bytes, reps, c1 - c0))
end

return lib
