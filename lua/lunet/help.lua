--- `help(value)` at the prompt and in scripts: what a value offers. An OpenAPI operation prints
--- its parameters, body and responses; an api its operations; anything else its type and, for
--- a table, its fields and methods.
return function(v)
  if type(v) == "table" then
    local mt = getmetatable(v)
    local text_of = mt and rawget(mt, "__index")
    if type(v.help_text) == "function" then print(v:help_text()) return end
    if type(v.operations) == "function" and type(v.operation_ids) == "function" then
      for _, op in ipairs(v:operations()) do
        print(string.format("%-24s %-7s %s%s", op.id, op.method, op.path, op.summary and ("  " .. op.summary) or ""))
      end
      return
    end
    local names = {}
    for k in pairs(v) do if type(k) == "string" then names[#names + 1] = k end end
    if type(text_of) == "table" then for k in pairs(text_of) do if type(k) == "string" and not k:match("^__") then names[#names + 1] = k end end end
    table.sort(names)
    print(tostring(v) .. ": " .. table.concat(names, ", "))
    return
  end
  print(type(v) .. ": " .. tostring(v))
end
