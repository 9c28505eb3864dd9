import AsyncHTTPClient
import Crypto
import Dispatch
import FlipbookCore
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// An object in a bucket, as `s3://BUCKET/KEY` names it.
package struct S3Object: Sendable, Hashable, CustomStringConvertible {
    package var bucket: String
    package var key: String
    package init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }
    package var description: String { "s3://\(bucket)/\(key)" }
}

/// What HEAD (or a listing) says of an object.
package struct S3ObjectInfo: Sendable, Equatable {
    package var key: String
    package var size: Int
    /// Quoted, as S3 sends it.
    package var etag: String
    package var lastModified: String?
    package var contentType: String?
    /// `x-amz-meta-*` without the prefix, names lowercased.
    package var metadata: [String: String] = [:]
}

/// A listing: objects in key order, and the "folders" below the prefix when a delimiter was given.
package struct S3Listing: Sendable {
    package var objects: [S3ObjectInfo] = []
    package var prefixes: [String] = []
}

/// An S3-compatible service (S3, R2, MinIO, Ceph RGW, GCS's XML API, moto) spoken directly: the requests
/// Flipbook makes, signed with Signature Version 4, retried in AWS's standard mode (exponential backoff with
/// full jitter, up to `maxAttempts`, on 500/502/503/504, throttling codes, request timeouts and broken
/// connections), over one AsyncHTTPClient whose connections are reused.
///
/// Every operation blocks the calling thread (decoders and command loops run on threads of their own); never
/// call one on an event loop or from an async context. Errors are typed: `not-found` (no such key or bucket),
/// `access-denied` (a policy, a bad or expired credential), `source-changed` (a pinned read of a replaced
/// object), `timeout`, `fetch-failed`, each naming the `s3://` URL.
package final class S3Client: Sendable {
    package let configuration: AWSConfiguration
    /// Requests, retries and bytes, for `/metrics`.
    package let counters = S3Counters()
    /// Each request (with its body) must finish within this. Default 60 s.
    package let requestTimeoutSeconds: Double
    /// Outputs of at least this many bytes go up in parts. Default 16 MiB.
    package let multipartThreshold: Int
    /// The size of each part but the last (S3's minimum is 5 MiB). Default 8 MiB.
    package let partSize: Int
    let http: HTTPClient

    package init(configuration: AWSConfiguration, group: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
                 requestTimeoutSeconds: Double = 60, multipartThreshold: Int = 16 << 20, partSize: Int = 8 << 20) {
        self.configuration = configuration
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.multipartThreshold = max(5 << 20, multipartThreshold)
        self.partSize = max(5 << 20, partSize)
        var http = HTTPClient.Configuration()
        http.redirectConfiguration = .disallow
        http.timeout = .init(connect: .seconds(10), read: .seconds(Int64(max(1, requestTimeoutSeconds))))
        http.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 16)
        http.tracing.tracer = nil
        self.http = HTTPClient(eventLoopGroup: group, configuration: http)
    }

    deinit { http.shutdown { _ in } }

    // MARK: - Operations

    /// HEAD: size, ETag, type, date and metadata.
    package func head(_ object: S3Object) throws -> S3ObjectInfo {
        let answer = try send("HEAD", object, operation: "head")
        try check(answer, object)
        return Self.info(key: object.key, answer.headers)
    }

    /// GET of `range` (nil: the whole object), at most `limit` body bytes, pinned with `If-Match` when `ifMatch`
    /// is given (a replaced object answers 412: `source-changed`). Returns 200, 206 and 416 answers.
    package func get(_ object: S3Object, range: Range<Int>?, ifMatch: String?, limit: Int) throws -> HTTPExchange.Answer {
        var headers: [(String, String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        if let ifMatch { headers.append(("If-Match", ifMatch)) }
        let answer = try send("GET", object, headers: headers, limit: limit, operation: "get")
        if answer.status == 416 { return answer }
        try check(answer, object)
        return answer
    }

    /// Stores `bytes` as `object`, whole or not at all: one PUT below `multipartThreshold`, else a multipart
    /// upload that is aborted on any failure, so no partial object and no stray upload is left. The body's
    /// SHA-256 is signed (S3 rejects a body that does not match) and sent as `x-amz-checksum-sha256` too.
    package func put(_ object: S3Object, bytes: [UInt8], contentType: String?, cacheControl: String? = nil,
                     metadata: [String: String] = [:]) throws {
        var headers: [(String, String)] = []
        if let contentType { headers.append(("Content-Type", contentType)) }
        if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) { headers.append(("x-amz-meta-\(name.lowercased())", value)) }
        if bytes.count < multipartThreshold {
            let digest = SHA256.hash(data: bytes)
            headers.append(("x-amz-sdk-checksum-algorithm", "SHA256"))
            headers.append(("x-amz-checksum-sha256", Data(digest).base64EncodedString()))
            let answer = try send("PUT", object, headers: headers, body: bytes[...], payloadHash: Hex.string(digest), operation: "put")
            try check(answer, object)
            return
        }
        try multipartPut(object, bytes: bytes, headers: headers)
    }

    /// Every object under `prefix` (ListObjectsV2, page after page), in key order; with a `delimiter`, the
    /// "folders" one level down too. Keys come URL-encoded (`encoding-type=url`) and are decoded here, so any
    /// key survives the XML.
    package func list(bucket: String, prefix: String, delimiter: String? = nil) throws -> S3Listing {
        var listing = S3Listing()
        var token: String?
        repeat {
            var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix), ("encoding-type", "url")]
            if let delimiter { query.append(("delimiter", delimiter)) }
            if let token { query.append(("continuation-token", token)) }
            let bucketObject = S3Object(bucket: bucket, key: "")
            let answer = try send("GET", bucketObject, query: query, limit: 64 << 20, operation: "list")
            try check(answer, S3Object(bucket: bucket, key: prefix))
            let document = try XMLElements(parsing: answer.body.readableBytesView)
            for entry in document.all("Contents") {
                guard let key = entry["Key"].flatMap(Self.urlDecode), let size = entry["Size"].flatMap(Int.init) else { continue }
                listing.objects.append(S3ObjectInfo(key: key, size: size, etag: entry["ETag"] ?? "", lastModified: entry["LastModified"]))
            }
            for entry in document.all("CommonPrefixes") {
                if let name = entry["Prefix"].flatMap(Self.urlDecode) { listing.prefixes.append(name) }
            }
            token = document.first("IsTruncated") == "true" ? document.first("NextContinuationToken") : nil
        } while token != nil
        return listing
    }

    // MARK: - Multipart

    private func multipartPut(_ object: S3Object, bytes: [UInt8], headers: [(String, String)]) throws {
        let created = try send("POST", object, query: [("uploads", "")], headers: headers, operation: "create-multipart")
        try check(created, object)
        guard let uploadID = try XMLElements.first("UploadId", in: created.body.readableBytesView) else {
            throw FlipbookError(.fetchFailed, "\(object): the multipart upload got no UploadId")
        }
        do {
            var parts: [(number: Int, etag: String)] = []
            var offset = 0
            while offset < bytes.count {
                try Cancellation.check("the upload of \(object)")
                let end = min(bytes.count, offset + partSize)
                // A slice, not a copy: the request body is made from it once (an 8 MiB copy fewer per part).
                let part = bytes[offset..<end]
                let number = parts.count + 1
                let answer = try send("PUT", object, query: [("partNumber", String(number)), ("uploadId", uploadID)], body: part,
                                      payloadHash: Hex.string(SHA256.hash(data: part)), operation: "upload-part")
                try check(answer, object)
                guard let etag = answer.header("etag") else { throw FlipbookError(.fetchFailed, "\(object): part \(number) got no ETag") }
                parts.append((number, etag))
                offset = end
            }
            var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            for part in parts { xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(Self.xmlEscape(part.etag))</ETag></Part>" }
            xml += "</CompleteMultipartUpload>"
            let body = Array(xml.utf8)
            let done = try send("POST", object, query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml")], body: body[...],
                                payloadHash: Hex.string(SHA256.hash(data: body)), operation: "complete-multipart")
            try check(done, object)
            // S3 may answer 200 and put the error in the body (the upload then is not complete).
            if let document = try? XMLElements(parsing: done.body.readableBytesView), document.rootName == "Error" {
                throw Self.error(status: 500, code: document.first("Code"), message: document.first("Message"), object: object)
            }
        } catch {
            // No partial object and no stray upload: abort (best effort; its own failure is not the error to report).
            _ = try? send("DELETE", object, query: [("uploadId", uploadID)], operation: "abort-multipart")
            throw error
        }
    }

    // MARK: - Requests

    /// One signed request, retried in AWS's standard mode. Returns the last answer (the caller checks its status).
    private func send(_ method: String, _ object: S3Object, query: [(name: String, value: String)] = [],
                      headers: [(String, String)] = [], body: ArraySlice<UInt8>? = nil, payloadHash: String = SigV4.emptyPayloadHash,
                      limit: Int = 1 << 20, operation: String) throws -> HTTPExchange.Answer {
        let endpoint = configuration.s3Endpoint
        let addressing = configuration.addressing(bucket: object.bucket)
        let target = addressing.target(bucket: object.bucket, key: object.key, endpoint: endpoint)
        let signable = SigV4Request(method: method, host: target.host, path: target.path, query: query,
                                    headers: headers.map { (name: $0.0, value: $0.1) }, payloadHash: payloadHash)
        let queryText = signable.encodedQuery
        let url = "\(endpoint.scheme)://\(target.host)\(target.path.isEmpty ? "/" : target.path)" + (queryText.isEmpty ? "" : "?" + queryText)
        var attempt = 0
        while true {
            attempt += 1
            let credentials = try currentCredentials()
            let signer = SigV4(credentials: credentials, region: configuration.region)
            var request = try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: method))
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            for (name, value) in signer.sign(signable, date: Date()) { request.headers.replaceOrAdd(name: name, value: value) }
            request.headers.add(name: "User-Agent", value: "Flipbook/\(FlipbookVersion.current)")
            if let body { request.body = .bytes(body) }
            let deadline = NIODeadline.now() + .milliseconds(Int64(requestTimeoutSeconds * 1000))
            counters.request(operation, sent: body?.count ?? 0)
            let outcome: Result<HTTPExchange.Answer, FlipbookError>
            do {
                outcome = .success(try HTTPExchange.send(request, with: http, limit: max(limit, 1 << 20), deadline: deadline,
                                                         describe: endpoint.hostHeader))
            } catch let error as FlipbookError {
                outcome = .failure(error)
            }
            let retryable: Bool
            switch outcome {
            case .success(let answer):
                counters.received(answer.body.readableBytes)
                retryable = Self.isRetryable(status: answer.status, body: answer.body)
                if !retryable || attempt >= configuration.maxAttempts { return answer }
            case .failure(let error):
                retryable = error.code == .fetchFailed || error.code == .timeout
                if !retryable || attempt >= configuration.maxAttempts {
                    var error = error
                    error.message = "\(object): " + error.message + (attempt > 1 ? " (after \(attempt) attempts)" : "")
                    throw error
                }
            }
            counters.retried()
            // Full jitter: a random wait up to 2^(attempt-1) s, at most 20 s (AWS's standard retry mode).
            let cap = min(20.0, pow(2.0, Double(attempt - 1)))
            try Cancellation.check("the request for \(object)")
            usleep(UInt32(Double.random(in: 0...cap) * 1_000_000))
        }
    }

    /// Credentials for the next request, from the (async, caching) provider.
    private func currentCredentials() throws -> AWSCredentials {
        let box = Mutex<Result<AWSCredentials, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let provider = configuration.credentials
        Task.detached {
            let result: Result<AWSCredentials, any Error>
            do { result = .success(try await provider.credentials()) } catch { result = .failure(error) }
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try box.withLock { $0! }.get()
    }

    /// Throws the typed error for an error answer; returns for 2xx.
    private func check(_ answer: HTTPExchange.Answer, _ object: S3Object) throws {
        guard !(200..<300).contains(answer.status) else { return }
        let document = try? XMLElements(parsing: answer.body.readableBytesView)
        throw Self.error(status: answer.status, code: document?.first("Code"), message: document?.first("Message"), object: object)
    }

    static func error(status: Int, code: String?, message: String?, object: S3Object) -> FlipbookError {
        let detail = [code, message].compactMap { $0 }.joined(separator: ": ")
        let context = "s3 \(status)" + (code.map { " \($0)" } ?? "")
        switch (status, code) {
        case (404, _), (_, "NoSuchKey"), (_, "NoSuchBucket"):
            let what = code == "NoSuchBucket" ? "no such bucket \(object.bucket)" : "no such object"
            return FlipbookError(.notFound, "\(object): \(what)", underlying: detail.isEmpty ? nil : detail, context: context)
        case (_, "InvalidAccessKeyId"), (_, "SignatureDoesNotMatch"), (_, "ExpiredToken"), (_, "InvalidToken"), (_, "TokenRefreshRequired"):
            return FlipbookError(.accessDenied, "\(object): the credentials were refused (\(code!))", underlying: message, context: context)
        case (403, _), (_, "AccessDenied"):
            return FlipbookError(.accessDenied, "\(object): access denied", underlying: detail.isEmpty ? nil : detail, context: context)
        case (412, _):
            return FlipbookError(.sourceChanged, "\(object) changed while it was read (its ETag no longer matches)", context: context)
        default:
            return FlipbookError(.fetchFailed, "\(object): the server answered \(status)", underlying: detail.isEmpty ? nil : detail, context: context)
        }
    }

    /// AWS's standard retry mode: transient statuses and throttling or timeout codes.
    static func isRetryable(status: Int, body: ByteBuffer) -> Bool {
        if [500, 502, 503, 504, 429].contains(status) { return true }
        guard status >= 400, let code = try? XMLElements.first("Code", in: body.readableBytesView) else { return false }
        return ["SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "RequestThrottled", "RequestTimeout",
                "RequestTimeoutException", "InternalError", "BandwidthLimitExceeded", "TooManyRequestsException",
                "PriorRequestNotComplete"].contains(code)
    }

    static func info(key: String, _ headers: HTTPHeaders) -> S3ObjectInfo {
        var metadata: [String: String] = [:]
        for (name, value) in headers where name.lowercased().hasPrefix("x-amz-meta-") {
            metadata[String(name.lowercased().dropFirst(11))] = value
        }
        return S3ObjectInfo(key: key, size: headers.first(name: "content-length").flatMap(Int.init) ?? 0,
                            etag: headers.first(name: "etag") ?? "", lastModified: headers.first(name: "last-modified"),
                            contentType: headers.first(name: "content-type"), metadata: metadata)
    }

    /// `%XX` decoding of a listing's URL-encoded key (`+` stays: S3 encodes a space as %20 there).
    static func urlDecode(_ text: String) -> String? {
        guard text.contains("%") else { return text }
        var out: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let c = bytes.next() {
            if c == UInt8(ascii: "%") {
                guard let a = bytes.next(), let b = bytes.next(), let hi = Hex.value(of: a), let lo = Hex.value(of: b) else { return nil }
                out.append(hi << 4 | lo)
            } else {
                out.append(c)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    static func xmlEscape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// S3 requests by operation, retries and bytes, shared by a client's callers. Thread-safe.
package final class S3Counters: Sendable {
    private struct Counts {
        var requests: [String: Int] = [:]
        var retries = 0
        var sent = 0
        var received = 0
    }

    private let counts = Mutex(Counts())

    package init() {}

    func request(_ operation: String, sent: Int) { counts.withLock { $0.requests[operation, default: 0] += 1; $0.sent += sent } }
    func received(_ bytes: Int) { counts.withLock { $0.received += bytes } }
    func retried() { counts.withLock { $0.retries += 1 } }

    /// The totals so far.
    package var snapshot: (requests: [String: Int], retries: Int, sent: Int, received: Int) {
        counts.withLock { ($0.requests, $0.retries, $0.sent, $0.received) }
    }
}
