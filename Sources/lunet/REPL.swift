import CLunetLua
import CLineEditor
import Glibc
import LunetCore
import LunetLua

/// The prompt. On a terminal it is GNU readline's callback interface fed from the event loop,
/// so requests started in the background go on (and print above the prompt) while you type;
/// piped input is read as plain lines, without a prompt or echo.
final class REPL {
    /// readline calls plain C functions; they find the prompt here.
    nonisolated(unsafe) static var active: REPL?

    let host: LuaHost
    let terminal: Bool
    /// readline is open: history and completion are on.
    private var editing = false
    let color: Bool
    private var pending = ""                               // an incomplete chunk so far
    private var running: (task: LuaTask, code: String)?     // the line being run
    private var quit = false
    private var promptShown = false
    private var interruptsOnEmptyLine = 0
    private var historyPath: String?
    private var newHistoryEntries: Int32 = 0

    init(host: LuaHost) {
        self.host = host
        terminal = isatty(0) != 0 && isatty(1) != 0
        color = terminal && getenv("NO_COLOR") == nil
    }

    func run() -> Int32 {
        // lunet.repl notes what the globals are before the first line (`arg`: not the user's).
        _ = host.callModule("lunet.repl", "started", [])
        guard terminal else { return runPlain(prompt: false) }
        var reason = [CChar](repeating: 0, count: 320)
        guard le_open(&reason, reason.count) != 0 else {
            host.reportError("\(String(cString: reason)); line editing and history are off")
            return runPlain(prompt: true)
        }
        editing = true
        return runTerminal()
    }

    // MARK: piped input (or a terminal without readline)

    private func runPlain(prompt: Bool) -> Int32 {
        var status: Int32 = 0
        while true {
            if prompt {
                fputs(pending.isEmpty ? "lunet> " : "   ..> ", stdout)
                fflush(stdout)
            }
            guard let line = Swift.readLine(strippingNewline: true) else { break }
            if pending.isEmpty && line.hasPrefix(".") {
                // .load's dofile is part of what .save replays, but not a line of history.
                if let code = command(line), case .done(let ok) = host.evaluate(code, color: false) {
                    remember(code, ok: ok, history: false)
                }
                continue
            }
            pending = pending.isEmpty ? line : pending + "\n" + line
            switch host.evaluate(pending, color: false) {
            case .incomplete:
                continue
            case .done(let ok):
                remember(pending, ok: ok)
                if !ok { status = 1 }
                pending = ""
            }
        }
        if !pending.isEmpty { host.reportError("the input ended inside an unfinished chunk") ; status = 1 }
        return status
    }

    // MARK: terminal

    private func runTerminal() -> Int32 {
        REPL.active = self
        // "." and ":" stay inside a word so `http.ge` and `api:po` complete as one.
        le_configure("lunet", " \t\n\"'`@$><=;|&{(,+-*/%^~#[]", replComplete)
        loadHistory()
        installPrint()
        let signalFD = PromptSignals.install()
        if signalFD >= 0 { host.loop.watch(signalFD) { [unowned self] in self.handleSignals() } }
        if !host.isClosed { print(colored("lunet \(LunetCore.Lunet.version) — .help for help, Ctrl-D to leave", "90")) }
        showPrompt()
        while !quit {
            host.loop.runOnce()
            if let r = running, r.task.state != "pending" { finishLine() }
        }
        hidePrompt()
        saveHistory()
        return 0
    }

    private func colored(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    private var promptText: String {
        let base = pending.isEmpty ? "lunet> " : "   ..> "
        // \u{1}...\u{2} tell readline the colour codes take no room on the line.
        return color ? "\u{1}\u{1B}[36m\u{2}\(base)\u{1}\u{1B}[0m\u{2}" : base
    }

    private func showPrompt() {
        le_callback_handler_install(promptText, replLineHandler)
        host.loop.watch(0) { le_callback_read_char() }
        promptShown = true
    }

    private func hidePrompt() {
        guard promptShown else { return }
        host.loop.unwatch(0)
        le_callback_handler_remove()
        promptShown = false
    }

    fileprivate func received(_ line: UnsafeMutablePointer<CChar>?) {
        guard let line else {            // Ctrl-D
            quit = true
            hidePrompt()
            print()
            return
        }
        let text = String(cString: line)
        free(line)
        interruptsOnEmptyLine = 0
        submit(text)
    }

    private func submit(_ text: String) {
        if pending.isEmpty && text.hasPrefix(".") {
            hidePrompt()
            if let code = command(text) { start(code, history: false) } else { showPrompt() }
            return
        }
        pending = pending.isEmpty ? text : pending + "\n" + text
        if pending.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" }) {
            pending = ""
            return
        }
        hidePrompt()
        start(pending, history: true)
    }

    /// Whether the running line goes into the history (a dot-command's code does not).
    private var historyLine = true

    private func start(_ code: String, history: Bool) {
        historyLine = history
        lunet_interrupt_clear()
        lunet_interrupt_arm(host.L)
        switch host.startLine(code) {
        case .incomplete:
            lunet_interrupt_disarm(host.L)
            showPrompt()                       // pending stays: ask for more
        case .failed:
            lunet_interrupt_disarm(host.L)
            remember(code, ok: false, history: history)
            pending = ""
            showPrompt()
        case .started(let task):
            running = (task, code)
            pending = ""
        }
    }

    private func finishLine() {
        guard let (task, code) = running else { return }
        running = nil
        let ok = host.showLine(task, color: color, code: code)
        lunet_interrupt_disarm(host.L)
        lunet_interrupt_clear()
        _ = PromptSignals.drain()              // a Ctrl-C that stopped this line is spent
        remember(code, ok: ok, history: historyLine)
        showPrompt()
    }

    // MARK: signals

    private func handleSignals() {
        for sig in PromptSignals.drain() {
            switch sig {
            case SIGINT:
                if let r = running {
                    // Cancel what the line started; a runaway loop is stopped by the hook.
                    lunet_interrupt_clear()
                    r.task.cancel("interrupted (Ctrl-C)")
                } else {
                    lunet_interrupt_clear()
                    let empty = pending.isEmpty && le_line_is_empty() != 0
                    interruptsOnEmptyLine = empty ? interruptsOnEmptyLine + 1 : 0
                    le_discard_line_after_interrupt(SIGINT)
                    pending = ""
                    if interruptsOnEmptyLine >= 2 {
                        quit = true
                        return
                    }
                    if empty { print(colored("(Ctrl-C again or Ctrl-D to leave)", "90")) }
                    hidePrompt()
                    showPrompt()
                }
            case SIGWINCH:
                le_resize_terminal()
            case SIGTSTP:
                if promptShown { le_cleanup_after_signal() }
                PromptSignals.restoreDefault(SIGTSTP)
                raise(SIGTSTP)                     // stops here until `fg`
                _ = PromptSignals.install()
                if promptShown { le_reset_after_signal() }
            default:
                break
            }
        }
    }

    // MARK: output above the prompt

    /// `print` that keeps the prompt intact: what background tasks print appears above it.
    private func installPrint() {
        host.register("__lunet_prompt_write") { [unowned self] s in
            let text = s.string(1) ?? ""
            if self.promptShown {
                le_clear_visible_line()
                fputs(text, stdout)
                fflush(stdout)
                le_redraw_after_output()
            } else {
                fputs(text, stdout)
                fflush(stdout)
            }
            return 0
        }
        // Run as a chunk of its own, not as a prompt line: the user's first line is input#1.
        host.runSetup("""
            local write = __lunet_prompt_write
            __lunet_prompt_write = nil
            -- Streams opened at the prompt print what arrives (websocket messages).
            debug.getregistry()["lunet.prompt"] = true
            function print(...)
              local n, parts = select("#", ...), {}
              for i = 1, n do parts[i] = tostring((select(i, ...))) end
              write(table.concat(parts, "\\t") .. "\\n")
            end
            """, name: "=(prompt setup)")
    }

    // MARK: dot-commands

    /// Runs a dot-command; returns Lua code to run as a line when the command needs one.
    private func command(_ line: String) -> String? {
        var historyLines: [LuaValue] = []
        if editing {
            for i in 0..<le_history_length() {
                if let text = le_history_line(i) { historyLines.append(.string(String(cString: text))) }
            }
        }
        switch host.callModule("lunet.repl", "command", [.string(line), .array(historyLines), .boolean(color)]) {
        case .failure(let f):
            host.reportError(f.description)
        case .success(let results):
            if case .string(let text)? = results.first { print(text) }
            else if case .table(let t)? = results.first, case .string(let file)? = t["load_file"] {
                return "dofile(\(luaQuoted(file)))"
            } else if results.count > 1, case .string(let problem) = results[1] { host.reportError(problem) }
        }
        return nil
    }

    private func luaQuoted(_ s: String) -> String {
        "\"" + s.flatMap { c -> [Character] in c == "\\" || c == "\"" ? ["\\", c] : (c == "\n" ? ["\\", "n"] : [c]) } .map(String.init).joined() + "\""
    }

    // MARK: history

    /// Records a line for .save and, with `history`, for the history.
    private func remember(_ code: String, ok: Bool, history: Bool = true) {
        _ = host.callModule("lunet.repl", "record", [.string(code), .boolean(ok)])
        guard editing, history else { return }
        if case .success(let r) = host.callModule("lunet.repl", "may_remember", [.string(code)]), r.first == .boolean(true) {
            le_add_history(code)
            newHistoryEntries += 1
        }
    }

    private func loadHistory() {
        let state = getenv("XDG_STATE_HOME").map { String(cString: $0) } ?? (getenv("HOME").map { String(cString: $0) + "/.local/state" } ?? "")
        guard !state.isEmpty else { return }
        let dir = state + "/lunet"
        _ = mkdir(state, 0o755)
        _ = mkdir(dir, 0o700)
        historyPath = dir + "/history"
        le_stifle_history(1000)
        _ = le_read_history(historyPath)
    }

    private func saveHistory() {
        guard let path = historyPath, newHistoryEntries > 0 else { return }
        if access(path, F_OK) != 0 { close(open(path, O_CREAT | O_WRONLY, 0o600)) }
        _ = le_append_history(newHistoryEntries, path)
        _ = le_history_truncate_file(path, 1000)
    }

    // MARK: completion

    /// Matches for the text from `start` (where readline's word begins) to `end` (the cursor).
    fileprivate static func complete(_ start: Int32, _ end: Int32) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        le_completion_plain()                     // never fall back to file names
        guard let repl = REPL.active, let buffer = le_line_buffer() else { return nil }
        let before = String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: Int(end)), as: UTF8.self)
        guard case .success(let results) = repl.host.callModule("lunet.repl", "complete", [.string(before), .integer(Int(start))]),
              case .array(let items)? = results.first else { return nil }
        let candidates = items.compactMap(\.stringValue)
        guard !candidates.isEmpty else { return nil }
        // readline wants a malloc'd, NULL-terminated array: the common prefix, then the matches.
        let matches = malloc(MemoryLayout<UnsafeMutablePointer<CChar>?>.stride * (candidates.count + 2))!
            .assumingMemoryBound(to: UnsafeMutablePointer<CChar>?.self)
        var prefix = candidates[0]
        for c in candidates.dropFirst() { while !c.hasPrefix(prefix) { prefix.removeLast() } }
        matches[0] = strdup(prefix)
        for (i, c) in candidates.enumerated() { matches[i + 1] = strdup(c) }
        matches[candidates.count + 1] = nil
        return matches
    }
}

// readline's callbacks must be plain functions (C function pointers).
private func replLineHandler(_ line: UnsafeMutablePointer<CChar>?) {
    REPL.active?.received(line)
}

private func replComplete(_ text: UnsafePointer<CChar>?, _ start: Int32, _ end: Int32) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
    REPL.complete(start, end)
}
