import Flipbook
import FlipbookStorage
#if canImport(Glibc)
import Glibc
#endif

extension DerivativeService {
    /// How a `DerivativeService` behaves. Every property documents its default; the defaults serve a
    /// desktop-sized machine and keep nothing on disk.
    public struct Configuration: Sendable {
        /// The folder requests are resolved in; nothing outside it is ever read. May be an S3 prefix,
        /// `s3://BUCKET/PREFIX/` (with `s3Client`): sources are then the keys under it, each request HEADs its
        /// object, and derivatives are keyed by the object's ETag and size. No default.
        public var root: String
        /// The client an `s3://` root is read with. Default nil.
        package var s3Client: S3Client?
        /// How sources named by URL (`DerivativeRequest(url:)`) are fetched: limits, the address guard, host
        /// lists, counters. Default nil: every URL is refused (`fetch-refused`).
        package var remoteSources: FetchPolicy?
        /// Threads that wait on the network while a remote source is resolved (a HEAD, a revalidation, a
        /// first ranged GET), so that the decode workers never do; only made for an S3 root or with
        /// `remoteSources`. Default 8.
        public var fetchThreads = 8
        /// Byte-cost limit of the in-memory cache of finished derivatives. Default 256 MB.
        public var memoryCacheBytes: Int = 256 << 20
        /// No single entry may cost more than this fraction of `memoryCacheBytes` (as in Nuke). Default 0.1.
        public var memoryCacheEntryFraction: Double = 0.1
        /// Folder of the disk cache (nil: none). Several processes may share one. Default nil.
        public var diskCacheDirectory: String?
        /// With a disk cache, derivatives of at least this many bytes are kept in memory as their open
        /// disk-cache object rather than as bytes (one descriptor, not counted against `memoryCacheBytes`), and
        /// a server sends them with `sendfile` (the kernel passes page references where a copy from memory goes
        /// through the socket's buffers); smaller ones stay bytes in the memory cache. Default 64 KiB, where
        /// the two cost the same CPU per response on the machine measured: below it the copy is cheaper (one
        /// `writev` against a `write` of the head and a `sendfile`: 15.5 against 18.3 µs per 1 KB response,
        /// 14.2 against 14.7 at 32 KB), above it `sendfile` (34.6 against 47.1 µs at 128 KB, 99.5 against 332
        /// at 1 MB); docs/benchmarks.md, "Range hits from the disk cache". `Int.max` keeps every derivative in
        /// memory.
        public var sendfileMinimumBytes: Int = 64 << 10
        /// Most disk-cache objects held open for `sendfile` at once (one descriptor each), least recently
        /// used closed first. Default 512.
        public var openFileLimit: Int = 512
        /// Size limit of the disk cache; when exceeded it is trimmed to 70 %. Default 10 GB.
        public var diskCacheBytes: Int = 10_000_000_000
        /// Threads that decode and encode, off the caller's threads and Swift's cooperative pool.
        /// Default: the number of online cores.
        public var workers: Int = DerivativeService.onlineCores
        /// Jobs that may wait for a worker; one more gets `DerivativeServiceError.busy`. Default 64.
        public var queueLimit: Int = 64
        /// A job running longer than this is cancelled and fails with `.timeout`. Default 60 s.
        public var jobTimeoutSeconds: Double = 60
        /// Encoder threads per job (libav's own); 1 keeps workers x threads within the cores. Default 1.
        public var encoderThreads: Int = 1
        /// Library limits (pixels, bytes): over them a request fails fast with `.limitExceeded`.
        /// Default `Limits()` (100 MP, 512 MiB).
        public var limits = Limits()
        /// Most frames a GIF may have for `/mp4`. Default 10,000 (the decoder's own default).
        public var maxGIFFrames: Int = 10_000
        /// Builds the URL a storyboard's WebVTT gives for sheet N of the (percent-encoded) path; a server
        /// that signs URLs signs them here. Default `/storyboard/<path>.sheet-N.jpg`.
        public var storyboardSheetURL: @Sendable (_ encodedPath: String, _ sheet: Int) -> String = {
            "/storyboard/\($0).sheet-\($1).jpg"
        }
        /// Builds the URL a storyboard's WebVTT gives for sheet N of a source named by URL (the URL
        /// percent-encoded as a query value); a server that signs URLs signs them here. Default
        /// `/storyboard?url=<url>&sheet=N`.
        public var remoteStoryboardSheetURL: @Sendable (_ encodedURL: String, _ sheet: Int) -> String = {
            "/storyboard?url=\($0)&sheet=\($1)"
        }
        /// Distinguishes storyboard WebVTT files made with different `storyboardSheetURL` functions in a
        /// shared disk cache (a server puts a hash of its signing key here). Default "".
        public var storyboardURLTag: String = ""

        /// A configuration serving `root` with every other default.
        public init(root: String) { self.root = root }
    }

    /// Online cores, at least 1.
    public static var onlineCores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
