import AsyncHTTPClient
import Foundation
import FlipbookTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Debian's nginx-light (installed by the Makefile) serving the same root as the server, as the reference
/// for how Range is answered on GET and on HEAD: RFC 9110 defines Range for GET only, nginx honours it on
/// HEAD too (206 or 416 with `Content-Range`, no body), and so does `flipbook serve`.
@Suite(.serialized) struct NginxParityTests {
    static let file = "testsrc-160x120-2s.gif"

    @Test func rangesOnGETAndHEADMatchNginx() async throws {
        let root = try Env.makeRoot("nginx-parity")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        let nginx = try await offPool { try NginxProcess(root: root) }
        defer { nginx.stop() }  // SIGTERM to a process that exits at once: no lasting block
        let n = try #require(try FileManager.default.attributesOfItem(atPath: root + "/" + Self.file)[.size] as? Int)
        let headRanges = try await compareRanges(server, "/original/\(Self.file)", nginx, "/\(Self.file)", size: n)
        // Date: the same IMF-fixdate form as nginx's, and the same second give or take the requests between.
        let ourDate = try #require(try await server.request("/health").header("Date"))
        let theirDate = try #require(try await fetch("http://127.0.0.1:\(nginx.port)/\(Self.file)", method: "HEAD", headers: []).header("Date"))
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "GMT")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let ours = try #require(format.date(from: ourDate), "\(ourDate)"), theirs = try #require(format.date(from: theirDate), "\(theirDate)")
        #expect(ourDate.count == theirDate.count && abs(ours.timeIntervalSince(theirs)) <= 2, "\(ourDate) vs nginx \(theirDate)")
        // The reference really does answer HEAD ranges with 206 (else the comparison above proves little).
        #expect(headRanges == 6)
        // A keep-alive connection stays usable after a HEAD error reply (no stray JSON body on the wire).
        let missing = try await server.request("/original/missing.gif", method: "HEAD")
        #expect(missing.status == 404 && missing.body.isEmpty)
        #expect(try await server.request("/original/\(Self.file)", headers: [("Range", "bytes=0-1")]).status == 206)
    }

    /// A derivative held as its open disk-cache object goes out with `sendfile`; its ranges on GET and HEAD
    /// are answered as nginx (sendfile on) answers them for the same bytes in a file.
    @Test func derivativeRangesSentWithSendfileMatchNginx() async throws {
        let root = try Env.makeRoot("nginx-parity-sendfile")
        let cache = try Env.temporaryFolder("nginx-parity-cache")
        let server = try await TestServer(root: root) {
            $0.service.diskCacheDirectory = cache
            $0.service.sendfileMinimumBytes = 0
        }
        defer { Task { await server.stop() } }
        let mp4 = try await server.request("/mp4/\(Self.file)")
        try #require(mp4.status == 200 && mp4.body.count > 1000)
        try Data(mp4.body).write(to: URL(fileURLWithPath: root + "/served.mp4"))
        let nginx = try await offPool { try NginxProcess(root: root) }
        defer { nginx.stop() }
        let before = server.server.answeredWithSendfile
        let headRanges = try await compareRanges(server, "/mp4/\(Self.file)", nginx, "/served.mp4", size: mp4.body.count)
        #expect(headRanges == 6)
        // Every GET with a body (200 or 206: 7 of the 9) was sent from the file.
        #expect(server.server.answeredWithSendfile - before == 7)
    }

    /// GET and HEAD of `ours` and `theirs` with nine ranges (none, inside, suffix, past the end, unsatisfiable)
    /// give the same status, Content-Range, Content-Length and body; returns how many HEADs nginx answered 206.
    private func compareRanges(_ server: TestServer, _ ours: String, _ nginx: NginxProcess, _ theirs: String, size n: Int) async throws -> Int {
        let ranges: [String?] = [nil, "bytes=0-1", "bytes=0-", "bytes=-5", "bytes=100-199", "bytes=\(n - 10)-", "bytes=\(n - 10)-\(n + 500)",
                                 "bytes=\(n)-", "bytes=\(n + 100)-\(n + 200)"]
        var headRanges = 0
        for method in ["GET", "HEAD"] {
            for range in ranges {
                let headers = range.map { [("Range", $0)] } ?? []
                let mine = try await server.request(ours, method: method, headers: headers)
                let reference = try await fetch("http://127.0.0.1:\(nginx.port)\(theirs)", method: method, headers: headers)
                let what = "\(method) \(ours) \(range ?? "(no Range)")"
                #expect(mine.status == reference.status, "\(what): nginx \(reference.status), flipbook \(mine.status)")
                #expect(mine.header("Content-Range") == reference.header("Content-Range"), "\(what)")
                if reference.status != 416 {  // 416 bodies differ by design: nginx's HTML page, our JSON error
                    #expect(mine.header("Content-Length") == reference.header("Content-Length"), "\(what)")
                }
                if method == "HEAD" {
                    #expect(mine.body.isEmpty && reference.body.isEmpty, "\(what): HEAD has no body")
                    if reference.status == 206 { headRanges += 1 }
                } else if reference.status == 206 || reference.status == 200 {
                    #expect(mine.body == reference.body, "\(what)")
                }
            }
        }
        return headRanges
    }

    private func fetch(_ url: String, method: String, headers: [(String, String)]) async throws -> TestServer.Reply {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        return TestServer.Reply(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                                body: Array(body.readableBytesView))
    }
}

/// nginx in the foreground on a free loopback port, serving `root` with a generated configuration.
final class NginxProcess: @unchecked Sendable {
    static let binary = "/usr/sbin/nginx"
    let process = Process()
    let port: Int

    init(root: String) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(Self.binary) is missing: `make deps` installs nginx-light"])
        }
        let dir = try Env.temporaryFolder("nginx")
        port = try freeLoopbackPort()
        let conf = """
            worker_processes 1;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                sendfile on;
                types { image/gif gif; video/mp4 mp4; }
                client_body_temp_path \(dir)/body;
                proxy_temp_path \(dir)/proxy;
                fastcgi_temp_path \(dir)/fastcgi;
                uwsgi_temp_path \(dir)/uwsgi;
                scgi_temp_path \(dir)/scgi;
                server { listen 127.0.0.1:\(port); root \(root); }
            }
            """
        try conf.write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
        // nginx's workers run as nobody/www-data when started as root: the folders must be readable.
        chmod(dir, 0o755)
        chmod(root, 0o755)
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-c", dir + "/nginx.conf", "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Until it accepts or exits (a bad configuration, a taken port): no deadline on a loaded machine.
        while !Self.accepts(port) {
            guard process.isRunning else {
                stop()
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "nginx did not start on \(port)"])
            }
            usleep(50_000)
        }
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// sockaddr_in for 127.0.0.1:`port`.
func loopback(_ port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// A port nothing listens on now (bound to 0, read back, closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = loopback(0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard fd >= 0, ok else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "no free port"]) }
    return Int(UInt16(bigEndian: address.sin_port))
}
