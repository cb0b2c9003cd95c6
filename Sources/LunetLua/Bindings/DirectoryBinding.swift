import CLunetLua
import LunetLuaStack
import Glibc

/// Folders lunet makes for files that hold secrets (named sessions): private to the user.
enum DirectoryBinding {
    /// core.make_private_dirs(path) -> true, or nil and a message: `path` and any missing parent,
    /// each made with mode 0700 (existing folders are left as they are).
    static let makePrivateDirs: lunet_SwiftFunction = { L in
        let s = LuaStack(L!)
        let path = s.string(1)!   // declared: a string (functions, below)
        guard !path.isEmpty else { return LuaErrorObject.badArgument(L!, 1, "make_private_dirs", "path: a folder's path expected, got \"\"") }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                s.pushNil()
                s.push("cannot make the folder \(prefix): \(String(cString: strerror(errno)))")
                return 2
            }
            prefix += "/"
        }
        s.push(true)
        return 1
    }
}

extension DirectoryBinding {
    /// lunet.core's functions for private directories (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("make_private_dirs", makePrivateDirs, .string("path")),
    ]
}
