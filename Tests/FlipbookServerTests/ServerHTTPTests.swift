import Crypto
import Foundation
import FlipbookServer
import FlipbookService
import Testing

/// The real server on 127.0.0.1 (ephemeral port), talked to with AsyncHTTPClient and curl. Range answers
/// are checked against the file's own bytes on disk (`/original`), derivatives with ffprobe.
@Suite(.serialized) struct ServerHTTPTests {
    static let file = "testsrc-160x120-2s.gif"

    func fileBytes(_ root: String, _ name: String = file) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: root + "/" + name)))
    }

    @Test func rangesOnOriginal() async throws {
        let root = try Env.makeRoot("ranges")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        let bytes = try fileBytes(root)
        let n = bytes.count

        let full = try await server.request("/original/\(Self.file)")
        #expect(full.status == 200)
        #expect(full.body == bytes)
        #expect(full.header("Accept-Ranges") == "bytes")
        #expect(full.header("Content-Length") == String(n))
        #expect(full.header("Content-Type") == "image/gif")
        #expect(full.header("Cache-Control")?.contains("max-age") == true)
        let etag = try #require(full.header("ETag"))
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))

        // Safari's probe: exactly 2 bytes.
        let safari = try await server.request("/original/\(Self.file)", headers: [("Range", "bytes=0-1")])
        #expect(safari.status == 206)
        #expect(safari.body == Array(bytes[0...1]))
        #expect(safari.header("Content-Range") == "bytes 0-1/\(n)")
        #expect(safari.header("Content-Length") == "2")
        // Chrome's: 206 with everything.
        let chrome = try await server.request("/original/\(Self.file)", headers: [("Range", "bytes=0-")])
        #expect(chrome.status == 206)
        #expect(chrome.body == bytes)
        #expect(chrome.header("Content-Range") == "bytes 0-\(n - 1)/\(n)")
        // a-b, a-, suffix (QuickTime), clamped end.
        for (header, range) in [("bytes=100-199", 100...199), ("bytes=\(n - 10)-", (n - 10)...(n - 1)), ("bytes=-500", (n - 500)...(n - 1)),
                                ("bytes=1000-\(n * 5)", 1000...(n - 1)), ("bytes=-\(n * 2)", 0...(n - 1))] {
            let reply = try await server.request("/original/\(Self.file)", headers: [("Range", header)])
            #expect(reply.status == 206, "\(header)")
            #expect(reply.body == Array(bytes[range]), "\(header)")
            #expect(reply.header("Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound)/\(n)", "\(header)")
            #expect(reply.header("Content-Length") == String(range.count), "\(header)")
        }
        // Start at or past the size: 416 with bytes */N.
        for header in ["bytes=\(n)-", "bytes=\(n + 100)-\(n + 200)", "bytes=-0"] {
            let reply = try await server.request("/original/\(Self.file)", headers: [("Range", header)])
            #expect(reply.status == 416, "\(header)")
            #expect(reply.header("Content-Range") == "bytes */\(n)", "\(header)")
            #expect(reply.json["error"] == "range-not-satisfiable")
        }
        // Several ranges: 200 with the full body (allowed by RFC 9110).
        let several = try await server.request("/original/\(Self.file)", headers: [("Range", "bytes=0-0,2-2")])
        #expect(several.status == 200)
        #expect(several.body == bytes)
        // Malformed: ignored.
        let bad = try await server.request("/original/\(Self.file)", headers: [("Range", "bytes=5-1")])
        #expect(bad.status == 200 && bad.body == bytes)

        // If-Range with the current strong ETag honours the range; anything else gets 200 and everything.
        let ifRange = try await server.request("/original/\(Self.file)", headers: [("Range", "bytes=10-19"), ("If-Range", etag)])
        #expect(ifRange.status == 206 && ifRange.body == Array(bytes[10...19]))
        for other in ["\"0000\"", "W/" + etag, "Tue, 15 Nov 1994 08:12:31 GMT"] {
            let reply = try await server.request("/original/\(Self.file)", headers: [("Range", "bytes=10-19"), ("If-Range", other)])
            #expect(reply.status == 200, "\(other)")
            #expect(reply.body == bytes, "\(other)")
            #expect(reply.header("Content-Range") == nil)
        }
        // If-None-Match: 304 with no body.
        let notModified = try await server.request("/original/\(Self.file)", headers: [("If-None-Match", etag)])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(notModified.header("ETag") == etag)
        let modified = try await server.request("/original/\(Self.file)", headers: [("If-None-Match", "\"other\"")])
        #expect(modified.status == 200 && modified.body == bytes)

        // HEAD: GET's headers, no body; a Range on HEAD is answered as GET's would be, as nginx does
        // (NginxParityTests compares the two servers case by case).
        let head = try await server.request("/original/\(Self.file)", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == String(n))
        #expect(head.header("ETag") == etag)
        #expect(head.header("Content-Type") == "image/gif")
        let headRange = try await server.request("/original/\(Self.file)", method: "HEAD", headers: [("Range", "bytes=0-1")])
        #expect(headRange.status == 206 && headRange.body.isEmpty && headRange.header("Content-Length") == "2")
        #expect(headRange.header("Content-Range") == "bytes 0-1/\(n)")

        // curl agrees on the suffix range.
        let viaCurl = try await server.curl("/original/\(Self.file)", extra: ["-r", "-3"])
        #expect(viaCurl.status == 206)
    }

    @Test func mp4IsH264FaststartAndRangesComeFromTheCache() async throws {
        let root = try Env.makeRoot("mp4")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        let whole = try await server.request("/mp4/\(Self.file)")
        #expect(whole.status == 200)
        #expect(whole.header("Content-Type") == "video/mp4")
        let probe = try await ffprobe(whole.body, suffix: "mp4")
        #expect(probe.codec == "h264")
        #expect(probe.width == 160 && probe.height == 120)
        let boxes = topLevelBoxes(whole.body)
        let moov = try #require(boxes.firstIndex(of: "moov")), mdat = try #require(boxes.firstIndex(of: "mdat"))
        #expect(moov < mdat, "faststart: moov before mdat (\(boxes))")
        let n = whole.body.count
        let suffix = try await server.request("/mp4/\(Self.file)", headers: [("Range", "bytes=-100")])
        #expect(suffix.status == 206 && suffix.body == Array(whole.body[(n - 100)...]))
        let middle = try await server.request("/mp4/\(Self.file)", headers: [("Range", "bytes=10-1009"), ("If-Range", whole.header("ETag") ?? "")])
        #expect(middle.status == 206 && middle.body == Array(whole.body[10...1009]))
        #expect(server.server.service.jobsRun["mp4"] == 1)
        #expect(try await server.metric("flipbook_jobs_total{kind=\"mp4\"}") == 1)

        let small = try await server.request("/mp4/\(Self.file)?size=80")
        #expect(try await ffprobe(small.body, suffix: "mp4").width == 80)
        // A video gets 415, naming /preview.
        let video = try await server.request("/mp4/testsrc2-480x270-4s.mp4")
        #expect(video.status == 415)
        #expect(video.json["message"]?.contains("/preview") == true)
    }

    @Test func thumbnailsPostersPreviewsStoryboards() async throws {
        let root = try Env.makeRoot("kinds")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        let thumb = try await server.request("/thumb/mandelbrot-1600x1200.jpg?size=200")
        #expect(thumb.status == 200 && thumb.header("Content-Type") == "image/jpeg")
        let t = try await ffprobe(thumb.body, suffix: "jpg")
        #expect(t.width == 200 && t.height == 150)
        let cover = try await server.request("/thumb/mandelbrot-1600x1200.jpg?size=100&fit=cover&format=png")
        #expect(cover.header("Content-Type") == "image/png")
        let c = try await ffprobe(cover.body, suffix: "png")
        #expect(c.width == 100 && c.height == 100)
        // Never upscaled.
        let big = try await server.request("/thumb/box-transparent-120x90.gif?size=4000")
        let b = try await ffprobe(big.body, suffix: "jpg")
        #expect(b.width == 120 && b.height == 90)
        // /thumb of a video: its poster; /poster of a still: its thumbnail.
        let videoThumb = try await server.request("/thumb/testsrc2-480x270-4s.mp4?size=96")
        #expect(videoThumb.status == 200)
        #expect(try await ffprobe(videoThumb.body, suffix: "jpg").width == 96)
        let stillPoster = try await server.request("/poster/gray-1000x700.jpg?size=100")
        #expect(stillPoster.status == 200)
        #expect(try await ffprobe(stillPoster.body, suffix: "jpg").width == 100)
        let poster = try await server.request("/poster/\(Self.file)")
        #expect(poster.status == 200)
        #expect(try await ffprobe(poster.body, suffix: "jpg").width == 160)
        // Preview of a video: H.264 MP4 at the requested size; of a GIF: its MP4.
        let preview = try await server.request("/preview/testsrc2-480x270-4s.mp4?size=240")
        #expect(preview.status == 200)
        let p = try await ffprobe(preview.body, suffix: "mp4")
        #expect(p.codec == "h264" && p.width == 240)
        let gifPreview = try await server.request("/preview/\(Self.file)")
        #expect(gifPreview.status == 200)
        #expect(try await ffprobe(gifPreview.body, suffix: "mp4").codec == "h264")
        // Storyboard: the VTT names its sheets under /storyboard/<path>.sheet-N.jpg.
        let vtt = try await server.request("/storyboard/testsrc2-480x270-4s.mp4.vtt")
        #expect(vtt.status == 200 && vtt.header("Content-Type")?.hasPrefix("text/vtt") == true)
        let text = String(decoding: vtt.body, as: UTF8.self)
        #expect(text.hasPrefix("WEBVTT"))
        #expect(text.contains("/storyboard/testsrc2-480x270-4s.mp4.sheet-0.jpg#xywh="))
        let sheet = try await server.request("/storyboard/testsrc2-480x270-4s.mp4.sheet-0.jpg")
        #expect(sheet.status == 200)
        #expect(try await ffprobe(sheet.body, suffix: "jpg").codec == "mjpeg")
        #expect(server.server.service.jobsRun["storyboard"] == 1, "the sheet came from the VTT's job")
        let missingSheet = try await server.request("/storyboard/testsrc2-480x270-4s.mp4.sheet-99.jpg")
        #expect(missingSheet.status == 404)
        // Unicode and spaces in names.
        let unicode = try await server.request("/thumb/sub%20dir/gray%20%C3%BC.jpg?size=50")
        #expect(unicode.status == 200)
    }

    @Test func errorsAreJSON() async throws {
        let root = try Env.makeRoot("errors")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        let missing = try await server.request("/thumb/nope.jpg")
        #expect(missing.status == 404 && missing.json["error"] == "not-found")
        #expect(missing.header("Content-Type") == "application/json")
        let notMedia = try await server.request("/thumb/notes.txt")
        #expect(notMedia.status == 415 && notMedia.json["error"] == "not-media")
        #expect(notMedia.json["message"]?.isEmpty == false)
        for target in ["/mp4/bomb.gif", "/thumb/bomb.gif"] {
            let bomb = try await server.request(target)
            #expect(bomb.status == 422, "\(target)")
            #expect(bomb.json["error"] == "limit-exceeded", "\(target)")
        }
        for size in ["0", "4097", "abc", "-3", "12.5"] {
            let reply = try await server.request("/thumb/gray-1000x700.jpg?size=\(size)")
            #expect(reply.status == 400, "size=\(size)")
            #expect(reply.json["error"] == "bad-size")
        }
        // Over 8 KB of request target: 414 as JSON, as nginx answers a request line over its 8 KB buffers.
        for length in [8_300, 20_000] {
            let long = try await server.request("/thumb/" + String(repeating: "a", count: length) + ".jpg")
            #expect(long.status == 414 && long.json["error"] == "uri-too-long", "\(length) bytes: \(long.status)")
        }
        let unknownRoute = try await server.request("/resize/gray-1000x700.jpg")
        #expect(unknownRoute.status == 404 && unknownRoute.json["error"] == "not-found")
        let post = try await server.request("/thumb/gray-1000x700.jpg", method: "POST")
        #expect(post.status == 405)
        let health = try await server.request("/health")
        #expect(health.status == 200)
        // Parameter and path errors are refused before any job: only the two files above ran one.
        #expect(server.server.service.jobsRun["thumb", default: 0] == 2)
    }

    @Test func theRootIsAJail() async throws {
        let root = try Env.makeRoot("jail")
        let outside = try Env.temporaryFolder("outside")
        try Data("outside secret".utf8).write(to: URL(fileURLWithPath: outside + "/secret.gif"))
        try FileManager.default.copyItem(atPath: Env.samples + "/gray-1000x700.jpg", toPath: outside + "/photo.jpg")
        try FileManager.default.createSymbolicLink(atPath: root + "/escape.jpg", withDestinationPath: outside + "/photo.jpg")
        try FileManager.default.createSymbolicLink(atPath: root + "/escape-dir", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: root + "/inside-link.jpg", withDestinationPath: root + "/gray-1000x700.jpg")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        let attempts = [
            "/original/../\(URL(fileURLWithPath: outside).lastPathComponent)/secret.gif",
            "/original/%2e%2e/%2e%2e/etc/passwd", "/original/%2E%2E/etc/passwd", "/original/..%2fetc%2fpasswd",
            "/original/sub%20dir%2f..%2f..%2fetc%2fpasswd", "/original//etc/passwd", "/original/%2fetc%2fpasswd",
            "/original/a%00.jpg", "/original/./gray-1000x700.jpg", "/original/escape.jpg", "/thumb/escape.jpg",
            "/original/escape-dir/secret.gif", "/original/escape-dir/photo.jpg", "/original/..", "/original/%2e%2e",
            "/original/gray-1000x700.jpg%00.txt", "/original/..\\..\\etc\\passwd", "/original/..%5c..%5cetc%5cpasswd",
        ]
        for attempt in attempts {
            let reply = try await server.curl(attempt)
            #expect((400..<500).contains(reply.status), "\(attempt) -> \(reply.status)")
            #expect(!reply.body.contains("outside secret") && !reply.body.contains("root:"), "\(attempt)")
        }
        // A raw NUL byte and an absolute-form path in the request line never reach a file.
        let nul = try await rawHTTPStatus(port: server.port, request: Array("GET /original/gray-1000x700.jpg".utf8) + [0] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(nul == 0 || (400..<500).contains(nul), "NUL -> \(nul)")
        let absolute = try await rawHTTPStatus(port: server.port, request: Array("GET /etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect((400..<500).contains(absolute))
        // Dotfiles and dot-folders: 404.
        for dotted in ["/original/.hidden.jpg", "/thumb/.hidden.jpg", "/original/.git/inside.jpg", "/original/%2ehidden.jpg"] {
            let reply = try await server.curl(dotted)
            #expect(reply.status == 404, "\(dotted) -> \(reply.status)")
        }
        // A symlink that stays inside the root is served.
        #expect(try await server.curl("/original/inside-link.jpg").status == 200)
    }

    @Test func signatures() async throws {
        let root = try Env.makeRoot("signing")
        let keyHex = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
        let saltHex = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
        let server = try await TestServer(root: root) { $0.signer = URLSigner(keyHex: keyHex, saltHex: saltHex) }
        defer { Task { await server.stop() } }
        // The expected signature computed independently, by Python's hmac module.
        func pythonSignature(_ target: String) async throws -> String {
            let script = """
            import base64, hashlib, hmac, sys
            key = bytes.fromhex(sys.argv[1]); salt = bytes.fromhex(sys.argv[2])
            mac = hmac.new(key, salt + sys.argv[3].encode(), hashlib.sha256).digest()
            print(base64.urlsafe_b64encode(mac).rstrip(b"=").decode())
            """
            return try await Env.run(Env.python, ["-c", script, keyHex, saltHex, target]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let thumbTarget = "/thumb/gray-1000x700.jpg?size=64"
        let good = try await server.request(thumbTarget + "&sig=" + pythonSignature(thumbTarget))
        #expect(good.status == 200)
        let mp4Target = "/mp4/\(Self.file)"
        let goodMP4 = try await server.request(mp4Target + "?sig=" + pythonSignature(mp4Target))
        #expect(goodMP4.status == 200)
        let missing = try await server.request(thumbTarget)
        #expect(missing.status == 403 && missing.json["error"] == "bad-signature")
        let wrong = try await server.request(thumbTarget + "&sig=" + pythonSignature("/thumb/gray-1000x700.jpg?size=65"))
        #expect(wrong.status == 403)
        let tampered = try await server.request("/thumb/gray-1000x700.jpg?size=65&sig=" + pythonSignature(thumbTarget))
        #expect(tampered.status == 403)
        let notLast = try await server.request("/thumb/gray-1000x700.jpg?sig=" + pythonSignature(thumbTarget) + "&size=64")
        #expect(notLast.status == 403)
        let garbage = try await server.request(thumbTarget + "&sig=%%%")
        #expect(garbage.status == 400 || garbage.status == 403)
        // /health and /metrics need no signature.
        #expect(try await server.request("/health").status == 200)
        #expect(try await server.request("/metrics").status == 200)
        // Storyboard sheets are referenced by signed URLs that the server accepts.
        let vttTarget = "/storyboard/testsrc2-480x270-4s.mp4.vtt"
        let vtt = try await server.request(vttTarget + "?sig=" + pythonSignature(vttTarget))
        #expect(vtt.status == 200)
        let text = String(decoding: vtt.body, as: UTF8.self)
        let sheetURL = try #require(text.split(separator: "\n").first { $0.contains(".sheet-0.jpg") }.map { String($0.split(separator: "#").first!) })
        #expect(sheetURL.contains("?sig="))
        #expect(try await server.request(sheetURL).status == 200)
    }

    @Test func sixteenConcurrentFirstRequestsRunOneJob() async throws {
        let root = try Env.makeRoot("coalesce")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        #expect(try await server.metric("flipbook_jobs_total{kind=\"mp4\"}") == 0)
        let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
            for _ in 0..<16 { group.addTask { try await server.request("/mp4/\(Self.file)?size=120") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.allSatisfy { $0.status == 200 })
        #expect(Set(replies.map { $0.body }).count == 1)
        #expect(Set(replies.compactMap { $0.header("ETag") }).count == 1)
        #expect(try await server.metric("flipbook_jobs_total{kind=\"mp4\"}") == 1)
    }

    @Test func fullQueueGets503WithRetryAfter() async throws {
        let root = try Env.makeRoot("busy")
        let server = try await TestServer(root: root) {
            $0.service.workers = 1
            $0.service.queueLimit = 0
        }
        defer { Task { await server.stop() } }
        // Distinct cold derivatives at once: one runs, nothing may wait, the rest are refused.
        let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
            for size in 100..<108 { group.addTask { try await server.request("/thumb/mandelbrot-1600x1200.jpg?size=\(size)") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let busy = replies.filter { $0.status == 503 }
        #expect(!busy.isEmpty, "statuses: \(replies.map(\.status))")
        #expect(busy.allSatisfy { $0.header("Retry-After") != nil && $0.json["error"] == "busy" })
        #expect(replies.contains { $0.status == 200 })
    }

    @Test func metricsAndHealth() async throws {
        let root = try Env.makeRoot("metrics")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        _ = try await server.request("/thumb/gray-1000x700.jpg?size=64")
        _ = try await server.request("/thumb/gray-1000x700.jpg?size=64")
        _ = try await server.request("/thumb/nope.jpg")
        let text = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
        for series in ["flipbook_http_responses_total{code=\"200\"}", "flipbook_http_responses_total{code=\"404\"}",
                       "flipbook_jobs_total{kind=\"thumb\"} 1", "flipbook_cache_hits_total{cache=\"memory\"}",
                       "flipbook_http_request_duration_seconds_bucket", "flipbook_job_duration_seconds_bucket", "flipbook_queue_depth",
                       "flipbook_jobs_in_flight", "flipbook_memory_cache_bytes", "flipbook_http_requests_total{route=\"thumb\",code=\"200\"}"] {
            #expect(text.contains(series), "\(series)")
        }
    }
}
