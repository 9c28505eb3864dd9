import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's nginx (nginx-light, installed by the Makefile) in the foreground on a free loopback port, serving
/// `root` with the `server` block body a test gives (locations for redirects, `max_ranges 0`, `limit_rate`,
/// ...), as a remote origin or a reference server. Its access log records each request's method, URI, status,
/// body bytes sent and the Range, If-Match, If-Range and If-None-Match it came with, so a test counts what was
/// fetched from the server's side.
public final class NginxOrigin: @unchecked Sendable {
    public static let binary = "/usr/sbin/nginx"
    public let port: Int
    public let folder: String
    private let process = Process()

    /// One line of the access log.
    public struct Request: Sendable {
        public var method: String
        public var uri: String
        public var status: Int
        public var bytesSent: Int
        public var range: String
        public var ifMatch: String
        public var ifRange: String
        public var ifNoneMatch: String
        /// The `Content-Encoding` nginx answered with ("" for none).
        public var contentEncoding: String
    }

    /// Starts nginx; `serverBlock` goes inside `server { listen ...; root ...; }` and may use `$PORT`.
    public init(root: String, serverBlock: String = "") throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw ToolFailed(description: "\(Self.binary) is missing: `make deps` installs nginx-light")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-nginx-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        let block = serverBlock.replacingOccurrences(of: "$PORT", with: String(port))
        let conf = """
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections 256; }
            http {
                log_format fields '$request_method\\t$uri\\t$status\\t$body_bytes_sent\\t$http_range\\t$http_if_match\\t$http_if_range\\t$http_if_none_match\\t$sent_http_content_encoding';
                access_log \(folder)/access.log fields;
                sendfile on;
                types { video/mp4 mp4; image/jpeg jpg; image/gif gif; image/png png; image/webp webp; video/webm webm; }
                client_body_temp_path \(folder)/body;
                proxy_temp_path \(folder)/proxy;
                fastcgi_temp_path \(folder)/fastcgi;
                uwsgi_temp_path \(folder)/uwsgi;
                scgi_temp_path \(folder)/scgi;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root);
                    \(block)
                }
            }
            """
        try conf.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        // nginx's workers run as nobody/www-data when started as root: the folders must be readable.
        chmod(folder, 0o755)
        chmod(root, 0o755)
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-c", folder + "/nginx.conf", "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Until it accepts or exits (a bad configuration, a taken port): no deadline on a loaded machine.
        while !Self.accepts(port) {
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
                throw ToolFailed(description: "nginx did not start on \(port): \(log)")
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// SIGTERM, then waits for the exit.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The access log so far (nginx writes each line when the request ends).
    public func requests() -> [Request] {
        let text = (try? String(contentsOfFile: folder + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map { $0 == "-" ? "" : String($0) }
            guard f.count == 9, let status = Int(f[2]), let bytes = Int(f[3]) else { return nil }
            return Request(method: f[0], uri: f[1], status: status, bytesSent: bytes, range: f[4], ifMatch: f[5], ifRange: f[6],
                           ifNoneMatch: f[7], contentEncoding: f[8])
        }
    }

    /// Empties the access log (nginx keeps appending to the same file).
    public func clearLog() { truncate(folder + "/access.log", 0) }

    public static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A loopback port nothing listens on now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, ok else { throw ToolFailed(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
