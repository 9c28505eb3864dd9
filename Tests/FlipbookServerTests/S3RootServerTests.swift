import AsyncHTTPClient
import Flipbook
import FlipbookServer
import FlipbookService
import FlipbookStorage
import FlipbookTestSupport
import Foundation
import Testing

/// Issue 43, `flipbook serve s3://BUCKET/PREFIX/`: the served root is an S3 prefix on moto's server, whose
/// objects boto3 (`Tests/storage/s3tool.py`) puts and replaces. Derivatives must be the bytes the same request
/// makes from a local copy of the file, and never stale after an object is replaced.
@Suite(.serialized) struct S3RootServerTests {
    @Test func anS3PrefixIsServedByETag() async throws {
        let moto = try await offPool { try MotoServer() }
        defer { moto.stop() }
        let samples = Env.samples
        try await offPool {
            try moto.tool(["mb", "media"])
            try moto.tool(["put", "media", "lib/cat.jpg", samples + "/mandelbrot-1600x1200.jpg"])
            try moto.tool(["put", "media", "lib/sub dir/anim ü.gif", samples + "/testsrc-160x120-2s.gif"])
            try moto.tool(["put", "media", "lib/.hidden.jpg", samples + "/gray-1000x700.jpg"])
            try moto.tool(["put", "media", "outside.jpg", samples + "/gray-1000x700.jpg"])
        }
        let aws = try AWSConfiguration.load(environment: moto.environment(), httpClient: HTTPClient.shared)
        let client = S3Client(configuration: aws)
        let server = try await TestServer(root: "s3://media/lib/") { $0.service.s3Client = client }
        defer { Task { await server.stop() } }
        let local = try await TestServer(root: Env.makeRoot("s3-reference"))
        defer { Task { await local.stop() } }

        // The same bytes as from the local file: a thumbnail, and a GIF's MP4 under a key with a space and
        // non-ASCII.
        let thumb = try await server.request("/thumb/cat.jpg?size=64")
        try #require(thumb.status == 200, "\(thumb.status) \(String(decoding: thumb.body, as: UTF8.self))")
        let thumbLocal = try await local.request("/thumb/mandelbrot-1600x1200.jpg?size=64")
        #expect(thumb.body == thumbLocal.body)
        let mp4 = try await server.request("/mp4/sub%20dir/anim%20%C3%BC.gif")
        let mp4Local = try await local.request("/mp4/testsrc-160x120-2s.gif")
        #expect(mp4.status == 200 && mp4.body == mp4Local.body)
        // The original by ranges.
        let range = try await server.request("/original/cat.jpg", headers: [("Range", "bytes=0-1")])
        #expect(range.status == 206 && range.body == [0xFF, 0xD8], "\(range.status) \(range.body.prefix(4))")

        // Asked again: from the cache (one HEAD, no job).
        let jobs = try await server.metric("flipbook_jobs_total{kind=\"thumb\"}")
        #expect(try await server.request("/thumb/cat.jpg?size=64").body == thumb.body)
        #expect(try await server.metric("flipbook_jobs_total{kind=\"thumb\"}") == jobs)

        // The object replaced by another picture of the same size (a JPEG padded after its end): only the ETag
        // tells them apart, and it gives a new derivative, never the stale one.
        let localRoot = try Env.makeRoot("s3-replaced")
        var padded = try Data(contentsOf: URL(fileURLWithPath: samples + "/gray-1000x700.jpg"))
        let original = try Data(contentsOf: URL(fileURLWithPath: samples + "/mandelbrot-1600x1200.jpg"))
        try #require(padded.count < original.count)
        padded.append(Data(count: original.count - padded.count))
        try padded.write(to: URL(fileURLWithPath: localRoot + "/padded.jpg"))
        _ = try await offPool { try moto.tool(["put", "media", "lib/cat.jpg", localRoot + "/padded.jpg"]) }
        let replaced = try await server.request("/thumb/cat.jpg?size=64")
        #expect(replaced.status == 200 && replaced.body != thumb.body)
        let paddedLocal = try await TestServer(root: localRoot)
        defer { Task { await paddedLocal.stop() } }
        let replacedLocal = try await paddedLocal.request("/thumb/padded.jpg?size=64")
        #expect(replacedLocal.status == 200 && replaced.body == replacedLocal.body)

        // Missing keys, hidden names and anything that would leave the prefix: 404 or 400, never another object.
        #expect(try await server.request("/thumb/nope.jpg").status == 404)
        #expect(try await server.request("/thumb/.hidden.jpg").status == 404)
        #expect(try await server.request("/original/..%2Foutside.jpg").status == 400)
        #expect(try await server.request("/original/%2e%2e/outside.jpg").status == 400)

        // The gallery lists the prefix: its keys and its folders, hidden names left out.
        let root = String(decoding: try await server.request("/list/").body, as: UTF8.self)
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(root.utf8)) as? [String: Any])
        let items = try #require(listing["items"] as? [[String: Any]])
        #expect(items.map { $0["name"] as? String } == ["cat.jpg", "sub dir"], "\(root)")
        #expect(items.map { $0["kind"] as? String } == ["image", "folder"], "\(root)")
        let sub = String(decoding: try await server.request("/list/sub%20dir").body, as: UTF8.self)
        #expect(sub.contains("\"name\":\"anim ü.gif\"") && sub.contains("\"kind\":\"animation\""), "\(sub)")
        #expect(try await server.request("/list/nothing-here").status == 404)
        #expect(try await server.request("/gallery/").status == 200)

        // /metrics counts the S3 requests by operation and their bytes.
        #expect(try await server.metric("flipbook_s3_requests_total{operation=\"head\"}") >= 6)
        #expect(try await server.metric("flipbook_s3_requests_total{operation=\"get\"}") >= 2)
        #expect(try await server.metric("flipbook_s3_requests_total{operation=\"list\"}") >= 3)
        #expect(try await server.metric("flipbook_s3_bytes_total{direction=\"received\"}") > Double(64 << 10))

        // An object over 1 MiB (a JPEG padded after its end to 3 MiB): its HEAD's Content-Length used to be held
        // to the 1 MiB body limit, and every request for it failed.
        var large = original
        large.append(Data(count: (3 << 20) - original.count))
        try large.write(to: URL(fileURLWithPath: localRoot + "/large.jpg"))
        _ = try await offPool { try moto.tool(["put", "media", "lib/large.jpg", localRoot + "/large.jpg"]) }
        let largeThumb = try await server.request("/thumb/large.jpg?size=64")
        #expect(largeThumb.status == 200 && largeThumb.body == thumbLocal.body, "\(largeThumb.status)")
        let tail = try await server.request("/original/large.jpg", headers: [("Range", "bytes=-2")])
        #expect(tail.status == 206 && tail.body == [0, 0], "\(tail.status) \(tail.body.prefix(4))")
    }
}
