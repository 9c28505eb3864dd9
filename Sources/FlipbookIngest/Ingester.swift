import Crypto
import Flipbook
import Foundation
import Tracing

/// Runs a recipe over one source: hashes its bytes, probes it, computes its placeholders, makes each
/// derivative and writes it atomically under the output root at a path from the content hash
/// (`ab/cd/<sha256>/<name>.<ext>`), then records the result beside them. Identical uploads share one set of
/// derivatives; running a source again whose result is recorded (and whose files are all there) rewrites
/// nothing and returns the same result. `flipbook ingest` and `flipbook worker` are thin layers over it.
///
/// Blocking: call it from a thread of your own (a worker pool), never the cooperative pool.
public struct Ingester: Sendable {
    /// The folder outputs go under, or the `s3://` prefix they are written to.
    public let outputRoot: String
    /// Where derivatives and results are written: a folder (`FolderOutput`) or an S3 prefix.
    public let output: any IngestOutput
    /// The recipes `ingest` picks from by name.
    public let recipes: RecipeBook
    /// Library limits for every source (pixels, bytes, frames, duration), checked from headers.
    public let limits: Limits
    /// Encoder threads per MP4 (0: libx264's choice). A process running several sources at once wants 1.
    public var encoderThreads = 0
    /// Where spans go: one child of `ingest`'s `trace` for reading the source, decoding, and each
    /// derivative's encode and write. Nil (the default): no span is made and nothing is allocated for them.
    /// Passed in, never looked up: the library leaves the process's tracing bootstrap alone.
    public var tracer: (any Tracer)?
    /// Told of every decode of a still source's pixels (`MediaInput.onDecode`), on the ingesting thread; nil (the
    /// default): nothing is reported. A still is decoded once whatever its recipe makes; this says so.
    public var onDecode: (@Sendable (DecodeEvent) -> Void)?
    /// `recipeTag` of each recipe in the book, by its name there: computed once, not per source (describing a
    /// recipe walks it by reflection, about 20 us, 2.5% of a `probe` job).
    private let tags: [String: String]

    /// An ingester writing under the folder `outputRoot` (created as needed) with `recipes` and `limits`.
    public init(outputRoot: String, recipes: RecipeBook = .builtIn, limits: Limits = Limits()) {
        self.init(output: FolderOutput(root: outputRoot), recipes: recipes, limits: limits)
    }

    /// An ingester writing to `output` with `recipes` and `limits`.
    public init(output: any IngestOutput, recipes: RecipeBook = .builtIn, limits: Limits = Limits()) {
        self.output = output
        outputRoot = (output as? FolderOutput)?.root ?? output.location(of: "") ?? ""
        self.recipes = recipes
        self.limits = limits
        tags = recipes.recipes.mapValues(Self.recipeTag)
    }

    /// The result for the file at `path`, reported as `source` (default: `path`), made with the recipe called
    /// `recipe` (nil: the book's default). Never throws: failures are in the result's `error`.
    /// `trace`: the context the spans continue (a job's span); ignored without `tracer`.
    public func ingest(path: String, source: String? = nil, recipe recipeName: String? = nil,
                       isCancelled: (@Sendable () -> Bool)? = nil, trace: ServiceContext? = nil) -> IngestResult {
        ingest(opening: { try FileByteSource(path: path) }, source: source ?? path, recipe: recipeName, isCancelled: isCancelled, trace: trace)
    }

    /// The result for the bytes `open` gives (a file, an S3 object or a URL, opened by the caller; its errors go
    /// into the result like any other), reported as `source`. Every byte is read (hashed) and then decoded: a
    /// remote source is best opened as a `SpooledCopy`, read once over the network.
    public func ingest(opening open: () throws -> any ByteSource, source: String, recipe recipeName: String? = nil,
                       isCancelled: (@Sendable () -> Bool)? = nil, trace: ServiceContext? = nil) -> IngestResult {
        let recipe: Recipe
        do {
            recipe = try recipes.recipe(named: recipeName)
        } catch {
            return IngestResult(source: source, recipe: recipeName ?? recipes.defaultName, error: error)
        }
        do {
            let check = isCancelled ?? { false }
            let tag = tags[recipeName ?? recipes.defaultName] ?? Self.recipeTag(recipe)
            return try Cancellation.watching(check) {
                try run(open: open, source: source, recipe: recipe, tag: tag, isCancelled: isCancelled, trace: trace)
            }
        } catch {
            return IngestResult(source: source, recipe: recipe.name, error: error)
        }
    }

    /// Runs `body` inside a span named `name` under `trace` when there is a tracer; else just runs it.
    private func span<T>(_ name: String, _ trace: ServiceContext?, _ body: () throws -> T) throws -> T {
        guard let tracer, let trace else { return try body() }
        let span = tracer.startSpan(name, context: trace)
        defer { span.end() }
        do {
            return try body()
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    private func run(open: () throws -> any ByteSource, source: String, recipe: Recipe, tag: String,
                     isCancelled: (@Sendable () -> Bool)?, trace: ServiceContext?) throws -> IngestResult {
        let (file, digest) = try span("read source", trace) { () throws -> (any ByteSource, String) in
            let file = try open()
            try limits.checkBytes(file.count)
            return (file, try Self.sha256(of: file, name: source))
        }
        var result = IngestResult(source: source, recipe: recipe.name)
        result.sha256 = digest
        result.bytes = file.count
        let folder = Self.folder(for: digest)
        let record = "\(folder)/result.\(recipe.name).\(tag).json"
        if let earlier = recorded(at: record) {
            var again = earlier
            again.source = source
            return again
        }

        var media = MediaInput(source: file, name: source, limits: limits)
        media.onDecode = onDecode
        // A still's placeholder and every still derivative come from one decode, sized for the largest of them
        // (`MediaInput.thumbnailImages`); other kinds decode their placeholder's frame here and each derivative
        // as it is made.
        let (info, kind, placeholder, stills) = try span("decode", trace) { () throws -> (MediaInfo, Recipe.Kind, Image?, [String: Image]) in
            let info = try media.probe()
            let kind = try Self.kind(of: info)
            guard kind == .still else {
                return (info, kind, recipe.placeholders ? try media.thumbnailImage(Placeholder.request) : nil, [:])
            }
            let derivatives = recipe.derivatives(for: kind).filter { $0.operation == .thumb || $0.operation == .poster }
            let requests = (recipe.placeholders ? [Placeholder.request] : []) + derivatives.map(Self.request)
            guard !requests.isEmpty else { return (info, kind, nil, [:]) }
            var images = try media.thumbnailImages(requests)
            let placeholder = recipe.placeholders ? images.removeFirst() : nil
            return (info, kind, placeholder, Dictionary(zip(derivatives.map(\.name), images), uniquingKeysWith: { first, _ in first }))
        }
        result.type = info.type.rawValue
        result.width = info.width
        result.height = info.height
        result.orientation = info.orientation
        result.durationMs = info.durationMs
        result.frames = info.frames
        result.loopCount = info.loopCount
        result.hasAlpha = info.hasAlpha
        let wanted = recipe.derivatives(for: kind)
        var warnings: [String] = []
        if let placeholder {
            warnings += placeholder.warnings
            result.placeholder = Placeholder(image: placeholder)
        }
        // A recipe that makes nothing and no placeholders (probe) writes nothing, not even its record.
        let writes = !wanted.isEmpty || recipe.placeholders
        // Every derivative is made before any is written: a source that fails at its second derivative (a
        // video whose poster decodes and whose preview does not) used to leave the first one on disk.
        // Deleting it afterwards instead could remove a file an identical upload's worker has just listed.
        var made: [(relative: String, bytes: [UInt8], derivative: String, contentType: String)] = []
        for derivative in wanted {
            let outputs = try span("encode \(derivative.name)", trace) {
                try make(derivative, media: media, kind: kind, decoded: stills[derivative.name], isCancelled: isCancelled)
            }
            for (name, file, bytes, contentType, size, said) in outputs {
                warnings += said.filter { !warnings.contains($0) }
                let relative = "\(folder)/\(file)"
                made.append((relative, bytes, derivative.name, contentType))
                result.derivatives.append(.init(name: name, path: relative, contentType: contentType, bytes: bytes.count,
                                                sha256: Hex.string(SHA256.hash(data: bytes)), width: size.width,
                                                height: size.height, durationMs: size.durationMs, url: output.location(of: relative)))
            }
        }
        if !warnings.isEmpty {
            if !recipe.acceptTruncated, let cut = warnings.first(where: Self.isTruncation) {
                throw FlipbookError(.truncated, "the source is cut short (\(cut)); recipe \(recipe.name) does not accept truncated sources")
            }
            result.warnings = warnings
        }
        // Stopped (a job's timeout or cancel) after the last frame: still nothing is written.
        try Cancellation.check("ingesting \(source)")
        for (relative, bytes, name, contentType) in made {
            try span("write \(name)", trace) { try output.write(bytes, to: relative, contentType: contentType) }
        }
        if writes {
            // Recorded without the source's name: identical uploads under other names share it.
            var stored = result
            stored.source = ""
            try output.write(Array(stored.json().utf8), to: record, contentType: "application/json")
        }
        return result
    }

    typealias Made = (name: String, file: String, bytes: [UInt8], contentType: String,
                      size: (width: Int?, height: Int?, durationMs: Int?), warnings: [String])

    /// Whether a decoder's warning says the bytes ended early (libjpeg's "Premature end of JPEG file", a GIF
    /// or APNG frame "incomplete", a decoder that "stopped" at the end of the data), rather than that it
    /// skipped damaged bytes it could read past (libjpeg's "extraneous bytes before marker"), which a
    /// recipe never refuses: many cameras write those.
    static func isTruncation(_ warning: String) -> Bool {
        let text = warning.lowercased()
        return ["premature end", "incomplete", "truncat", "unexpected end", "end of file", "ends before", "cut short"]
            .contains { text.contains($0) }
    }

    /// The thumbnail request a `thumb` or `poster` derivative makes: as `flipbook thumb` with its size, fit,
    /// format and quality.
    static func request(_ d: Recipe.Derivative) -> ThumbnailRequest {
        ThumbnailRequest(maxPixelSize: d.size ?? 320, fit: d.fit, quality: d.quality, format: d.format)
    }

    /// `decoded`: a still derivative's image, already cut from the source's one decode.
    private func make(_ d: Recipe.Derivative, media: MediaInput, kind: Recipe.Kind, decoded: Image?,
                      isCancelled: (@Sendable () -> Bool)?) throws -> [Made] {
        switch d.operation {
        case .thumb, .poster:
            let image = try decoded ?? media.thumbnailImage(Self.request(d))
            let encoded = try EncodedImage(image: image, format: d.format, quality: d.quality)
            return [(d.name, "\(d.name).\(d.format.fileExtension)", encoded.data, d.format.mimeType,
                     (encoded.width, encoded.height, nil), encoded.warnings)]
        case .video:
            return [try animationMP4(d, media: media, isCancelled: isCancelled)]
        case .preview:
            if kind == .animation { return [try animationMP4(d, media: media, isCancelled: isCancelled)] }
            var options = PreviewOptions()
            options.size = d.size ?? 320
            options.format = .mp4
            options.video.threads = encoderThreads
            options.video.decode.isCancelled = isCancelled
            let preview = try VideoPreview.make(media, options: options)
            return [(d.name, "\(d.name).mp4", preview.data, "video/mp4", (preview.width, preview.height, preview.durationMs), [])]
        case .storyboard:
            var options = StoryboardOptions()
            options.isCancelled = isCancelled
            let board = try Storyboard.make(media, options: options)
            var made: [Made] = board.sheets.enumerated().map { index, sheet in
                ("\(d.name)-sheet-\(index)", "\(d.name)-\(index).jpg", sheet.data, "image/jpeg", (sheet.width, sheet.height, nil), [])
            }
            // The cues name the sheets beside the WebVTT file.
            let vtt = Array(board.webVTT(sheetName: { "\(d.name)-\($0).jpg" }).utf8)
            made.insert((d.name, "\(d.name).vtt", vtt, "text/vtt; charset=utf-8", (nil, nil, board.durationMs), []), at: 0)
            return made
        }
    }

    private func animationMP4(_ d: Recipe.Derivative, media: MediaInput, isCancelled: (@Sendable () -> Bool)?) throws -> Made {
        var options = VideoConversionOptions()
        options.maxSize = d.size
        options.threads = encoderThreads
        options.decode.limits = limits
        options.decode.isCancelled = isCancelled
        let video = try GIFToVideo.convert(media.source, options: options)
        return (d.name, "\(d.name).mp4", video.data, "video/mp4", (video.width, video.height, video.durationMs), video.warnings)
    }

    /// A recorded result, if there is one and every file it lists is still there.
    private func recorded(at relative: String) -> IngestResult? {
        guard let data = output.read(relative),
              let result = try? JSONDecoder().decode(IngestResult.self, from: Data(data)),
              result.flipbookVersion == FlipbookVersion.current,
              result.derivatives.allSatisfy({ output.exists($0.path) })
        else { return nil }
        return result
    }

    /// Still, animation (more than one frame) or video; `.unknownFormat` for anything else.
    static func kind(of info: MediaInfo) throws -> Recipe.Kind {
        if info.type.isVideo { return .video }
        if info.type.isAnimation { return (info.frames ?? 2) > 1 ? .animation : .still }
        if info.type.isStill { return .still }
        throw FlipbookError(.unknownFormat, "not a recognised image or video format")
    }

    /// `ab/cd/<sha256>`: two levels of 256 folders keep any one folder small.
    static func folder(for digest: String) -> String {
        let c = Array(digest)
        return "\(String(c[0..<2]))/\(String(c[2..<4]))/\(digest)"
    }

    /// Eight hex digits that change when the recipe's definition (or Flipbook's version) does, so a changed
    /// recipe under the same name is made afresh.
    static func recipeTag(_ recipe: Recipe) -> String {
        String(Hex.string(SHA256.hash(data: Array("\(FlipbookVersion.current) \(recipe)".utf8))).prefix(8))
    }

    static func sha256(of file: any ByteSource, name: String) throws -> String {
        var hasher = SHA256()
        // No larger than the file and not zeroed: a zeroed 1 MB chunk was a fresh mapping (above the mmap
        // threshold) faulted in page by page and unmapped again for every file, a quarter of a `probe` job's
        // CPU on files of tens of kilobytes.
        let size = max(1, min(1 << 20, file.count))
        var chunk = [UInt8](unsafeUninitializedCapacity: size) { _, count in count = size }
        var offset = 0
        while offset < file.count {
            // Between megabyte reads: a timed-out or cancelled job stops here too, not only between frames.
            try Cancellation.check("reading \(name)")
            let n = try chunk.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
            if n == 0 { throw FlipbookError(.truncated, "\(name) shrank while it was read") }
            hasher.update(data: chunk[0..<n])
            offset += n
        }
        return Hex.string(hasher.finalize())
    }
}
