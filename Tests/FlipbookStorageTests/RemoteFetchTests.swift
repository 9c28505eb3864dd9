import Foundation
import FlipbookTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 44: sources given as URLs, fetched through the guard, against Debian's nginx as the origin (and a
/// small misbehaving origin, `Tests/storage/bad_origin.py`, for answers nginx will not give). The commands
/// run as a user runs them: the built `flipbook` binary.
@Suite(.serialized, .offPool) struct RemoteFetchTests {
    static let flipbook = packageRoot.appendingPathComponent(".build/debug/flipbook").path
    static let samples = packageRoot.appendingPathComponent("samples").path

    /// `flipbook probe --json URL` with `extra` options: the JSON line's error code (nil on success).
    static func probeCode(_ url: String, _ extra: [String] = []) throws -> (code: String?, line: String) {
        let out = try Run.program(flipbook, ["probe", "--json", url] + extra)
        let line = out.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let json = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        let error = json?["error"] as? [String: Any]
        return (error?["code"] as? String ?? (json?["error"] as? String), line)
    }

    /// Every spelling of a private address is refused, with its reason, before any packet is sent: strace
    /// sees no `connect` to it, and nginx (listening on the loopback port every loopback spelling names) logs
    /// no request.
    @Test func privateAddressesAreRefusedBeforeAnyConnection() throws {
        let strace = try #require(Run.which("strace"), "strace is missing: `make deps` installs it")
        let nginx = try NginxOrigin(root: Self.samples)
        let port = nginx.port
        let hosts = ["127.0.0.1", "localhost", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::1]", "[::ffff:127.0.0.1]",
                     "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]", "0.0.0.0", "[::]", "169.254.169.254", "10.0.0.1", "[fd00::1]"]
        let folder = try TemporaryDirectory()
        for host in hosts {
            let url = "http://\(host):\(port)/testsrc-160x120-2s.gif"
            let trace = folder.path("trace-\(hosts.firstIndex(of: host)!)")
            let out = try Run.program(strace, ["-f", "-qq", "-e", "trace=connect", "-o", trace, Self.flipbook, "probe", "--json", url])
            #expect(out.status == 1, "\(url): \(out.stdout) \(out.stderr)")
            #expect(out.stdout.contains("\"fetch-refused\""), "\(url): \(out.stdout)")
            #expect(out.stdout.contains("address"), "\(url): the reason names the address class: \(out.stdout)")
            let connects = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
                .filter { $0.contains("connect(") && ($0.contains("AF_INET") || $0.contains("AF_INET6")) && !$0.contains("htons(53)") }
            #expect(connects.isEmpty, "\(url): connections attempted: \(connects)")
        }
        #expect(nginx.requests().isEmpty, "requests reached nginx: \(nginx.requests().map(\.uri))")
        // The same origin, opted in by its host:port, is fetched.
        let allowed = try Self.probeCode(nginx.url("/testsrc-160x120-2s.gif"), ["--allow-private-sources", "127.0.0.1:\(port)"])
        #expect(allowed.code == nil, "\(allowed.line)")
    }

    /// A redirect from the allowed origin to any private address is checked like the first URL and refused;
    /// so are user information, other schemes and an https-to-http downgrade's kin.
    @Test func redirectsAndURLTricksAreRefused() throws {
        let targets = ["http://localhost:$PORT/testsrc-160x120-2s.gif", "http://2130706433:$PORT/testsrc-160x120-2s.gif",
                       "http://[::1]:$PORT/x.gif", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/x.gif",
                       "http://[fd00::1]/x.gif", "http://0.0.0.0:$PORT/x.gif", "file:///etc/passwd", "gopher://127.0.0.1/"]
        var block = targets.enumerated().map { i, t in "location = /to/\(i) { return 302 \(t); }" }.joined(separator: "\n")
        block += "\nlocation = /chain { return 302 /chain2; }\nlocation = /chain2 { return 302 /chain3; }"
        block += "\nlocation = /chain3 { return 302 /chain4; }\nlocation = /chain4 { return 302 /testsrc-160x120-2s.gif; }"
        block += "\nlocation = /three { return 302 /two; }\nlocation = /two { return 302 /one; }\nlocation = /one { return 301 /testsrc-160x120-2s.gif; }"
        // gzip on for GIFs under /gz/ (nginx compresses only for clients that ask), one byte a second under /slow/.
        block += "\nlocation /gz/ { alias \(Self.samples)/; gzip on; gzip_types image/gif; gzip_min_length 0; }"
        block += "\nlocation /slow/ { alias \(Self.samples)/; limit_rate 1; }"
        let nginx = try NginxOrigin(root: Self.samples, serverBlock: block)
        let allow = ["--allow-private-sources", "127.0.0.1:\(nginx.port)"]
        for (i, target) in targets.enumerated() {
            let result = try Self.probeCode(nginx.url("/to/\(i)"), allow)
            #expect(result.code == "fetch-refused", "redirect to \(target): \(result.line)")
        }
        // Three redirects are followed, a fourth is refused.
        #expect(try Self.probeCode(nginx.url("/three"), allow).code == nil)
        #expect(try Self.probeCode(nginx.url("/chain"), allow).code == "fetch-refused")
        for url in ["http://allowed@127.0.0.1:\(nginx.port)/testsrc-160x120-2s.gif", "ftp://127.0.0.1/x.gif", "gopher://127.0.0.1/",
                    "file:///etc/passwd"] {
            let result = try Self.probeCode(url, allow)
            #expect(result.code == "fetch-refused", "\(url): \(result.line)")
        }
        // Only the allowed origin's own paths were requested (the refused redirects were never followed).
        let uris = Set(nginx.requests().map(\.uri))
        #expect(uris.allSatisfy { $0.hasPrefix("/to/") || $0.hasPrefix("/chain") || ["/three", "/two", "/one", "/testsrc-160x120-2s.gif"].contains($0) },
                "\(uris)")
        // With gzip on, the bytes still come as stored (we ask for identity), and the probe is the GIF's.
        let gz = try Self.probeCode(nginx.url("/gz/testsrc-160x120-2s.gif"), allow)
        #expect(gz.code == nil && gz.line.contains("\"type\":\"gif\""), "\(gz.line)")
        #expect(nginx.requests().filter { $0.uri.hasPrefix("/gz/") }.allSatisfy { $0.contentEncoding.isEmpty })
        // nginx's limit_rate at one byte a second: the fetch ends at its total timeout.
        let started = Date()
        let slow = try Self.probeCode(nginx.url("/slow/testsrc-160x120-2s.gif"), allow + ["--fetch-timeout", "2"])
        #expect(slow.code == "timeout" && Date().timeIntervalSince(started) < 30, "\(slow.line)")
    }

    /// Bodies past the byte limit (a chunked body with no length, a gzip bomb, a huge Content-Length) fail
    /// `limit-exceeded` without holding the body, and a body longer than its Content-Length is read no further;
    /// an origin that sends one byte a second ends at the total timeout.
    @Test func limitsHoldAgainstAMisbehavingOrigin() throws {
        let folder = try TemporaryDirectory()
        let portFile = folder.path("port")
        let origin = Process()
        origin.executableURL = URL(fileURLWithPath: Run.python)
        origin.arguments = [packageRoot.appendingPathComponent("Tests/storage/bad_origin.py").path, portFile]
        try origin.run()
        // SIGKILL: a child inherits the test process's signal mask, in which SIGTERM may be blocked.
        defer { kill(origin.processIdentifier, SIGKILL); origin.waitUntilExit() }
        while !FileManager.default.fileExists(atPath: portFile) {
            try #require(origin.isRunning, "the origin did not start")
            usleep(20_000)
        }
        let port = try String(contentsOfFile: portFile, encoding: .utf8)
        let allow = ["--allow-private-sources", "127.0.0.1:\(port)", "--max-source-bytes", "8MB"]
        for path in ["/lies", "/chunked", "/gzip-bomb", "/big-length"] {
            let out = try Run.program("/usr/bin/time", ["-f", "%M", Self.flipbook, "probe", "--json", "http://127.0.0.1:\(port)\(path)"] + allow)
            #expect(out.status == 1, "\(path): \(out.stdout)")
            // A body longer than its Content-Length is cut where the length says (HTTP/1.1 framing): the 1,000
            // bytes read are no media. The others fail on the limit.
            let expected = path == "/lies" ? "\"unknown-format\"" : "\"limit-exceeded\""
            #expect(out.stdout.contains(expected), "\(path): \(out.stdout) \(out.stderr)")
            // Peak RSS in KB (GNU time's last line): far below the 64 MB or 1 GB the origin tried to send.
            let rss = Int(out.stderr.split(separator: "\n").last ?? "") ?? .max
            #expect(rss < 80_000, "\(path): peak RSS \(rss) KB")
        }
        let started = Date()
        let slow = try Self.probeCode("http://127.0.0.1:\(port)/slow", allow + ["--fetch-timeout", "3"])
        let took = Date().timeIntervalSince(started)
        #expect(slow.code == "timeout", "\(slow.line)")
        #expect(took >= 3 && took < 30, "ended after \(took) s")
    }

    /// A poster of a 200 MB video on nginx reads a few megabytes by ranges (nginx's own count), and is the
    /// same image as the poster of the local file; with ranges off it still works, within the byte limit.
    @Test func aPosterOfALargeRemoteVideoReadsAFewMegabytes() throws {
        let folder = try TemporaryDirectory()
        let clip = folder.path("clip.mp4")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=4", "-c:v", "libx264", "-preset", "ultrafast",
                    "-b:v", "30M", "-maxrate", "30M", "-bufsize", "60M", clip])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let copies = max(2, 200_000_000 / max(1, size))
        let list = (0..<copies).map { _ in "file '\(clip)'" }.joined(separator: "\n")
        try list.write(toFile: folder.path("list.txt"), atomically: true, encoding: .utf8)
        // No faststart: the index is at the end, so the reader must seek there and back.
        try ffmpeg(["-f", "concat", "-safe", "0", "-i", folder.path("list.txt"), "-c", "copy", folder.path("big.mp4")])
        let big = try #require(try FileManager.default.attributesOfItem(atPath: folder.path("big.mp4"))[.size] as? Int)
        try #require(big > 150_000_000, "the test video is \(big) bytes")
        let nginx = try NginxOrigin(root: folder.url.path, serverBlock: "location /noranges/ { alias \(folder.url.path)/; max_ranges 0; }")
        let allow = ["--allow-private-sources", "127.0.0.1:\(nginx.port)"]
        let local = try Run.program(Self.flipbook, ["poster", folder.path("big.mp4"), "-o", folder.path("local.jpg")])
        try #require(local.status == 0, "\(local.stderr)")
        let remote = try Run.program(Self.flipbook, ["poster", nginx.url("/big.mp4"), "-o", folder.path("remote.jpg")] + allow)
        try #require(remote.status == 0, "\(remote.stderr)")
        #expect(FileManager.default.contents(atPath: folder.path("remote.jpg")) == FileManager.default.contents(atPath: folder.path("local.jpg")))
        let sent = nginx.requests().filter { $0.uri == "/big.mp4" }
        let bytes = sent.reduce(0) { $0 + $1.bytesSent }
        #expect(sent.allSatisfy { $0.status == 206 && !$0.range.isEmpty }, "\(sent.map { "\($0.status) \($0.range)" })")
        #expect(bytes < big / 20, "read \(bytes) of \(big) bytes in \(sent.count) requests")
        // Every read after the first is pinned to the first answer's ETag.
        #expect(sent.dropFirst().allSatisfy { !$0.ifMatch.isEmpty }, "\(sent.map(\.ifMatch))")
        nginx.clearLog()
        let whole = try Run.program(Self.flipbook, ["poster", nginx.url("/noranges/big.mp4"), "-o", folder.path("whole.jpg")] + allow)
        try #require(whole.status == 0, "\(whole.stderr)")
        #expect(FileManager.default.contents(atPath: folder.path("whole.jpg")) == FileManager.default.contents(atPath: folder.path("local.jpg")))
        let tooBig = try Run.program(Self.flipbook, ["poster", nginx.url("/noranges/big.mp4"), "-o", folder.path("no.jpg"),
                                                     "--max-source-bytes", "50MB"] + allow)
        #expect(tooBig.status == 1 && tooBig.stderr.contains("limit"), "\(tooBig.stderr)")
    }
}
