import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// The `flipbook` executable, run as a user would. Built by `swift build` before the tests run.
@Suite(.serialized, .offPool) struct CLITests {
    static let binary = Corpus.packageRoot.appendingPathComponent(".build/debug/flipbook").path
    static var built: Bool { FileManager.default.isExecutableFile(atPath: binary) }
    static let samples = Corpus.packageRoot.appendingPathComponent("samples").path

    func flipbook(_ args: String...) throws -> Run.Result { try Run.program(Self.binary, args) }

    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func probeJSONHasEveryKeyAndAnErrorForBadFiles() throws {
        let dir = try TemporaryDirectory()
        try Data("not media".utf8).write(to: URL(fileURLWithPath: dir.path("bad.jpg")))
        let result = try flipbook("probe", "--json", "\(Self.samples)/testsrc-rotated-exif6.jpg",
                                  "\(Self.samples)/alpha-640x480.png", dir.path("bad.jpg"))
        #expect(result.status != 0, "a failed file makes the exit status non-zero")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        let objects = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        for key in ["type", "width", "height", "orientation", "frames", "durationMs", "loopCount", "hasAlpha", "codec"] {
            #expect(objects.allSatisfy { $0.keys.contains(key) }, "key \(key)")
        }
        #expect(objects[0]["type"] as? String == "jpeg")
        // Stored 800x1200 (turned a quarter), displayed upright as the 1200x800 original.
        #expect(objects[0]["width"] as? Int == 1200 && objects[0]["height"] as? Int == 800, "displayed size, after orientation 6")
        #expect(objects[0]["orientation"] as? Int == 6)
        #expect(objects[1]["hasAlpha"] as? Bool == true)
        #expect(objects[1]["durationMs"] is NSNull)
        let error = try #require(objects[2]["error"] as? [String: Any])
        #expect(error["code"] as? String == "unknown-format")
    }

    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func thumbWritesEveryInputToADirectoryInParallel() throws {
        let dir = try TemporaryDirectory()
        let inputs = ["mandelbrot-1600x1200.jpg", "testsrc-rotated-exif6.jpg", "alpha-640x480.png", "cellauto-400x300.webp",
                      "testsrc-320x240.bmp", "gray-1000x700.jpg"].map { "\(Self.samples)/\($0)" }
        let result = try Run.program(Self.binary, ["thumb"] + inputs + ["-o", dir.path("out"), "--size", "200", "--fit", "cover", "--jobs", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: dir.path("out")).sorted()
        #expect(written == ["alpha-640x480.jpg", "cellauto-400x300.jpg", "gray-1000x700.jpg", "mandelbrot-1600x1200.jpg",
                            "testsrc-320x240.jpg", "testsrc-rotated-exif6.jpg"])
        for name in written {
            let info = try MediaInput(path: dir.path("out/\(name)")).probe()
            #expect(info.type == .jpeg && info.width == 200 && info.height == 200, "\(name)")
        }
        #expect(!written.contains { $0.hasSuffix(".tmp") })
    }

    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func thumbPicksTheFormatFromTheExtensionAndNeverOverwritesItsInput() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("in.png")
        try FileManager.default.copyItem(atPath: "\(Self.samples)/alpha-640x480.png", toPath: input)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let refused = try flipbook("thumb", input, "-o", input)
        #expect(refused.status != 0 && refused.stderr.contains("refusing to overwrite"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == before)
        let ok = try flipbook("thumb", input, "-o", dir.path("small.webp"), "--size", "64")
        #expect(ok.status == 0, "\(ok.stderr)")
        let info = try MediaInput(path: dir.path("small.webp")).probe()
        #expect(info.type == .webp && info.width == 64 && info.height == 48 && info.hasAlpha == true)
    }

    /// An output's missing folders are made (a fresh checkout has no `out/`), and a name whose extension
    /// is no still format we write is a usage error before any work, as vipsthumbnail and ffmpeg refuse it:
    /// it used to get JPEG bytes. ffprobe, not our decoder, says what was written.
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func outputsMakeTheirFoldersAndUnknownExtensionsAreRefused() throws {
        let dir = try TemporaryDirectory()
        let jpeg = "\(Self.samples)/mandelbrot-1600x1200.jpg", video = "\(Self.samples)/testsrc2-480x270-4s.mp4"
        let thumb = try flipbook("thumb", jpeg, "-o", dir.path("a/b/thumb.webp"), "--size", "64")
        #expect(thumb.status == 0, "\(thumb.stderr)")
        let poster = try flipbook("poster", video, "-o", dir.path("c/poster.png"), "--size", "64")
        #expect(poster.status == 0, "\(poster.stderr)")
        let preview = try flipbook("preview", video, "-o", dir.path("d/e/hover.mp4"), "--segments", "1", "--size", "64")
        #expect(preview.status == 0, "\(preview.stderr)")
        func codec(_ path: String) throws -> String { try Self.ffprobe(path, "stream=codec_name") }
        #expect(try codec(dir.path("a/b/thumb.webp")) == "webp")
        #expect(try codec(dir.path("c/poster.png")) == "png")
        #expect(try codec(dir.path("d/e/hover.mp4")) == "h264")
        for (args, name) in [(["thumb", jpeg, "-o", dir.path("t.gif")], "t.gif"), (["poster", video, "-o", dir.path("p.tiff")], "p.tiff"),
                             (["bundle", video, "--poster", dir.path("b.xyz")], "b.xyz")] {
            let refused = try Run.program(Self.binary, args)
            #expect(refused.status == 64, "\(args[0]) -o \(name): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains(".jpg, .png or .webp"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.path(name)), "\(name) was written")
        }
        // --format names the format, whatever the name says.
        let named = try flipbook("thumb", jpeg, "-o", dir.path("t.gif"), "--format", "png", "--size", "32")
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try codec(dir.path("t.gif")) == "png")
    }

    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func aBadFileIsReportedAndTheOthersStillConvert() throws {
        let dir = try TemporaryDirectory()
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 4]).write(to: URL(fileURLWithPath: dir.path("broken.jpg")))
        let result = try flipbook("thumb", dir.path("broken.jpg"), "\(Self.samples)/mandelbrot-1600x1200.jpg", "-o", dir.path("out"))
        #expect(result.status == 1)
        #expect(result.stderr.contains("broken.jpg"))
        #expect(!result.stderr.contains("Fatal"))
        #expect(FileManager.default.fileExists(atPath: dir.path("out/mandelbrot-1600x1200.jpg")))
        #expect(!FileManager.default.fileExists(atPath: dir.path("out/broken.jpg")))
    }

    /// A JPEG cut short is decoded as far as it goes and the rest left grey, as ffmpeg and browsers show it
    /// (rejecting it would fail the corpus rule), with libjpeg's warning on standard error as vipsthumbnail
    /// prints it; it used to succeed in silence. References are ffmpeg's: its scale of the whole original for
    /// the top band, and its decode of our output.
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func aTruncatedJPEGIsDecodedAsFarAsItGoesWithAWarning() throws {
        let dir = try TemporaryDirectory()
        let original = "\(Self.samples)/mandelbrot-1600x1200.jpg"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: original))
        try bytes.prefix(bytes.count * 4 / 10).write(to: URL(fileURLWithPath: dir.path("cut.jpg")))
        let cut = try flipbook("thumb", dir.path("cut.jpg"), "-o", dir.path("cut.png"))
        #expect(cut.status == 0, "\(cut.stderr)")
        #expect(cut.stderr.contains("cut.jpg: warning: Premature end of JPEG file"), "\(cut.stderr)")
        let whole = try flipbook("thumb", original, "-o", dir.path("whole.png"))
        #expect(whole.status == 0 && !whole.stderr.contains("warning"), "\(whole.stderr)")
        func rgb(_ args: [String], _ name: String) throws -> [UInt8] {
            let run = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y"] + args + ["-f", "rawvideo", "-pix_fmt", "rgb24", dir.path(name)])
            #expect(run.status == 0, "\(run.stderr)")
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.path(name))))
        }
        let ours = try rgb(["-i", dir.path("cut.png")], "ours.rgb")
        let reference = try rgb(["-i", original, "-vf", "scale=256:192:flags=area"], "reference.rgb")
        try #require(ours.count == 256 * 192 * 3 && reference.count == ours.count, "\(ours.count) bytes")
        func meanDifference(rows: Range<Int>) -> Double {
            let range = (rows.lowerBound * 256 * 3)..<(rows.upperBound * 256 * 3)
            return Double(range.reduce(0) { $0 + abs(Int(ours[$1]) - Int(reference[$1])) }) / Double(range.count)
        }
        #expect(meanDifference(rows: 0..<40) < 6, "the decoded top band: \(meanDifference(rows: 0..<40))")
        #expect(meanDifference(rows: 152..<192) > 20, "the missing bottom band is not the picture: \(meanDifference(rows: 152..<192))")
    }

    /// A GIF cut short converts with the frames it has, and the console line says so: the decoder's warning
    /// was in `--report` only. ffprobe (libavformat's GIF demuxer) counts the whole frames the cut file holds.
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func aTruncatedGIFConvertsWithAWarningOnTheConsole() throws {
        let dir = try TemporaryDirectory()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(Self.samples)/testsrc-160x120-2s.gif"))
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: dir.path("cut.gif")))
        let run = try flipbook("convert", dir.path("cut.gif"), "-o", dir.path("cut.mp4"), "--preset", "ultrafast")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("converted: ") && run.stderr.contains("incomplete"), "\(run.stderr)")
        let count = { (path: String) throws -> Int in
            Int(try Run.program("/usr/bin/ffprobe", ["-v", "quiet", "-count_packets", "-select_streams", "v:0", "-show_entries",
                                                     "stream=nb_read_packets", "-of", "csv=p=0", path])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        let inGIF = try count(dir.path("cut.gif")), inMP4 = try count(dir.path("cut.mp4"))
        // ffprobe drops the frame the cut falls in; we keep what of it was decoded, as a browser paints it.
        #expect(inGIF > 0 && inGIF < 20 && (inMP4 == inGIF || inMP4 == inGIF + 1), "GIF \(inGIF) frames, MP4 \(inMP4)")
    }

    /// `convert --report` gives a failure as `{"code", "message"}`, as docs/cli.md says and as `probe --json`
    /// and `ingest` do; it was a bare message.
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func convertReportsAFailureWithItsCode() throws {
        let dir = try TemporaryDirectory()
        try Data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x10, 0x00]).write(to: URL(fileURLWithPath: dir.path("cut.gif")))
        let run = try flipbook("convert", dir.path("cut.gif"), "\(Self.samples)/testsrc-160x120-2s.gif", "-o", dir.path("out"),
                               "--report", dir.path("r.jsonl"), "--preset", "ultrafast")
        #expect(run.status == 1, "\(run.stderr)")
        let rows = try String(contentsOfFile: dir.path("r.jsonl"), encoding: .utf8).split(separator: "\n")
            .map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let failed = try #require(rows.first { ($0["input"] as? String)?.hasSuffix("cut.gif") == true })
        let error = try #require(failed["error"] as? [String: Any], "\(failed)")
        #expect(["truncated", "corrupt"].contains(error["code"] as? String ?? ""), "\(error)")
        #expect((error["message"] as? String)?.isEmpty == false)
        let converted = try #require(rows.first { ($0["input"] as? String)?.hasSuffix("testsrc-160x120-2s.gif") == true })
        #expect(converted["status"] as? String == "converted" && converted["error"] is NSNull, "\(converted)")
        // One file named alone that is no animation fails (it was "skipped" with exit 0 and no output).
        for (input, why) in [("\(Self.samples)/alpha-640x480.png", "not a GIF, animated WebP or APNG (png)"),
                             (dir.path("missing.gif"), "No such file")] {
            let alone = try flipbook("convert", input, "-o", dir.path("alone.mp4"))
            #expect(alone.status == 1 && alone.stderr.contains(why), "\(alone.status) \(alone.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.path("alone.mp4")))
        }
    }
}

extension CLITests {
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func framesWritesEveryNthFrameOrTheFrameAtATime() throws {
        let dir = try TemporaryDirectory()
        var gif = TestGIF(width: 40, height: 20)
        gif.frames = (0..<6).map { i in .init(width: 40, height: 20, pixels: [UInt8](repeating: UInt8(i % 4), count: 800), delay: 50) }
        try Data(gif.encode()).write(to: URL(fileURLWithPath: dir.path("a.gif")))
        let every = try flipbook("frames", dir.path("a.gif"), "-o", dir.path("every"), "--every", "2", "--size", "20")
        #expect(every.status == 0, "\(every.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path("every")).sorted()
        #expect(names == ["frame-00000.png", "frame-00002.png", "frame-00004.png"])
        let info = try MediaInput(path: dir.path("every/frame-00002.png")).probe()
        #expect(info.width == 20 && info.height == 10 && info.hasAlpha == false)
        // 1.2 s falls in frame 2 (shown from 1.0 s to 1.5 s); past the end gives the last frame.
        _ = try flipbook("frames", dir.path("a.gif"), "-o", dir.path("at"), "--at", "1.2s")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("at")) == ["frame-00002.png"])
        _ = try flipbook("frames", dir.path("a.gif"), "-o", dir.path("end"), "--at", "99s")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("end")) == ["frame-00005.png"])
        // A frame whose image data is garbage ends the decoding there: a time past it gets an error and no
        // folder, where it got "0 frame(s) written", exit 0 and an empty folder.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.path("a.gif"))))
        let descriptors = bytes.indices.filter { i in
            bytes[i] == 0x2C && i + 11 < bytes.count && bytes[i + 5] == 40 && bytes[i + 7] == 20 && (i == 0 || bytes[i - 1] == 0)
        }
        try #require(descriptors.count == 6, "image descriptors found: \(descriptors)")
        for i in (descriptors[1] + 12)..<(descriptors[1] + 16) { bytes[i] = 0xFF }  // frame 1's first LZW bytes
        try Data(bytes).write(to: URL(fileURLWithPath: dir.path("damaged.gif")))
        let damaged = try flipbook("frames", dir.path("damaged.gif"), "-o", dir.path("late"), "--at", "2s")
        #expect(damaged.status == 1 && damaged.stderr.contains("no frame to write"), "\(damaged.status) \(damaged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("late")))
        let early = try flipbook("frames", dir.path("damaged.gif"), "-o", dir.path("early"), "--at", "0.2s")
        #expect(early.status == 0, "\(early.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("early")) == ["frame-00000.png"])
        // thumb on a GIF: a downsampled still of the chosen frame; probe reports the animation.
        let thumb = try flipbook("thumb", dir.path("a.gif"), "--frame", "1", "-o", dir.path("t.png"), "--size", "10")
        #expect(thumb.status == 0, "\(thumb.stderr)")
        let image = try MediaInput(path: dir.path("t.png")).thumbnailImage(ThumbnailRequest(maxPixelSize: 10, format: .png))
        #expect(image.width == 10 && image.height == 5 && Array(image.pixels.prefix(3)) == [255, 0, 0])
        let probe = try flipbook("probe", "--json", dir.path("a.gif"))
        let object = try #require(JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == 6 && object["durationMs"] as? Int == 3000 && object["loopCount"] is NSNull)
    }
}

extension CLITests {
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func convertMirrorsATreeResumesAndShards() throws {
        let dir = try TemporaryDirectory()
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir.path("in/sub"), withIntermediateDirectories: true)
        var names: [String] = []
        for i in 0..<6 {
            var gif = TestGIF(width: 32, height: 16)
            gif.frames = (0..<4).map { f in .init(width: 32, height: 16, pixels: (0..<512).map { UInt8(($0 / (8 + i) + f) % 4) }, delay: 5) }
            let name = i % 2 == 0 ? "a\(i).gif" : "sub/b\(i).gif"
            try Data(gif.encode()).write(to: URL(fileURLWithPath: dir.path("in/\(name)")))
            names.append(name)
        }
        try Data("not a gif".utf8).write(to: URL(fileURLWithPath: dir.path("in/notes.txt")))

        let first = try flipbook("convert", dir.path("in"), "-o", dir.path("out"), "--report", dir.path("r.jsonl"), "--preset", "ultrafast")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("notes.txt: not a GIF, animated WebP or APNG, skipped"))
        for name in names { #expect(fm.fileExists(atPath: dir.path("out/" + name.replacingOccurrences(of: ".gif", with: ".mp4")))) }
        let report = try String(contentsOfFile: dir.path("r.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(report.count == 6)
        let rows = try report.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(rows.allSatisfy { $0["status"] as? String == "converted" && ($0["frames"] as? Int) == 4 && ($0["durationMs"] as? Int) == 200 })
        #expect(!(try fm.subpathsOfDirectory(atPath: dir.path("out"))).contains { $0.hasSuffix(".tmp") })

        // A second run finds everything up to date.
        let again = try flipbook("convert", dir.path("in"), "-o", dir.path("out"), "--report", dir.path("r2.jsonl"))
        #expect(again.status == 0)
        let second = try String(contentsOfFile: dir.path("r2.jsonl"), encoding: .utf8)
        #expect(second.split(separator: "\n").allSatisfy { $0.contains("\"status\":\"skipped\"") })

        // Three shards, run separately, produce every output exactly once between them.
        var produced: [String] = []
        for i in 0..<3 {
            let out = dir.path("shard\(i)")
            let run = try flipbook("convert", dir.path("in"), "-o", out, "--shard", "\(i)/3", "--preset", "ultrafast")
            #expect(run.status == 0)
            produced += ((try? fm.subpathsOfDirectory(atPath: out)) ?? []).filter { $0.hasSuffix(".mp4") }
        }
        #expect(produced.sorted() == names.map { $0.replacingOccurrences(of: ".gif", with: ".mp4") }.sorted())

        // --keep-smaller keeps a tiny GIF whose MP4 would be larger.
        var tiny = TestGIF(width: 2, height: 2)
        tiny.frames = [.init(width: 2, height: 2, pixels: [1, 2, 3, 0])]
        try Data(tiny.encode()).write(to: URL(fileURLWithPath: dir.path("tiny.gif")))
        let kept = try flipbook("convert", dir.path("tiny.gif"), "-o", dir.path("tiny-out") + "/", "--keep-smaller", "--report", dir.path("r3.jsonl"))
        #expect(kept.status == 0)
        #expect(fm.fileExists(atPath: dir.path("tiny-out/tiny.gif")) && !fm.fileExists(atPath: dir.path("tiny-out/tiny.mp4")))
        #expect(try String(contentsOfFile: dir.path("r3.jsonl"), encoding: .utf8).contains("kept-gif"))
    }
}

extension CLITests {
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func previewPicksGIFOrWebPFromTheOutputExtension() throws {
        let dir = try TemporaryDirectory()
        let input = "\(Self.samples)/testsrc2-480x270-4s.mp4"
        for ext in ["gif", "webp"] {
            let result = try flipbook("preview", input, "-o", dir.path("p.\(ext)"), "--segments", "2", "--size", "120")
            #expect(result.status == 0, "\(result.stderr)")
            let animation = try Pillow.animation(dir.path("p.\(ext)"))
            #expect(animation.format == ext.uppercased() && animation.width == 120 && animation.height == 68 && animation.loop == 0)
            #expect(animation.durations.reduce(0, +) == 2000)
            #expect(result.stderr.contains("120x68, \(animation.frames.count) frames, 2000 ms"), "\(result.stderr)")
        }
        let refused = try flipbook("preview", input, "-o", dir.path("p.avi"))
        #expect(refused.status != 0 && refused.stderr.contains(".gif or .webp"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == ["p.gif", "p.webp"])
    }
}
