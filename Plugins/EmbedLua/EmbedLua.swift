import Foundation
import PackagePlugin

/// Compiles every file under lua/ to Lua bytecode at build time and hands the target a Swift
/// file holding it (and the source, for a runtime whose bytecode format differs). New files are
/// found on every build; the tool rewrites its output only when the content changed.
@main
struct EmbedLua: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let luaDir = root.appendingPathComponent("lua")
        var files: [URL] = []
        if let walker = FileManager.default.enumerator(at: luaDir, includingPropertiesForKeys: nil) {
            for case let url as URL in walker where url.pathExtension == "lua" { files.append(url) }
        }
        files.sort { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedLua.swift")
        return [.buildCommand(
            displayName: "Compiling lua/ to bytecode",
            executable: try context.tool(named: "lunet-luac").url,
            arguments: [output.path, root.path] + files.map(\.path),
            inputFiles: files,
            outputFiles: [output]
        )]
    }
}
