/// GIFs. This version reads the logical screen header only; frame decoding and compositing arrive with
/// the GIF decoder.
public struct GIFPipeline: MediaPipeline {
    public init() {}
    public var name: String { "gif" }
    public func accepts(_ type: MediaType) -> Bool { type == .gif }

    public func probe(_ input: MediaInput) throws -> MediaInfo {
        let head = try input.source.bytes(at: 0, length: 10)
        guard head.count == 10 else { throw FlipbookError(.truncated, "GIF header is cut short") }
        var info = MediaInfo(type: .gif)
        info.width = Int(head[6]) | Int(head[7]) << 8
        info.height = Int(head[8]) | Int(head[9]) << 8
        info.orientation = 1
        info.codec = "gif"
        return info
    }

    public func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        throw FlipbookError(.unsupported, "GIF thumbnails need the GIF frame decoder, which is not built yet")
    }
}
