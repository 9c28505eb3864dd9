import Foundation
import FlipbookTestSupport
import Testing

/// Issue 43's memory item, in a suite of its own so that it runs beside `S3CommandTests` (serialized, and the
/// longest suite of the run) instead of after it.
@Suite(.offPool) struct S3MemoryTests {
    /// Memory with a large object in and a large output out (a multipart upload) is what the same conversion
    /// of local files needs, plus the range reader's window (16 MiB), a read in flight (4 MiB) and one part
    /// going up (8 MiB): neither the object nor the output is copied whole on the way. The object is named
    /// on its own, so it is HEADed first: a HEAD of an object over 1 MiB used to fail as over the body limit.
    @Test func aLargeObjectConvertsInTheMemoryALocalFileNeeds() throws {
        let moto = try MotoServer()
        let folder = try TemporaryDirectory()
        let gif = folder.path("noise.gif")
        // 20 frames of 1000x1000 noise cycling through 4 pictures: a 27 MB GIF and, at crf 10, a 21 MB MP4 (3 parts).
        let made = try Run.program(Run.python, [packageRoot.appendingPathComponent("Tests/storage/noise_gif.py").path, gif, "20", "4"])
        try #require(made.status == 0, "\(made.stderr)")
        try moto.tool(["mb", "big"])
        try moto.tool(["put", "big", "in/noise.gif", gif])
        let options = ["--crf", "10", "--preset", "ultrafast", "--jobs", "1"]
        // GNU time reports flipbook's own peak RSS (see SweepTests.run on why not this process's wait4).
        func peakKB(_ arguments: [String], environment: [String: String]? = nil) throws -> Int {
            let rss = folder.path("rss")
            let run = try Run.program("/usr/bin/time", ["-f", "%M", "-o", rss, S3CommandTests.flipbook] + arguments, environment: environment)
            try #require(run.status == 0, "\(arguments): \(run.stderr)")
            return try #require(Int(try String(contentsOfFile: rss, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let local = try peakKB(["convert", gif, "-o", folder.path("noise.mp4")] + options)
        let remote = try peakKB(["convert", "s3://big/in/noise.gif", "-o", "s3://big/out/noise.mp4"] + options,
                                environment: moto.environment())
        try moto.tool(["get", "big", "out/noise.mp4", folder.path("got.mp4")])
        let mine = try Data(contentsOf: URL(fileURLWithPath: folder.path("got.mp4")))
        let reference = try Data(contentsOf: URL(fileURLWithPath: folder.path("noise.mp4")))
        #expect(mine == reference, "\(mine.count) bytes from S3, \(reference.count) locally")
        #expect(reference.count > 16 << 20, "the output must be large enough to go up in parts: \(reference.count) bytes")
        #expect(try moto.json(["uploads", "big"]) as? [String] == [])
        let allowance = 40 << 10  // KB: window, a read in flight, one part, and slack for the HTTP client's buffers
        #expect(remote <= local + allowance, "peak \(remote / 1024) MB through S3 against \(local / 1024) MB for local files")
    }
}
