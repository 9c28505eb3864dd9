import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// One pass for poster, storyboard and preview: the same pictures as the separate makers, fewer frames
/// decoded than the three of them together.
@Suite(.serialized, .offPool) struct VideoBundleTests {
    @Test func onePassMatchesSeparateRuns() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=12",
                        "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", dir.path("v.mp4")])
        let input = try MediaInput(path: dir.path("v.mp4"))
        var posterOptions = PosterOptions()
        posterOptions.position = .seconds(2.5)
        var board = StoryboardOptions()
        board.interval = 1
        board.columns = 4
        board.tileSize = 80
        var preview = PreviewOptions()
        preview.segments = 3
        preview.segmentLength = 0.8
        preview.size = 160
        preview.video.preset = "ultrafast"
        let request = ThumbnailRequest(maxPixelSize: 160)
        let bundle = try VideoBundle.make(input, VideoBundleRequest(poster: (request, posterOptions), storyboard: board, preview: preview))

        // Poster: the frame at 2.5 s, as --exact gives it.
        var exact = posterOptions
        exact.exact = true
        let poster = try PosterExtractor.poster(input, request: request, options: exact)
        let ours = try #require(bundle.poster)
        #expect(ours.width == poster.width && ours.height == poster.height && ours.pixels == poster.pixels)

        // Storyboard: the same cues and byte-identical sheets (same frames, decoded from a keyframe either way).
        let separate = try Storyboard.make(input, options: board)
        let storyboard = try #require(bundle.storyboard)
        #expect(storyboard.cues == separate.cues)
        #expect(storyboard.sheets.map(\.data) == separate.sheets.map(\.data))
        try StoryboardTests.check(storyboard, durationMs: try #require(try input.probe().durationMs))

        // Preview: the same clip length, continuous frames, read back by ffprobe.
        let clip = try #require(bundle.preview)
        let alone = try VideoPreview.make(input, options: preview)
        #expect(clip.durationMs == alone.durationMs && clip.durationMs == 2400)
        try Data(clip.data).write(to: URL(fileURLWithPath: dir.path("p.mp4")))
        let probe = try ConversionTests.ffprobe(dir.path("p.mp4"))
        #expect(abs(probe.duration - 2.4) < 0.002 && probe.framePTS.count == 60)

        // One pass: 12 tiles a second apart, 3 windows and a poster, with one seek at the start and the
        // rest decoded forward: no frame decoded twice, so at most the 300 frames of the video.
        #expect(bundle.seeks == 1 && bundle.framesDecoded <= 300, "\(bundle.seeks) seeks, \(bundle.framesDecoded) frames")
    }

    @Test func longGapsAreSeekedOver() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=60",
                        "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", dir.path("long.mp4")])
        var board = StoryboardOptions()
        board.count = 4
        board.tileSize = 64
        let bundle = try VideoBundle.make(try MediaInput(path: dir.path("long.mp4")), VideoBundleRequest(storyboard: board))
        // 4 tiles 15 s apart, keyframes every second: a seek per tile, about a GOP decoded for each.
        #expect(bundle.seeks == 4 && bundle.framesDecoded < 4 * 26, "\(bundle.seeks) seeks, \(bundle.framesDecoded) frames")
        #expect(bundle.storyboard?.cues.count == 4 && bundle.poster == nil && bundle.preview == nil)
    }
}
