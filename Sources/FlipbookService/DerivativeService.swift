import Crypto
import Flipbook
import FlipbookStorage
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The async front of Flipbook, shaped like Nuke's `ImagePipeline`: ask for a derivative of a file under
/// the root and await it. Identical concurrent requests share one job; finished derivatives are kept in a
/// memory cache (LRU, byte-cost limit) and, if configured, a disk cache shared between processes; the
/// blocking decode and encode run on a bounded worker pool with a bounded queue in front (full: `.busy`).
/// A job that nobody awaits any more (every waiting task cancelled) is cancelled too, between frames.
///
/// It knows nothing about HTTP: a Hummingbird adapter (`FlipbookServer`) or any other server maps its
/// errors and `Derivative`s to responses.
public final class DerivativeService: Sendable {
    /// The settings the service was made with: root, caches, workers, queue, timeouts.
    public let configuration: Configuration
    /// The root, resolved (symlinks followed): every served file's real path starts with it.
    public let root: String
    /// The root, opened once: paths below it are looked up relative to it.
    let rootDirectory: Int32
    /// Finished derivatives: bytes, and, for those of at least `sendfileMinimumBytes` whose bytes are in the
    /// disk cache, the open object (`Derivative.file`) instead; one lookup finds either.
    let memory: MemoryCache
    let disk: DiskCache?
    let pool: WorkerPool
    /// The S3 prefix served when the root is `s3://BUCKET/PREFIX/`; nil for a local root.
    package let objectStore: S3Store?
    /// Threads that resolve remote sources (they wait on the network); nil when there are none to resolve.
    let fetchPool: WorkerPool?
    /// The validators of URL sources fetched before, for revalidation.
    let validators = KnownValidators()
    let observer: (@Sendable (ServiceEvent) -> Void)?
    private let flights = Mutex(Flights())
    private let jobCounts = Mutex([String: Int]())

    /// What happened, for metrics and logs. Called on whichever thread it happened on.
    public enum ServiceEvent: Sendable {
        /// A job of `kind` ran for `seconds` (`failed`: it threw).
        case job(kind: String, seconds: Double, failed: Bool)
        /// A lookup was answered from memory, from disk, or by neither.
        case cache(Derivative.CacheOutcome)
    }

    /// Starts the worker threads and opens (creating) the disk cache folder. Throws `.io` if the root or
    /// the disk cache folder cannot be used.
    public init(configuration: Configuration, observer: (@Sendable (ServiceEvent) -> Void)? = nil) throws {
        if case .s3(let bucket, let prefix)? = try? StoreLocation(configuration.root) {
            guard let client = configuration.s3Client else {
                throw FlipbookError(.invalidArgument, "the root \(configuration.root) is an S3 prefix, and no S3 client was given")
            }
            let store = S3Store(client: client, bucket: bucket, prefix: prefix)
            objectStore = store
            root = store.root
            rootDirectory = -1
        } else {
            guard let real = realpath(configuration.root, nil) else {
                throw FlipbookError(.io, "cannot resolve the root \(configuration.root)", underlying: String(cString: strerror(errno)))
            }
            root = String(cString: real)
            free(real)
            rootDirectory = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard rootDirectory >= 0 else {
                throw FlipbookError(.io, "cannot open the root \(root)", underlying: String(cString: strerror(errno)))
            }
            objectStore = nil
        }
        fetchPool = objectStore != nil || configuration.remoteSources != nil
            ? WorkerPool(threads: configuration.fetchThreads, queueLimit: max(64, configuration.queueLimit * 4)) : nil
        self.configuration = configuration
        memory = MemoryCache(costLimit: configuration.memoryCacheBytes, entryFraction: configuration.memoryCacheEntryFraction,
                             fileLimit: configuration.openFileLimit)
        disk = try configuration.diskCacheDirectory.map { try DiskCache(directory: $0, limit: configuration.diskCacheBytes) }
        pool = WorkerPool(threads: configuration.workers, queueLimit: configuration.queueLimit)
        self.observer = observer
    }

    deinit {
        pool.shutdown()
        fetchPool?.shutdown()
        if rootDirectory >= 0 { close(rootDirectory) }
    }

    /// Whether a request's source is resolved over the network (a URL, or any path under an S3 root).
    func isRemote(_ request: DerivativeRequest) -> Bool { request.url != nil || objectStore != nil }

    /// The request's source, resolved: a local path at once (a few `fstatat`s), a remote one on a fetch thread.
    func resolveSource(_ request: DerivativeRequest) async throws -> ResolvedSource {
        guard isRemote(request) else { return try resolve(request.segments) }
        guard let fetchPool else { throw FlipbookError(.fetchRefused, "this server fetches no URLs (remote sources are off)") }
        return try await fetchPool.run { try self.resolveRemote(request) }
    }

    /// Jobs actually run so far, by kind (mp4, thumb, poster, preview, storyboard, original).
    public var jobsRun: [String: Int] { jobCounts.withLock { $0 } }

    /// Jobs waiting for a worker and jobs running.
    public var queueDepth: (waiting: Int, running: Int) { pool.depth }

    /// Memory cache use: bytes and entries.
    public var memoryCacheUsage: (bytes: Int, count: Int) { memory.usage }

    // MARK: - Requests

    /// The derivative `request` asks for: from memory, else from disk, else made by a job (shared with any
    /// identical request already running). Throws `DerivativeServiceError` (bad path, not found, unsupported
    /// media, busy, timeout), `FlipbookError` from the library (limits, corrupt input), or
    /// `CancellationError` when the calling task is cancelled (the job goes on only if others await it).
    public func derivative(_ request: DerivativeRequest) async throws -> Derivative {
        let source = try await resolveSource(request)
        let key = cacheKey(source, request.operation)
        // An open disk-cache object is read on a worker (`produce`), never here.
        if var hit = memory.value(for: key), hit.file == nil {
            observer?(.cache(.memory))
            hit.cache = .memory
            return hit
        }
        return try await coalesced(key: key) { token in try self.produce(request, source: source, key: key, token: token) }
    }

    /// The derivative if the memory cache already holds it: no job, no waiting, no disk I/O. A server uses
    /// this to answer hits without setting up cancellation on client disconnect.
    public func cachedDerivative(_ request: DerivativeRequest) throws -> Derivative? {
        // A remote source's identity needs a request to the network: never here.
        guard !isRemote(request) else { return nil }
        let source = try resolve(request.segments)
        guard var hit = memory.value(for: cacheKey(source, request.operation)), hit.file == nil else { return nil }
        observer?(.cache(.memory))
        hit.cache = .memory
        return hit
    }

    /// The derivative if the memory cache holds its bytes or its open disk-cache object (then `file` is set
    /// and `bytes` empty): what a server that can send a file answers a hit with. No job, no waiting, no I/O
    /// but the path's `fstatat`.
    package func cachedEntry(_ request: DerivativeRequest) throws -> Derivative? {
        guard !isRemote(request) else { return nil }
        let source = try resolve(request.segments)
        guard var hit = memory.value(for: cacheKey(source, request.operation)) else { return nil }
        let outcome: Derivative.CacheOutcome = hit.file == nil ? .memory : .disk
        observer?(.cache(outcome))
        hit.cache = outcome
        return hit
    }

    /// The memory cache's key for `operation` on `source`: integers and the operation, no text.
    func cacheKey(_ source: ResolvedSource, _ operation: DerivativeRequest.Operation) -> DerivativeKey {
        if case .storyboardVTT = operation {
            return DerivativeKey(file: source.file, operation: operation, path: source.encodedPath, remote: source.remote)
        }
        return DerivativeKey(file: source.file, operation: operation, path: nil, remote: source.remote)
    }

    /// The disk cache's key for `key`: the version, the file's identity and the operation as text (and, for a
    /// storyboard's WebVTT, the sheet URLs' tag and the path), so that servers sharing a folder agree on it.
    /// Built only when the disk cache is read or written.
    func diskKey(_ key: DerivativeKey) -> String {
        let identity = key.remote ?? key.file.text, operationText = key.operation.keyText
        var text = String(utf8Capacity: Self.keyPrefix.utf8.count + identity.utf8.count + 1 + operationText.utf8.count) { text in
            text.append(Self.keyPrefix)
            text.append(identity)
            text.append(ascii: UInt8(ascii: "|"))
            text.append(operationText)
        }
        if let path = key.path { text += "|\(configuration.storyboardURLTag)|\(path)" }
        return text
    }

    /// What every cache key starts with: a new version never reads an older one's derivatives.
    static let keyPrefix = "flipbook \(FlipbookVersion.current)|"

    // MARK: - Coalescing

    /// Set when every waiter has gone or the job's time is up; polled by the decode loops.
    final class CancelToken: Sendable {
        let cancelled = Atomic<Bool>(false)
        let deadline: UInt64
        init(timeoutSeconds: Double) { deadline = Self.now() + UInt64(max(0, timeoutSeconds) * 1e9) }

        var isCancelled: Bool { cancelled.load(ordering: .relaxed) || timedOut }
        var timedOut: Bool { Self.now() > deadline }

        static func now() -> UInt64 {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
        }
    }

    private struct Flight {
        let token: CancelToken
        var waiters: [UInt64: CheckedContinuation<Derivative, any Error>] = [:]
    }

    private struct Flights {
        var byKey: [DerivativeKey: Flight] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// Awaits the job for `key`, starting it if none runs. The job runs on the worker pool.
    private func coalesced(key: DerivativeKey, job: @escaping @Sendable (CancelToken) throws -> Derivative) async throws -> Derivative {
        let waiter = flights.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Derivative, any Error>) in
                let start: CancelToken? = flights.withLock { state in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return nil
                    }
                    if state.byKey[key] != nil {
                        state.byKey[key]!.waiters[waiter] = continuation
                        return nil
                    }
                    let token = CancelToken(timeoutSeconds: configuration.jobTimeoutSeconds)
                    state.byKey[key] = Flight(token: token, waiters: [waiter: continuation])
                    return token
                }
                guard let token = start else { return }
                do {
                    try pool.submit { [self] in
                        // The job always runs, even when cancelled while it waited: the pool counts it as
                        // running from here on, so it is counted in `jobsRun` too (it stops at its first
                        // check, before any decode). Skipping it here left the two disagreeing.
                        let result = Result {
                            do {
                                return try job(token)
                            } catch let error as FlipbookError where error.code == .cancelled && token.timedOut {
                                throw DerivativeServiceError.timeout(seconds: configuration.jobTimeoutSeconds)
                            }
                        }
                        finish(key: key, token: token, result: result)
                    }
                } catch {
                    finish(key: key, token: token, result: .failure(error))
                }
            }
        } onCancel: {
            let gone = flights.withLock { state -> CheckedContinuation<Derivative, any Error>? in
                guard let continuation = state.byKey[key]?.waiters.removeValue(forKey: waiter) else { return nil }
                if state.byKey[key]!.waiters.isEmpty {
                    // Nobody waits any more: stop the job between frames; a new request starts afresh.
                    state.byKey[key]!.token.cancelled.store(true, ordering: .relaxed)
                    state.byKey[key] = nil
                }
                return continuation
            }
            gone?.resume(throwing: CancellationError())
        }
    }

    private func finish(key: DerivativeKey, token: CancelToken, result: Result<Derivative, any Error>) {
        let waiters = flights.withLock { state -> [CheckedContinuation<Derivative, any Error>] in
            guard let flight = state.byKey[key], flight.token === token else { return [] }
            state.byKey[key] = nil
            return Array(flight.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    // MARK: - Jobs (on a worker thread)

    private func produce(_ request: DerivativeRequest, source: ResolvedSource, key: DerivativeKey, token: CancelToken) throws -> Derivative {
        if case .original = request.operation {
            // The source itself: no job to count and nothing worth a disk copy; hashed once for its ETag.
            let made = try make(.original, source: source, token: token)
            let derivative = Self.derivative(made.bytes, contentType: made.contentType)
            memory.insert(derivative, for: key)
            return derivative
        }
        if let cached = disk?.value(for: diskKey(key), fileMinimumBytes: configuration.sendfileMinimumBytes) {
            observer?(.cache(.disk))
            guard let file = cached.file else {
                memory.insert(cached, for: key)
                return cached
            }
            // Held open for the hits to come; this request, which may come through the public API, gets bytes.
            memory.insert(cached, for: key)
            return Derivative(bytes: try file.read(offset: 0, length: file.size), contentType: cached.contentType,
                              etag: cached.etag, cache: .disk)
        }
        observer?(.cache(.miss))
        let kind = request.operation.kind
        let started = CancelToken.now()
        do {
            // Every decode and encode loop the job runs checks the token too (posters and stills included).
            let made = try Cancellation.watching({ token.isCancelled }) {
                try Cancellation.check("the \(kind) job")  // cancelled while it waited for a worker
                return try make(request.operation, source: source, token: token)
            }
            record(kind: kind, started: started, failed: false)
            let derivative = Self.derivative(made.bytes, contentType: made.contentType)
            keep(derivative, for: key)
            return derivative
        } catch {
            record(kind: kind, started: started, failed: true)
            throw error
        }
    }

    /// Puts a made derivative in the caches: the disk cache first, then in memory its bytes, or, from
    /// `sendfileMinimumBytes`, its disk-cache object held open.
    private func keep(_ derivative: Derivative, for key: DerivativeKey) {
        guard let disk, let object = disk.insert(derivative, for: diskKey(key)) else { return memory.insert(derivative, for: key) }
        if derivative.size >= configuration.sendfileMinimumBytes, let file = CachedFile(path: object), file.size == derivative.size {
            memory.insert(Derivative(bytes: ByteBuffer(), contentType: derivative.contentType, etag: derivative.etag,
                                    cache: .disk, file: file), for: key)
        } else {
            memory.insert(derivative, for: key)
        }
    }

    private func record(kind: String, started: UInt64, failed: Bool) {
        jobCounts.withLock { $0[kind, default: 0] += 1 }
        observer?(.job(kind: kind, seconds: Double(CancelToken.now() - started) / 1e9, failed: failed))
    }

    /// Wraps finished bytes: one copy into the shared buffer, and the ETag from their SHA-256.
    static func derivative(_ bytes: [UInt8], contentType: String) -> Derivative {
        let digest = SHA256.hash(data: bytes)
        let etag = "\"" + Hex.string(Array(digest).prefix(16)) + "\""
        return Derivative(bytes: ByteBuffer(bytes: bytes), contentType: contentType, etag: etag, cache: .miss)
    }

    private func make(_ operation: DerivativeRequest.Operation, source: ResolvedSource, token: CancelToken)
        throws -> (bytes: [UInt8], contentType: String)
    {
        let file = try source.open()
        let media = MediaInput(source: file, name: source.remote == nil ? source.encodedPath : source.path, limits: configuration.limits)
        try configuration.limits.checkBytes(file.count, type: media.type)
        let isCancelled: @Sendable () -> Bool = { token.isCancelled }
        switch operation {
        case .original:
            guard media.type != .unknown else { throw FlipbookError(.unknownFormat, "not a recognised image or video format") }
            try configuration.limits.checkBytes(file.count)  // held whole in the caches: the whole-input limit
            return (try file.withContiguousBytes { Array($0) }, Self.contentType(of: media.type))
        case .mp4(let maxSize):
            return (try gifToMP4(media, maxSize: maxSize, isCancelled: isCancelled), "video/mp4")
        case .thumb(let request), .poster(let request):
            guard media.type != .unknown else { throw FlipbookError(.unknownFormat, "not a recognised image or video format") }
            let image = try media.thumbnailImage(request)
            if token.isCancelled { throw FlipbookError(.cancelled, "the thumbnail was cancelled") }
            return (try EncodedImage(image: image, format: request.format, quality: request.quality).data,
                    request.format.mimeType)
        case .preview(let size):
            if media.type.isAnimation { return (try gifToMP4(media, maxSize: size, isCancelled: isCancelled), "video/mp4") }
            guard media.type.isVideo else {
                throw DerivativeServiceError.unsupportedMedia("\(media.type) is not a video", hint: media.type.isStill ? "/thumb" : nil)
            }
            var options = PreviewOptions()
            options.size = size
            options.format = .mp4
            options.video.threads = configuration.encoderThreads
            options.video.decode.isCancelled = isCancelled
            return (try VideoPreview.make(media, options: options).data, "video/mp4")
        case .storyboardVTT, .storyboardSheet:
            guard media.type.isVideo else { throw DerivativeServiceError.unsupportedMedia("\(media.type) is not a video", hint: nil) }
            var options = StoryboardOptions()
            options.isCancelled = isCancelled
            let board = try Storyboard.make(media, options: options)
            let urlFor = source.isURL ? configuration.remoteStoryboardSheetURL : configuration.storyboardSheetURL
            let vtt = Array(board.webVTT(sheetName: { urlFor(source.encodedPath, $0) }).utf8)
            // One job makes the WebVTT and every sheet: cache them all, answer the one asked for.
            var answer: (bytes: [UInt8], contentType: String)?
            for (index, sheet) in board.sheets.enumerated() {
                let sheetKey = cacheKey(source, .storyboardSheet(index))
                let derivative = Self.derivative(sheet.data, contentType: "image/jpeg")
                keep(derivative, for: sheetKey)
                if case .storyboardSheet(index) = operation { answer = (sheet.data, "image/jpeg") }
            }
            let vttDerivative = Self.derivative(vtt, contentType: "text/vtt; charset=utf-8")
            let vttKey = cacheKey(source, .storyboardVTT)
            keep(vttDerivative, for: vttKey)
            if case .storyboardVTT = operation { return (vtt, "text/vtt; charset=utf-8") }
            guard let answer else { throw DerivativeServiceError.notFound("the storyboard has \(board.sheets.count) sheet(s)") }
            return answer
        }
    }

    private func gifToMP4(_ media: MediaInput, maxSize: Int?, isCancelled: @escaping @Sendable () -> Bool) throws -> [UInt8] {
        guard media.type.isAnimation else {
            if media.type.isVideo { throw DerivativeServiceError.unsupportedMedia("\(media.type) is a video", hint: "/preview") }
            if media.type == .unknown { throw FlipbookError(.unknownFormat, "not a recognised image or video format") }
            throw DerivativeServiceError.unsupportedMedia("\(media.type) is not an animation (GIF, animated WebP or APNG)", hint: media.type.isStill ? "/thumb" : nil)
        }
        var options = VideoConversionOptions()
        options.maxSize = maxSize
        options.threads = configuration.encoderThreads
        options.decode.limits = configuration.limits
        options.decode.limits.maxFrames = configuration.maxGIFFrames
        options.decode.isCancelled = isCancelled
        return try GIFToVideo.convert(media.source, options: options).data
    }

    static func contentType(of type: MediaType) -> String {
        switch type {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .apng: "image/apng"
        case .gif: "image/gif"
        case .webp, .animatedWebP: "image/webp"
        case .bmp: "image/bmp"
        case .tiff: "image/tiff"
        case .avif: "image/avif"
        case .heic: "image/heic"
        case .mp4: "video/mp4"
        case .m4v: "video/x-m4v"
        case .mov: "video/quicktime"
        case .webm: "video/webm"
        case .matroska: "video/x-matroska"
        default: "application/octet-stream"
        }
    }
}
