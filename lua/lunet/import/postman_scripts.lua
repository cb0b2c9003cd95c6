--- Postman's test scripts are JavaScript; lunet translates only the forms whose meaning is
--- certain, each into one `expect` line, and the renderer keeps every script as a comment beside
--- its request. Pure: a script's text in, Lua lines out.
---   pm.response.to.have.status(N)                      expect(r).to.have_status(N)
---   pm.response.to.be.ok                               expect(r).to.have_status(200)
---   pm.expect(pm.response.code).to.eql(N) (equal, be.equal)   expect(r).to.have_status(N)
---   pm.response.to.have.header("Name")                 expect(r).to.have_header("Name")
---   tests["..."] = responseCode.code === N (or ==)     expect(r).to.have_status(N)   (the sandbox's
---   tests["..."] = responseBody.has("text")            expect(r.body).to.contain("text")   old API)
---   pm.expect(J.a.b[0]).to.eql(LITERAL) (equal)        expect(r.json.a.b[1]).to.equal(LITERAL)
--- where J is pm.response.json() or a variable assigned it (`var data = pm.response.json();`), a
--- path is names and [N] indices (JavaScript's 0 is Lua's 1) and LITERAL a number, a quoted string,
--- true, false or null. Anything else (deep equality of objects, chained `.and`, expressions) is
--- left to the comment.
local M = {}

-- A JavaScript literal as Lua, or nil when it is not one lunet can be sure of.
local function literal(js)
  js = js:match("^%s*(.-)%s*$")
  if js:match("^%-?%d+%.?%d*$") then return js end
  if js == "true" or js == "false" then return js end
  if js == "null" then return "json.null" end
  local q, body = js:match("^(['\"])(.*)%1$")
  if q and not body:find("[\\" .. q .. "]") then return string.format("%q", body) end
  return nil
end

-- A path after the JSON value (".a.b[0]", "['x']") as Lua indexing, or nil.
local function path(js)
  local out, rest = {}, js
  while rest ~= "" do
    local name, after = rest:match("^%.([%a_][%w_]*)(.*)$")
    if name then out[#out + 1] = "." .. name; rest = after
    else
      local index, after2 = rest:match("^%[(%d+)%](.*)$")
      if index then out[#out + 1] = "[" .. (tonumber(index) + 1) .. "]"; rest = after2
      else
        local key, after3 = rest:match("^%[['\"]([^'\"]*)['\"]%](.*)$")
        if not key then return nil end
        out[#out + 1] = "[" .. string.format("%q", key) .. "]"; rest = after3
      end
    end
  end
  return table.concat(out)
end

--- The expect lines of a test script, in its order.
function M.translate(text)
  local out = {}
  -- Variables that hold the response's JSON.
  local holders = {}
  for name in text:gmatch("[%a_$][%w_$]*%s*=%s*pm%.response%.json%(%)") do holders[name:match("^[%w_$]+")] = true end
  for stmt in text:gmatch("[^;\n]+") do
    local s = stmt:match("^%s*(.-)%s*$")
    local n = s:match("pm%.response%.to%.have%.status%((%d%d%d)%)")
      or s:match("pm%.expect%(pm%.response%.code%)%.to%.eql%((%d%d%d)%)")
      or s:match("pm%.expect%(pm%.response%.code%)%.to%.equal%((%d%d%d)%)")
      or s:match("pm%.expect%(pm%.response%.code%)%.to%.be%.equal%((%d%d%d)%)")
      or s:match("^tests%[.-%]%s*=%s*responseCode%.code%s*===?%s*(%d%d%d)$")
    local has = s:match("^tests%[.-%]%s*=%s*responseBody%.has%((['\"][^'\"\\]*['\"])%)$")
    if n then out[#out + 1] = "expect(r).to.have_status(" .. n .. ")"
    elseif has then out[#out + 1] = "expect(r.body).to.contain(" .. string.format("%q", has:sub(2, -2)) .. ")"
    elseif s:match("pm%.response%.to%.be%.ok%f[^%w_]") or s:match("pm%.response%.to%.be%.ok$") then out[#out + 1] = "expect(r).to.have_status(200)"
    else
      local header = s:match("pm%.response%.to%.have%.header%((['\"][^'\"]+['\"])%)")
      if header then out[#out + 1] = "expect(r).to.have_header(" .. string.format("%q", header:sub(2, -2)) .. ")"
      else
        local subject, verb, lit = s:match("pm%.expect%(([^()]+%(?%)?[^()]*)%)%.to%.(%a+)%((.+)%)%s*%)?$")
        if subject and (verb == "eql" or verb == "equal") then
          local rest = subject:match("^pm%.response%.json%(%)(.*)$")
          local base = rest and "pm.response.json()"
          if not base then
            local holder, r2 = subject:match("^([%a_$][%w_$]*)(.*)$")
            if holder and holders[holder] then base, rest = holder, r2 end
          end
          local lua_path = base and path(rest or "")
          local value = lit and literal(lit:gsub("%)%s*$", ""))
          if lua_path and value then out[#out + 1] = "expect(r.json" .. lua_path .. ").to.equal(" .. value .. ")" end
        end
      end
    end
  end
  return out
end

return M
