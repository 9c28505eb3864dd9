import Crypto
import FlipbookCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for one set of credentials, region and service: the
/// Authorization header of a request, or a presigned URL's query. Written from AWS's specification, with S3's
/// rules by default (the path signed as given, `x-amz-content-sha256` sent and signed, `UNSIGNED-PAYLOAD` in
/// presigned URLs) and the generic rules for other services (the path normalised and encoded again).
///
/// Signing is pure and cheap: four HMAC-SHA256 for the signing key, one SHA-256 over the canonical request and
/// one HMAC over the string to sign, plus the strings themselves (a few hundred bytes). No clock is read: the
/// caller passes the date.
package struct SigV4: Sendable {
    /// The SHA-256 of an empty payload, in hex.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// The payload hash S3 accepts in place of the body's (and the one presigned S3 URLs always use).
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The algorithm's name, first in the Authorization header and the string to sign.
    package static let algorithm = "AWS4-HMAC-SHA256"

    /// The credentials that sign.
    package var credentials: AWSCredentials
    /// The region in the credential scope (`us-east-1`; `auto` for R2, whatever the store expects).
    package var region: String
    /// The service in the credential scope (`s3`, `sts`, ...).
    package var service: String
    /// Whether the canonical URI has its dot segments and empty segments removed (RFC 3986 §5.2.4, `//` → `/`).
    /// Default: off for S3, whose keys may hold `//`, `.` and `..`, on for every other service.
    package var normalizesPath: Bool
    /// Whether the (already encoded) path is percent-encoded a second time for the canonical URI (`%20` →
    /// `%2520`). Default: off for S3, on for every other service.
    package var doubleEncodesPath: Bool
    /// Whether header signing sends and signs `x-amz-content-sha256: <payloadHash>`. Default: on for S3 (which
    /// requires it), off for other services.
    package var sendsContentSHA256: Bool
    /// Whether the session token, when there is one, is part of what is signed (the default) or only sent
    /// beside the signature (a few services want it added after signing).
    package var signsSessionToken: Bool = true

    /// A signer; the path and payload rules follow `service` (S3's for "s3", the generic ones otherwise).
    package init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
        let isS3 = service == "s3"
        normalizesPath = !isS3
        doubleEncodesPath = !isS3
        sendsContentSHA256 = isS3
    }

    /// The headers to add to `request` at `date` for header signing, in this order: `x-amz-date`,
    /// `x-amz-content-sha256` (S3), `x-amz-security-token` (with a session token) and `authorization`.
    package func sign(_ request: SigV4Request, date: Date) -> [(name: String, value: String)] {
        headerSignature(request, date: date).headers
    }

    /// The query string of `request`'s presigned URL (without "?"), valid `expires` seconds from `date`: the
    /// request's own parameters in their order, then `X-Amz-Algorithm`, `-Credential`, `-Date`, `-Expires`,
    /// `-SignedHeaders`, `-Security-Token` (with a session token) and `-Signature`, all percent-encoded.
    /// Throws `invalid-argument` unless `expires` is within 1...604800 (7 days, SigV4's limit).
    package func presignedQuery(_ request: SigV4Request, date: Date, expires: Int) throws -> String {
        try querySignature(request, date: date, expires: expires).query
    }

    /// Everything header signing computes, for logs and tests: the canonical request and string to sign
    /// exactly as hashed, the signature, and the headers to add.
    package func headerSignature(_ request: SigV4Request, date: Date) -> SigV4Signature {
        let amzDate = AWSTimestamp.amzDate(date)
        var added: [(name: String, value: String)] = [("x-amz-date", amzDate)]
        if sendsContentSHA256 { added.append(("x-amz-content-sha256", request.payloadHash)) }
        var signed = added
        if let token = credentials.sessionToken {
            added.append(("x-amz-security-token", token))
            if signsSessionToken { signed.append(("x-amz-security-token", token)) }
        }
        let headers = canonicalHeaders(request, adding: signed)
        let canonical = canonicalRequest(request, canonicalQuery: canonicalQuery(request.query), headers: headers,
                                         payloadHash: request.payloadHash)
        let (stringToSign, signature) = sign(canonical: canonical, amzDate: amzDate)
        let authorization = "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(amzDate)), SignedHeaders=\(headers.names), Signature=\(signature)"
        added.append(("authorization", authorization))
        return SigV4Signature(canonicalRequest: canonical, stringToSign: stringToSign, signature: signature,
                              signedHeaders: headers.names, headers: added, query: request.encodedQuery)
    }

    /// Everything presigning computes (see ``presignedQuery(_:date:expires:)``), for logs and tests.
    package func querySignature(_ request: SigV4Request, date: Date, expires: Int) throws -> SigV4Signature {
        guard (1...604_800).contains(expires) else {
            throw FlipbookError(.invalidArgument, "a presigned URL lasts 1 to 604800 seconds (7 days), not \(expires)")
        }
        let amzDate = AWSTimestamp.amzDate(date)
        let headers = canonicalHeaders(request, adding: [])
        var auth: [(name: String, value: String)] = [
            ("X-Amz-Algorithm", Self.algorithm),
            ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(amzDate))"),
            ("X-Amz-Date", amzDate),
            ("X-Amz-Expires", String(expires)),
            ("X-Amz-SignedHeaders", headers.names),
        ]
        var signedQuery = request.query + auth
        if let token = credentials.sessionToken {
            auth.append(("X-Amz-Security-Token", token))
            if signsSessionToken { signedQuery.append(("X-Amz-Security-Token", token)) }
        }
        let payloadHash = service == "s3" ? Self.unsignedPayload : request.payloadHash
        let canonical = canonicalRequest(request, canonicalQuery: canonicalQuery(signedQuery), headers: headers, payloadHash: payloadHash)
        let (stringToSign, signature) = sign(canonical: canonical, amzDate: amzDate)
        auth.append(("X-Amz-Signature", signature))
        var query = request
        query.query += auth
        return SigV4Signature(canonicalRequest: canonical, stringToSign: stringToSign, signature: signature,
                              signedHeaders: headers.names, headers: [], query: query.encodedQuery)
    }

    /// The credential scope after the access key: `yyyymmdd/region/service/aws4_request`.
    package func scope(_ amzDate: String) -> String {
        "\(amzDate.prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// The canonical URI of `path` under this signer's rules: S3's is the path as given ("/" for none);
    /// other services' has dot and empty segments removed and is percent-encoded again.
    package func canonicalURI(_ path: String) -> String {
        var path = path.isEmpty ? "/" : path
        if normalizesPath { path = Self.removingDotSegments(path) }
        if doubleEncodesPath { path = AWSPercentEncoding.encode(path, keepingSlash: true) }
        return path
    }

    /// `parameters` as SigV4's canonical query: names and values percent-encoded, sorted by encoded name and
    /// then encoded value (bytewise), `name=value` joined with "&".
    package func canonicalQuery(_ parameters: [(name: String, value: String)]) -> String {
        let encoded = parameters.map { (Array(AWSPercentEncoding.encode($0.name).utf8), Array(AWSPercentEncoding.encode($0.value).utf8)) }
        let sorted = encoded.sorted { a, b in
            a.0 != b.0 ? a.0.lexicographicallyPrecedes(b.0) : a.1.lexicographicallyPrecedes(b.1)
        }
        return sorted.map { String(decoding: $0.0, as: UTF8.self) + "=" + String(decoding: $0.1, as: UTF8.self) }.joined(separator: "&")
    }

    /// Header names never signed: hop-by-hop headers and those clients and proxies add or rewrite.
    static let unsignedHeaders: Set<String> = [
        "user-agent", "expect", "transfer-encoding", "connection", "upgrade", "x-amzn-trace-id",
        "sec-websocket-key", "sec-websocket-protocol", "sec-websocket-version",
    ]
    /// Header names the signer itself sets; a request's own copies are dropped.
    static let signerHeaders: Set<String> = ["host", "authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"]

    /// The canonical headers block ("name:value\n" per header) and the signed header names (";"-joined):
    /// host, `request.headers` and `extra`, names lower-cased, values trimmed with inner whitespace runs
    /// collapsed to one space, repeated names joined with "," in order, sorted by name.
    func canonicalHeaders(_ request: SigV4Request, adding extra: [(name: String, value: String)]) -> (block: String, names: String) {
        var byName: [String: [String]] = ["host": [Self.trimmed(request.host)]]
        for (name, value) in request.headers {
            let lower = name.lowercased()
            guard !Self.unsignedHeaders.contains(lower), !Self.signerHeaders.contains(lower) else { continue }
            byName[lower, default: []].append(Self.trimmed(value))
        }
        for (name, value) in extra { byName[name, default: []].append(Self.trimmed(value)) }
        let names = byName.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        var block = ""
        for name in names { block += name + ":" + byName[name]!.joined(separator: ",") + "\n" }
        return (block, names.joined(separator: ";"))
    }

    func canonicalRequest(_ request: SigV4Request, canonicalQuery: String, headers: (block: String, names: String), payloadHash: String) -> String {
        [request.method, canonicalURI(request.path), canonicalQuery, headers.block, headers.names, payloadHash].joined(separator: "\n")
    }

    /// The string to sign for `canonical` and its signature.
    func sign(canonical: String, amzDate: String) -> (stringToSign: String, signature: String) {
        let stringToSign = [Self.algorithm, amzDate, scope(amzDate), Hex.string(SHA256.hash(data: Array(canonical.utf8)))].joined(separator: "\n")
        return (stringToSign, Hex.string(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: signingKey(amzDate))))
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, yyyymmdd), region), service), "aws4_request").
    func signingKey(_ amzDate: String) -> SymmetricKey {
        var key = SymmetricKey(data: Array(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [String(amzDate.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key))
        }
        return key
    }

    /// `value` without leading and trailing whitespace, each inner run of whitespace (SP, HT, LF, VT, FF, CR)
    /// one space: SigV4's "Trimall", applied inside quoted strings too.
    static func trimmed(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        var pendingSpace = false
        for byte in value.utf8 {
            if byte == 0x20 || (0x09...0x0D).contains(byte) {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20); pendingSpace = false }
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 §5.2.4 dot-segment removal as SigV4 applies it: empty and "." segments dropped, ".." removes
    /// the segment before it (nothing at the root), a leading "/" kept, a trailing "/" kept when anything is left.
    static func removingDotSegments(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) where segment != "." {
            if segment == ".." {
                if !segments.isEmpty { segments.removeLast() }
            } else {
                segments.append(segment)
            }
        }
        let lead = path.hasPrefix("/") ? "/" : ""
        let trail = path.hasSuffix("/") && !segments.isEmpty ? "/" : ""
        return lead + segments.joined(separator: "/") + trail
    }
}
