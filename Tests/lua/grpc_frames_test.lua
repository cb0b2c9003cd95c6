-- gRPC's length-prefixed messages (lua/lunet/grpc/frames.lua), without a server: a whole body
-- split at once (frames.messages, a unary answer) gives what the reader gives when the same
-- body arrives in pieces, and both refuse the same bad bodies with the same kinds.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local frames = require "lunet.grpc.frames"

math.randomseed(20261128)

-- The messages the reader gives for `body` fed in random pieces.
local function read_in_pieces(body, max)
  local r, out, pos = frames.reader(max), {}, 1
  while pos <= #body do
    local n = math.random(1, 7)
    for _, m in ipairs(r:feed(body:sub(pos, pos + n - 1))) do out[#out + 1] = m end
    pos = pos + n
  end
  r:finish()
  return out
end

local function kind_of(fn)
  local ok, e = pcall(fn)
  truthy(not ok, "should fail")
  return e.kind, e.message
end

test("frames.messages: a whole body's messages, as the reader gives them in pieces", function()
  eq(frames.messages(""), {}, "no message")
  local bodies = {
    frames.frame("hello"),
    frames.frame("") .. frames.frame("a") .. frames.frame(string.rep("x", 300), true),
    frames.frame(string.rep("\0\1\255", 1000)),
  }
  for i, body in ipairs(bodies) do eq(frames.messages(body), read_in_pieces(body), "body " .. i) end
  local two = frames.messages(frames.frame("one") .. frames.frame("two", true))
  eq(two, { { bytes = "one", compressed = false }, { bytes = "two", compressed = true } })
end)

test("frames.messages and the reader refuse the same bodies: cut short, over max_message, not gRPC", function()
  local cases = {
    { frames.frame("hello"):sub(1, 3), "protocol", "ended inside" },          -- a prefix cut short
    { frames.frame("hello"):sub(1, 7), "protocol", "ended inside" },          -- a message cut short
    { frames.frame(string.rep("x", 11)), "too_large", "over the limit of 10" },
    { "\2\0\0\0\1x", "protocol", "not speaking gRPC" },
  }
  for i, c in ipairs(cases) do
    local kind, message = kind_of(function() return frames.messages(c[1], 10) end)
    eq(kind, c[2], "messages, case " .. i .. ": " .. tostring(message))
    truthy(message:find(c[3], 1, true), message)
    kind, message = kind_of(function() return read_in_pieces(c[1], 10) end)
    eq(kind, c[2], "reader, case " .. i .. ": " .. tostring(message))
    truthy(message:find(c[3], 1, true), message)
  end
  -- the missing count is the same either way
  local _, a = kind_of(function() return frames.messages(frames.frame("hello"):sub(1, 7)) end)
  local _, b = kind_of(function() return read_in_pieces(frames.frame("hello"):sub(1, 7)) end)
  eq(a, b)
end)

-- Seconds to read `body` through a reader fed in pieces of `size` bytes; the message count.
local function read_time(body, size)
  local r, n, t0 = frames.reader(), 0, os.clock()
  for pos = 1, #body, size do n = n + #r:feed(body:sub(pos, pos + size - 1)) end
  r:finish()
  return os.clock() - t0, n
end

test("the reader is linear in the piece size: many tiny messages in large pieces (HOSTILE: re-scanning)", function()
  local one = frames.frame("x")
  local body = string.rep(one, (1024 * 1024) // #one)   -- 1 MiB of 1-byte messages
  local small, n1 = read_time(body, 4 * 1024)
  local large, n2 = read_time(body, 64 * 1024)
  eq(n1, #body // #one)
  eq(n2, n1)
  -- Each message read out of a piece used to copy the rest of the piece: 64 KiB pieces then cost
  -- 16 times what 4 KiB pieces cost for the same bytes.
  truthy(large < 3 * small + 0.2, string.format("64 KiB pieces %.2f s, 4 KiB pieces %.2f s", large, small))
end)
