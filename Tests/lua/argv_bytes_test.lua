-- A command line's arguments reach Lua as the bytes the process got (Sources/lunet/main.swift,
-- rawArguments): an argument that is not UTF-8 is not "repaired" into U+FFFD on the way, so a
-- script's arg, a one-shot body (--raw) and an imported curl body keep their bytes.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq = h.eq
local json = require "lunet.json"
local LUNET = h.lunet()

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
-- Bytes 0xff 0x80 0xc3 (no UTF-8) and é, made by printf so the test's own source stays text.
local BYTES = [["$(printf '\377\200\303')é"]]

test("a script's argument that is not UTF-8 keeps its bytes", function()
  local script = h.temp_file("io.write(#arg[1], ':', table.concat({ arg[1]:byte(1, -1) }, ','))", ".lua")
  local code, out = h.run(q(LUNET) .. " " .. q(script) .. " " .. BYTES .. " plain")
  eq({ code, out }, { 0, "5:255,128,195,195,169" })
end)

test("the one-shot line's --raw body and an imported curl body keep their bytes", function()
  -- httpbin echoes a body that is not UTF-8 as a base64 data: URL
  local code, out = h.run(q(LUNET) .. " POST " .. h.env("LUNET_HTTPBIN") .. "/anything Content-Type:application/octet-stream --raw " .. BYTES)
  eq(code, 0, out)
  local b64 = json.decode(out).data:match("^data:application/octet%-stream;base64,(.*)$")
  eq(b64 and require("lunet.base64").decode(b64), "\255\128\195\195\169")
  code, out = h.run(q(LUNET) .. " import curl curl -d " .. BYTES .. " http://127.0.0.1:1/x")
  eq(code, 0, out)
  eq(out:match('body = (".-"),\n'), string.format("%q", "\255\128\195\195\169"))
end)

h.done()
