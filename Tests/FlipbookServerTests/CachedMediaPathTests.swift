import Foundation
import FlipbookServer
import Testing

/// Memory-cache hits of the media routes are answered on the event loop (`CachedMediaHandler`), everything
/// else by Hummingbird's async responder. These tests tell the paths apart with `answeredOnEventLoop`, check
/// that pipelined responses keep request order across them, and that both send the same bytes for the same
/// request. A request pipelined behind an unanswered one always takes the async path, which gives each
/// request's slow-path twin.
@Suite(.serialized) struct CachedMediaPathTests {
    static let gif = "testsrc-160x120-2s.gif"

    @Test func hitsAnswerOnTheEventLoopAndPipelinedResponsesKeepOrder() async throws {
        let root = try Env.makeRoot("fast-order")
        let server = try await TestServer(root: root) { $0.cancelOnDisconnect = false }
        defer { Task { await server.stop() } }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/" + Self.gif)))

        let first = try await server.request("/original/\(Self.gif)")
        #expect(first.status == 200 && first.body == bytes)
        #expect(server.server.answeredOnEventLoop == 0, "a miss goes through the responder")
        let again = try await server.request("/original/\(Self.gif)")
        #expect(again.status == 200 && again.body == bytes)
        #expect(server.server.answeredOnEventLoop == 1, "a hit is answered on the event loop")

        // hit, miss (a thumbnail job), hit, /health, HEAD hit, ranged hit: on one connection, sent at once.
        let replies = try await pipelined(port: server.port, [
            ("GET", "/original/\(Self.gif)", []),
            ("GET", "/thumb/gray-1000x700.jpg?size=64", []),
            ("GET", "/original/\(Self.gif)", []),
            ("GET", "/health", []),
            ("HEAD", "/original/\(Self.gif)", []),
            ("GET", "/original/\(Self.gif)", [("Range", "bytes=3-9")]),
        ])
        try #require(replies.count == 6)
        #expect(replies[0].status == 200 && replies[0].body == bytes)
        #expect(replies[1].status == 200 && replies[1].header("Content-Type") == "image/jpeg")
        let thumb = try await ffprobe(replies[1].body, suffix: "jpg")
        #expect(thumb.codec == "mjpeg" && thumb.width == 64, "\(thumb)")
        #expect(replies[2].status == 200 && replies[2].body == bytes)
        #expect(replies[3].status == 200 && replies[3].body == Array("ok\n".utf8))
        #expect(replies[4].status == 200 && replies[4].body.isEmpty && replies[4].header("Content-Length") == String(bytes.count))
        #expect(replies[5].status == 206 && replies[5].body == Array(bytes[3...9]))
        // Only the first was answered on the event loop: the rest queued behind the job.
        #expect(server.server.answeredOnEventLoop == 2)
        #expect(server.server.service.jobsRun["thumb"] == 1)

        // Forty hits in one burst: all on the event loop, in order.
        let burst = try await pipelined(port: server.port, (0..<40).map { i in ("GET", "/original/\(Self.gif)", [("Range", "bytes=\(i)-\(i + 99)")]) })
        #expect(burst.map(\.status) == Array(repeating: 206, count: 40))
        #expect(burst.enumerated().allSatisfy { i, reply in reply.body == Array(bytes[i...(i + 99)]) })
        #expect(server.server.answeredOnEventLoop == 42)

        // A hit with `Connection: close` goes to the responder, which closes the connection after it.
        let closing = try await pipelined(port: server.port, [("GET", "/original/\(Self.gif)", [("Connection", "close")])])
        #expect(closing.count == 1 && closing[0].status == 200 && closing[0].body == bytes)
        #expect(server.server.answeredOnEventLoop == 42)
    }

    /// With `sendfile`, the MP4 is held as its open disk-cache object and the event loop sends it with
    /// `sendfile`; the responder reads the same range with `pread`.
    @Test(arguments: [false, true]) func bothPathsSendTheSameBytes(sendfile: Bool) async throws {
        let root = try Env.makeRoot("fast-bytes")
        let cache = try Env.temporaryFolder("fast-bytes-cache")
        let server = try await TestServer(root: root) {
            $0.cancelOnDisconnect = false
            if sendfile {
                $0.service.diskCacheDirectory = cache
                $0.service.sendfileMinimumBytes = 0
            }
        }
        defer { Task { await server.stop() } }
        let mp4 = try await server.request("/mp4/\(Self.gif)")
        #expect(mp4.status == 200)
        let etag = try #require(mp4.header("ETag"))
        let n = mp4.body.count
        let cases: [(String, [(String, String)])] = [
            ("GET", []), ("GET", [("Range", "bytes=0-65535")]), ("GET", [("Range", "bytes=-100")]),
            ("GET", [("Range", "bytes=10-19"), ("If-Range", etag)]), ("GET", [("Range", "bytes=10-19"), ("If-Range", "\"other\"")]),
            ("GET", [("Range", "bytes=\(n)-")]), ("GET", [("Range", "bytes=0-0,2-2")]), ("GET", [("If-None-Match", etag)]),
            ("GET", [("If-None-Match", "\"other\"")]), ("GET", [("If-Match", "\"other\"")]), ("HEAD", []),
            ("HEAD", [("Range", "bytes=0-1")]), ("HEAD", [("Range", "bytes=\(n)-")]), ("HEAD", [("If-None-Match", etag)]),
        ]
        var withBody = 0
        for (i, (method, headers)) in cases.enumerated() {
            let what = "\(method) \(headers)"
            let before = server.server.answeredOnEventLoop
            let fast = try await pipelined(port: server.port, [(method, "/mp4/\(Self.gif)", headers)])
            #expect(server.server.answeredOnEventLoop == before + 1, "\(what): answered on the event loop")
            // Behind a thumbnail job (a new size each time, so always a miss), the same request takes the async path.
            let slow = try await pipelined(port: server.port, [("GET", "/thumb/gray-1000x700.jpg?size=\(40 + i)", []),
                                                          (method, "/mp4/\(Self.gif)", headers)])
            #expect(server.server.answeredOnEventLoop == before + 1, "\(what): answered by the responder")
            try #require(fast.count == 1 && slow.count == 2)
            #expect(fast[0].raw(dateless: true) == slow[1].raw(dateless: true), "\(what)")
            #expect(fast[0].status == slow[1].status && fast[0].status != 0, "\(what)")
            if method == "GET", fast[0].status == 200 || fast[0].status == 206 { withBody += 1 }
        }
        // Every fast GET answered with a body went out with sendfile, and nothing else did.
        #expect(withBody > 4)
        #expect(server.server.answeredWithSendfile == (sendfile ? withBody : 0))
    }

    /// The idle timeout is kept where hits are answered (they never reach Hummingbird's connection-state
    /// handler): a connection busy with hits for over twice the timeout stays open, and once idle it is closed,
    /// not before the timeout. Only lower bounds on time are asserted; the close is awaited as an event.
    @Test func hitsKeepAConnectionAliveAndAnIdleOneIsClosed() async throws {
        let root = try Env.makeRoot("fast-idle")
        let server = try await TestServer(root: root) { $0.idleTimeout = .seconds(3) }
        defer { Task { await server.stop() } }
        #expect(try await server.request("/original/\(Self.gif)").status == 200)
        let before = server.server.answeredOnEventLoop
        let script = """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", \(server.port)))
        s.settimeout(120)
        request = b"GET /original/\(Self.gif) HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nRange: bytes=0-9\\r\\n\\r\\n"
        start, n = time.monotonic(), 0
        while time.monotonic() - start < 7:
            s.sendall(request)
            buf = b""
            while not (b"\\r\\n\\r\\n" in buf and len(buf) >= buf.index(b"\\r\\n\\r\\n") + 14):
                chunk = s.recv(65536)
                if not chunk: sys.exit("closed while busy after %d responses" % n)
                buf += chunk
            if not buf.startswith(b"HTTP/1.1 206"): sys.exit("unexpected reply %r" % buf[:40])
            n += 1
            time.sleep(0.1)
        last = time.monotonic()
        if s.recv(1) != b"": sys.exit("bytes after the last response")
        print(n, time.monotonic() - last)
        """
        let out = try await Env.run(Env.python, ["-c", script])
        try #require(out.status == 0, "\(out.stderr)")
        let parts = out.text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(parts.count == 2, "\(out.text)")
        #expect(parts[0] >= 2, "requests made while busy: \(parts[0])")
        #expect(server.server.answeredOnEventLoop == before + Int(parts[0]), "every request was a hit")
        #expect(parts[1] >= 2.5, "closed \(parts[1]) s after the last response, timeout 3 s")
    }

    @Test func signedHitsAreCheckedOnTheEventLoopToo() async throws {
        let root = try Env.makeRoot("fast-signed")
        let signer = URLSigner(key: Array("fast path key".utf8), salt: Array("salt".utf8))
        let server = try await TestServer(root: root) { $0.signer = signer }
        defer { Task { await server.stop() } }
        let target = signer.sign("/original/\(Self.gif)")
        #expect(try await server.request(target).status == 200)
        #expect(try await server.request(target).status == 200)
        #expect(server.server.answeredOnEventLoop == 1)
        // The cached file without a signature, or with a wrong one: 403 from the responder.
        let unsigned = try await server.request("/original/\(Self.gif)")
        #expect(unsigned.status == 403 && unsigned.json["error"] == "bad-signature")
        let wrong = try await server.request(String(target.dropLast(2)) + "AA")
        #expect(wrong.status == 403)
        #expect(server.server.answeredOnEventLoop == 1)
    }
}

/// One response as it came off the wire.
struct RawReply {
    let bytes: [UInt8]
    /// Where the body starts.
    let bodyStart: Int

    var status: Int {
        let line = String(decoding: bytes.prefix(while: { $0 != 0x0D }), as: UTF8.self)
        let parts = line.split(separator: " ")
        return parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    }
    var headerLines: [String] {
        String(decoding: bytes[..<bodyStart], as: UTF8.self).components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
    }
    func header(_ name: String) -> String? {
        headerLines.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }.map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }
    var body: [UInt8] { Array(bytes[bodyStart...]) }
    /// The bytes with the Date header's value blanked (it moves with the clock).
    func raw(dateless: Bool) -> [UInt8] {
        let text = String(decoding: bytes[..<bodyStart], as: UTF8.self).components(separatedBy: "\r\n")
            .map { $0.lowercased().hasPrefix("date:") ? "date: -" : $0 }.joined(separator: "\r\n")
        return Array(text.utf8) + body
    }
}

/// Sends `requests` back to back on one connection (HTTP/1.1 pipelining) with Python's socket module and
/// returns the responses in the order they arrived, each read by its Content-Length (none after a HEAD, a
/// 304 or a 1xx). Throws if the connection closes early or bytes are left over after the last response.
func pipelined(port: Int, _ requests: [(method: String, target: String, headers: [(String, String)])]) async throws -> [RawReply] {
    var data: [UInt8] = []
    for (method, target, headers) in requests {
        data += Array("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        for (name, value) in headers { data += Array("\(name): \(value)\r\n".utf8) }
        data += Array("\r\n".utf8)
    }
    let heads = requests.map { $0.method == "HEAD" ? "1" : "0" }.joined()
    let script = """
    import base64, socket, sys
    s = socket.create_connection(("127.0.0.1", \(port)))
    s.settimeout(300)
    s.sendall(sys.stdin.buffer.read())
    buf, out = b"", []
    def more():
        global buf
        chunk = s.recv(1 << 20)
        if not chunk: sys.exit("closed after %d responses" % len(out))
        buf += chunk
    for head in "\(heads)":
        while b"\\r\\n\\r\\n" not in buf: more()
        end = buf.index(b"\\r\\n\\r\\n") + 4
        lines = buf[:end].decode("latin-1").split("\\r\\n")
        status = int(lines[0].split(" ")[1])
        length = 0
        for line in lines[1:]:
            if line.lower().startswith("content-length:"): length = int(line.split(":", 1)[1])
        if head == "1" or status == 304 or status < 200: length = 0
        while len(buf) < end + length: more()
        print(end, base64.b64encode(buf[:end + length]).decode())
        out.append(status)
        buf = buf[end + length:]
    s.settimeout(0.2)
    try:
        buf += s.recv(1 << 20)
    except socket.timeout:
        pass
    if buf: sys.exit("%d stray bytes after the last response" % len(buf))
    """
    let out = try await Env.run(Env.python, ["-c", script], stdin: Data(data))
    guard out.status == 0 else { throw PipelineError(message: out.stderr) }
    return out.text.split(separator: "\n").compactMap { line in
        let parts = line.split(separator: " ")
        guard parts.count == 2, let start = Int(parts[0]), let bytes = Data(base64Encoded: String(parts[1])) else { return nil }
        return RawReply(bytes: Array(bytes), bodyStart: start)
    }
}

struct PipelineError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
