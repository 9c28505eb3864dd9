import Flipbook
import FlipbookIngest
import FlipbookStorage

/// What `ingest` and `worker` hand the ingester for one source: an opener for its bytes. A file is read in
/// place; an S3 object or a URL (through the fetch guard) is copied once, front to back, into an unlinked
/// temporary file (`SpooledCopy`), since ingest hashes every byte and then decodes: one read over the network.
func ingestOpener(_ source: String, policy: FetchPolicy, limits: Limits) -> () throws -> any ByteSource {
    {
        switch try StoreLocation(source) {
        case .local(let path):
            return try FileByteSource(path: path)
        case .s3(let bucket, let key):
            guard !key.isEmpty, !key.hasSuffix("/") else { throw FlipbookError(.invalidArgument, "\(source) names a prefix, not an object") }
            let object = try S3Context.client().open(S3Object(bucket: bucket, key: key), maxBytes: limits.maxInputBytes)
            return try SpooledCopy.make(from: object, name: source, maxBytes: limits.maxInputBytes)
        case .http(let url):
            var policy = policy
            policy.maxSourceBytes = min(policy.maxSourceBytes, limits.maxInputBytes)
            return try SpooledCopy.make(from: try RemoteSource.open(url, policy: policy), name: source, maxBytes: policy.maxSourceBytes)
        }
    }
}

/// The output `-o` names: a folder (made if missing) or an `s3://BUCKET/PREFIX/`.
func ingestOutput(_ text: String) throws -> any IngestOutput {
    switch try StoreLocation(text) {
    case .s3(let bucket, let key):
        return S3Output(client: try S3Context.client(), bucket: bucket, prefix: key, cacheControl: OutputOptions.cacheControl)
    case .http:
        throw FlipbookError(.invalidArgument, "\(text): outputs are folders or s3:// prefixes")
    case .local(let path):
        try makeDirectory(path)
        return FolderOutput(root: path)
    }
}
