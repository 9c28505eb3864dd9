import Foundation
import Testing
@testable import Flipbook

/// Video posters: every corpus video, against ffmpeg's own (autorotated) decode; and files made here.
@Suite(.serialized) struct PosterTests {
    static func poster(_ path: String, _ options: PosterOptions = PosterOptions(), size: Int = 160) throws -> Image {
        var router = MediaRouter.standard
        router.register(VideoPipeline(posterOptions: options))
        return try MediaInput(path: path, router: router).thumbnailImage(ThumbnailRequest(maxPixelSize: size, format: .png))
    }

    static func ffmpeg(_ args: [String]) throws {
        let run = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y"] + args)
        try #require(run.status == 0, "\(run.stderr)")
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
        try Self.ffmpeg(["-ss", at, "-i", Corpus.file(relative), "-frames:v", "1",
                         "-vf", "scale=\(ours.width):\(ours.height):flags=lanczos", dir.path("ref.png")])
        let reference = try #require(try Pillow.decode(dir.path("ref.png")))
        #expect(reference.width == ours.width && reference.height == ours.height)
        guard reference.width == ours.width, reference.height == ours.height else { return }
        #expect(Compare.meanAbsoluteDifference(ours, reference) < 6, "\(relative)")
    }

    @Test func blackOpeningIsSkipped() throws {
        let dir = try TemporaryDirectory()
        // 3 s of black, then 3 s of test pattern: 10% (0.6 s) falls in the black.
        try Self.ffmpeg(["-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=3", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=3",
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
        try Self.ffmpeg(["-f", "lavfi", "-i", "color=red:s=64x64", "-frames:v", "1", dir.path("cover.png")])
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2", "-i", dir.path("cover.png"), "-map", "1", "-map", "0",
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
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2", "-c:v", "libx264", "-preset", "ultrafast", dir.path("full.mp4")])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir.path("full.mp4")))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: dir.path("cut.mp4")))
        #expect(throws: FlipbookError.self) { try Self.poster(dir.path("cut.mp4")) }
        try Self.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", dir.path("audio.mp4")])
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
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=30", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
                         "-movflags", "+faststart", dir.path("long.mp4")])
        let memory = MemoryByteSource(try Data(contentsOf: URL(fileURLWithPath: dir.path("long.mp4"))))
        let image = try MediaInput(source: memory).thumbnailImage(ThumbnailRequest(maxPixelSize: 200))
        #expect(image.width == 200)
        print("poster read \(memory.bytesRead) of \(memory.count) bytes")
        #expect(memory.bytesRead < memory.count / 4)
    }

    @Test func positionsParse() {
        #expect(PosterPosition("12.5s") == .seconds(12.5))
        #expect(PosterPosition("1500ms") == .seconds(1.5))
        #expect(PosterPosition("10%") == .fraction(0.1))
        #expect(PosterPosition("7") == .seconds(7))
        #expect(PosterPosition("soon") == nil)
    }
}

@Suite(.serialized) struct StoryboardTests {
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
        let run = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=7.3",
                                                      "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", dir.path("v.mp4")])
        try #require(run.status == 0)
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

@Suite(.serialized) struct PreviewTests {
    @Test func segmentsStitchIntoOneSilentContinuousClip() throws {
        let dir = try TemporaryDirectory()
        let made = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=12",
                                                       "-f", "lavfi", "-i", "sine=d=12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
                                                       "-c:a", "aac", "-shortest", dir.path("in.mp4")])
        try #require(made.status == 0)
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
