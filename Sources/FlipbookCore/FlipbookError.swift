/// The one error type Flipbook throws: a machine-readable code, a human message, the underlying cause
/// (a C library's own words, when there is one) and where it happened.
public struct FlipbookError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. Stable: callers and the JSON output switch on it.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable code (`unknown-format`, ...).
        public let rawValue: String
        /// A code by its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The stable code.
        public var description: String { rawValue }

        /// The bytes are not a format Flipbook recognises.
        public static let unknownFormat = Code(rawValue: "unknown-format")
        /// A recognised format, or a feature of it, that this operation does not handle.
        public static let unsupported = Code(rawValue: "unsupported")
        /// The input is damaged or inconsistent.
        public static let corrupt = Code(rawValue: "corrupt")
        /// The input ends before the data it declares.
        public static let truncated = Code(rawValue: "truncated")
        /// The input exceeds a configured limit (pixels, bytes, frames, duration).
        public static let limitExceeded = Code(rawValue: "limit-exceeded")
        /// Reading or writing a file failed.
        public static let io = Code(rawValue: "io")
        /// A codec library reported an error.
        public static let codec = Code(rawValue: "codec")
        /// A shared library could not be loaded.
        public static let libraryUnavailable = Code(rawValue: "library-unavailable")
        /// The caller asked for something inconsistent.
        public static let invalidArgument = Code(rawValue: "invalid-argument")
        /// The work was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The source (an object, a URL, a bucket) does not exist.
        public static let notFound = Code(rawValue: "not-found")
        /// The store refused the request: permissions, a policy, a bad or expired credential.
        public static let accessDenied = Code(rawValue: "access-denied")
        /// A fetch on someone's behalf was refused before it was made: a private address, a scheme, a host
        /// the policy does not allow, a redirect too many.
        public static let fetchRefused = Code(rawValue: "fetch-refused")
        /// A remote server answered with an error status or broke the exchange.
        public static let fetchFailed = Code(rawValue: "fetch-failed")
        /// A time limit ran out (a fetch, a connection, a job).
        public static let timeout = Code(rawValue: "timeout")
        /// The source changed while it was being read (its validator no longer matches): nothing is made
        /// from a mix of two versions.
        public static let sourceChanged = Code(rawValue: "source-changed")
    }

    /// What kind of failure this is.
    public var code: Code
    /// One sentence for a person.
    public var message: String
    /// The underlying cause in its library's own words, if any.
    public var underlying: String?
    /// Where it happened: the operation or C call.
    public var context: String?

    /// An error of kind `code` with a message for people, the library's own words if any (`underlying`)
    /// and the call that failed (`context`).
    public init(_ code: Code, _ message: String, underlying: String? = nil, context: String? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.context = context
    }

    /// The message, with the underlying cause in parentheses when there is one.
    public var description: String {
        var text = message
        if let underlying, !underlying.isEmpty { text += " (\(underlying))" }
        return text
    }
}
