// An example of embedding lunet in a Swift command-line tool: it exposes one Swift function,
// `tool.stamp(text)`, to the Lua scripts it runs, and runs the script given on its command line
// (which may make requests with http.*).
//
//   swift build --product lunet-embed-example
//   .build/debug/lunet-embed-example script.lua
import Glibc
import Lunet

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: lunet-embed-example SCRIPT.lua")
    exit(2)
}

let host: LuaHost
do {
    host = try LuaHost()
} catch {
    print("could not start lunet: \(error)")
    exit(1)
}

// A Swift function for the scripts, through lunet's trampoline: a thrown error becomes a Lua
// error object the script can catch with pcall.
host.registerModule("tool", [
    "stamp": { stack in
        guard let text = stack.string(1) else { throw LunetError(.argument, "tool.stamp: a string, please") }
        stack.push("[embed-tool] " + text)
        return 1
    },
])

let status = host.run(.file(arguments[1]))
host.close()
exit(status)
