-- lunet.base64: the one encoder and decoder lunet's HAR, Basic credentials, Kubernetes
-- binaryData and gRPC's -bin metadata use. Round trips of every length class, RFC 4648's test
-- vectors, the URL alphabet and whitespace read, anything else refused.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq = h.eq
local b64 = require "lunet.base64"

test("RFC 4648's vectors, and round trips of bytes of every value", function()
  local vectors = { [""] = "", f = "Zg==", fo = "Zm8=", foo = "Zm9v", foob = "Zm9vYg==", fooba = "Zm9vYmE=", foobar = "Zm9vYmFy" }
  for plain, coded in pairs(vectors) do
    eq(b64.encode(plain), coded, "encode " .. plain)
    eq(b64.decode(coded), plain, "decode " .. coded)
  end
  local all = {}
  for i = 0, 255 do all[#all + 1] = string.char(i) end
  all = table.concat(all)
  for n = 0, 7 do eq(b64.decode(b64.encode(all:sub(1, 250 + n))), all:sub(1, 250 + n), "length " .. (250 + n)) end
end)

test("decode takes the URL alphabet, no padding and whitespace; refuses other bytes", function()
  eq(b64.decode("-_8"), b64.decode("+/8="), "URL alphabet, unpadded")
  eq(b64.decode("Zm9v\nYmFy"), "foobar", "a line break")
  eq(b64.decode("Zm9v*"), nil, "a byte outside both alphabets")
end)

h.done()
