import Flipbook

/// What to make of one upload, by media kind: a list of named derivatives for stills, one for animations
/// and one for videos, and whether to compute placeholders. `Recipe.standard` is the built-in default;
/// `RecipeBook` reads more from JSON.
public struct Recipe: Sendable, Equatable {
    /// The media kinds a recipe distinguishes. A one-frame GIF (or WebP, or PNG) counts as a still.
    public enum Kind: String, Sendable, CaseIterable {
        case still, animation, video
    }

    /// One output: its name (part of its file name), what it is, and its size and format.
    public struct Derivative: Sendable, Equatable {
        /// What a derivative is.
        public enum Operation: String, Sendable, CaseIterable {
            /// A still image: a still's thumbnail, an animation's first frame, a video's poster.
            case thumb
            /// The same as `thumb` (the name says which frame a page will show it for).
            case poster
            /// An animation as a looping, silent MP4 (as `flipbook convert`).
            case video
            /// A video's hover preview MP4 (as `flipbook preview`); of an animation, its MP4.
            case preview
            /// A video's storyboard: a WebVTT file and its JPEG sheets (as `flipbook storyboard`).
            case storyboard
        }

        /// Letters, digits, `-` and `_`; unique within a kind.
        public var name: String
        /// What it is.
        public var operation: Operation
        /// Longer side (inside) or square side (cover), in pixels; nil: the source's own size (video) or 320.
        public var size: Int?
        /// `thumb` and `poster`: inside (keep the aspect ratio) or cover (a centre-cropped square).
        public var fit: Fit
        /// For `thumb` and `poster`: JPEG, PNG or WebP.
        public var format: OutputFormat
        /// JPEG and WebP quality, 1-100.
        public var quality: Int

        /// A derivative with the documented defaults: the operation's own size, inside, JPEG, quality 80.
        public init(name: String, operation: Operation, size: Int? = nil, fit: Fit = .inside,
                    format: OutputFormat = .jpeg, quality: Int = 80) {
            self.name = name
            self.operation = operation
            self.size = size
            self.fit = fit
            self.format = format
            self.quality = quality
        }
    }

    /// The name jobs and `--recipe` use.
    public var name: String
    /// What a still (JPEG, PNG, WebP, AVIF, HEIC, BMP, TIFF, or a one-frame animation) gets.
    public var still: [Derivative]
    /// What an animation of more than one frame (GIF, animated WebP, APNG) gets.
    public var animation: [Derivative]
    /// What a video gets.
    public var video: [Derivative]
    /// Compute the ThumbHash and BlurHash (a small decode of every visual input).
    public var placeholders: Bool
    /// Whether a source cut short (an upload that ended in transit) is made from what there is, its result
    /// carrying the decoders' `warnings`; false (the default): it fails with `truncated`, so the app can ask
    /// for the upload again.
    public var acceptTruncated = false
    /// Seconds a job of this recipe may run in `flipbook worker` before it is stopped and recorded `timeout`
    /// (nil: the worker's `--job-timeout`).
    public var timeoutSeconds: Double?

    /// A recipe making nothing for the kinds left out; placeholders on unless turned off.
    public init(name: String, still: [Derivative] = [], animation: [Derivative] = [], video: [Derivative] = [],
                placeholders: Bool = true) {
        self.name = name
        self.still = still
        self.animation = animation
        self.video = video
        self.placeholders = placeholders
    }

    /// The derivatives for inputs of `kind`.
    public func derivatives(for kind: Kind) -> [Derivative] {
        switch kind {
        case .still: still
        case .animation: animation
        case .video: video
        }
    }

    /// still: `thumb` (320 px WebP) and `large` (1280 px JPEG); animation: `video` (looping silent MP4) and
    /// `poster` (320 px JPEG of the first frame); video: `poster` (320 px JPEG), `preview` (hover MP4, 320
    /// px) and `storyboard` (WebVTT and sheets). Placeholders for all. Nothing is enlarged.
    public static let standard = Recipe(
        name: "default",
        still: [Derivative(name: "thumb", operation: .thumb, size: 320, format: .webp),
                Derivative(name: "large", operation: .thumb, size: 1280, format: .jpeg, quality: 85)],
        animation: [Derivative(name: "video", operation: .video),
                    Derivative(name: "poster", operation: .poster, size: 320)],
        video: [Derivative(name: "poster", operation: .poster, size: 320),
                Derivative(name: "preview", operation: .preview, size: 320),
                Derivative(name: "storyboard", operation: .storyboard)])

    /// Metadata only: no derivatives and no placeholders (no pixel is decoded).
    public static let probe = Recipe(name: "probe", placeholders: false)

    /// Throws `.invalidArgument` naming the first thing wrong: a bad name, a duplicate, an operation the
    /// kind cannot take, a size or quality out of range.
    public func validate() throws {
        func fail(_ message: String) -> FlipbookError { FlipbookError(.invalidArgument, "recipe \(name): \(message)") }
        guard Self.isName(name) else { throw fail("names are letters, digits, - and _") }
        if let timeoutSeconds, !(timeoutSeconds > 0 && timeoutSeconds.isFinite) { throw fail("timeout must be a positive number of seconds") }
        for kind in Kind.allCases {
            var seen: Set<String> = []
            for d in derivatives(for: kind) {
                guard Self.isName(d.name), d.name != "result" else { throw fail("\(kind) derivative \"\(d.name)\": names are letters, digits, - and _") }
                guard seen.insert(d.name).inserted else { throw fail("two \(kind) derivatives are named \(d.name)") }
                if let size = d.size, !(16...8192).contains(size) { throw fail("\(d.name): size must be 16 to 8192") }
                guard (1...100).contains(d.quality) else { throw fail("\(d.name): quality must be 1 to 100") }
                switch (d.operation, kind) {
                case (.video, .still), (.video, .video), (.preview, .still), (.storyboard, .still), (.storyboard, .animation):
                    throw fail("\(d.name): \(d.operation.rawValue) does not apply to a \(kind)")
                default: break
                }
            }
        }
    }

    static func isName(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 64 && s.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }
}
