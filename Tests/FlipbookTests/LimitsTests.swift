import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// One `Limits` value, carried by `MediaInput` (or `GIFDecodeOptions` for a conversion), stops every kind
/// of pipeline at the limit its headers exceed. The sizes, frame counts and durations are the corpus
/// MANIFEST's (ffprobe's and a block scan's), not our own output: each limit is set just under the file's
/// figure (refused) and at the figure or the default (accepted).
@Suite(.offPool, .enabled(if: Corpus.available, Corpus.skipMessage))
struct LimitsTests {
    func code(_ body: () throws -> Void) -> FlipbookError.Code? {
        do { try body(); return nil } catch let error as FlipbookError { return error.code } catch { return .io }
    }

    /// GIF thumbnails: the 2560x1706 logical screen against the canvas limit and `maxPixels`.
    @Test func gifCanvas() throws {
        let path = Corpus.file("gif/android-gif-drawable/anim_flag_ok_large.gif")
        let pixels = 2560 * 1706
        func thumb(_ limits: Limits) -> FlipbookError.Code? {
            code { _ = try MediaInput(path: path, limits: limits).thumbnail(maxPixelSize: 64) }
        }
        #expect(thumb(Limits(maxCanvasPixels: pixels)) == nil)
        #expect(thumb(Limits(maxCanvasPixels: pixels - 1)) == .limitExceeded)
        #expect(thumb(Limits(maxPixels: pixels - 1)) == .limitExceeded)
    }

    /// Animated WebP thumbnails: 42 frames, checked from the demuxer's header before decoding.
    @Test func webpFrames() throws {
        let path = Corpus.file("webp/pillow/iss634.webp")
        func thumb(_ limits: Limits) -> FlipbookError.Code? {
            code { _ = try MediaInput(path: path, limits: limits).thumbnail(maxPixelSize: 64) }
        }
        #expect(thumb(Limits(maxFrames: 42)) == nil)
        #expect(thumb(Limits(maxFrames: 41)) == .limitExceeded)
        #expect(thumb(Limits(maxCanvasPixels: 245 * 245 - 1)) == .limitExceeded)
    }

    /// Video posters: the 100x60 coded frame against `maxVideoFramePixels` and `maxPixels`, before the
    /// decoder opens.
    @Test func videoFramePixels() throws {
        let path = Corpus.file("video/mp4parse-rust/video_rotation_90.mp4")
        func poster(_ limits: Limits) -> FlipbookError.Code? {
            code { _ = try MediaInput(path: path, limits: limits).thumbnail(maxPixelSize: 64) }
        }
        #expect(poster(Limits()) == nil)
        #expect(poster(Limits(maxVideoFramePixels: 100 * 60 - 1)) == .limitExceeded)
        #expect(poster(Limits(maxPixels: 100 * 60 - 1)) == .limitExceeded)
    }

    /// GIF to MP4: led7.gif has 16 frames shown for 24 s in all; the conversion's limits are `decode.limits`.
    @Test func conversionFramesAndDuration() throws {
        let path = Corpus.file("gif/android-gif-drawable/led7.gif")
        func convert(_ limits: Limits) -> FlipbookError.Code? {
            var options = VideoConversionOptions()
            options.maxSize = 64
            options.decode.limits = limits
            return code { _ = try GIFToVideo.convert(try FileByteSource(path: path), options: options) }
        }
        #expect(convert(Limits(maxFrames: 16, maxDurationMs: 24_000)) == nil)
        #expect(convert(Limits(maxFrames: 15)) == .limitExceeded)
        #expect(convert(Limits(maxDurationMs: 23_999)) == .limitExceeded)
        #expect(convert(Limits(maxCanvasPixels: 600 * 752 - 1)) == .limitExceeded)
    }

    /// Inputs over `maxInputBytes` are refused from the file's size, before anything is read.
    @Test func inputBytes() throws {
        let path = Corpus.file("gif/android-gif-drawable/led7.gif")
        #expect(code { _ = try MediaInput(path: path, limits: Limits(maxInputBytes: 74_557)) } == nil)
        #expect(code { _ = try MediaInput(path: path, limits: Limits(maxInputBytes: 74_556)) } == .limitExceeded)
    }

    /// A video is read by ranges, so the whole-input limit does not apply to it: `maxVideoInputBytes` does
    /// (a poster of a recording larger than 512 MiB works, as it does with ffmpeg).
    @Test func videoInputBytes() throws {
        let path = Corpus.file("video/mp4parse-rust/video_rotation_90.mp4")
        let size = try FileByteSource(path: path).count
        var limits = Limits(maxInputBytes: 100)
        let input = try MediaInput(path: path, limits: limits)
        #expect(input.type.isVideo)
        #expect((try input.probe().width ?? 0) > 0)
        limits.maxVideoInputBytes = size
        #expect(code { _ = try MediaInput(path: path, limits: limits) } == nil)
        limits.maxVideoInputBytes = size - 1
        #expect(code { _ = try MediaInput(path: path, limits: limits) } == .limitExceeded)
    }
}
