import Glibc
import LunetCore
import LunetLua

// The `lunet` executable: parse the command line, make a host, run what was asked, and close
// the host before leaving (so cookie files are saved and every transfer is stopped cleanly).

signal(SIGPIPE, SIG_IGN)
// A file-size limit (ulimit -f) must fail the write with EFBIG, which downloads report as kind
// "io", instead of killing the process.
signal(SIGXFSZ, SIG_IGN)

let invocation: Invocation
do {
    invocation = try Invocation.parse(CommandLine.arguments)
} catch {
    writeError("lunet: \(error)\n")
    exit(2)
}

switch invocation.mode {
case .help:
    print(Invocation.usage)
    exit(0)
case .version:
    print("lunet \(LunetCore.Lunet.version) (\(LuaHost.luaRelease)) \(CurlGlobal.version)")
    exit(0)
default:
    break
}

let host: LuaHost
do {
    host = try LuaHost()
} catch {
    writeError("lunet: \(error)\n")
    exit(1)
}

var status: Int32 = 0
var scriptName = ""
if case .script(let path) = invocation.mode { scriptName = path }
host.setScriptArguments(interpreter: invocation.interpreterArguments, script: scriptName, arguments: invocation.scriptArguments)

for (i, chunk) in invocation.chunks.enumerated() where status == 0 {
    status = host.run(.string(chunk, name: invocation.chunks.count == 1 ? "=(command line)" : "=(command line \(i + 1))"))
}
if status == 0, case .script(let path) = invocation.mode, !path.isEmpty {
    status = host.run(.file(path), arguments: invocation.scriptArguments)
}
if invocation.mode == .repl || invocation.interactive {
    status = REPL(host: host).run()
}
host.close()
exit(status)

func writeError(_ text: String) {
    var t = text
    t.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
}
