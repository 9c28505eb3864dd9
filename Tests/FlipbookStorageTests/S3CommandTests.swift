import Crypto
import Foundation
import FlipbookTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 43: the commands with `s3://` sources and outputs, against moto's server on loopback, with boto3
/// (`Tests/storage/s3tool.py`) as the independent client that puts the sources and reads every output back.
/// Deterministic outputs must be the bytes the same command writes from local files.
@Suite(.serialized, .offPool) struct S3CommandTests {
    static let flipbook = packageRoot.appendingPathComponent(".build/debug/flipbook").path
    static let samples = packageRoot.appendingPathComponent("samples").path

    static func run(_ arguments: [String], _ moto: MotoServer, endpoint: String? = nil, extra: [String: String] = [:]) throws -> Run.Result {
        try Run.program(flipbook, arguments, environment: moto.environment(endpoint: endpoint, extra: extra))
    }

    static func sha256Base64(_ data: Data) -> String { Data(SHA256.hash(data: data)).base64EncodedString() }

    @Test func commandsWriteWhatTheyWriteLocally() throws {
        let moto = try MotoServer()
        let folder = try TemporaryDirectory()
        try moto.tool(["mb", "media", "derived"])
        // Keys a user really has: spaces, +, =, ~, unicode, a doubled slash.
        let keys = ["in/testsrc2-480x270-4s.mp4": "testsrc2-480x270-4s.mp4", "in/a b+c=d~é 日本.jpg": "mandelbrot-1600x1200.jpg",
                    "in//double/anim.gif": "testsrc-160x120-2s.gif"]
        for (key, file) in keys { try moto.tool(["put", "media", key, Self.samples + "/" + file]) }
        let cases: [(s3: [String], local: [String], output: String, type: String)] = [
            (["poster", "s3://media/in/testsrc2-480x270-4s.mp4", "-o", "s3://derived/p/poster.jpg", "--at", "1s"],
             ["poster", Self.samples + "/testsrc2-480x270-4s.mp4", "-o", folder.path("poster.jpg"), "--at", "1s"], "p/poster.jpg", "image/jpeg"),
            (["thumb", "s3://media/in/a b+c=d~é 日本.jpg", "-o", "s3://derived/t/thumb é.webp", "--size", "200"],
             ["thumb", Self.samples + "/mandelbrot-1600x1200.jpg", "-o", folder.path("thumb.webp"), "--size", "200"], "t/thumb é.webp", "image/webp"),
            (["convert", "s3://media/in//double/anim.gif", "-o", "s3://derived/v/anim.mp4"],
             ["convert", Self.samples + "/testsrc-160x120-2s.gif", "-o", folder.path("anim.mp4")], "v/anim.mp4", "video/mp4"),
            (["preview", "s3://media/in/testsrc2-480x270-4s.mp4", "-o", "s3://derived/v/hover.mp4", "--segments", "2", "--size", "160"],
             ["preview", Self.samples + "/testsrc2-480x270-4s.mp4", "-o", folder.path("hover.mp4"), "--segments", "2", "--size", "160"],
             "v/hover.mp4", "video/mp4"),
        ]
        for c in cases {
            let remote = try Self.run(c.s3 + ["--cache-control", "public, max-age=60"], moto)
            try #require(remote.status == 0, "\(c.s3): \(remote.stderr)")
            let local = try Run.program(Self.flipbook, c.local)
            try #require(local.status == 0, "\(c.local): \(local.stderr)")
            try moto.tool(["get", "derived", c.output, folder.path("got")])
            let mine = try Data(contentsOf: URL(fileURLWithPath: folder.path("got")))
            let reference = try Data(contentsOf: URL(fileURLWithPath: c.local[c.local.firstIndex(of: "-o")! + 1]))
            #expect(mine == reference, "\(c.s3[0]): \(mine.count) bytes from S3, \(reference.count) locally")
            let head = try #require(try moto.json(["head", "derived", c.output]) as? [String: Any])
            #expect(head["type"] as? String == c.type, "\(head)")
            #expect(head["cacheControl"] as? String == "public, max-age=60", "\(head)")
            #expect(head["checksum"] as? String == Self.sha256Base64(mine), "the integrity checksum: \(head)")
        }
        // A storyboard's sheets and WebVTT under an S3 prefix, the same files as locally.
        let board = try Self.run(["storyboard", "s3://media/in/testsrc2-480x270-4s.mp4", "-o", "s3://derived/board/", "--interval", "1s"], moto)
        try #require(board.status == 0, "\(board.stderr)")
        let local = try Run.program(Self.flipbook, ["storyboard", Self.samples + "/testsrc2-480x270-4s.mp4", "-o", folder.path("board"), "--interval", "1s"])
        try #require(local.status == 0)
        let listed = try #require(try moto.json(["list", "derived", "board/"]) as? [[Any]]).compactMap { $0.first as? String }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path("board")).sorted()
        #expect(listed == files.map { "board/" + $0 }, "\(listed) vs \(files)")
        // probe reads an object as it reads the file.
        let probed = try Self.run(["probe", "--json", "s3://media/in/testsrc2-480x270-4s.mp4"], moto)
        let probedLocal = try Run.program(Self.flipbook, ["probe", "--json", Self.samples + "/testsrc2-480x270-4s.mp4"])
        #expect(probed.stdout.replacingOccurrences(of: "s3://media/in/", with: Self.samples + "/") == probedLocal.stdout)
        #expect(try moto.json(["uploads", "derived"]) as? [String] == [])
    }

    /// The request path a key goes out as is S3's encoding of it, exactly what was signed (moto does not check
    /// signatures by default, so the path it received is checked instead, through the logging proxy), with
    /// Python's `urllib.parse.quote` as the independent encoder.
    @Test func keysGoOnTheWireAsS3EncodesThem() throws {
        let moto = try MotoServer()
        let folder = try TemporaryDirectory()
        try moto.tool(["mb", "media"])
        let keys = ["a b+c=d~é 日本.jpg", "x//y/%25.jpg", "trailing/.jpg", "sp ace/(1)&[2]!'*.jpg"]
        for key in keys { try moto.tool(["put", "media", key, Self.samples + "/gray-1000x700.jpg"]) }
        let log = folder.path("proxy.log"), portFile = folder.path("port")
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: Run.python)
        proxy.arguments = [packageRoot.appendingPathComponent("Tests/storage/fault_proxy.py").path, portFile, String(moto.port),
                           folder.path("control.json"), log]
        try proxy.run()
        defer { kill(proxy.processIdentifier, SIGKILL); proxy.waitUntilExit() }
        while !FileManager.default.fileExists(atPath: portFile) { try #require(proxy.isRunning); usleep(20_000) }
        let endpoint = "http://127.0.0.1:" + (try String(contentsOfFile: portFile, encoding: .utf8))
        let out = try Self.run(["probe", "--json"] + keys.map { "s3://media/\($0)" }, moto, endpoint: endpoint)
        #expect(out.status == 0, "\(out.stdout)")
        let quote = try Run.program(Run.python, ["-c", "import sys, urllib.parse\nfor k in sys.argv[1:]: print('/media/' + urllib.parse.quote(k, safe='/-_.~'))"] + keys)
        let expected = quote.stdout.split(separator: "\n").map(String.init)
        let sent = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            return parts.count == 4 && parts[0] == "GET" ? String(parts[1].split(separator: "?")[0]) : nil
        }
        #expect(Set(sent) == Set(expected), "sent \(sent), expected \(expected)")
    }

    @Test func missingObjectsBucketsAndRefusedCredentialsAreTypedErrors() throws {
        let moto = try MotoServer()
        try moto.tool(["mb", "media"])
        try moto.tool(["put", "media", "a.jpg", Self.samples + "/gray-1000x700.jpg"])
        for (url, code) in [("s3://media/missing.jpg", "not-found"), ("s3://no-such-bucket/a.jpg", "not-found")] {
            let out = try Self.run(["probe", "--json", url], moto)
            #expect(out.status == 1 && out.stdout.contains("\"code\":\"\(code)\"") && out.stdout.contains(url), "\(url): \(out.stdout)")
        }
        // An output that names a prefix, not an object, is refused before any work.
        let prefix = try Self.run(["poster", Self.samples + "/testsrc2-480x270-4s.mp4", "-o", "s3://media/posters/"], moto)
        #expect(prefix.status != 0)

        // moto checking signatures and IAM policies: its first requests are free (to make the users).
        // Five free requests: the bucket, the object, and the IAM user, its policy and its key.
        let strict = try MotoServer(authenticate: true, freeRequests: 5)
        try strict.tool(["mb", "media"])
        try strict.tool(["put", "media", "a.jpg", Self.samples + "/gray-1000x700.jpg"])
        let user = try #require(try strict.json(["iam-user"]) as? [String: String])
        let good = ["AWS_ACCESS_KEY_ID": user["id"]!, "AWS_SECRET_ACCESS_KEY": user["secret"]!]
        let ok = try Self.run(["probe", "--json", "s3://media/a.jpg"], strict, extra: good)
        #expect(ok.status == 0, "the IAM user's keys: \(ok.stdout) \(ok.stderr)")
        let badSecret = try Self.run(["probe", "--json", "s3://media/a.jpg"], strict,
                                     extra: ["AWS_ACCESS_KEY_ID": user["id"]!, "AWS_SECRET_ACCESS_KEY": "wrong" + user["secret"]!])
        #expect(badSecret.status == 1 && badSecret.stdout.contains("\"code\":\"access-denied\""), "\(badSecret.stdout)")
        let unknownKey = try Self.run(["probe", "--json", "s3://media/a.jpg"], strict, extra: ["AWS_ACCESS_KEY_ID": "AKIANOSUCHKEY0000000"])
        #expect(unknownKey.status == 1 && unknownKey.stdout.contains("\"code\":\"access-denied\""), "\(unknownKey.stdout)")
    }

    /// 10,000 keys under one prefix (ListObjectsV2 pages with continuation tokens), 200 of them GIFs, converted by
    /// two processes each taking its shard: every GIF is converted exactly once, the rest skipped by name.
    @Test func aTenThousandKeyPrefixConvertsOnceAcrossTwoShards() throws {
        let moto = try MotoServer()
        let folder = try TemporaryDirectory()
        try moto.tool(["mb", "gifs", "videos"])
        try moto.tool(["fill", "gifs", "lib/", "10000", Self.samples + "/box-transparent-120x90.gif"])
        let shards = try (0..<2).map { i -> Process in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Self.flipbook)
            p.arguments = ["convert", "s3://gifs/lib/", "-o", "s3://videos/lib/", "--shard", "\(i)/2", "--jobs", "2", "--report", folder.path("r\(i).jsonl")]
            p.environment = ProcessInfo.processInfo.environment.merging(moto.environment()) { $1 }
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        for p in shards { p.waitUntilExit() }
        #expect(shards.allSatisfy { $0.terminationStatus == 0 })
        let lines = try (0..<2).flatMap { i in
            try String(contentsOfFile: folder.path("r\(i).jsonl"), encoding: .utf8).split(separator: "\n")
                .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        let converted = lines.filter { $0["status"] as? String == "converted" }.compactMap { $0["input"] as? String }
        #expect(converted.count == 200 && Set(converted).count == 200, "\(converted.count) converted, \(Set(converted).count) distinct")
        #expect(try #require(try moto.json(["list", "videos", "lib/"]) as? [[Any]]).count == 200)
        // Both shards had work: the split is by a hash of the key, not all on one side.
        let perShard = try (0..<2).map { i in try String(contentsOfFile: folder.path("r\(i).jsonl"), encoding: .utf8).split(separator: "\n").count }
        #expect(perShard.allSatisfy { $0 > 50 }, "\(perShard)")
    }

    /// Through a proxy that answers 503 SlowDown and resets connections on a share of requests, then goes away
    /// for seconds in the middle of a run: every conversion finishes, nothing partial is left; when the faults
    /// never stop, a typed error; an object replaced while it is read fails `source-changed`.
    @Test func faultsAreRetriedAndNothingPartialIsLeft() throws {
        let moto = try MotoServer()
        let folder = try TemporaryDirectory()
        try moto.tool(["mb", "gifs", "videos"])
        for i in 0..<12 { try moto.tool(["put", "gifs", "lib/g\(i).gif", Self.samples + "/testsrc-160x120-2s.gif"]) }
        try moto.tool(["put", "gifs", "clip.mp4", Self.samples + "/testsrc2-480x270-4s.mp4"])
        let control = folder.path("control.json"), log = folder.path("proxy.log"), portFile = folder.path("port")
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: Run.python)
        proxy.arguments = [packageRoot.appendingPathComponent("Tests/storage/fault_proxy.py").path, portFile, String(moto.port), control, log]
        proxy.environment = ProcessInfo.processInfo.environment.merging(moto.environment()) { $1 }
        try proxy.run()
        defer { kill(proxy.processIdentifier, SIGKILL); proxy.waitUntilExit() }
        while !FileManager.default.fileExists(atPath: portFile) { try #require(proxy.isRunning); usleep(20_000) }
        let endpoint = "http://127.0.0.1:" + (try String(contentsOfFile: portFile, encoding: .utf8))
        func set(_ json: String) throws { try json.write(toFile: control, atomically: true, encoding: .utf8) }
        let patient = ["AWS_MAX_ATTEMPTS": "10"]

        try set(#"{"slowdown": 0.3, "reset": 0.1}"#)
        let flaky = try Self.run(["convert", "s3://gifs/lib/", "-o", "s3://videos/flaky/", "--jobs", "2"], moto, endpoint: endpoint, extra: patient)
        #expect(flaky.status == 0, "\(flaky.stderr)")
        let proxied = try String(contentsOfFile: log, encoding: .utf8)
        #expect(proxied.contains(" 503 ") && proxied.contains(" RESET "), "faults were injected")
        #expect(try #require(try moto.json(["list", "videos", "flaky/"]) as? [[Any]]).count == 12)

        // Gone for four seconds while a run is under way (one conversion at a time): the run rides it out.
        try set("{}")
        let run = Process()
        run.executableURL = URL(fileURLWithPath: Self.flipbook)
        run.arguments = ["convert", "s3://gifs/lib/", "-o", "s3://videos/outage/", "--jobs", "1"]
        run.environment = ProcessInfo.processInfo.environment.merging(moto.environment(endpoint: endpoint, extra: patient)) { $1 }
        run.standardError = FileHandle.nullDevice
        try run.run()
        while (try? String(contentsOfFile: log, encoding: .utf8))?.components(separatedBy: "/videos/outage/").count ?? 0 < 4 {
            try #require(run.isRunning, "the run ended before the outage")
            usleep(20_000)
        }
        try set(#"{"down": true}"#)
        sleep(4)
        try set("{}")
        run.waitUntilExit()
        #expect(run.terminationStatus == 0)
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("DOWN"))
        let outage = try #require(try moto.json(["list", "videos", "outage/"]) as? [[Any]])
        #expect(outage.count == 12)
        // Every object is whole: each carries the metadata only a completed PUT writes, and the MP4 ffprobe reads.
        for entry in outage {
            let head = try #require(try moto.json(["head", "videos", entry[0] as! String]) as? [String: Any])
            #expect((head["metadata"] as? [String: String])?["flipbook-source"] != nil)
        }
        try moto.tool(["get", "videos", outage[0][0] as! String, folder.path("one.mp4")])
        #expect(try Run.program("/usr/bin/ffprobe", ["-v", "error", folder.path("one.mp4")]).status == 0)
        #expect(try moto.json(["uploads", "videos"]) as? [String] == [])

        // SlowDown that never stops: retried, then a typed error naming the object.
        try set(#"{"slowdown": 1.0}"#)
        let throttled = try Self.run(["probe", "--json", "s3://gifs/clip.mp4"], moto, endpoint: endpoint, extra: ["AWS_MAX_ATTEMPTS": "2"])
        #expect(throttled.status == 1 && throttled.stdout.contains("\"code\":\"fetch-failed\"") && throttled.stdout.contains("SlowDown"),
                "\(throttled.stdout)")

        // Replaced while it is read: the reads after the first are pinned with If-Match.
        try set(#"{"replace": {"key": "/clip.mp4", "file": "\#(Self.samples)/gray-1000x700.jpg"}}"#)
        // (A storyboard reads the whole 111 KB clip: more than the first 64 KB GET.)
        let changed = try Self.run(["storyboard", "s3://gifs/clip.mp4", "-o", folder.path("board"), "--interval", "1s"], moto, endpoint: endpoint)
        #expect(changed.status == 1 && changed.stderr.contains("changed"),
                "\(changed.stderr) \((try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").suffix(6) ?? [])")
        #expect(!FileManager.default.fileExists(atPath: folder.path("board")))
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("REPLACED /gifs/clip.mp4"))
    }
}
