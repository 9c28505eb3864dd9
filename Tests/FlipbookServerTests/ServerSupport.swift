import AsyncHTTPClient
import Foundation
import FlipbookTestSupport
import FlipbookServer
import FlipbookService
import Logging
import NIOCore
import ServiceLifecycle
import Testing

/// Paths and helper programs for the server tests.
enum Env {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static var samples: String { packageRoot.appendingPathComponent("samples").path }
    static var flipbookBinary: String { packageRoot.appendingPathComponent(".build/debug/flipbook").path }

    /// The venv's python (FLIPBOOK_PYTHON from `make test`), else .build/venv, else the system's.
    static var python: String {
        if let p = ProcessInfo.processInfo.environment["FLIPBOOK_PYTHON"], FileManager.default.isExecutableFile(atPath: p) { return p }
        let venv = packageRoot.appendingPathComponent(".build/venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3"
    }

    struct Output {
        let status: Int32
        let stdout: Data
        let stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs a program to completion (stdout and stderr drained concurrently), waiting on a thread of its own:
    /// these tests are async and the in-process server needs the cooperative pool.
    @discardableResult
    static func run(_ path: String, _ arguments: [String], stdin: Data? = nil) async throws -> Output {
        try await offPool { try runBlocking(path, arguments, stdin: stdin) }
    }

    private static func runBlocking(_ path: String, _ arguments: [String], stdin: Data?) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try? input.fileHandleForWriting.close()
        let box = ErrBox()
        let reader = Thread { box.data = err.fileHandleForReading.readDataToEndOfFile(); box.done.signal() }
        reader.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        box.done.wait()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: data, stderr: String(decoding: box.data, as: UTF8.self))
    }

    private final class ErrBox: @unchecked Sendable {
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }

    /// A fresh temporary folder.
    static func temporaryFolder(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "flipbook-server-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A served root: copies of samples/ (the project's own files) plus fixtures the tests need.
    static func makeRoot(_ name: String) throws -> String {
        let root = try temporaryFolder(name)
        for file in try FileManager.default.contentsOfDirectory(atPath: samples) {
            try FileManager.default.copyItem(atPath: samples + "/" + file, toPath: root + "/" + file)
        }
        try Data("hello, not media\n".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: root + "/.hidden.jpg"))
        try FileManager.default.createDirectory(atPath: root + "/.git", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: samples + "/gray-1000x700.jpg", toPath: root + "/.git/inside.jpg")
        try FileManager.default.createDirectory(atPath: root + "/sub dir", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: samples + "/gray-1000x700.jpg", toPath: root + "/sub dir/gray ü.jpg")
        // A GIF whose header declares a 65535 x 65535 canvas: a decompression bomb by its header.
        var bomb: [UInt8] = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00]
        bomb += [0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]
        try Data(bomb).write(to: URL(fileURLWithPath: root + "/bomb.gif"))
        return root
    }
}

/// An in-process `flipbook serve` on 127.0.0.1 and an ephemeral port, run in its own ServiceGroup.
final class TestServer: Sendable {
    let server: FlipbookHTTPServer
    let port: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>
    var base: String { "http://127.0.0.1:\(port)" }

    init(root: String, configure: (inout FlipbookHTTPServer.Configuration) -> Void = { _ in }) async throws {
        var configuration = FlipbookHTTPServer.Configuration(root: root)
        configuration.port = 0
        configure(&configuration)
        var logger = Logger(label: "test.serve")
        logger.logLevel = .warning
        let server = try FlipbookHTTPServer(configuration: configuration, logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try server.makeService { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
        task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        self.port = port
        self.server = server
        self.group = group
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    struct Reply {
        let status: Int
        let headers: [(String, String)]
        let body: [UInt8]
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var json: [String: String] {
            (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: String]) ?? [:]
        }
    }

    /// One request with AsyncHTTPClient.
    func request(_ target: String, method: String = "GET", headers: [(String, String)] = []) async throws -> Reply {
        var request = HTTPClientRequest(url: base + target)
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 256 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                     body: Array(body.readableBytesView))
    }

    /// One request with curl, the target sent exactly as written (`--path-as-is`): status code and body.
    func curl(_ target: String, extra: [String] = []) async throws -> (status: Int, body: String) {
        let out = try await Env.run("/usr/bin/curl", ["-s", "--path-as-is", "-o", "-", "-w", "\n%{http_code}"] + extra + [base + target])
        var lines = out.text.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.removeLast()) ?? 0
        return (status, lines.joined(separator: "\n"))
    }

    /// The value of a Prometheus sample line (`name{labels}`), 0 if absent.
    func metric(_ series: String) async throws -> Double {
        let text = String(decoding: try await request("/metrics").body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.split(separator: " ").last ?? "0") ?? 0
        }
        return 0
    }
}

/// Sends raw bytes over TCP with Python's socket module and returns the status line's code (or 0).
func rawHTTPStatus(port: Int, request: [UInt8]) async throws -> Int {
    let script = """
    import socket, sys
    data = sys.stdin.buffer.read()
    s = socket.create_connection(("127.0.0.1", \(port)))
    s.sendall(data)
    reply = b""
    while b"\\r\\n" not in reply:
        chunk = s.recv(4096)
        if not chunk: break
        reply += chunk
    print(reply.split(b"\\r\\n")[0].decode("latin-1"))
    """
    let out = try await Env.run(Env.python, ["-c", script], stdin: Data(request))
    let parts = out.text.split(separator: " ")
    return parts.count > 1 ? Int(parts[1]) ?? 0 : 0
}

/// ffprobe's view of a media file's first video stream: codec, width, height.
func ffprobe(_ bytes: [UInt8], suffix: String) async throws -> (codec: String, width: Int, height: Int) {
    let path = NSTemporaryDirectory() + "flipbook-probe-\(UUID().uuidString.prefix(8)).\(suffix)"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let out = try await Env.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
                                               "-of", "csv=p=0", path])
    let fields = out.text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
    guard fields.count == 3 else { return ("", 0, 0) }
    return (String(fields[0]), Int(fields[1]) ?? 0, Int(fields[2]) ?? 0)
}

/// Top-level ISO-BMFF box types in order (read independently of our muxer: 32-bit size + type).
func topLevelBoxes(_ bytes: [UInt8]) -> [String] {
    var out: [String] = []
    var offset = 0
    while offset + 8 <= bytes.count {
        var size = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
        if size == 1, offset + 16 <= bytes.count {
            size = bytes[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) }
        }
        out.append(type)
        guard size >= 8 else { break }
        offset += size
    }
    return out
}
