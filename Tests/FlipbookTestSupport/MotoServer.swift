import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// moto's server (PyPI `moto[server]`, in the venv the Makefile makes: S3, STS, IAM and the other AWS APIs it
/// imitates) on a loopback port the kernel picks, started and killed by a test. moto keeps everything in
/// memory: a restart empties it.
public final class MotoServer: @unchecked Sendable {
    public private(set) var port = 0
    private let process = Process()
    public let home: String

    /// What the thread that drains moto's output shares with `init`. The thread holds this, not the server:
    /// holding the server kept it alive until moto exited, so `deinit` never ran and never killed moto, and
    /// every server a test did not stop outlived the test run.
    private final class Drain: @unchecked Sendable {
        let lock = NSCondition()
        var output = ""
        var ended = false
        var found = false
    }

    /// The credentials every test uses (moto accepts any unless `authenticate`).
    public static let accessKey = "AKIAFLIPBOOKTEST0001", secretKey = "flipbook-test-secret"

    /// Starts moto (`python -m moto.server -p 0`) and waits until it says where it listens (it binds first).
    /// With `authenticate`, moto checks signatures and IAM policies after its first `freeRequests` requests
    /// (`INITIAL_NO_AUTH_ACTION_COUNT`), enough to create an IAM user whose keys it then checks.
    public init(authenticate: Bool = false, freeRequests: Int = 0) throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-moto-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: Run.python)
        process.arguments = ["-m", "moto.server", "-H", "127.0.0.1", "-p", "0"]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        if authenticate { environment["INITIAL_NO_AUTH_ACTION_COUNT"] = String(freeRequests) }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain everything moto prints (a line per request) until it exits, noting the port on the way.
        let drain = Drain()
        let reader = Thread {
            let handle = pipe.fileHandleForReading
            while true {
                let data = handle.availableData
                drain.lock.lock()
                if data.isEmpty { drain.ended = true } else if !drain.found { drain.output += String(decoding: data, as: UTF8.self) }
                drain.lock.broadcast()
                drain.lock.unlock()
                if data.isEmpty { return }
            }
        }
        reader.start()
        drain.lock.lock()
        defer { drain.lock.unlock() }
        while port == 0 {
            if let range = drain.output.range(of: "Running on http://127.0.0.1:"),
               let end = drain.output[range.upperBound...].firstIndex(where: { !$0.isNumber }),
               let found = Int(drain.output[range.upperBound..<end]) {
                port = found
                drain.found = true
                drain.output = ""
                break
            }
            if drain.ended { throw ToolFailed(description: "moto exited before listening: \(drain.output)") }
            drain.lock.wait()
        }
    }

    deinit { stop() }

    /// SIGKILL (a child inherits the test process's signal mask, in which SIGTERM may be blocked).
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// What a `flipbook` process (or boto3) needs to reach this server as a user's configuration would say it:
    /// AWS's standard variables only; HOME and the shared files point at an empty folder, so the machine's own
    /// ~/.aws is never read.
    public func environment(endpoint: String? = nil, extra: [String: String] = [:]) -> [String: String] {
        [
            "AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secretKey, "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint ?? self.endpoint, "HOME": home, "AWS_CONFIG_FILE": home + "/config",
            "AWS_SHARED_CREDENTIALS_FILE": home + "/credentials",
        ].merging(extra) { $1 }
    }

    /// Runs `Tests/storage/s3tool.py` (boto3) against this server: the independent client that puts sources,
    /// reads outputs back and lists what is left.
    @discardableResult
    public func tool(_ arguments: [String], endpoint: String? = nil) throws -> String {
        let out = try Run.program(Run.python, [packageRoot.appendingPathComponent("Tests/storage/s3tool.py").path] + arguments,
                                  environment: environment(endpoint: endpoint))
        guard out.status == 0 else { throw ToolFailed(description: "s3tool \(arguments): \(out.stderr)") }
        return out.stdout
    }

    /// `tool` with a JSON answer.
    public func json(_ arguments: [String]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try tool(arguments).utf8))
    }
}
