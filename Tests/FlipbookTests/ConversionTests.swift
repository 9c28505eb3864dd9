import Foundation
import Testing
@testable import Flipbook

/// GIF to MP4, checked with ffprobe (an independent demuxer) against the GIF's own timing.
@Suite(.serialized) struct ConversionTests {
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

    /// Expected presentation times: the GIF's cumulative displayed delays, for the frames that differ from
    /// the one before (our own decode says which differ; the times themselves come from the GIF's delays).
    static func expectedTimes(_ path: String) throws -> (times: [Double], end: Double) {
        let decoder = try GIFDecoder(source: try FileByteSource(path: path))
        var times: [Double] = []
        var previous: [UInt8]?
        var end = 0
        while let frame = try decoder.nextFrame() {
            let flat = frame.image.flattened().pixels
            if flat != previous { times.append(Double(frame.presentationTimeMs) / 1000) }
            previous = flat
            end = frame.presentationTimeMs + frame.durationMs
        }
        return (times, Double(end) / 1000)
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
            let expected = try Self.expectedTimes(entry.url.path)
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
        #expect(result.encodedFrames == 1 && result.durationMs == 100)  // 0 cs plays as 100 ms
        let dir = try TemporaryDirectory()
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("s.mp4")))
        let p = try Self.ffprobe(dir.path("s.mp4"))
        #expect(p.framePTS == [0] && abs(p.duration - 0.1) < 0.001)
    }

    @Test func identicalFramesMergeAndTransparencyTakesTheBackground() throws {
        var gif = TestGIF(width: 8, height: 8)
        gif.loops = [3]
        gif.frames = [
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 1, count: 64), delay: 10),
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 1, count: 64), delay: 20),  // same picture
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 3, count: 64), delay: 30, transparent: 3),  // no change
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 2, count: 64), delay: 40),
        ]
        var options = VideoConversionOptions()
        options.posterQuality = 90
        let result = try GIFToVideo.convert(MemoryByteSource(gif.encode()), options: options)
        #expect(result.gifFrames == 4 && result.encodedFrames == 2 && result.durationMs == 1000 && result.loopCount == 3)
        let dir = try TemporaryDirectory()
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("m.mp4")))
        let p = try Self.ffprobe(dir.path("m.mp4"))
        #expect(p.framePTS == [0, 0.6] && abs(p.duration - 1.0) < 0.001 && p.tags["loop_count"] == "3")
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

    @Test func shardsCoverEveryFileExactlyOnce() throws {
        let names = (0..<200).map { "dir\($0 % 7)/clip-\($0).gif" }
        for n in [1, 2, 3, 8] {
            var seen: [String: Int] = [:]
            for i in 0..<n {
                for name in names where Int(ConversionPlanHash.fnv1a(name) % UInt64(n)) == i { seen[name, default: 0] += 1 }
            }
            #expect(seen.count == names.count && seen.values.allSatisfy { $0 == 1 }, "N=\(n)")
        }
    }
}

/// The same FNV-1a the CLI's --shard uses (its module is an executable, so the tests restate the
/// published algorithm: offset basis 0xcbf29ce484222325, prime 0x100000001b3).
enum ConversionPlanHash {
    static func fnv1a(_ text: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}

extension ConversionTests {
    /// Mean SSIM (ffmpeg's ssim filter, aligned by time, Tests/oracle/video_ssim.py) over the animated corpus
    /// GIFs of at least 5 frames: at least 0.98 against the GIF as browsers show it, and no lower than
    /// ffmpeg's own careful conversion (-fps_mode passthrough) of the same files, at default settings.
    @Test(.enabled(if: Corpus.available && CLITests.built, "needs the corpus and the built flipbook executable"))
    func qualityMatchesTheGIFAndBeatsFFmpeg() throws {
        let script = Corpus.packageRoot.appendingPathComponent("Tests/oracle/video_ssim.py").path
        let dir = try TemporaryDirectory()
        var ours: [Double] = [], theirs: [Double] = []
        for entry in Corpus.entries where entry.folder == "gif" {
            guard let range = entry.note.range(of: #"animated, (\d+) frames"#, options: .regularExpression),
                  let frames = Int(entry.note[range].split(separator: " ")[1]), frames >= 5, !entry.note.contains("TRUNCATED")
            else { continue }
            let gif = entry.url.path
            let mine = dir.path("ours-\(ours.count).mp4"), ff = dir.path("ffmpeg-\(ours.count).mp4")
            try Data(GIFToVideo.convert(try FileByteSource(path: gif)).data).write(to: URL(fileURLWithPath: mine))
            let made = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", gif, "-fps_mode", "passthrough", "-movflags",
                                                           "+faststart", "-pix_fmt", "yuv420p", "-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2",
                                                           "-an", ff])
            try #require(made.status == 0)
            let a = try Run.program("/usr/bin/python3", [script, mine, gif, "--browser", CLITests.binary])
            let b = try Run.program("/usr/bin/python3", [script, ff, gif, "--browser", CLITests.binary])
            guard let x = Double(a.stdout.trimmingCharacters(in: .whitespacesAndNewlines)),
                  let y = Double(b.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                Issue.record("no SSIM for \(entry.path): \(a.stderr) \(b.stderr)")
                continue
            }
            guard !x.isNaN, !y.isNaN else { continue }  // under 8 px a side: the filter has no window
            ours.append(x)
            theirs.append(y)
        }
        #expect(ours.count >= 15)
        let meanOurs = ours.reduce(0, +) / Double(ours.count), meanTheirs = theirs.reduce(0, +) / Double(theirs.count)
        print("mean SSIM over \(ours.count) GIFs: flipbook \(meanOurs), ffmpeg passthrough \(meanTheirs)")
        #expect(meanOurs >= 0.98)
        #expect(meanOurs >= meanTheirs)
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
