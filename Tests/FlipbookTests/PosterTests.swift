import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// Video posters: every corpus video, against ffmpeg's own (autorotated) decode; and files made here.
@Suite(.serialized, .offPool) struct PosterTests {
    static func poster(_ path: String, _ options: PosterOptions = PosterOptions(), size: Int = 160) throws -> Image {
        var router = MediaRouter.standard
        router.register(VideoPipeline(posterOptions: options))
        return try MediaInput(path: path, router: router).thumbnailImage(ThumbnailRequest(maxPixelSize: size, format: .png))
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func everyCorpusVideoGivesAnUprightPosterOrATypedError() throws {
        for entry in Corpus.entries where entry.folder == "video" {
            do {
                let image = try Self.poster(entry.url.path)
                #expect(image.width > 0 && image.height > 0 && max(image.width, image.height) <= 160, "\(entry.path)")
                if entry.note.contains("rotation") && !entry.note.contains("NaN") {
                    #expect(image.height > image.width, "\(entry.path) should come out portrait")
                }
            } catch let error as FlipbookError {
                #expect(entry.note.contains("AUDIO ONLY") || entry.note.contains("CORRUPT"), "\(entry.path): \(error)")
            }
        }
    }

    /// At an exact time, our upright poster matches ffmpeg's autorotated frame (scaled the same way).
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage), arguments: [
        ("video/jsonize-ffmpeg-task/iphone_rotated.mov", "1"), ("video/androidx-media/internal_emulator_transformer_output_270_rotated.mp4", "2"),
        ("video/mp4parse-rust/video_rotation_90.mp4", "0"), ("video/androidx-media/roadtrip-vp92-10bit.webm", "1.5"),
        ("video/androidx-media/sample_av1.mp4", "0.5"), ("video/androidx-media/bear-vp9-odd-dimensions.webm", "0.5"),
    ])
    func matchesFFmpegsAutorotatedFrame(relative: String, at: String) throws {
        var options = PosterOptions()
        options.position = PosterPosition(at)!
        options.exact = true
        options.skipUniformFrames = false
        let ours = try Self.poster(Corpus.file(relative), options)
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-ss", at, "-i", Corpus.file(relative), "-frames:v", "1",
                         "-vf", "scale=\(ours.width):\(ours.height):flags=lanczos", dir.path("ref.png")])
        let reference = try #require(try Pillow.decode(dir.path("ref.png")))
        #expect(reference.width == ours.width && reference.height == ours.height)
        guard reference.width == ours.width, reference.height == ours.height else { return }
        #expect(Compare.meanAbsoluteDifference(ours, reference) < 6, "\(relative)")
    }

    /// --exact at a time after the last frame starts but before the container ends (99% often is) is the
    /// last frame, the one on screen then; it was "no video frame could be decoded" for 8 of the 16 corpus
    /// videos. The reference is ffmpeg's last frame (`-update 1` keeps overwriting one image).
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage), arguments: [
        "video/androidx-media/sample_av1.mp4", "video/androidx-media/bear-vp9-odd-dimensions.webm",
        "video/mp4parse-rust/video_rotation_90.mp4",
    ])
    func exactTimeAfterTheLastFrameIsTheLastFrame(relative: String) throws {
        var options = PosterOptions()
        options.position = PosterPosition("99%")!
        options.exact = true
        options.skipUniformFrames = false
        let ours = try Self.poster(Corpus.file(relative), options)
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-i", Corpus.file(relative), "-vf", "scale=\(ours.width):\(ours.height):flags=lanczos", "-update", "1",
                         dir.path("last.png")])
        let reference = try #require(try Pillow.decode(dir.path("last.png")))
        try #require(reference.width == ours.width && reference.height == ours.height, "\(reference.width)x\(reference.height)")
        #expect(Compare.meanAbsoluteDifference(ours, reference) < 6, "\(relative)")
    }

    @Test func blackOpeningIsSkipped() throws {
        let dir = try TemporaryDirectory()
        // 3 s of black, then 3 s of test pattern: 10% (0.6 s) falls in the black.
        try FFmpeg.run(["-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=3", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=3",
                         "-filter_complex", "[0][1]concat=n=2:v=1", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25",
                         dir.path("black.mp4")])
        let image = try Self.poster(dir.path("black.mp4"))
        #expect(!PosterExtractor.isNearlyUniform(image))
        var plain = PosterOptions()
        plain.skipUniformFrames = false
        #expect(PosterExtractor.isNearlyUniform(try Self.poster(dir.path("black.mp4"), plain)))
    }

    @Test func coverArtIsNeverThePoster() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "color=red:s=64x64", "-frames:v", "1", dir.path("cover.png")])
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2", "-i", dir.path("cover.png"), "-map", "1", "-map", "0",
                         "-c:v:0", "png", "-disposition:v:0", "attached_pic", "-c:v:1", "libx264", "-preset", "ultrafast",
                         dir.path("covered.mp4")])
        let image = try Self.poster(dir.path("covered.mp4"))
        #expect(image.width == 160 && image.height == 120, "the video's geometry, not the 64x64 cover")
        let reds = stride(from: 0, to: image.pixels.count, by: 3).filter { image.pixels[$0] > 200 && image.pixels[$0 + 1] < 40 }
        #expect(reds.count < image.width * image.height / 2)
    }

    @Test func truncatedAndAudioOnlyFilesAreTypedErrors() throws {
        let dir = try TemporaryDirectory()
        // moov at the end (no faststart), then cut: the index is gone.
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2", "-c:v", "libx264", "-preset", "ultrafast", dir.path("full.mp4")])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir.path("full.mp4")))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: dir.path("cut.mp4")))
        #expect(throws: FlipbookError.self) { try Self.poster(dir.path("cut.mp4")) }
        try FFmpeg.run(["-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", dir.path("audio.mp4")])
        do {
            _ = try Self.poster(dir.path("audio.mp4"))
            Issue.record("audio-only should fail")
        } catch let error as FlipbookError {
            #expect(error.code == .unsupported)
        }
    }

    /// From memory, a moov-first MP4's poster reads a fraction of the file (the byte source counts).
    @Test func posterReadsAFractionOfAFaststartFile() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=30", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
                         "-movflags", "+faststart", dir.path("long.mp4")])
        let memory = MemoryByteSource(try Data(contentsOf: URL(fileURLWithPath: dir.path("long.mp4"))))
        let image = try MediaInput(source: memory).thumbnailImage(ThumbnailRequest(maxPixelSize: 200))
        #expect(image.width == 200)
        print("poster read \(memory.bytesRead) of \(memory.count) bytes")
        #expect(memory.bytesRead < memory.count / 4)
    }

    /// Rewrites the first track header's display matrix (tkhd, ISO 14496-12 8.3.2) in an MP4 made by ffmpeg:
    /// Debian's ffmpeg 5.1 cannot write a mirrored one.
    static func withDisplayMatrix(_ mp4: String, _ matrix: [Int32], to out: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: mp4)))
        let tag = Array("tkhd".utf8)
        let at = try #require((0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == tag })
        let version = bytes[at + 4]
        var offset = at + 8 + (version == 1 ? 32 : 20) + 16
        for value in matrix {
            for shift in stride(from: 24, through: 0, by: -8) { bytes[offset] = UInt8(truncatingIfNeeded: UInt32(bitPattern: value) >> UInt32(shift)); offset += 1 }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: out))
    }

    /// A mirrored display matrix mirrors the poster; mirrored and turned a quarter, it transposes it. The
    /// expectation is the plain file's poster flipped by this test's own pixel loops.
    @Test func mirroredDisplayMatricesAreApplied() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1", "-c:v", "libx264", "-preset", "ultrafast", dir.path("plain.mp4")])
        let one: Int32 = 0x10000, w: Int32 = 320 << 16, h: Int32 = 240 << 16, unit: Int32 = 0x4000_0000
        try Self.withDisplayMatrix(dir.path("plain.mp4"), [-one, 0, 0, 0, one, 0, w, 0, unit], to: dir.path("hflip.mp4"))
        try Self.withDisplayMatrix(dir.path("plain.mp4"), [0, one, 0, one, 0, 0, 0, 0, unit], to: dir.path("transpose.mp4"))
        try Self.withDisplayMatrix(dir.path("plain.mp4"), [one, 0, 0, 0, -one, 0, 0, h, unit], to: dir.path("vflip.mp4"))
        var options = PosterOptions()
        options.position = .seconds(0.5)
        options.exact = true
        let plain = try Self.poster(dir.path("plain.mp4"), options)
        func pixel(_ image: Image, _ x: Int, _ y: Int) -> ArraySlice<UInt8> {
            image.pixels[((y * image.width + x) * 3)..<((y * image.width + x) * 3 + 3)]
        }
        let hflip = try Self.poster(dir.path("hflip.mp4"), options)
        let transposed = try Self.poster(dir.path("transpose.mp4"), options)
        let vflip = try Self.poster(dir.path("vflip.mp4"), options)
        #expect(hflip.width == plain.width && hflip.height == plain.height)
        #expect(vflip.width == plain.width && vflip.height == plain.height)
        #expect(transposed.width == plain.height && transposed.height == plain.width)
        var mismatches = (h: 0, t: 0, v: 0)
        for y in 0..<plain.height {
            for x in 0..<plain.width {
                if pixel(hflip, plain.width - 1 - x, y) != pixel(plain, x, y) { mismatches.h += 1 }
                if pixel(vflip, x, plain.height - 1 - y) != pixel(plain, x, y) { mismatches.v += 1 }
                if transposed.width == plain.height, pixel(transposed, y, x) != pixel(plain, x, y) { mismatches.t += 1 }
            }
        }
        #expect(mismatches == (0, 0, 0))
        // Not symmetric by accident: the flipped poster differs from the plain one.
        #expect(Compare.meanAbsoluteDifference(hflip, plain) > 10)
    }

    /// Representative mode passes over an unrepresentative first frame: 4 frames of SMPTE bars, then 2 s of
    /// testsrc2, one GOP. The fast path takes the bars; the representative pick looks like what ffmpeg's
    /// own `thumbnail` filter picks from the same 30 frames.
    @Test func representativeModePicksTheTypicalFrame() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "smptebars=s=320x240:r=25:d=0.16", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2",
                         "-filter_complex", "[0][1]concat=n=2:v=1", "-c:v", "libx264", "-preset", "ultrafast", "-g", "250",
                         dir.path("v.mp4")])
        var fast = PosterOptions()
        fast.position = .seconds(0)
        var representative = fast
        representative.representative = true
        let first = try Self.poster(dir.path("v.mp4"), fast)
        let typical = try Self.poster(dir.path("v.mp4"), representative)
        try FFmpeg.run(["-i", dir.path("v.mp4"), "-frames:v", "1", "-vf", "scale=160:120:flags=lanczos", dir.path("bars.png")])
        try FFmpeg.run(["-i", dir.path("v.mp4"), "-vf", "thumbnail=30,scale=160:120:flags=lanczos", "-frames:v", "1", dir.path("pick.png")])
        let bars = try #require(try Pillow.decode(dir.path("bars.png")))
        let pick = try #require(try Pillow.decode(dir.path("pick.png")))
        #expect(Compare.meanAbsoluteDifference(first, bars) < 6)
        #expect(Compare.meanAbsoluteDifference(typical, pick) < Compare.meanAbsoluteDifference(typical, bars) / 3,
                "\(Compare.meanAbsoluteDifference(typical, pick)) vs \(Compare.meanAbsoluteDifference(typical, bars))")
    }

    /// The search limits hold: with no time, --exact cannot reach a late frame (a typed error) and the fast
    /// path settles for the first frame it decoded.
    @Test func timeBudgetAndScanLimits() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "color=black:s=160x120:r=25:d=4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "250",
                         dir.path("black.mp4")])
        var exact = PosterOptions()
        exact.position = .seconds(3)
        exact.exact = true
        exact.timeBudget = 0
        #expect(throws: FlipbookError.self) { try Self.poster(dir.path("black.mp4"), exact) }
        exact.timeBudget = 10
        #expect(PosterExtractor.isNearlyUniform(try Self.poster(dir.path("black.mp4"), exact)))  // all black: the fallback
        var hurried = PosterOptions()
        hurried.timeBudget = 0
        #expect(PosterExtractor.isNearlyUniform(try Self.poster(dir.path("black.mp4"), hurried)))
        var few = PosterOptions()
        few.maxFramesScanned = 3
        #expect(PosterExtractor.isNearlyUniform(try Self.poster(dir.path("black.mp4"), few)))
    }

    /// The fast path skips deblocking (and box-shrinks before Lanczos) when the poster is a quarter of the
    /// frame or smaller; on a blocky 720p encode it matches ffmpeg's deblocked frame scaled by Lanczos
    /// (BT.709, as we read untagged HD) and differs from our own --exact decode by under a level.
    @Test func fastPathWithoutDeblockingMatchesFFmpeg() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=1280x720:r=25:d=1", "-c:v", "libx264", "-preset", "veryfast", "-crf", "38",
                         dir.path("blocky.mp4")])
        var options = PosterOptions()
        options.position = .seconds(0)
        let ours = try Self.poster(dir.path("blocky.mp4"), options)
        options.exact = true
        let deblocked = try Self.poster(dir.path("blocky.mp4"), options)
        try FFmpeg.run(["-i", dir.path("blocky.mp4"), "-frames:v", "1",
                         "-vf", "scale=\(ours.width):\(ours.height):flags=lanczos:in_color_matrix=bt709", dir.path("ref.png")])
        let reference = try #require(try Pillow.decode(dir.path("ref.png")))
        #expect(Compare.meanAbsoluteDifference(ours, reference) < 4)
        #expect(Compare.meanAbsoluteDifference(ours, deblocked) < 1)
    }

    /// Saturation (HSV S, 0-255) averaged over an image.
    static func meanSaturation(_ image: Image) -> Double {
        var total = 0.0
        for i in 0..<(image.width * image.height) {
            let p = image.pixels[(i * image.channels)..<(i * image.channels + 3)].map(Double.init)
            let hi = p.max()!, lo = p.min()!
            total += hi > 0 ? (hi - lo) / hi * 255 : 0
        }
        return total / Double(image.width * image.height)
    }

    /// HDR posters are tone mapped to sRGB. References: zimg (ffmpeg's zscale) linearising the same frame
    /// with HDR reference white at 203 cd/m² (BT.2408), converting BT.2020 to BT.709 primaries and applying
    /// the sRGB curve; and the naive rendering (the BT.2020 matrix only), which looks washed out.
    static func checkToneMapped(_ path: String, at seconds: Double, size: Int) throws {
        var options = PosterOptions()
        options.position = .seconds(seconds)
        options.exact = true
        let ours = try poster(path, options, size: size)
        let dir = try TemporaryDirectory()
        let scale = "scale=\(ours.width):\(ours.height):flags=lanczos"
        try FFmpeg.run(["-ss", "\(seconds)", "-i", path, "-frames:v", "1", "-vf",
                    "zscale=t=linear:npl=203,format=gbrpf32le,zscale=p=bt709,tonemap=clip,zscale=t=iec61966-2-1:m=bt709:r=full,format=rgb24,\(scale)",
                    dir.path("ref.png")])
        try FFmpeg.run(["-ss", "\(seconds)", "-i", path, "-frames:v", "1", "-vf", "\(scale):in_color_matrix=bt2020", dir.path("naive.png")])
        let reference = try #require(try Pillow.decode(dir.path("ref.png")))
        let naive = try #require(try Pillow.decode(dir.path("naive.png")))
        let ourError = Compare.meanAbsoluteDifference(ours, reference), naiveError = Compare.meanAbsoluteDifference(naive, reference)
        #expect(ourError < 10 && naiveError > 3 * ourError, "\(path): ours \(ourError), naive \(naiveError)")
        #expect(meanSaturation(ours) > 1.5 * meanSaturation(naive), "\(path): saturation \(meanSaturation(ours)) vs \(meanSaturation(naive))")
    }

    /// PQ: SDR testsrc2 encoded by zimg into PQ (reference white at 203 cd/m²) and x265 10-bit.
    @Test func pqPosterIsToneMapped() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1", "-vf",
                         "zscale=tin=bt709:min=bt709:pin=bt709:rin=tv:t=smpte2084:m=bt2020nc:p=bt2020:r=tv:npl=203,format=yuv420p10le",
                         "-c:v", "libx265", "-preset", "ultrafast",
                         "-x265-params", "log-level=error:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc", dir.path("pq.mp4")])
        try Self.checkToneMapped(dir.path("pq.mp4"), at: 0, size: 160)
    }

    /// HLG: the corpus's iPhone Dolby Vision clip (HLG base layer, BT.2020, 10-bit, rotated).
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func hlgPosterIsToneMapped() throws {
        try Self.checkToneMapped(Corpus.file("video/androidx-media/dolbyVision-hdr.MOV"), at: 0, size: 256)
    }

    @Test func positionsParse() {
        #expect(PosterPosition("12.5s") == .seconds(12.5))
        #expect(PosterPosition("1500ms") == .seconds(1.5))
        #expect(PosterPosition("10%") == .fraction(0.1))
        #expect(PosterPosition("7") == .seconds(7))
        #expect(PosterPosition("soon") == nil)
    }
}

@Suite(.serialized, .offPool) struct StoryboardTests {
    static func check(_ board: Storyboard, durationMs: Int) throws {
        // Cues tile the whole duration: first at 0, each starting where the previous ended, last at the end.
        #expect(board.cues.first?.startMs == 0)
        for (a, b) in zip(board.cues, board.cues.dropFirst()) { #expect(a.endMs == b.startMs && a.endMs > a.startMs) }
        #expect(abs((board.cues.last?.endMs ?? 0) - durationMs) <= 1)
        // Every sprite rectangle lies inside its sheet (sheet sizes read back from the JPEGs).
        let sizes = try board.sheets.map { try MediaInput(bytes: $0.data).probe() }
        for cue in board.cues {
            let sheet = sizes[cue.sheet]
            #expect(cue.x >= 0 && cue.y >= 0 && cue.x + cue.width <= sheet.width! && cue.y + cue.height <= sheet.height!)
        }
        // The WebVTT text carries the same cues.
        let vtt = board.webVTT()
        #expect(vtt.hasPrefix("WEBVTT\n\n"))
        #expect(vtt.components(separatedBy: "#xywh=").count - 1 == board.cues.count)
    }

    @Test func coversTheWholeVideoAndSplitsSheets() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=7.3",
                        "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", dir.path("v.mp4")])
        let input = try MediaInput(path: dir.path("v.mp4"))
        let duration = try #require(try input.probe().durationMs)  // 7.32 s: 183 frames at 25 fps
        var options = StoryboardOptions()
        options.interval = 0.4
        options.columns = 3
        options.tileSize = 64
        options.maxSheetSide = 200  // 64x36 tiles: 3 columns x 5 rows = 15 a sheet, so 19 tiles need 2 sheets
        let board = try Storyboard.make(input, options: options)
        #expect(board.cues.count == 19 && board.sheets.count == 2)
        try Self.check(board, durationMs: duration)
        // Tiles differ over time (testsrc2 moves), so they really come from different moments.
        var counted = StoryboardOptions()
        counted.count = 5
        let five = try Storyboard.make(input, options: counted)
        #expect(five.cues.count == 5 && five.sheets.count == 1)
        try Self.check(five, durationMs: duration)
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage), arguments: [
        "video/androidx-media/sample_sef_super_slow_motion.mp4", "video/jsonize-ffmpeg-task/iphone_rotated.mov",
        "video/androidx-media/roadtrip-vp92-10bit.webm",
    ])
    func corpusVideos(relative: String) throws {
        let input = try MediaInput(path: Corpus.file(relative))
        var options = StoryboardOptions()
        options.count = 6
        let board = try Storyboard.make(input, options: options)
        try Self.check(board, durationMs: try #require(try input.probe().durationMs))
    }
}

@Suite(.serialized, .offPool) struct PreviewTests {
    @Test func segmentsStitchIntoOneSilentContinuousClip() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=12",
                        "-f", "lavfi", "-i", "sine=d=12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
                        "-c:a", "aac", "-shortest", dir.path("in.mp4")])
        var options = PreviewOptions()
        options.segments = 4
        options.segmentLength = 0.8
        options.size = 200
        options.video.preset = "ultrafast"
        let result = try VideoPreview.make(try MediaInput(path: dir.path("in.mp4")), options: options)
        #expect(result.width == 200 && result.height == 113 && result.durationMs == 3200)
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("p.mp4")))
        let p = try ConversionTests.ffprobe(dir.path("p.mp4"))
        #expect(p.codec == "h264" && p.audioStreams == 0 && p.width == 200 && p.height == 114)
        #expect(abs(p.duration - 3.2) < 0.002)
        #expect(ConversionTests.topLevelBoxes(result.data).firstIndex(of: "moov")! < ConversionTests.topLevelBoxes(result.data).firstIndex(of: "mdat")!)
        // Continuous: frames every 40 ms (25 fps), never a gap or a repeat at the joins.
        let gaps = zip(p.framePTS.dropFirst(), p.framePTS).map { $0 - $1 }
        #expect(p.framePTS.first == 0 && gaps.allSatisfy { $0 > 0.03 && $0 < 0.05 }, "\(gaps)")
        #expect(p.framePTS.count == 80)
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func rotatedVideoGivesAnUprightPreview() throws {
        var options = PreviewOptions()
        options.segments = 2
        options.fps = 10
        options.video.preset = "ultrafast"
        let result = try VideoPreview.make(try MediaInput(path: Corpus.file("video/jsonize-ffmpeg-task/iphone_rotated.mov")), options: options)
        #expect(result.height > result.width)
        #expect(result.frames <= 21)
    }
}
