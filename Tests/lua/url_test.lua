-- The url module (lua/lunet/url.lua): parse and build, and what they do with authorities that
-- have no valid host and port (finding F3, docs/reliability.md "Fuzzing"; reproducers in
-- Fuzz/regressions/fuzz-url/F3-*).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails
local url = require "lunet.url"

-- build(parse(s)) reads back as itself: parse of it gives the same parts.
local function round_trip(s)
  local b = url.build(url.parse(s))
  eq(url.build(url.parse(b)), b, "build(parse(" .. s .. ")) built again")
  return b
end

test("parse splits a URL; build writes it back", function()
  local u = url.parse("HTTP://us%20er:p%3Aw@example.com:8080/a/b?x=1&y=2#top")
  eq({ u.scheme, u.user, u.password, u.host, u.port, u.path, u.query, u.fragment },
     { "http", "us er", "p:w", "example.com", 8080, "/a/b", "x=1&y=2", "top" }, "parts")
  eq(math.type(u.port), "integer", "the port's type")
  eq(u.params, { x = "1", y = "2" }, "params")
  eq(url.build(u), "http://us%20er:p%3Aw@example.com:8080/a/b?x=1&y=2#top", "built")
  local v6 = url.parse("http://[::1]:80/p")
  eq({ v6.host, v6.port }, { "::1", 80 }, "an IPv6 literal")
  eq(url.build(v6), "http://[::1]:80/p", "built with its brackets")
end)

test("a port is digits from 0 to 65535; an empty one is no port", function()
  eq(url.parse("http://h:65535/").port, 65535, "the largest")
  eq(url.parse("http://h:0/").port, 0, "zero")
  eq(url.parse("http://h:0080/").port, 80, "leading zeros")
  eq(url.parse("http://h:/x").port, nil, "empty")
  eq(round_trip("http://h:/x"), "http://h/x", "empty, built")
  local e = fails("argument", function() url.parse("http://h:65536/") end, "65536")
  truthy(string.find(e.message, "invalid port in 'http://h:65536/': 65536 is above 65535", 1, true), e.message)
  -- F3: 20 digits read as the float 1e+20, which build wrote as "h:1e+20".
  e = fails("argument", function() url.parse("http://h:99999999999999999999/") end, "20 digits")
  truthy(string.find(e.message, "99999999999999999999 is above 65535", 1, true), e.message)
end)

test("an authority without a valid host and port is an error, not dropped", function()
  -- F3: "h:p" was dropped (no host), and build wrote the path "//x:y/z" as an authority.
  local e = fails("argument", function() url.parse("a://h:p//x:y/z") end, "a port that is not digits")
  truthy(string.find(e.message, "invalid port in 'a://h:p//x:y/z': 'p' is not digits", 1, true), e.message)
  fails("argument", function() url.parse("http://h:1:2/") end, "two ports")
  -- F3: "[x]0" was kept as a host, brackets and all, and read back as host "x", port 0.
  e = fails("argument", function() url.parse("http://[x]0:/p") end, "text after an IP literal")
  truthy(string.find(e.message, "'0:' follows the IP literal", 1, true), e.message)
  fails("argument", function() url.parse("http://[::1/p") end, "an IP literal without ']'")
  -- F3 again: "[[x]" was an IP literal "[x", which build wrote without brackets ("[x").
  fails("argument", function() url.parse("http://[[x]/") end, "a '[' inside an IP literal")
  fails("argument", function() url.parse("http://a[b]/") end, "brackets in a name")
  fails("argument", function() url.parse("http://[\198\2070]0:/881p") end, "the fuzzer's first input")
end)

test("build writes nothing that reads back as another URL", function()
  -- Without an authority a path that starts with "//" would read as one (F3's second half).
  eq(url.build{ path = "//x:y/z" }, "/.//x:y/z", "no scheme")
  eq(url.build{ scheme = "a", path = "//x" }, "a:/.//x", "with a scheme")
  eq(url.parse(url.build{ scheme = "a", path = "//x" }).host, nil, "read back: no host")
  -- Without a scheme a first segment with a colon would read as one.
  eq(url.build{ path = "a:b/c" }, "./a:b/c", "a colon in the first segment")
  eq(url.parse(url.build{ path = "a:b/c" }).scheme, nil, "read back: no scheme")
  eq(url.build{ host = "h", path = "a" }, "//h/a", "a relative path after a host gets its '/'")
  eq(url.build{ host = "h", port = "8080" }, "//h:8080", "a port as digits")
  eq(url.build{ host = "h", port = 80.0 }, "//h:80", "a float port with an integer value")
  fails("argument", function() url.build{ host = "h", port = 1e20 } end, "a port out of range")
  fails("argument", function() url.build{ host = "h", port = "x" } end, "a port that is not digits")
  for _, s in ipairs{ "http://h", "http://h/", "//h", "http:///p", "http://@h/", "http://u:@h/",
                      "http://[x]/", "a:b", "/p?q#f", "http://h/?", "mailto:a@b", "" } do
    round_trip(s)
  end
end)

h.done()
