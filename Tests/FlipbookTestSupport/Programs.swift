import Foundation

/// The package root (two levels above this file).
public let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Shared by the test targets: runs a helper program (ffmpeg, ffprobe, scripts) and collects its output; stderr is drained on another
/// thread so a chatty child never blocks on a full pipe.
public enum Run {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    @discardableResult
    public static func program(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let box = Box()
        let reader = Thread { box.data = err.fileHandleForReading.readDataToEndOfFile(); box.done.signal() }
        reader.start()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        box.done.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
                      stderr: String(decoding: box.data, as: UTF8.self))
    }

    private final class Box: @unchecked Sendable {
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }

    public static func which(_ tool: String) -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin", "/sbin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(tool)") {
            return "\(dir)/\(tool)"
        }
        return nil
    }

    /// The venv's Python ($FLIPBOOK_PYTHON, else .build/venv, else the system one).
    public static var python: String {
        if let env = ProcessInfo.processInfo.environment["FLIPBOOK_PYTHON"], FileManager.default.isExecutableFile(atPath: env) { return env }
        let venv = packageRoot.appendingPathComponent(".build/venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3"
    }
}

/// A temporary directory removed when the value goes away.
public final class TemporaryDirectory {
    public let url: URL
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

public struct ToolFailed: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// ffmpeg with `-y -loglevel error`, failing the test on a non-zero status.
public func ffmpeg(_ arguments: [String]) throws {
    let result = try Run.program("/usr/bin/ffmpeg", ["-y", "-loglevel", "error"] + arguments)
    guard result.status == 0 else { throw ToolFailed(description: "ffmpeg \(arguments): \(result.stderr)") }
}
