import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// moto's S3-compatible server (PyPI `moto[server]`, in the venv the Makefile makes) on a free loopback port,
/// started and killed by a test. moto keeps everything in memory: a restart empties it.
public final class MotoServer: @unchecked Sendable {
    public let port: Int
    private let process = Process()
    public let home: String

    /// The credentials every test uses (moto accepts any unless `authenticate`).
    public static let accessKey = "AKIAFLIPBOOKTEST0001", secretKey = "flipbook-test-secret"

    /// Starts `moto_server`; with `authenticate`, moto checks signatures after its first `freeRequests` requests
    /// (`INITIAL_NO_AUTH_ACTION_COUNT`), enough to create an IAM user whose keys it then checks.
    public init(port: Int? = nil, authenticate: Bool = false, freeRequests: Int = 0) throws {
        let binary = packageRoot.appendingPathComponent(".build/venv/bin/moto_server").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ToolFailed(description: "\(binary) is missing: `make venv` installs moto[server]")
        }
        self.port = try port ?? NginxOrigin.freePort()
        home = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-moto-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-H", "127.0.0.1", "-p", String(self.port)]
        var environment = ProcessInfo.processInfo.environment
        if authenticate { environment["INITIAL_NO_AUTH_ACTION_COUNT"] = String(freeRequests) }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        while !NginxOrigin.accepts(self.port) {
            guard process.isRunning else { throw ToolFailed(description: "moto_server did not start on \(self.port)") }
            usleep(50_000)
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
