-- `lunet import curl` (docs/import.md): shell words as bash splits them ($'...' included), and for
-- each form browsers' "Copy as cURL" and API docs use, the request the imported script sends
-- equals the one curl sends, both read back from httpbin's /anything (all but User-Agent); what
-- cannot be carried over is named; bad input exits 2 naming its place, writing nothing.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local json = require "lunet.json"
local words = require("lunet.import.shell_words").split
local LUNET = h.lunet()
local HTTPBIN = h.env("LUNET_HTTPBIN")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local UPLOAD = h.temp_file("part contents\n", ".txt")

test("shell words: quotes, $'...' escapes, backslashes, continued lines, comments", function()
  eq(words([[curl 'a b' "c \"d\" \$e" $'f\n\x41\u00e9\101\'' g\ h \
  -H x # a comment
]]), { "curl", "a b", 'c "d" $e', "f\nA\u{e9}A'", "g h", "-H", "x" })
  eq(words([[a"b"'c'$'d']]), { "abcd" }, "one word of several quotings")
  eq(words("''"), { "" }, "an empty word is a word")
  local _, notes = words('curl "$HOME/x" `date`')
  local said = table.concat(notes, "; ")
  truthy(said:find("$ at line 1, column 7 is left as written", 1, true) and said:find("` at line 1, column 16", 1, true),
    "what a shell would expand is named: " .. said)
  local ok, err = pcall(words, "curl 'unclosed\n  more")
  truthy(not ok and err.import == "a '...' quote is not closed at line 1, column 6", tostring(err and err.import))
  ok, err = pcall(words, 'curl -d "x')
  truthy(not ok and err.import:find('"..." quote is not closed at line 1, column 9', 1, true), tostring(err and err.import))
end)

-- What httpbin echoed, without what differs by tool (User-Agent), by connection, and a
-- multipart body's boundary (each tool picks its own; the parts are compared).
local function echoed(text)
  local j = json.decode(text)
  j.headers["User-Agent"], j.origin = nil, nil
  local ct = j.headers["Content-Type"]
  if ct and ct:find("^multipart/form%-data") then
    j.headers["Content-Type"], j.headers["Content-Length"] = "multipart/form-data", nil
  end
  return j
end

-- curl's request and the imported script's, each as httpbin echoed it.
local function both(cmd)
  local code, curl_out = h.run("bash -c " .. q(cmd .. " -s"))   -- bash: $'...' is bash's
  eq(code, 0, cmd .. ": " .. curl_out)
  local script = h.tmpname() .. ".lua"
  code, curl_out = h.run(q(LUNET) .. " import curl " .. q(cmd) .. " -o " .. q(script)), curl_out
  local c2, out = h.run(q(LUNET) .. " " .. q(script))
  eq({ code, c2 }, { 0, 0 }, out .. "\n" .. (h.read_file(script) or ""))
  local status, body = out:match("^(%d+)\n(.*)$")
  return curl_out, body, status, h.read_file(script)
end

local FORMS = {
  -- Chromium's "Copy as cURL (bash)"
  "curl '%s/anything?q=1&r=%%C3%%A9' -H 'accept: application/json' -H 'content-type: application/x-www-form-urlencoded' --data-raw 'a=1&b=2'",
  -- Firefox's, with bash's $'...' for a body holding a quote and a newline
  "curl '%s/anything' -X POST -H 'Accept: */*' -H 'Content-Type: application/json' --data-raw $'{\"x\":\"it\\'s\\n\"}'",
  "curl -d a=1 -d b=2 %s/anything",
  "curl --data-urlencode 'q=a b&c' --data-urlencode 'plain=é' %s/anything",
  "curl -G -d q=lua -d page=2 %s/anything",
  "curl --json '{\"a\":' --json '1}' %s/anything",
  "curl -u user:pa:ss -A 'my agent' -e https://example.com/ -b 'a=1; b=2' %s/anything",
  "curl --oauth2-bearer tok123 -X PUT --data-binary 'raw body' -H 'Content-Type: text/plain' %s/anything",
  "curl -sS -XDELETE -H 'X-Empty;' -H 'X-Many: 1' -H 'X-Many: 2' --url %s/anything",
  "curl %s/anything -H 'X-Unicode: é' --compressed",
  "curl -F a=1 -F 'f=@" .. UPLOAD .. ";type=text/plain' -F 't=<" .. UPLOAD .. "' %s/anything",
  -- a value that starts with @ (--form-string): the one-shot line would read it as a file
  "curl --form-string 's=@not-a-file' %s/anything",
}
local NOT_ON_THE_LINE = { [#FORMS] = true }

test("every form: the imported script sends what curl sends (httpbin's echo, User-Agent aside)", function()
  for _, form in ipairs(FORMS) do
    local cmd = string.format(form, HTTPBIN)
    local curl_out, lunet_out, status, script = both(cmd)
    eq(status, "200", cmd)
    local a, b = echoed(curl_out), echoed(lunet_out)
    if cmd:find("--compressed", 1, true) then
      truthy(b.headers["Accept-Encoding"], "--compressed asks for codings: " .. script)
      a.headers["Accept-Encoding"], b.headers["Accept-Encoding"] = nil, nil
    end
    eq(b, a, cmd .. "\n" .. script)
  end
end)

test("--to cli: the one-shot command line sends what curl sends; --to test: a test that passes against the same server", function()
  for i, form in ipairs(FORMS) do
    if NOT_ON_THE_LINE[i] then goto next end
    local cmd = string.format(form, HTTPBIN)
    local code, curl_out = h.run("bash -c " .. q(cmd .. " -s"))
    eq(code, 0, curl_out)
    local c2, line = h.run(q(LUNET) .. " import curl " .. q(cmd) .. " --to cli")
    eq(c2, 0, line)
    line = line:match("([^\n]*)\n$")
    truthy(line:find("^lunet "), line)
    local c3, out = h.run("bash -c " .. q(q(LUNET) .. line:sub(6)))
    eq(c3, 0, line .. "\n" .. out)
    local a, b = echoed(curl_out), echoed(out)
    if cmd:find("--compressed", 1, true) then a.headers["Accept-Encoding"], b.headers["Accept-Encoding"] = nil, nil end
    eq(b, a, cmd .. "\n" .. line)
    if i <= 3 then
      local test_file = h.tmpname() .. "_test.lua"
      local c4, text = h.run(q(LUNET) .. " import curl " .. q(cmd) .. " --to test -o " .. q(test_file))
      eq(c4, 0, text)
      local c5, tap = h.run(q(LUNET) .. " test " .. q(test_file))
      eq(c5, 0, tap .. (h.read_file(test_file) or ""))
      truthy(tap:find("1 passed, 0 failed", 1, true), tap)
    end
    ::next::
  end
  local _, line = h.run(q(LUNET) .. " import curl " .. q(string.format(FORMS[#FORMS], HTTPBIN)) .. " --to cli")
  truthy(line:find("# NOTE: --form-string 's=@not-a-file': the one-shot line reads a value that starts with @ as a file", 1, true), line)
end)

test("a curl command line pasted at the prompt is sent, continued lines and all; its response is _", function()
  local input = h.temp_file(string.format("curl -sS '%s/anything?q=1' \\\n  -H 'X-A: 1' \\\n  --data-raw $'a=1\\n' --bogus\n" ..
    "print('got', _.status, _.json.form.a, _.json.headers['X-A'])\n" ..
    "curl = 5\ncurl -1\n", HTTPBIN))
  local code, out = h.run(q(LUNET) .. " < " .. q(input))
  eq(code, 0, out)
  truthy(out:find("got\t200\t1\n\t1", 1, true), "sent, and kept in _: " .. out)
  truthy(out:find("note: --bogus: not a curl option lunet carries over", 1, true), "what is left out is said: " .. out)
  truthy(out:find("\n4\n", 1, true), "with a global curl, the line is Lua again: " .. out)
  -- A quote left open asks for more; at the end of the input it is said unfinished.
  input = h.temp_file("curl 'http://127.0.0.1:1/x\n")
  code, out = h.run(q(LUNET) .. " < " .. q(input))
  truthy(code ~= 0 and out:find("unfinished", 1, true), out)
end)

test("r:curl() of a request imports back into the same request", function()
  local s = http.session({ auth = { basic = { "user", "pass word" } } })
  local sent = {
    http.post(HTTPBIN .. "/anything?x=1&y=%C3%A9", { json = { a = 1, b = { "x\ny" } }, headers = { ["X-A"] = "v'q" } }),
    s:post(HTTPBIN .. "/anything", { form = { a = "1 2", b = "&=" } }),
    http.post(HTTPBIN .. "/anything", { multipart = { a = "1", at = "@not-a-file", lt = "<not-a-file", f = { file = UPLOAD, content_type = "text/plain" } } }),
    -- (a NUL byte cannot be in a command line's argument: no curl command line holds one)
    http.request({ method = "PATCH", url = HTTPBIN .. "/anything", body = "raw\1bytes\255", content_type = "application/octet-stream" }),
    http.get(HTTPBIN .. "/anything", { headers = { Accept = "text/html", ["X-Empty"] = "" } }),
  }
  for _, r1 in ipairs(sent) do
    local line = r1:curl({ reveal = true })
    local script = h.tmpname() .. ".lua"
    local code, out = h.run(q(LUNET) .. " import curl " .. q(line) .. " -o " .. q(script))
    eq(code, 0, out)
    code, out = h.run(q(LUNET) .. " " .. q(script))
    eq(code, 0, out)
    local body = out:match("^%d+\n(.*)$")
    eq(echoed(body), echoed(r1.body), line .. "\n" .. (h.read_file(script) or ""))
  end
end)

test("-I sends a HEAD; -L follows redirects as curl does, and without it none is followed", function()
  local _, _, status = both(string.format("curl -I %s/status/204", HTTPBIN))
  eq(status, "204")
  local _, body, st = both(string.format("curl -L '%s/redirect-to?url=/anything'", HTTPBIN))
  eq({ st, echoed(body).url }, { "200", HTTPBIN .. "/anything" })
  _, _, st = both(string.format("curl '%s/redirect-to?url=/anything'", HTTPBIN))
  eq(st, "302", "no -L: the redirect itself, as curl")
end)

test("what cannot be carried over is named in the script, never dropped without a word", function()
  local code, out = h.run(q(LUNET) .. " import curl " .. q("curl -F 'f=@x.png;headers=X-A: 1' --trace-ascii t -o out.bin -d @body.json -u alice https://h/x"))
  eq(code, 0, out)
  for _, want in ipairs({ "NOTE: -F 'f=@x.png;headers=X-A: 1': ;headers= is not carried over", "NOTE: --trace-ascii: not a curl option lunet carries over",
                          "NOTE: -o out.bin:", "NOTE: -d @body.json: the body is read from a file", "NOTE: -u alice: curl would ask for the password" }) do
    truthy(out:find(want, 1, true), want .. " in:\n" .. out)
  end
end)

test("bad input: exit 2 naming the problem and its place, nothing written", function()
  local out_file = h.tmpname()
  os.remove(out_file)
  local code, out = h.run(q(LUNET) .. " import curl " .. q("curl 'https://h/x") .. " -o " .. q(out_file))
  eq(code, 2, out)
  truthy(out:find("a '...' quote is not closed at line 1, column 6", 1, true), out)
  eq(io.open(out_file), nil, "no file")
  code, out = h.run(q(LUNET) .. " import curl " .. q("wget https://h/x"))
  eq(code, 2); truthy(out:find("not a curl command line", 1, true), out)
  code, out = h.run(q(LUNET) .. " import curl " .. q("curl -H"))
  eq(code, 2); truthy(out:find("option '-H' needs a value", 1, true), out)
  code, out = h.run(q(LUNET) .. " import yaml x.json")
  eq(code, 2); truthy(out:find("'yaml'", 1, true), out)
  code, out = h.run(q(LUNET) .. " import curl " .. q("curl h/x") .. " --to pdf")
  eq(code, 2); truthy(out:find("--to takes script, test or cli, got 'pdf'", 1, true), out)
  -- From standard input, as a heredoc pastes it.
  code, out = h.run("printf '%s' " .. q("curl \\\n  " .. HTTPBIN .. "/anything \\\n  -H 'X-A: 1'") .. " | " .. q(LUNET) .. " import curl -")
  eq(code, 0, out)
  truthy(out:find('["X-A"] = "1"', 1, true), out)
end)

h.done()
