import Flipbook

/// Where an ingester writes derivatives and results: a folder on this machine (`FolderOutput`) or an S3 prefix
/// (`S3Output`). Every write is whole or not at all; nothing written is ever read back as a source.
public protocol IngestOutput: Sendable {
    /// Where `relative` is, for results: nil for a folder (results give paths relative to it), an `s3://` URL
    /// for an object.
    func location(of relative: String) -> String?
    /// Writes `bytes` at `relative`, atomically, with `contentType` where the store keeps one.
    func write(_ bytes: [UInt8], to relative: String, contentType: String) throws
    /// The bytes at `relative`, or nil if there are none (or they cannot be read).
    func read(_ relative: String) -> [UInt8]?
    /// Whether something is at `relative`.
    func exists(_ relative: String) -> Bool
}

/// A folder on this machine, created as needed; files are written to a temporary name and renamed.
public struct FolderOutput: IngestOutput {
    /// The folder, without a trailing "/".
    public let root: String

    public init(root: String) {
        self.root = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
    }

    public func location(of relative: String) -> String? { nil }

    public func write(_ bytes: [UInt8], to relative: String, contentType: String) throws {
        let path = "\(root)/\(relative)"
        if let slash = path.lastIndex(of: "/") { try Self.makeDirectories(String(path[..<slash])) }
        try AtomicFile.write(bytes, to: path)
    }

    public func read(_ relative: String) -> [UInt8]? {
        guard let file = try? FileByteSource(path: "\(root)/\(relative)") else { return nil }
        return try? file.withContiguousBytes { Array($0) }
    }

    public func exists(_ relative: String) -> Bool {
        (try? FileByteSource(path: "\(root)/\(relative)")) != nil
    }

    static func makeDirectories(_ path: String) throws {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o755) != 0 && errno != EEXIST {
                throw FlipbookError(.io, "cannot create \(partial)", underlying: String(cString: strerror(errno)))
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
