-- Which first word is a URL (issue 47, item 2): HTTPie takes a host without a scheme or port
-- (`127.0.0.1/get`, `example.org/x`), options before it included; lunet does too when no file
-- of that name exists (a file is always a script). A word that stays ambiguous says how to mean
-- a URL. --offline keeps every case off the network.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()

-- Runs lunet with these arguments, standard input from /dev/null: exit status, stdout, stderr.
local function lunet(line, prefix)
  local out, err = h.tmpname(), h.tmpname()
  local code = h.run("{ " .. (prefix or "") .. " " .. LUNET .. " " .. line .. " >" .. out .. " 2>" .. err .. " </dev/null; }")
  return code, h.read_file(out), h.read_file(err)
end

test("a dotted host without a scheme is a URL, with options before it", function()
  local code, out, err = lunet("--offline 127.0.0.1/get a==1")
  eq(code, 0, err)
  truthy(out:find("GET /get?a=1 HTTP/1.1", 1, true), out)
  truthy(out:find("Host: 127.0.0.1\r?\n"), out)
  code, out, err = lunet("--offline example.org/x")
  eq(code, 0, err)
  truthy(out:find("Host: example.org", 1, true), out)
  code, out, err = lunet("--offline nosuchhost.invalid/x X-Probe:1")
  eq(code, 0, err)
  truthy(out:find("GET /x HTTP/1.1", 1, true) and out:find("X-Probe: 1", 1, true), out)
  code, out, err = lunet("--offline -v POST api.example.org/items name=x")
  eq(code, 0, err)
  truthy(out:find("POST /items HTTP/1.1", 1, true), out)
end)

test("a file of that name is still a script", function()
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local f = assert(io.open(dir .. "/example.org", "w"))
  f:write('print("script ran", ...)')
  f:close()
  local code, out = lunet("example.org x", "cd " .. dir .. " &&")
  eq({ code, out }, { 0, "script ran\tx\n" }, "the script")
  os.execute("rm -rf " .. dir)
end)

test("a missing .lua file is a missing script; a bare word says how to mean a URL", function()
  local code, _, err = lunet("no_such_script.lua")
  eq(code, 1, err)
  truthy(err:find("cannot open no_such_script.lua", 1, true), err)
  truthy(not err:find("http://", 1, true), "no URL hint for a .lua name: " .. err)
  code, _, err = lunet("nosuchword")
  eq(code, 1, err)
  truthy(err:find("cannot open nosuchword", 1, true), err)
  truthy(err:find("add http:// or a method", 1, true), err)
end)
