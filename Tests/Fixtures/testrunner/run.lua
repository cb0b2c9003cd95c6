-- Runs the test runner as `lunet test` does, until the command line has that subcommand:
--   lunet Tests/Fixtures/testrunner/run.lua [paths] [options]
-- Child processes of --jobs are started the same way (opts.command).
local i = 0
while arg[i - 1] ~= nil do i = i - 1 end
local lunet = arg[i]
os.exit(require("lunet.testing").main(arg, { lunet = lunet, command = { lunet, arg[0] } }))
