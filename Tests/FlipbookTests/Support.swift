import Foundation
import Testing
@testable import Flipbook

/// Where the shared real-world corpus lives: $FLIPBOOK_CORPUS, else ../shared/corpus beside the project.
enum Corpus {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let root: URL = {
        if let env = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }()
    static var available: Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent("MANIFEST.tsv").path) }
    static let skipMessage: Comment = "corpus not found (set FLIPBOOK_CORPUS or put it at ../shared/corpus)"

    struct Entry {
        let path: String  // relative, e.g. "jpeg/sharp/truncated.jpg"
        let note: String
        var url: URL { Corpus.root.appendingPathComponent(path) }
        var folder: String { String(path.split(separator: "/").first ?? "") }
    }

    /// Every MANIFEST row.
    static let entries: [Entry] = {
        guard let text = try? String(contentsOf: root.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard cols.count >= 5 else { return nil }
            return Entry(path: String(cols[0]), note: String(cols[4]))
        }
    }()

    static func file(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}

/// Runs helper programs (oracles: ffmpeg, ffprobe, Pillow, our own CLI).
enum Run {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    @discardableResult
    static func program(_ path: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Drain stderr on another thread while reading stdout, so a chatty child never blocks on a full pipe.
        let errorBox = DataBox()
        let reader = Thread { errorBox.data = err.fileHandleForReading.readDataToEndOfFile(); errorBox.done.signal() }
        reader.start()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        errorBox.done.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
                      stderr: String(decoding: errorBox.data, as: UTF8.self))
    }

    private final class DataBox: @unchecked Sendable {
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }

    static func which(_ tool: String) -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(tool)") {
            return "\(dir)/\(tool)"
        }
        return nil
    }
}

/// A temporary directory removed when the value goes away.
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Reference decodes from Pillow (Tests/oracle/reference.py), as RGBA.
enum Pillow {
    static let script = Corpus.packageRoot.appendingPathComponent("Tests/oracle/reference.py").path

    /// Pillow's decode of `path`, EXIF-transposed, optionally Lanczos-resized; nil if Pillow cannot read it.
    static func decode(_ path: String, size: Size? = nil) throws -> Image? {
        let dir = try TemporaryDirectory()
        let out = dir.path("ref.rgba")
        var args = [script, "decode", path, out]
        if let size { args += [String(size.width), String(size.height)] }
        let result = try Run.program("/usr/bin/python3", args)
        if result.status == 3 { return nil }
        guard result.status == 0 else { throw FlipbookError(.io, "reference.py failed: \(result.stderr)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        guard let newline = data.firstIndex(of: 0x0A) else { throw FlipbookError(.io, "bad reference output") }
        let dims = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        return Image(width: dims[0], height: dims[1], channels: 4, pixels: Array(data[(newline + 1)...]))
    }
}

extension Pillow {
    /// An animated GIF or WebP as Pillow plays it.
    struct Animation {
        var format: String
        var width: Int, height: Int
        /// NETSCAPE / ANIM loop count (0: forever); nil if the file has none.
        var loop: Int?
        /// Per-frame display times, in ms.
        var durations: [Int]
        /// Each GIF frame's rectangle [x0, y0, x1, y1] (nil for WebP).
        var extents: [[Int]?]
        /// Every frame composited as Pillow shows it, RGB.
        var frames: [Image]
        /// When each frame starts, in ms.
        var starts: [Int] { durations.reduce(into: [0]) { $0.append($0.last! + $1) }.dropLast() }
    }

    /// Pillow's playback of `path` (Tests/oracle/reference.py animation).
    static func animation(_ path: String) throws -> Animation {
        let dir = try TemporaryDirectory()
        let out = dir.path("frames.bin")
        let result = try Run.program("/usr/bin/python3", [script, "animation", path, out])
        guard result.status == 0 else { throw FlipbookError(.io, "reference.py animation failed: \(result.stderr)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        guard let newline = data.firstIndex(of: 0x0A),
              let meta = try JSONSerialization.jsonObject(with: data[..<newline]) as? [String: Any],
              let width = meta["width"] as? Int, let height = meta["height"] as? Int, let count = meta["frames"] as? Int
        else { throw FlipbookError(.io, "bad reference.py animation output") }
        let frameBytes = width * height * 3
        let pixels = data[(newline + 1)...]
        guard pixels.count == count * frameBytes else { throw FlipbookError(.io, "reference.py gave \(pixels.count) bytes of frames") }
        let frames = (0..<count).map { k in
            Image(width: width, height: height, channels: 3,
                  pixels: Array(pixels[(pixels.startIndex + k * frameBytes)..<(pixels.startIndex + (k + 1) * frameBytes)]))
        }
        return Animation(format: meta["format"] as? String ?? "", width: width, height: height, loop: meta["loop"] as? Int,
                         durations: (meta["durations"] as? [Any] ?? []).map { $0 as? Int ?? -1 },
                         extents: (meta["extents"] as? [Any] ?? []).map { $0 as? [Int] }, frames: frames)
    }
}

enum Compare {
    /// Mean absolute difference per channel over RGB, ignoring pixels that are fully transparent in both.
    static func meanAbsoluteDifference(_ a: Image, _ b: Image) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        let a4 = a.withAlpha(), b4 = b.withAlpha()
        var total = 0.0, count = 0
        for i in 0..<(a.width * a.height) {
            let p = i * 4
            if a4.pixels[p + 3] == 0 && b4.pixels[p + 3] == 0 { continue }
            for c in 0..<4 { total += abs(Double(a4.pixels[p + c]) - Double(b4.pixels[p + c])) }
            count += 4
        }
        return count == 0 ? 0 : total / Double(count)
    }

    /// SSIM of two same-size images by ffmpeg's `ssim` filter (the "All" value), via PNG files.
    static func ssim(_ a: Image, _ b: Image) throws -> Double {
        let dir = try TemporaryDirectory()
        try Data(EncodedImage(image: a.flattened(), format: .png, quality: 100).data).write(to: URL(fileURLWithPath: dir.path("a.png")))
        try Data(EncodedImage(image: b.flattened(), format: .png, quality: 100).data).write(to: URL(fileURLWithPath: dir.path("b.png")))
        let result = try Run.program("/usr/bin/ffmpeg", ["-hide_banner", "-i", dir.path("a.png"), "-i", dir.path("b.png"),
                                                        "-lavfi", "[0][1]ssim", "-f", "null", "-"])
        guard let range = result.stderr.range(of: "All:") else { throw FlipbookError(.io, "no SSIM in ffmpeg output") }
        let tail = result.stderr[range.upperBound...].prefix { "0123456789.".contains($0) }
        return Double(tail) ?? 0
    }
}

/// ffmpeg as a test oracle and maker of test media.
enum FFmpeg {
    /// Runs `/usr/bin/ffmpeg -v error -y ARGS`; the test stops, with ffmpeg's message, if it fails.
    static func run(_ args: [String]) throws {
        let run = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-y"] + args)
        try #require(run.status == 0, "\(run.stderr)")
    }
}
