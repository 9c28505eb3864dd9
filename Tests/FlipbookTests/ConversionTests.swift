import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// GIF to MP4, checked with ffprobe (an independent demuxer) against the GIF's own timing.
@Suite(.serialized, .offPool) struct ConversionTests {
    struct Probed {
        var codec = "", pixelFormat = "", width = 0, height = 0
        var audioStreams = 0
        var framePTS: [Double] = []
        var duration = 0.0
        var tags: [String: String] = [:]
    }

    static func ffprobe(_ path: String) throws -> Probed {
        var p = Probed()
        let streams = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-show_entries",
            "stream=codec_type,codec_name,pix_fmt,width,height:format=duration:format_tags", "-of", "json", path])
        let json = try #require(JSONSerialization.jsonObject(with: Data(streams.stdout.utf8)) as? [String: Any])
        for s in (json["streams"] as? [[String: Any]]) ?? [] {
            if s["codec_type"] as? String == "audio" { p.audioStreams += 1 }
            if s["codec_type"] as? String == "video" {
                p.codec = s["codec_name"] as? String ?? ""
                p.pixelFormat = s["pix_fmt"] as? String ?? ""
                p.width = s["width"] as? Int ?? 0
                p.height = s["height"] as? Int ?? 0
            }
        }
        let format = json["format"] as? [String: Any]
        p.duration = Double(format?["duration"] as? String ?? "") ?? 0
        p.tags = (format?["tags"] as? [String: String]) ?? [:]
        let frames = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                          "frame=pts_time", "-of", "csv=p=0", path])
        // The first frame's CSV row can carry an empty side-data column ("0.000000,"): take the first field.
        p.framePTS = frames.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: ",", omittingEmptySubsequences: false).first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        return p
    }

    /// The box order at the top level: "moov" must come before "mdat" (faststart).
    static func topLevelBoxes(_ data: [UInt8]) -> [String] {
        var boxes: [String] = [], offset = 0
        while offset + 8 <= data.count {
            let size = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            boxes.append(String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self))
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    /// Expected presentation times: the GIF's cumulative displayed delays (the times come from the GIF's
    /// delays; our own decode says which frames differ from the one before). Every frame when all of them
    /// last alike (at least two: a constant rate). Every frame too, followed by repeats of the last picture
    /// one average sample apart ending one average sample before the end, when that many repeats (at least
    /// three, at most one per frame) make the average sample no longer than the shortest frame and fit in
    /// the last frame's stay (`SampleTiming.averaged`: B-frames at a variable rate). Otherwise only the
    /// frames that differ from the one before.
    static func expectedTimes(_ path: String) throws -> (times: [Double], end: Double) {
        let decoder = try GIFDecoder(source: try FileByteSource(path: path))
        var times: [Double] = [], all: [Double] = []
        var durations: [Int] = []
        var previous: [UInt8]?
        var end = 0
        while let frame = try decoder.nextFrame() {
            let flat = frame.image.flattened().pixels
            if flat != previous { times.append(Double(frame.presentationTimeMs) / 1000) }
            all.append(Double(frame.presentationTimeMs) / 1000)
            durations.append(frame.durationMs)
            previous = flat
            end = frame.presentationTimeMs + frame.durationMs
        }
        let n = durations.count, total = Double(end) / 1000
        guard n >= 2, let shortest = durations.min(), shortest > 0 else { return (times, total) }
        if Set(durations).count == 1 { return (all, total) }
        let repeats = max(3, Int((Double(end) / Double(shortest)).rounded(.up)) - n)
        let average = total / Double(n + repeats)
        if repeats <= n, Double(repeats) * average < Double(durations.last!) / 1000 {
            return (all + (1...repeats).reversed().map { total - Double($0) * average }, total)
        }
        return (times, total)
    }

    /// When each of the GIF's frames starts, in seconds (our decoder's timing; its delays are checked
    /// against ffprobe elsewhere).
    static func frameStarts(_ path: String) throws -> [Double] {
        let decoder = try GIFDecoder(source: try FileByteSource(path: path))
        var starts: [Double] = []
        while let frame = try decoder.nextFrame() { starts.append(Double(frame.presentationTimeMs) / 1000) }
        return starts
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func everyAnimatedCorpusGIFConvertsWithExactTiming() throws {
        let dir = try TemporaryDirectory()
        var converted = 0
        for entry in Corpus.entries where entry.folder == "gif" && entry.note.contains("animated") {
            let result: VideoConversionResult
            do {
                result = try GIFToVideo.convert(try FileByteSource(path: entry.url.path))
            } catch let error as FlipbookError {
                #expect(!error.message.isEmpty, "\(entry.path)")
                continue
            }
            let out = dir.path("\(converted).mp4")
            try Data(result.data).write(to: URL(fileURLWithPath: out))
            let p = try Self.ffprobe(out)
            #expect(p.codec == "h264" && p.pixelFormat == "yuv420p", "\(entry.path)")
            #expect(p.width % 2 == 0 && p.height % 2 == 0 && p.width == result.encodedWidth && p.height == result.encodedHeight)
            #expect(p.audioStreams == 0)
            let boxes = Self.topLevelBoxes(result.data)
            #expect((boxes.firstIndex(of: "moov") ?? .max) < (boxes.firstIndex(of: "mdat") ?? -1), "\(entry.path): \(boxes)")
            var expected = try Self.expectedTimes(entry.url.path)
            // One picture throughout: written as two samples (Chromium never plays a one-sample MP4), the
            // second where the GIF's last frame starts.
            if expected.times.count == 1, let lastStart = try Self.frameStarts(entry.url.path).last, lastStart > 0 {
                expected.times.append(lastStart)
            }
            #expect(p.framePTS.count == expected.times.count, "\(entry.path)")
            for (a, b) in zip(p.framePTS, expected.times) { #expect(abs(a - b) <= 0.001, "\(entry.path): \(a) vs \(b)") }
            #expect(abs(p.duration - expected.end) <= 0.001, "\(entry.path): duration \(p.duration) vs \(expected.end)")
            #expect(result.durationMs == Int((expected.end * 1000).rounded()))
            if let loops = result.loopCount { #expect(p.tags["loop_count"] == String(loops)) }
            converted += 1
        }
        #expect(converted >= 40)
    }

    @Test func stillGIFBecomesOneFrameOfItsDelayAndOddSizesArePadded() throws {
        var gif = TestGIF(width: 5, height: 3)
        gif.frames = [.init(width: 5, height: 3, pixels: [UInt8](repeating: 1, count: 15), delay: 0)]
        let result = try GIFToVideo.convert(MemoryByteSource(gif.encode()))
        #expect(result.width == 5 && result.height == 3 && result.encodedWidth == 6 && result.encodedHeight == 4)
        // 0 cs plays as 100 ms; one picture is written as two samples, split halfway (a one-sample MP4
        // never leaves readyState 1 in Chromium).
        #expect(result.encodedFrames == 2 && result.durationMs == 100)
        let dir = try TemporaryDirectory()
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("s.mp4")))
        let p = try Self.ffprobe(dir.path("s.mp4"))
        #expect(p.framePTS == [0, 0.05] && abs(p.duration - 0.1) < 0.001)
    }

    /// 4:2:0 gives each 2x2 block one colour, so an odd size's last column and row share theirs with the
    /// padding: padded with the (white) background they came out pink. Read by ffmpeg's decoder, cropped to
    /// the GIF's size, the red edge stays red (before: (167, 44, 31) there, 253, 0, 0 inside).
    @Test func oddSizesKeepTheColourOfTheirLastColumnAndRow() throws {
        var gif = TestGIF(width: 17, height: 13)
        gif.frames = [.init(width: 17, height: 13, pixels: [UInt8](repeating: 1, count: 17 * 13), delay: 10)]  // red
        let result = try GIFToVideo.convert(MemoryByteSource(gif.encode()))
        #expect(result.encodedWidth == 18 && result.encodedHeight == 14)
        let dir = try TemporaryDirectory()
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("odd.mp4")))
        try FFmpeg.run(["-i", dir.path("odd.mp4"), "-frames:v", "1", "-vf", "format=rgb24,crop=17:13:0:0",
                        "-f", "rawvideo", "-pix_fmt", "rgb24", dir.path("odd.rgb")])
        let rgb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.path("odd.rgb"))))
        try #require(rgb.count == 17 * 13 * 3)
        for (x, y) in [(16, 0), (16, 6), (16, 12), (0, 12), (8, 12), (8, 6)] {
            let i = (y * 17 + x) * 3
            #expect(rgb[i] > 235 && rgb[i + 1] < 20 && rgb[i + 2] < 20, "(\(x), \(y)): \(rgb[i]), \(rgb[i + 1]), \(rgb[i + 2])")
        }
    }

    /// A last frame shorter than the average sample: timestamps as they come, without B-frames, so runs of
    /// identical frames merge into one sample (`SampleTiming.variable`).
    @Test func identicalFramesMergeAndTransparencyTakesTheBackground() throws {
        var gif = TestGIF(width: 8, height: 8)
        gif.loops = [3]
        gif.frames = [
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 1, count: 64), delay: 30),
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 1, count: 64), delay: 40),  // same picture
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 3, count: 64), delay: 20, transparent: 3),  // no change
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 2, count: 64), delay: 10),
        ]
        var options = VideoConversionOptions()
        options.posterQuality = 90
        let result = try GIFToVideo.convert(MemoryByteSource(gif.encode()), options: options)
        #expect(result.gifFrames == 4 && result.encodedFrames == 2 && result.durationMs == 1000 && result.loopCount == 3)
        let dir = try TemporaryDirectory()
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("m.mp4")))
        let p = try Self.ffprobe(dir.path("m.mp4"))
        #expect(p.framePTS == [0, 0.9] && abs(p.duration - 1.0) < 0.001 && p.tags["loop_count"] == "3")
        let poster = try #require(result.poster)
        #expect(try MediaInput(bytes: poster).probe().width == 8)
        // Fully transparent GIF: every pixel is the background colour.
        var clear = TestGIF(width: 4, height: 4)
        clear.frames = [.init(width: 4, height: 4, pixels: [UInt8](repeating: 0, count: 16), transparent: 0)]
        options.background = (0, 128, 255)
        let blue = try GIFToVideo.convert(MemoryByteSource(clear.encode()), options: options)
        let image = try MediaInput(bytes: try #require(blue.poster)).thumbnailImage(ThumbnailRequest(maxPixelSize: 4, format: .png))
        #expect(abs(Int(image.pixels[0]) - 0) < 8 && abs(Int(image.pixels[1]) - 128) < 8 && abs(Int(image.pixels[2]) - 255) < 8)
    }

    /// Frames that move at an even pace, one a little longer, and a long last frame: every frame is a
    /// sample at its own time, with B-frames, then repeats of the last picture one average sample apart
    /// (here 7: 750 ms over 19 samples, no longer than the 40 ms frames). ffmpeg 5.1 reads no per-sample
    /// duration with B-frames; the H.264 timing info gives every packet the average, so none is without
    /// one, they add up to the animation and the last ends at its end (ffprobe's reading).
    @Test func framesThatLastUnalikeKeepBFramesAndTheirTimes() throws {
        var gif = TestGIF(width: 64, height: 48)
        var delays = [Int](repeating: 4, count: 11) + [30]  // 40 ms frames, one of 50 ms, then 300 ms
        delays[3] = 5
        for (i, delay) in delays.enumerated() {
            var pixels = [UInt8](repeating: 0, count: 64 * 48)
            for y in 10..<30 { for x in (i * 4)..<(i * 4 + 16) { pixels[y * 64 + x] = UInt8(1 + i % 3) } }
            gif.frames.append(.init(width: 64, height: 48, pixels: pixels, delay: delay))
        }
        let result = try GIFToVideo.convert(MemoryByteSource(gif.encode()))
        let total = delays.reduce(0, +) * 10
        #expect(result.gifFrames == 12 && result.encodedFrames == 12 && result.durationMs == total)
        let dir = try TemporaryDirectory()
        let path = dir.path("v.mp4")
        try Data(result.data).write(to: URL(fileURLWithPath: path))
        let p = try Self.ffprobe(path)
        let starts = delays.dropLast().reduce(into: [0]) { $0.append($0.last! + $1 * 10) }
        let average = Double(total) / 19
        let expected = starts.map { Double($0) / 1000 } + (1...7).reversed().map { (Double(total) - Double($0) * average) / 1000 }
        #expect(p.framePTS.count == 19 && zip(p.framePTS, expected).allSatisfy { abs($0 - $1) < 0.0005 }, "\(p.framePTS)")
        #expect(abs(p.duration - Double(total) / 1000) < 0.001)
        let packets = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                           "packet=pts_time,duration_time", "-of", "csv=p=0", path])
        let rows = packets.stdout.split(separator: "\n").map { $0.split(separator: ",").compactMap { Double($0) } }.filter { $0.count == 2 }
        #expect(rows.count == 19 && rows.allSatisfy { abs($0[1] * 1000 - average) < 0.01 }, "\(rows)")
        let last = try #require(rows.max { $0[0] < $1[0] })
        #expect(abs((last[0] + last[1]) * 1000 - Double(total)) < 0.5)
        let types = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type",
                                                         "-of", "csv=p=0", path])
        #expect(types.stdout.contains("B"), "no B-frame: \(types.stdout)")
    }
}

extension ConversionTests {
    static let python: String = {
        if let env = ProcessInfo.processInfo.environment["FLIPBOOK_PYTHON"], !env.isEmpty { return env }
        let venv = Corpus.packageRoot.appendingPathComponent(".build/venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3"
    }()
    static var browserReferenceReady: Bool {
        Corpus.available && CLITests.built && Run.which("chromium") != nil
            && ((try? Run.program(python, ["-c", "import websocket, ssimulacra2"]).status) == 0)
    }

    /// Against what Chromium shows (WebCodecs ImageDecoder over white, Tests/oracle/gif_score.py), at the same
    /// instants: on a few GIFs, Flipbook's default conversion is no more than 0.01 SSIM (yuv444p, all planes)
    /// and 2 SSIMULACRA2 points below ffmpeg's `-tune animation` recipe, and the video lasts exactly as long
    /// as the GIF plays in the browser. (The full set is `make bench`.)
    @Test(.enabled(if: browserReferenceReady, "needs the corpus, the built flipbook, chromium and the venv (make venv)"))
    func qualityAgainstTheBrowserMatchesTheTunedPeer() throws {
        let dir = try TemporaryDirectory()
        let made = try Run.program("/usr/bin/python3", [Corpus.packageRoot.appendingPathComponent("scripts/make-bench-gifs.py").path,
                                                        dir.path("bench")])
        try #require(made.status == 0, "\(made.stderr)")
        let gifs = [Corpus.file("gif/gifsicle/logo.gif"), Corpus.file("gif/glide/dl_world_anim.gif"), dir.path("bench/pixel-art.gif")]
        let script = Corpus.packageRoot.appendingPathComponent("Tests/oracle/gif_score.py").path
        for (i, gif) in gifs.enumerated() {
            let ours = dir.path("ours\(i).mp4"), peer = dir.path("peer\(i).mp4")
            let run = try Run.program(CLITests.binary, ["convert", gif, "-o", ours])
            try #require(run.status == 0, "\(run.stderr)")
            let ff = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", gif, "-fps_mode", "passthrough", "-c:v", "libx264",
                                                         "-tune", "animation", "-movflags", "+faststart", "-pix_fmt", "yuv420p",
                                                         "-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2", "-an", peer])
            try #require(ff.status == 0, "\(ff.stderr)")
            let scored = try Run.program(Self.python, [script, gif, ours, peer])
            try #require(scored.status == 0, "\(scored.stderr)")
            let rows = try scored.stdout.split(separator: "\n").map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            try #require(rows.count == 2)
            let (a, b) = (rows[0], rows[1])
            let name = URL(fileURLWithPath: gif).lastPathComponent
            print("\(name): flipbook SSIM \(a["ssim"] ?? "-") S2 \(a["s2"] ?? "-"); peer SSIM \(b["ssim"] ?? "-") S2 \(b["s2"] ?? "-")")
            let (sa, sb) = (try #require(a["ssim"] as? Double), try #require(b["ssim"] as? Double))
            let (qa, qb) = (try #require(a["s2"] as? Double), try #require(b["s2"] as? Double))
            #expect(sa >= sb - 0.01, "\(name): SSIM \(sa) against the peer's \(sb)")
            #expect(qa >= qb - 2, "\(name): SSIMULACRA2 \(qa) against the peer's \(qb)")
            #expect(a["video_ms"] as? Int == a["gif_ms"] as? Int, "\(name): the video must last as long as the GIF plays")
        }
    }
}

/// Every corpus file that ffmpeg decodes as an animation (GIF, animated WebP, APNG) converts, unless it is
/// on this list with its reason. Anything else rejected fails the test.
extension ConversionTests {
    /// Empty since animated WebP and APNG became frame sources: every animation ffmpeg decodes converts.
    static let expectedRejections: [String: String] = [:]

    @Test(.enabled(if: Corpus.available && CLITests.built, "needs the corpus and the built flipbook executable"))
    func everyAnimationFFmpegDecodesConvertsUnlessListed() throws {
        let dir = try TemporaryDirectory()
        var checked = 0
        for entry in Corpus.entries where entry.folder == "gif" || entry.note.contains("animated") || entry.note.contains("APNG") {
            let out = dir.path("v\(checked).mp4")
            checked += 1
            let ours = try Run.program(CLITests.binary, ["convert", entry.url.path, "-o", out, "--preset", "ultrafast"])
            let converted = ours.status == 0 && FileManager.default.fileExists(atPath: out)
            if let reason = Self.expectedRejections[entry.path] {
                // Listed: when it starts converting, the entry must go (the list stays true).
                #expect(!converted, "\(entry.path) converts now: remove it from the expected rejections (\(reason))")
                continue
            }
            if converted { continue }
            let ff = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-i", entry.url.path, "-frames:v", "1", "-f", "null", "-"])
            let ffmpegDecodes = ff.status == 0 && ff.stderr.isEmpty
            #expect(!ffmpegDecodes, "\(entry.path): ffmpeg decodes it but flipbook convert rejects it: \(ours.stderr)")
            if entry.folder == "gif", Self.browserReferenceReady {
                // Chromium (WebCodecs ImageDecoder) is the reference users see: exit 0 means it decoded frames.
                let script = Corpus.packageRoot.appendingPathComponent("Tests/oracle/gif_reference.py").path
                let chromium = try Run.program(Self.python, [script, entry.url.path])
                #expect(chromium.status != 0, "\(entry.path): Chromium decodes it but flipbook convert rejects it: \(ours.stderr)")
            }
        }
        #expect(checked >= 60)
    }
}

extension ConversionTests {
    /// Each codec in the container it belongs in, checked with ffprobe; HEVC in MP4 is tagged hvc1 (what
    /// Apple players require); H.264 in WebM is refused.
    @Test(arguments: [(VideoCodec.hevc, VideoContainer.mp4, "hevc"), (.vp9, .webm, "vp9"), (.vp9, .mp4, "vp9"),
                      (.av1, .webm, "av1"), (.av1, .mp4, "av1")])
    func otherCodecsAndContainers(codec: VideoCodec, container: VideoContainer, name: String) throws {
        var gif = TestGIF(width: 64, height: 48)
        gif.frames = (0..<6).map { i in .init(width: 64, height: 48, pixels: (0..<3072).map { UInt8(($0 / (4 + i)) % 4) }, delay: 10 + i) }
        var options = VideoConversionOptions()
        options.codec = codec
        options.container = container
        options.preset = "ultrafast"
        options.crf = 30
        let result = try GIFToVideo.convert(MemoryByteSource(gif.encode()), options: options)
        let dir = try TemporaryDirectory()
        let path = dir.path("v.\(container.rawValue)")
        try Data(result.data).write(to: URL(fileURLWithPath: path))
        let probe = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                         "stream=codec_name,codec_tag_string:format=format_name,duration", "-of", "json", path])
        let json = try #require(JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        let format = try #require(json["format"] as? [String: Any])
        #expect(stream["codec_name"] as? String == name)
        if codec == .hevc { #expect(stream["codec_tag_string"] as? String == "hvc1") }
        #expect((format["format_name"] as? String)?.contains(container == .webm ? "webm" : "mp4") == true)
        let expectedEnd = Double((0..<6).map { 10 + $0 }.reduce(0, +)) / 100
        #expect(abs((Double(format["duration"] as? String ?? "") ?? 0) - expectedEnd) < 0.002, "\(codec) in \(container)")
    }

    @Test func h264InWebMIsATypedError() throws {
        var gif = TestGIF(width: 4, height: 4)
        gif.frames = [.init(width: 4, height: 4, pixels: [UInt8](repeating: 1, count: 16))]
        var options = VideoConversionOptions()
        options.container = .webm
        #expect(throws: FlipbookError.self) { try GIFToVideo.convert(MemoryByteSource(gif.encode()), options: options) }
    }
}

extension ConversionTests {
    @Test func convertToAPathIsAtomicAndNeverReplacesTheGIF() throws {
        let dir = try TemporaryDirectory()
        var gif = TestGIF(width: 16, height: 16)
        gif.frames = (0..<3).map { i in .init(width: 16, height: 16, pixels: [UInt8](repeating: UInt8(i + 1), count: 256)) }
        let bytes = gif.encode()
        try Data(bytes).write(to: URL(fileURLWithPath: dir.path("a.gif")))
        let result = try GIFToVideo.convert(try FileByteSource(path: dir.path("a.gif")), toPath: dir.path("a.mp4"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path("a.mp4"))) == Data(result.data))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == ["a.gif", "a.mp4"])  // no temporary left
        #expect(throws: FlipbookError.self) {
            try GIFToVideo.convert(try FileByteSource(path: dir.path("a.gif")), toPath: dir.path("a.gif"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path("a.gif"))) == Data(bytes))
    }
}
