-- A spinning test without its own timeout: `lunet test --timeout N` stops it.
test("spins under the default timeout", function()
  local n = 0
  while true do n = n + 1 end
end)
