import Foundation
import Testing
@testable import Flipbook

/// Oracles for the colour, HEIF and huge-still tests: vipsthumbnail (colour-managed), Pillow's Little CMS
/// (Tests/oracle/colour_reference.py) and the project's input maker (scripts/make_still_inputs.py).
enum StillOracle {
    static let python = "/usr/bin/python3"
    static let colourScript = Corpus.packageRoot.appendingPathComponent("Tests/oracle/colour_reference.py").path
    static let inputScript = Corpus.packageRoot.appendingPathComponent("scripts/make_still_inputs.py").path
    static let hdrScript = Corpus.packageRoot.appendingPathComponent("Tests/oracle/hdr_reference.py").path

    /// Runs scripts/make_still_inputs.py with `args`; the test stops with its message if it fails.
    static func make(_ args: [String]) throws {
        let run = try Run.program(python, [inputScript] + args)
        try #require(run.status == 0, "make_still_inputs.py \(args.first ?? ""): \(run.stderr)")
    }

    /// vipsthumbnail's colour-managed thumbnail of `path` at exactly `size` (sRGB export), as RGBA. For
    /// AVIF/HEIC pass `exportProfile: false`: vips 8.14 ignores their nclx box, and its sRGB export of them
    /// then shifts colours (red +8 levels on average against the source picture, measured with avifenc's
    /// default BT.601 full-range files), while its plain output matches the source within 1-1.5 levels.
    static func vips(_ path: String, size: Size, intent: String? = nil, exportProfile: Bool = true) throws -> Image {
        let dir = try TemporaryDirectory()
        let out = dir.path("vips.png")
        var args = [path, "-s", "\(size.width)x\(size.height)!", "-o", out]
        if exportProfile { args += ["--export-profile", "srgb"] }
        if let intent { args += ["--intent", intent] }
        let run = try Run.program("/usr/bin/vipsthumbnail", args)
        try #require(run.status == 0, "vipsthumbnail: \(run.stderr)")
        return try #require(try Pillow.decode(out))
    }

    /// Pillow + Little CMS: embedded profile to sRGB, Lanczos to `size`.
    static func cms(_ path: String, size: Size) throws -> Image { try colour(["cms", path], size: size) }

    /// Pillow's `Image.transpose(op)` of `path`, Lanczos to `size`.
    static func transposed(_ path: String, op: String, size: Size) throws -> Image {
        try colour(["transpose", path], size: size, extra: [op])
    }

    /// Tests/oracle/hdr_reference.py: the 16-bit BT.2020 PQ/HLG source `path` tone-mapped to sRGB by numpy
    /// from the standards (`mode` pq or hlg), or shown untouched (`naive`), Lanczos to `size`.
    static func hdr(_ mode: String, _ path: String, size: Size) throws -> Image {
        try colour([mode, path], size: size, script: hdrScript)
    }

    private static func colour(_ head: [String], size: Size, extra: [String] = [], script: String = colourScript) throws -> Image {
        let dir = try TemporaryDirectory()
        let out = dir.path("ref.rgba")
        let run = try Run.program(python, [script, head[0], head[1], out, String(size.width), String(size.height)] + extra)
        try #require(run.status == 0, "\(script): \(run.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        let newline = try #require(data.firstIndex(of: 0x0A))
        let dims = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        return Image(width: dims[0], height: dims[1], channels: 4, pixels: Array(data[(newline + 1)...]))
    }

    /// The ICC profile Pillow reads from an encoded file, if any.
    static func embeddedProfile(_ path: String) throws -> [UInt8]? {
        let dir = try TemporaryDirectory()
        let out = dir.path("p.icc")
        let run = try Run.program(python, [colourScript, "icc", path, out])
        if run.status == 3 { return nil }
        try #require(run.status == 0, "colour_reference.py icc: \(run.stderr)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    static func tool(_ name: String) -> String? { Run.which(name) }
}
