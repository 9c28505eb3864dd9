import Flipbook
import FlipbookServer
import FlipbookService
import FlipbookStorage
import FlipbookTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 44, `flipbook serve --remote-sources`: `?url=` on the media routes, against Debian's nginx as the
/// origin (allowed by its one `host:port`), whose access log says what was fetched and how.
@Suite(.serialized) struct RemoteSourceServerTests {
    static let keyHex = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let saltHex = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    static let signer = URLSigner(keyHex: keyHex, saltHex: saltHex)!

    /// A server with signing and remote sources on, its private addresses allowed only for `allowed`
    /// (`host:port`), serving `root` locally as well.
    static func server(root: String, allowed: [String]) async throws -> TestServer {
        try await TestServer(root: root) {
            $0.signer = signer
            var policy = FetchPolicy()
            policy.privateSources = Set(allowed)
            $0.service.remoteSources = policy
        }
    }

    /// `/route?url=<url percent-encoded>&extra`, signed.
    static func remote(_ route: String, _ url: String, _ extra: String = "") -> String {
        signer.sign("/\(route)?url=\(URLPath.encode(url))" + (extra.isEmpty ? "" : "&" + extra))
    }

    @Test func signedURLsAreFetchedCachedAndRevalidated() async throws {
        let origin = try Env.temporaryFolder("origin")
        try FileManager.default.copyItem(atPath: Env.samples + "/mandelbrot-1600x1200.jpg", toPath: origin + "/a.jpg")
        // (Started off the cooperative pool: it waits for nginx to accept, and the in-process server needs the pool.)
        let nginx = try await offPool { try NginxOrigin(root: origin) }
        let server = try await Self.server(root: origin, allowed: ["127.0.0.1:\(nginx.port)"])
        defer { Task { await server.stop() } }
        let url = nginx.url("/a.jpg")

        // Unsigned, or signed for another target: 403 even with remote sources on, and nothing is fetched.
        let unsigned = try await server.request("/thumb?url=\(URLPath.encode(url))&size=64")
        #expect(unsigned.status == 403 && unsigned.json["error"] == "bad-signature", "\(unsigned.status) \(unsigned.json)")
        let forged = try await server.request("/thumb?url=\(URLPath.encode(url))&size=64&sig=" + Self.signer.signature(for: "/thumb/a.jpg?size=64"))
        #expect(forged.status == 403)
        #expect(nginx.requests().isEmpty, "\(nginx.requests().map(\.uri))")

        // Signed: the same bytes as the thumbnail of the same file served locally.
        let local = try await server.request(Self.signer.sign("/thumb/a.jpg?size=64"))
        let first = try await server.request(Self.remote("thumb", url, "size=64"))
        try #require(first.status == 200, "\(first.status) \(String(decoding: first.body, as: UTF8.self))")
        #expect(first.body == local.body && first.header("ETag") == local.header("ETag"))
        let fetched = nginx.requests()
        #expect(!fetched.isEmpty && fetched.allSatisfy { $0.uri == "/a.jpg" && !$0.range.isEmpty }, "ranged reads: \(fetched)")
        #expect(try await server.metric("flipbook_jobs_total{kind=\"thumb\"}") == 2)

        // Again: one conditional GET answered 304 with no body, and the derivative from the cache.
        nginx.clearLog()
        let second = try await server.request(Self.remote("thumb", url, "size=64"))
        #expect(second.status == 200 && second.body == first.body)
        let revalidation = nginx.requests()
        #expect(revalidation.count == 1, "\(revalidation)")
        #expect(revalidation.first.map { $0.status == 304 && $0.bytesSent == 0 && !$0.ifNoneMatch.isEmpty } == true, "\(revalidation)")
        #expect(try await server.metric("flipbook_jobs_total{kind=\"thumb\"}") == 2, "no job ran for the second request")

        // The file replaced on the origin (another size, so nginx's ETag changes): a fresh derivative, the one
        // the new file makes locally.
        try FileManager.default.removeItem(atPath: origin + "/a.jpg")
        try FileManager.default.copyItem(atPath: Env.samples + "/gray-1000x700.jpg", toPath: origin + "/a.jpg")
        nginx.clearLog()
        let third = try await server.request(Self.remote("thumb", url, "size=64"))
        try #require(third.status == 200)
        let localNew = try await server.request(Self.signer.sign("/thumb/a.jpg?size=64"))
        #expect(third.body != first.body && third.body == localNew.body)
        let refetch = nginx.requests()
        #expect(refetch.first.map { !$0.ifNoneMatch.isEmpty && $0.status == 206 } == true, "the revalidation found a new file: \(refetch)")

        // The counters moved: every request above (ranged GETs, the 304), and their bytes.
        let fetches = try await server.metric("flipbook_source_fetches_total")
        #expect(fetches >= 3, "\(fetches)")
        #expect(try await server.metric("flipbook_source_fetch_bytes_total") > Double(64 << 10))
        #expect(try await server.metric("flipbook_source_fetch_refusals_total{reason=\"private-address\"}") == 0)
    }

    /// A storyboard of a URL: its WebVTT points at the sheets as signed `?url=...&sheet=N` targets, which the
    /// server answers; a poster of the same video equals the local one.
    @Test func storyboardsAndPostersOfAURL() async throws {
        let origin = try Env.temporaryFolder("origin-video")
        try FileManager.default.copyItem(atPath: Env.samples + "/testsrc2-480x270-4s.mp4", toPath: origin + "/v.mp4")
        let nginx = try await offPool { try NginxOrigin(root: origin) }
        let server = try await Self.server(root: origin, allowed: ["127.0.0.1:\(nginx.port)"])
        defer { Task { await server.stop() } }
        let url = nginx.url("/v.mp4")
        let poster = try await server.request(Self.remote("poster", url, "size=120"))
        let local = try await server.request(Self.signer.sign("/poster/v.mp4?size=120"))
        #expect(poster.status == 200 && poster.body == local.body)
        let vtt = try await server.request(Self.remote("storyboard", url))
        try #require(vtt.status == 200, "\(vtt.status) \(vtt.json)")
        let text = String(decoding: vtt.body, as: UTF8.self)
        let sheet = try #require(text.split(separator: "\n").first { $0.contains("&sheet=0") }.map { String($0.split(separator: "#").first!) })
        #expect(sheet.hasPrefix("/storyboard?url=\(URLPath.encode(url))&sheet=0&sig="), "\(sheet)")
        let image = try await server.request(sheet)
        #expect(image.status == 200 && image.header("Content-Type") == "image/jpeg" && image.body.starts(with: [0xFF, 0xD8]))
        // A sheet the signer did not make: 403.
        #expect(try await server.request("/storyboard?url=\(URLPath.encode(url))&sheet=0").status == 403)
    }

    @Test func refusedAddressesAreRefusedWithoutAConnection() async throws {
        let root = try Env.makeRoot("remote-refused")
        // A listener nobody opted in: a connection attempt would sit in its backlog, which a non-blocking
        // accept finds afterwards.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound && listen(listener, 16) == 0)
        let port = Int(UInt16(bigEndian: address.sin_port))

        let server = try await Self.server(root: root, allowed: ["127.0.0.1:1"])
        defer { Task { await server.stop() } }
        for url in ["http://127.0.0.1:\(port)/x.jpg", "http://localhost:\(port)/x.jpg", "http://2130706433:\(port)/x.jpg",
                    "http://169.254.169.254/latest/meta-data/"] {
            let reply = try await server.request(Self.remote("thumb", url, "size=64"))
            #expect(reply.status == 404 && reply.json["error"] == "fetch-refused", "\(url): \(reply.status) \(reply.json)")
        }
        let scheme = try await server.request(Self.remote("poster", "ftp://127.0.0.1/x.mp4"))
        #expect(scheme.status == 404 && scheme.json["error"] == "fetch-refused", "\(scheme.json)")
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        let accepted = accept(listener, nil, nil)
        #expect(accepted < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "a connection reached the listener")
        if accepted >= 0 { close(accepted) }
        #expect(try await server.metric("flipbook_source_fetch_refusals_total{reason=\"private-address\"}") == 4)
        #expect(try await server.metric("flipbook_source_fetch_refusals_total{reason=\"url\"}") == 1)
        #expect(try await server.metric("flipbook_source_fetches_total") == 0)

        // A server without signing (and without remote sources) refuses ?url= with 403 too.
        let plain = try await TestServer(root: root)
        defer { Task { await plain.stop() } }
        let reply = try await plain.request("/thumb?url=\(URLPath.encode("http://example.org/a.jpg"))")
        #expect(reply.status == 403, "\(reply.status) \(reply.json)")
    }
}
