import CReadline
import Glibc
import LunetCore
import LunetLua

/// The interactive prompt. This first version reads a line at a time (readline on a terminal,
/// plain lines otherwise), runs each as an expression or a statement, and prints the values.
struct REPL {
    let host: LuaHost

    func run() -> Int32 {
        let terminal = isatty(0) != 0
        var pending = ""
        while true {
            let prompt = pending.isEmpty ? "lunet> " : "   ..> "
            guard let line = readLine(prompt: prompt, terminal: terminal) else { break }
            pending += pending.isEmpty ? line : "\n" + line
            switch host.evaluate(pending) {
            case .incomplete:
                continue
            case .done:
                if terminal, !pending.isEmpty { add_history(pending) }
                pending = ""
            }
        }
        if terminal { print() }
        return 0
    }

    private func readLine(prompt: String, terminal: Bool) -> String? {
        if terminal {
            guard let p = readline(prompt) else { return nil }
            defer { free(p) }
            return String(cString: p)
        }
        return Swift.readLine(strippingNewline: true)
    }
}
