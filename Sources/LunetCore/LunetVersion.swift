/// lunet's version: the User-Agent a session sends, `lunet --version`, the REPL's banner and
/// `lunet.version` in Lua.
public enum Lunet {
    public static let version = "0.1.0"
}
