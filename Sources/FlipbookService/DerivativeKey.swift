/// What the memory cache and the sharing of jobs key a derivative by: the source's identity, the operation
/// and, for a storyboard's WebVTT (whose sheet URLs name the request's path), that path. Integers and an enum
/// with a few more: a lookup hashes and compares them where a text key had to be built, hashed and compared
/// byte by byte on every hit. The disk cache's text key (`DerivativeService.diskKey`) is spelled from it only
/// when the disk cache is read or written.
struct DerivativeKey: Hashable, Sendable {
    var file: FileIdentity
    var operation: DerivativeRequest.Operation
    /// The request's percent-encoded path for `.storyboardVTT`; nil for every other operation.
    var path: String?
    /// For a source that is not a local file, what identifies its bytes (`ResolvedSource.remote`: an S3
    /// object's URL, ETag and size; a URL and the origin's validator); nil for a file under a local root.
    var remote: String? = nil

    /// Hashes what tells entries apart in practice (the file's inode and mtime, the operation's kind and
    /// size); `==` compares everything. The synthesised hash fed every field and the operation's payload
    /// through the hasher and was two thirds of a lookup.
    func hash(into hasher: inout Hasher) {
        let size: Int
        switch operation {
        case .mp4(let maxSize): size = maxSize ?? -1
        case .thumb(let request), .poster(let request): size = request.maxPixelSize
        case .preview(let n), .storyboardSheet(let n): size = n
        case .storyboardVTT, .original: size = -2
        }
        // One word: the hasher's cost is per word combined.
        hasher.combine(UInt64(truncatingIfNeeded: file.modified) &* 0x9E37_79B9_7F4A_7C15 ^ file.inode ^ UInt64(bitPattern: Int64(size)) << 40)
    }
}
