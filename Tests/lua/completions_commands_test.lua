-- The manual and the bash, zsh and fish completions know `lunet load`, `lunet api` and `lunet
-- grpc` (issue 47, item 3): their subcommands and options, an OpenAPI document's operations,
-- and a gRPC server's services and methods when its reflection answers, each shell tested as a
-- user runs it (scripts/install into a prefix of this file's own; the real grpc_server.py).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function sh(cmd)
  local code, out = h.run(cmd)
  assert(code == 0, cmd .. ": " .. out)
  return out
end
local function has(cmd) return h.run("command -v " .. cmd .. " >/dev/null") == 0 end
local function absolute(path) return (sh("realpath " .. q(path)):gsub("%s+$", "")) end

local HERE = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local ROOT = absolute(HERE:match("^(.*/)Tests/lua/$") or (HERE .. "../.."))
local LUNET = absolute(h.lunet())
local SPEC = ROOT .. "/Tests/Fixtures/openapi/petstore/openapi.yaml"

local work = h.tmpname()
os.remove(work)
sh("mkdir -p " .. q(work .. "/cwd") .. " " .. q(work .. "/config"))
h.cleanup(after_all, function() os.execute("rm -rf " .. q(work)) end)
local prefix = work .. "/prefix"
local install_code, install_out = h.run("LUNET_INSTALL_BINARY=" .. q(LUNET) .. " LUNET_INSTALL_MODULE=" ..
  q(LUNET:match("^(.*)/[^/]*$") .. "/libLunetLuaModule.so") .. " " .. q(ROOT .. "/scripts/install") .. " " .. q(prefix))
sh("touch " .. q(work .. "/cwd/checkout.lua") .. " " .. q(work .. "/cwd/shard0.json"))

local shells = dofile(HERE .. "shells.lua").new(h, { prefix = prefix, xdg = work .. "/config", cwd = work .. "/cwd", work = work })
local pipe, pid, port = h.start_venv_server("grpc_server.py")
local TARGET = "127.0.0.1:" .. port
h.cleanup(after_all, function() shells:stop(); h.stop_server(pipe, pid) end)

local function has_all(list, words, what)
  local set = {}
  for _, w in ipairs(list) do set[w] = true end
  for _, w in ipairs(words) do truthy(set[w], what .. " offers " .. w .. ": " .. table.concat(list, " ")) end
end

test("installed", function() eq(install_code, 0, install_out) end)

test("the manual has load, api and grpc, their options listed", function()
  local page = prefix .. "/share/man/man1/lunet.1"
  local rendered = work .. "/man.txt"
  eq({ h.run("MANWIDTH=200 man --warnings -l " .. q(page) .. " 2>&1 >" .. q(rendered)) }, { 0, "" }, "man -l: status and warnings")
  local text = h.read_file(rendered)
  for _, section in ipairs({ "LOAD TESTS", "OPENAPI", "GRPC", "lunet load merge RESULT.json", "lunet load k8s SCRIPT.lua" }) do
    truthy(text:find(section, 1, true), "the manual has " .. section)
  end
  for _, line in ipairs({ "--vus N, -u N", "--shards N", "--summary-export FILE", "--namespace NS, -n NS",
                          "--base-url URL", "--ids", "--plaintext", "-H 'name: value'", "--import-path DIR", "--max-msg-sz BYTES" }) do
    truthy(text:find("\n +" .. line:gsub("%p", "%%%0") .. "[ \n]"), "the manual lists " .. line)
  end
end)

test("bash: the commands, load's subcommands and options", function()
  has_all(shells:bash("lunet "), { "load", "api", "grpc", "test", "import" }, "lunet <TAB>")
  eq(shells:bash("lunet lo"), { "load" }, "lunet lo")
  eq(shells:bash("lunet load "), { "checkout.lua", "collect", "k8s", "merge", "shard0.json" }, "lunet load <TAB>")
  eq(shells:bash("lunet load --du"), { "--duration" }, "lunet load --du")
  eq(shells:bash("lunet load checkout.lua --report ch"), { "checkout.lua" }, "a file after --report")
  eq(shells:bash("lunet load merge --s"), { "--summary-export" }, "merge's options")
  eq(shells:bash("lunet load k8s checkout.lua --na"), { "--name", "--namespace" }, "k8s's options")
  eq(shells:bash("lunet load collect --kub"), { "--kubectl" }, "collect's options")
end)

test("bash: api's options and the document's operations", function()
  eq(shells:bash("lunet api --no"), { "--no-validate" }, "lunet api --no")
  eq(shells:bash("lunet api " .. SPEC .. " "), { "addPet", "getPet", "listPets" }, "the operations (an id with a blank is left out)")
  eq(shells:bash("lunet api " .. SPEC .. " get"), { "getPet" }, "lunet api SPEC get")
  has_all(shells:bash("lunet api " .. SPEC .. " getPet --ve"), { "--verbose" }, "a call takes the one-shot options")
  eq(shells:bash("lunet api /no/such.yaml "), {}, "a document that cannot be read: nothing, no message")
end)

test("bash: grpc's options, then the services and methods reflection offers", function()
  eq(shells:bash("lunet grpc --pla"), { "--plaintext" }, "lunet grpc --pla")
  local after_host = shells:bash("lunet grpc --plaintext " .. TARGET .. " ")
  has_all(after_host, { "list", "describe", "greet.Greeter/SayHello", "greet.Greeter/Count", "grpc.health.v1.Health/Check" }, "after HOST:PORT")
  eq(shells:bash("lunet grpc -plaintext " .. TARGET .. " greet.Greeter/Sa"), { "greet.Greeter/SayHello" }, "a method")
  eq(shells:bash("lunet grpc --plaintext " .. TARGET .. " list gr"), { "greet.Greeter", "grpc.health.v1.Health",
    "grpc.reflection.v1alpha.ServerReflection" }, "list SERVICE")
  has_all(shells:bash("lunet grpc --plaintext " .. TARGET .. " describe greet."), { "greet.Greeter", "greet.Greeter.SayHello" }, "describe")
  eq(shells:bash("lunet grpc --plaintext 127.0.0.1:1 "), {}, "no server there: nothing, at once")
end)

test("fish: the commands, their options, operations and methods", { skip = not has("fish") and "fish is not installed" }, function()
  has_all(shells:fish("lunet "), { "load", "api", "grpc", "import" }, "lunet <TAB>")
  eq(shells:fish("lunet import "), { "curl", "har", "postman" }, "lunet import <TAB>")
  has_all(shells:fish("lunet load "), { "merge", "k8s", "collect", "checkout.lua" }, "lunet load <TAB>")
  eq(shells:fish("lunet load --du"), { "--duration" }, "lunet load --du")
  eq(shells:fish("lunet load merge --s"), { "--summary-export" }, "merge's options")
  eq(shells:fish("lunet api " .. SPEC .. " "), { "addPet", "getPet", "listPets" }, "the operations")
  eq(shells:fish("lunet grpc --pla"), { "--plaintext" }, "grpc's options")
  has_all(shells:fish("lunet grpc --plaintext " .. TARGET .. " "), { "list", "describe", "greet.Greeter/SayHello" }, "after HOST:PORT")
  has_all(shells:fish("lunet grpc --plaintext " .. TARGET .. " list "), { "greet.Greeter", "grpc.health.v1.Health" }, "list SERVICE")
end)

test("zsh: the commands, their options, operations and methods", { skip = not has("zsh") and "zsh is not installed" }, function()
  local t = shells:zsh()
  t:type("lunet lo"); t:keys("Tab")
  t:wait_for("lunet load", 5)
  t:keys("C-u")
  t:type("lunet load me"); t:keys("Tab")
  t:wait_for("lunet load merge", 5)
  t:keys("C-u")
  t:type("lunet load --dur"); t:keys("Tab")
  t:wait_for("lunet load --duration", 5)
  t:keys("C-u")
  t:type("lunet api " .. SPEC .. " getP"); t:keys("Tab")
  t:wait_for("getPet", 5)
  t:keys("C-u")
  t:type("lunet grpc --plaintext " .. TARGET .. " greet.Greeter/SayH"); t:keys("Tab")
  t:wait_for("greet.Greeter/SayHello", 8)
  t:keys("C-u")
  t:type("lunet grpc --plaintext " .. TARGET .. " list grpc.he"); t:keys("Tab")
  t:wait_for("grpc.health.v1.Health", 8)
  t:close()
end)
