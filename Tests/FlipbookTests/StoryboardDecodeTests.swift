import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// Dense storyboards (more tiles than the clip has frames): one forward pass, each frame decoded once, and
/// each tile the frame ffmpeg shows at the tile's time (the last frame whose timestamp is at or before it).
@Suite(.serialized, .offPool) struct StoryboardDecodeTests {
    /// ffmpeg's frames of `path` scaled to `width` x `height` (Lanczos), with their times from the stream start.
    static func ffmpegFrames(_ path: String, width: Int, height: Int, in dir: TemporaryDirectory) throws -> [(seconds: Double, image: Image)] {
        let probe = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                         "stream=start_time:frame=best_effort_timestamp_time", "-of", "csv=p=0", path])
        try #require(probe.status == 0, "\(probe.stderr)")
        let lines = probe.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ", ")) }
        // Frames come first, then the stream line; a stream start of N/A counts as 0.
        let values = lines.map { Double($0) }
        let start = values.last.flatMap { $0 } ?? 0
        let times = values.dropLast().compactMap { $0 }.map { $0 - start }
        try FFmpeg.run(["-i", path, "-map", "0:v:0", "-vf", "scale=\(width):\(height):flags=lanczos", "-fps_mode", "passthrough",
                        dir.path("f%04d.png")])
        var frames: [(Double, Image)] = []
        for (k, t) in times.enumerated() {
            frames.append((t, try #require(try Pillow.decode(dir.path(String(format: "f%04d.png", k + 1))), "frame \(k + 1)")))
        }
        return frames
    }

    /// Tile `cue` cut out of its sheet, decoded by Pillow.
    static func tile(_ board: Storyboard, _ cue: Storyboard.Cue, in dir: TemporaryDirectory) throws -> Image {
        let path = dir.path("sheet-\(cue.sheet).jpg")
        if !FileManager.default.fileExists(atPath: path) { try Data(board.sheets[cue.sheet].data).write(to: URL(fileURLWithPath: path)) }
        let sheet = try #require(try Pillow.decode(path))
        var out = Image(width: cue.width, height: cue.height, channels: 4)
        for y in 0..<cue.height {
            let src = ((cue.y + y) * sheet.width + cue.x) * 4
            out.pixels.replaceSubrange(y * cue.width * 4..<(y + 1) * cue.width * 4, with: sheet.pixels[src..<(src + cue.width * 4)])
        }
        return out
    }

    /// Makes a storyboard of `count` tiles and checks decodes and every tile against ffmpeg's frame then.
    static func check(_ path: String, count: Int, identifyFrames: Bool, threads: Int? = nil) throws {
        var options = StoryboardOptions()
        options.decodeThreads = threads
        options.count = count
        options.tileSize = 160
        options.quality = 95
        let (board, decoded, rendered) = try Storyboard.build(try MediaInput(path: path), options: options)
        let dir = try TemporaryDirectory()
        let cue0 = try #require(board.cues.first)
        let frames = try ffmpegFrames(path, width: cue0.width, height: cue0.height, in: dir)
        try #require(frames.count >= 2 && frames.count < count, "the clip must have fewer frames than tiles")
        // One pass: every frame of the clip decoded once, none twice; each scaled at most once.
        #expect(decoded == frames.count, "decoded \(decoded) frames of \(frames.count)")
        #expect(rendered <= frames.count)
        #expect(board.cues.count == count)
        for cue in board.cues {
            let t = Double(cue.startMs) / 1000
            let expected = frames.lastIndex { $0.seconds <= t + 1e-6 } ?? 0
            let ours = try tile(board, cue, in: dir)
            let distances = frames.map { Compare.meanAbsoluteDifference(ours, $0.image) }
            #expect(distances[expected] < 4, "tile at \(cue.startMs) ms differs from ffmpeg's frame \(expected) by \(distances[expected])")
            if identifyFrames {
                #expect(distances.indices.min { distances[$0] < distances[$1] } == expected,
                        "tile at \(cue.startMs) ms looks like another frame: \(distances)")
            }
        }
    }

    /// 8 frames of distinct flat colours at 4 fps, 10 tiles: tiles 0.2 s apart, some frames shown twice.
    @Test func moreTilesThanFramesShowTheFrameOnScreen() throws {
        let dir = try TemporaryDirectory()
        try FFmpeg.run(["-f", "lavfi", "-i", "color=black:s=320x240:r=4:d=2", "-vf",
                        "geq=r='mod(N*97+20\\,256)':g='mod(N*59+40\\,256)':b='mod(N*151+60\\,256)'",
                        "-c:v", "libx264", "-preset", "ultrafast", "-g", "8", "-pix_fmt", "yuv420p", dir.path("colours.mp4")])
        try Self.check(dir.path("colours.mp4"), count: 10, identifyFrames: true)
    }

    /// The case: the corpus's 8-frame 8K HEVC clip, 10 tiles (it used to decode the clip per tile).
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func eightKClipIsDecodedOnce() throws {
        try Self.check(Corpus.file("video/androidx-media/8k24fps_300ms.mp4"), count: 10, identifyFrames: false)
    }

    /// `--threads 2` on the same clip (frame threads, which the automatic choice leaves off for 8K): still one
    /// pass, the same frames ffmpeg shows.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func eightKClipWithTwoFrameThreads() throws {
        try Self.check(Corpus.file("video/androidx-media/8k24fps_300ms.mp4"), count: 10, identifyFrames: false, threads: 2)
    }
}
