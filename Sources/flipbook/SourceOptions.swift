import ArgumentParser
import Flipbook
import FlipbookStorage

/// The options every command that reads sources takes for sources given as URLs (issue 44): limits, and the
/// private addresses an operator allows. Without them every private, loopback and link-local address is
/// refused.
struct SourceOptions: ParsableArguments {
    @Option(help: "Largest source fetched from a URL, checked against Content-Length and while reading, e.g. 512MB.")
    var maxSourceBytes = "512MB"
    @Option(help: "Seconds one fetch from a URL may take, redirects included.") var fetchTimeout = 30.0
    @Option(help: ArgumentHelp("HOST:PORT of a URL source whose private addresses may be fetched (repeatable; * allows every one).",
                               valueName: "host:port"))
    var allowPrivateSources: [String] = []
    @Option(help: ArgumentHelp("Fetch URL sources only from this host (repeatable; *.example.org for its subdomains).", valueName: "host"))
    var allowSourceHost: [String] = []
    @Option(help: ArgumentHelp("Never fetch URL sources from this host (repeatable; *.example.org for its subdomains).", valueName: "host"))
    var denySourceHost: [String] = []

    func validate() throws {
        guard let bytes = ServeCommand.parseSize(maxSourceBytes), bytes > 0 else { throw ValidationError("--max-source-bytes takes a size such as 512MB") }
        _ = bytes
        guard fetchTimeout > 0 else { throw ValidationError("--fetch-timeout must be positive") }
        for entry in allowPrivateSources where entry != "*" {
            guard let colon = entry.lastIndex(of: ":"), Int(entry[entry.index(after: colon)...]).map({ (1...65535).contains($0) }) == true,
                  colon > entry.startIndex
            else { throw ValidationError("--allow-private-sources takes HOST:PORT (127.0.0.1:8080, [::1]:80, media.internal:443) or *") }
        }
    }

    /// The fetch policy these options describe.
    var policy: FetchPolicy {
        var policy = FetchPolicy()
        policy.maxSourceBytes = ServeCommand.parseSize(maxSourceBytes) ?? policy.maxSourceBytes
        policy.totalTimeoutSeconds = fetchTimeout
        policy.connectTimeoutSeconds = min(policy.connectTimeoutSeconds, fetchTimeout)
        policy.firstByteTimeoutSeconds = min(policy.firstByteTimeoutSeconds, fetchTimeout)
        policy.privateSources = Set(allowPrivateSources.map { $0.lowercased() })
        policy.allowedHosts = allowSourceHost
        policy.deniedHosts = denySourceHost
        return policy
    }
}

/// What a command's input names, opened: a local file, an S3 object or a URL, the last two read by ranges (a
/// URL through the fetch guard). `limits` bounds each by its kind (for a URL, also the policy's limit).
func openMedia(_ text: String, sources: SourceOptions, limits: Limits = Limits(), router: MediaRouter = .standard) throws -> MediaInput {
    switch try StoreLocation(text) {
    case .local(let path):
        return try MediaInput(path: path, limits: limits, router: router)
    case .http(let url):
        let source = try RemoteSource.open(url, policy: sources.policy)
        let input = MediaInput(source: source, name: url, limits: limits, router: router)
        try limits.checkBytes(source.count, type: input.type)
        return input
    case .s3(let bucket, let key):
        guard !key.isEmpty, !key.hasSuffix("/") else { throw FlipbookError(.invalidArgument, "\(text) names a prefix, not an object") }
        let source = try S3Context.client().open(S3Object(bucket: bucket, key: key), maxBytes: limits.maxAnyInputBytes)
        let input = MediaInput(source: source, name: text, limits: limits, router: router)
        try limits.checkBytes(source.count, type: input.type)
        return input
    }
}
