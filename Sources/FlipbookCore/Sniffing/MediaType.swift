/// A kind of media, identified from its bytes (never its name). Open for extension: add a static constant.
public struct MediaType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The stable name printed by `probe` (`jpeg`, `gif`, `webp-animated`...).
    public let rawValue: String
    /// A type by its stable name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The stable name.
    public var description: String { rawValue }

    /// JPEG (JFIF/EXIF), baseline, progressive, 12-bit and lossless.
    public static let jpeg = MediaType(rawValue: "jpeg")
    /// PNG (a still; APNG is `apng`).
    public static let png = MediaType(rawValue: "png")
    /// A PNG with an `acTL` chunk before its image data.
    public static let apng = MediaType(rawValue: "apng")
    /// GIF, still or animated.
    public static let gif = MediaType(rawValue: "gif")
    /// Still WebP (animated WebP is `animatedWebP`).
    public static let webp = MediaType(rawValue: "webp")
    /// A WebP whose VP8X header has the animation flag.
    public static let animatedWebP = MediaType(rawValue: "webp-animated")
    /// Windows BMP.
    public static let bmp = MediaType(rawValue: "bmp")
    /// TIFF.
    public static let tiff = MediaType(rawValue: "tiff")
    /// ISO-BMFF MP4.
    public static let mp4 = MediaType(rawValue: "mp4")
    /// QuickTime MOV.
    public static let mov = MediaType(rawValue: "mov")
    /// ISO-BMFF M4V.
    public static let m4v = MediaType(rawValue: "m4v")
    /// AVIF (HEIF with AV1).
    public static let avif = MediaType(rawValue: "avif")
    /// HEIC (HEIF with HEVC).
    public static let heic = MediaType(rawValue: "heic")
    /// Matroska.
    public static let matroska = MediaType(rawValue: "matroska")
    /// WebM.
    public static let webm = MediaType(rawValue: "webm")
    /// Nothing Flipbook recognises (including empty and truncated input).
    public static let unknown = MediaType(rawValue: "unknown")

    /// Still-image formats.
    public var isStill: Bool { [.jpeg, .png, .webp, .bmp, .tiff, .avif, .heic].contains(self) }
    /// Animated images: what `GIFToVideo.convert` takes (GIF, animated WebP, APNG).
    public var isAnimation: Bool { [.gif, .animatedWebP, .apng].contains(self) }
    /// Video containers.
    public var isVideo: Bool { [.mp4, .mov, .m4v, .matroska, .webm].contains(self) }
}

extension MediaType {
    /// Identifies the media type of `source` from its leading bytes (and, for PNG and WebP, the chunk
    /// headers that say whether it is animated). Reads at most a few kilobytes. Never throws for bad data:
    /// empty, truncated or unrecognised input is `.unknown`.
    public static func sniff(_ source: some ByteSource) -> MediaType {
        guard let head = try? source.bytes(at: 0, length: 64), head.count >= 2 else { return .unknown }
        func starts(with magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

        if starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return pngIsAnimated(source) ? .apng : .png
        }
        if starts(with: ascii("GIF87a")) || starts(with: ascii("GIF89a")) { return .gif }
        if starts(with: ascii("RIFF")) && starts(with: ascii("WEBP"), at: 8) {
            // VP8X: flags byte at 20, animation bit 0x02.
            if starts(with: ascii("VP8X"), at: 12) {
                guard head.count > 20 else { return .unknown }  // cut before the flags byte
                return head[20] & 0x02 != 0 ? .animatedWebP : .webp
            }
            return head.count >= 16 ? .webp : .unknown
        }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(with: ascii("BM")), head.count >= 18 {
            // BITMAPFILEHEADER then a DIB header whose size is one of the known versions.
            let dibSize = Int(head[14]) | Int(head[15]) << 8 | Int(head[16]) << 16 | Int(head[17]) << 24
            if [12, 16, 40, 52, 56, 64, 108, 124].contains(dibSize) { return .bmp }
        }
        if starts(with: [0x1A, 0x45, 0xDF, 0xA3]) {
            // EBML header: the DocType string says webm or matroska.
            let header = (try? source.bytes(at: 0, length: 256)) ?? head
            if contains(header, ascii("webm")) { return .webm }
            if contains(header, ascii("matroska")) { return .matroska }
            return .unknown
        }
        if head.count >= 12, starts(with: ascii("ftyp"), at: 4) {
            return isoBrand(head, source: source)
        }
        // QuickTime files from before ftyp start directly with one of these atoms.
        if head.count >= 8 {
            for atom in ["moov", "mdat", "wide", "free", "skip", "pnot"] where starts(with: ascii(atom), at: 4) {
                return .mov
            }
        }
        return .unknown
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<start + needle.count]) == needle {
            return true
        }
        return false
    }

    /// Classifies an ISO-BMFF file by its `ftyp` major brand, then its compatible brands.
    private static func isoBrand(_ head: [UInt8], source: some ByteSource) -> MediaType {
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        let ftyp = (try? source.bytes(at: 0, length: min(max(boxSize, 16), 256))) ?? head
        func brand(at offset: Int) -> String? {
            guard ftyp.count >= offset + 4 else { return nil }
            return String(decoding: ftyp[offset..<offset + 4], as: UTF8.self)
        }
        var brands: [String] = []
        if let major = brand(at: 8) { brands.append(major) }
        var offset = 16
        while offset + 4 <= min(ftyp.count, max(boxSize, 16)) {
            if let b = brand(at: offset) { brands.append(b) }
            offset += 4
        }
        let major = brands.first ?? ""
        if ["avif", "avis"].contains(major) { return .avif }
        if ["heic", "heix", "heim", "heis", "hevc", "hevx"].contains(major) { return .heic }
        if ["mif1", "msf1"].contains(major) {
            if brands.contains("avif") || brands.contains("avis") { return .avif }
            if brands.contains(where: { $0.hasPrefix("hei") || $0.hasPrefix("hev") }) { return .heic }
        }
        if major == "qt  " { return .mov }
        if major == "M4V " || major == "M4VH" || major == "M4VP" { return .m4v }
        return .mp4
    }

    /// Walks PNG chunk headers (at most 64) looking for `acTL` before the first `IDAT`.
    private static func pngIsAnimated(_ source: some ByteSource) -> Bool {
        var offset = 8
        for _ in 0..<64 {
            guard let header = try? source.bytes(at: offset, length: 8), header.count == 8 else { return false }
            let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if type == "acTL" { return true }
            if type == "IDAT" || type == "IEND" { return false }
            offset += 12 + length
        }
        return false
    }
}
