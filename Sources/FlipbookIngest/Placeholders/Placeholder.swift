import Flipbook
import Foundation

/// What a page paints before the real image arrives: a ThumbHash (base64) and a BlurHash (4 x 3
/// components), both from one image shrunk to at most 100 pixels a side.
public struct Placeholder: Sendable, Equatable, Codable {
    /// ThumbHash bytes, standard base64 (with padding), as Immich's API and the format's own demo carry it.
    public var thumbhash: String
    /// BlurHash of the image flattened onto white, 4 x 3 components.
    public var blurhash: String

    /// The longest side of the image the hashes are computed from (ThumbHash's own limit).
    public static let side = 100

    /// The request that decodes a placeholder's image: 100 px inside, the first frame of an animation, a
    /// video's poster; shrink-on-load makes it cheap for large stills.
    public static let request = ThumbnailRequest(maxPixelSize: side, fit: .inside)

    /// Both hashes of `image` (at most 100 x 100 pixels; see `request`).
    public init(image: Image) {
        thumbhash = Data(ThumbHash.encode(image)).base64EncodedString()
        blurhash = BlurHash.encode(image.flattened(), componentsX: 4, componentsY: 3)
    }

    /// Both hashes of `input`'s first frame or poster.
    public init(input: MediaInput) throws {
        self.init(image: try input.thumbnailImage(Self.request))
    }
}
