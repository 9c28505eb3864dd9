import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// Our composited GIF frames against two independent decoders, Pillow and ffmpeg's native GIF decoder.
/// Where both references paint a pixel opaque with the same colour, ours must paint exactly that colour.
/// Where they disagree, browsers' behaviour (GIFDisposal docs) decides, and the file is listed.
///
/// One documented exception: both references fill the initial canvas and disposal-2 rectangles with the
/// GIF's background colour (the GIF89a text); browsers, and we, leave them transparent. A pixel where
/// we are transparent and the references show exactly the background colour is counted apart, not as a
/// mismatch; any other difference fails. And files with a zero-size frame (MANIFEST "zero-size frame"):
/// gifsicle's 009-zerowidth files declare a 0-pixel-wide frame yet carry LZW data for a screen-wide one,
/// which both references paint at screen width; the rule (and ours) is that a zero-size frame is
/// a no-op. Their differences are listed, not failed.
@Suite(.offPool) struct GIFReferenceTests {
    struct Frames {
        var width: Int, height: Int
        var frames: [[UInt8]]
    }

    static func pillowFrames(_ path: String) throws -> Frames? {
        let dir = try TemporaryDirectory()
        let out = dir.path("frames.rgba")
        let run = try Run.program("/usr/bin/python3", [Pillow.script, "gif-frames", path, out])
        guard run.status == 0 else { return nil }
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        guard let newline = data.firstIndex(of: 0x0A) else { return nil }
        let h = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        let size = h[0] * h[1] * 4
        let body = Array(data[(newline + 1)...])
        guard h.count == 3, body.count == size * h[2] else { return nil }
        let frames = (0..<h[2]).map { Array(body[($0 * size)..<(($0 + 1) * size)]) }
        return Frames(width: h[0], height: h[1], frames: frames)
    }

    static func ffmpegFrames(_ path: String, width: Int, height: Int) throws -> Frames? {
        let dir = try TemporaryDirectory()
        let out = dir.path("frames.rgba")
        let run = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-c:v", "gif", "-i", path, "-fps_mode", "passthrough",
                                                      "-f", "rawvideo", "-pix_fmt", "rgba", "-y", out])
        guard run.status == 0, let contents = try? Data(contentsOf: URL(fileURLWithPath: out)), !contents.isEmpty else { return nil }
        let data = [UInt8](contents)
        let size = width * height * 4
        guard data.count % size == 0 else { return nil }
        return Frames(width: width, height: height, frames: (0..<(data.count / size)).map { Array(data[($0 * size)..<(($0 + 1) * size)]) })
    }

    /// The global colour table's entry at the background index, read straight from the file's header.
    static func backgroundColour(_ path: String) -> [UInt8]? {
        guard let bytes = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path))), bytes.count >= 13 else { return nil }
        let flags = bytes[10], index = Int(bytes[11])
        guard flags & 0x80 != 0 else { return nil }
        let entries = 1 << (Int(flags & 0x07) + 1)
        guard index < entries, 13 + index * 3 + 3 <= bytes.count else { return nil }
        return Array(bytes[(13 + index * 3)..<(13 + index * 3 + 3)])
    }

    static func ours(_ path: String) throws -> Frames {
        let decoder = try GIFDecoder(source: try FileByteSource(path: path))
        var frames: [[UInt8]] = []
        while let frame = try decoder.nextFrame() { frames.append(frame.image.pixels) }
        return Frames(width: decoder.canvasWidth, height: decoder.canvasHeight, frames: frames)
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func compositedFramesMatchWhereReferencesAgree() throws {
        var compared = 0, comparedPixels = 0
        var notes: [String] = []
        for entry in Corpus.entries where entry.folder == "gif" {
            let path = entry.url.path
            guard let mine = try? Self.ours(path) else { notes.append("\(entry.path): we reject it"); continue }
            guard let pillow = try Self.pillowFrames(path) else { notes.append("\(entry.path): Pillow cannot read it"); continue }
            guard pillow.width == mine.width, pillow.height == mine.height,
                  let ffmpeg = try Self.ffmpegFrames(path, width: mine.width, height: mine.height) else {
                notes.append("\(entry.path): ffmpeg cannot read it or sizes differ"); continue
            }
            let count = min(pillow.frames.count, ffmpeg.frames.count)
            guard pillow.frames.count == ffmpeg.frames.count, mine.frames.count == count else {
                notes.append("\(entry.path): frame counts ours \(mine.frames.count), Pillow \(pillow.frames.count), ffmpeg \(ffmpeg.frames.count)")
                continue
            }
            let background = Self.backgroundColour(path)
            var mismatches = 0, agreed = 0, disagreements = 0, backgroundFill = 0
            for f in 0..<count {
                let a = pillow.frames[f], b = ffmpeg.frames[f], o = mine.frames[f]
                for p in stride(from: 0, to: a.count, by: 4) where a[p + 3] == 255 && b[p + 3] == 255 {
                    if a[p] != b[p] || a[p + 1] != b[p + 1] || a[p + 2] != b[p + 2] { disagreements += 1; continue }
                    agreed += 1
                    guard o[p] != a[p] || o[p + 1] != a[p + 1] || o[p + 2] != a[p + 2] || o[p + 3] != 255 else { continue }
                    if o[p + 3] == 0, let bg = background, [a[p], a[p + 1], a[p + 2]] == bg {
                        backgroundFill += 1
                    } else {
                        mismatches += 1
                    }
                }
            }
            if disagreements > 0 { notes.append("\(entry.path): references disagree on \(disagreements) opaque pixels") }
            if backgroundFill > 0 { notes.append("\(entry.path): \(backgroundFill) pixels transparent here, background colour in both references") }
            if entry.note.contains("zero-size frame") {
                if mismatches > 0 { notes.append("\(entry.path): \(mismatches) pixels differ (zero-size frame painted at screen width by the references)") }
            } else {
                #expect(mismatches == 0, "\(entry.path): \(mismatches) of \(agreed) agreed opaque pixels differ")
            }
            compared += 1
            comparedPixels += agreed
        }
        print("compared \(compared) GIFs, \(comparedPixels) agreed opaque pixels\n" + notes.joined(separator: "\n"))
        #expect(compared >= 40)
    }
}
