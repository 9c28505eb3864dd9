import Crypto
import FlipbookCore
@testable import FlipbookStorage
import FlipbookTestSupport
import Foundation
import Testing

/// Our SigV4 against botocore's (Tests/storage/sigv4_reference.py): the same requests at the same instant must
/// give byte-for-byte the same canonical requests, strings to sign, signatures, Authorization headers and
/// presigned URLs. The Swift side builds each request from the raw bucket, key and query, so S3's key
/// encoding, addressing and the Host header are checked too.
@Suite(.offPool)
struct SigV4ReferenceTests {
    /// botocore's answers, computed once per test process.
    static let reference: Result<Reference, any Error> = Result { try Reference.load() }

    struct Reference: @unchecked Sendable {
        var date: Date
        var keys: [String: AWSCredentials]
        var cases: [[String: Any]]

        static func load() throws -> Reference {
            let script = packageRoot.appendingPathComponent("Tests/storage/sigv4_reference.py").path
            let run = try Run.program(Run.python, [script])
            guard run.status == 0 else { throw FlipbookError(.io, "sigv4_reference.py failed: \(run.stderr)") }
            let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [String: Any]
            let formatter = ISO8601DateFormatter()
            var keys: [String: AWSCredentials] = [:]
            for (name, value) in json["credentials"] as! [String: [Any]] {
                keys[name] = AWSCredentials(accessKeyID: value[0] as! String, secretAccessKey: value[1] as! String,
                                            sessionToken: value[2] as? String)
            }
            return Reference(date: formatter.date(from: json["timestamp"] as! String)!, keys: keys, cases: json["cases"] as! [[String: Any]])
        }

        func cases(_ mode: String) -> [[String: Any]] { cases.filter { $0["mode"] as? String == mode } }
    }

    static func pairs(_ value: Any?) -> [(name: String, value: String)] {
        (value as? [[String]] ?? []).map { ($0[0], $0[1]) }
    }

    static func sha256(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The request a case describes, built the way the S3 client will: endpoint, addressing, key encoding.
    static func s3Request(_ c: [String: Any]) throws -> (SigV4Request, AWSEndpoint) {
        let endpoint = try AWSEndpoint(url: c["endpoint"] as! String)
        let addressing: S3Addressing = c["addressing"] as! String == "path" ? .path : .virtualHosted
        let target = addressing.target(bucket: c["bucket"] as! String, key: c["key"] as! String, endpoint: endpoint)
        let body = c["body"] as? String ?? ""
        let payload = c["signed_payload"] as! Bool ? sha256(body) : SigV4.unsignedPayload
        return (SigV4Request(method: c["method"] as! String, host: target.host, path: target.path, query: pairs(c["params"]),
                             headers: pairs(c["headers"]), payloadHash: payload), endpoint)
    }

    func signer(_ reference: Reference, _ c: [String: Any]) -> SigV4 {
        SigV4(credentials: reference.keys[c["creds"] as! String]!, region: c["region"] as! String, service: c["service"] as? String ?? "s3")
    }

    @Test func theTableIsLargeEnough() throws {
        let reference = try Self.reference.get()
        #expect(reference.cases.count >= 30)
        #expect(reference.cases(("header")).count >= 25)
        #expect(reference.cases(("presign")).count + reference.cases("client").count >= 6)
    }

    @Test func headerSigningMatchesBotocore() throws {
        let reference = try Self.reference.get()
        for c in reference.cases("header") {
            let name = c["name"] as! String
            let (request, _) = try Self.s3Request(c)
            let signature = signer(reference, c).headerSignature(request, date: reference.date)
            #expect(signature.canonicalRequest == c["canonical_request"] as! String, "\(name)")
            #expect(signature.stringToSign == c["string_to_sign"] as! String, "\(name)")
            #expect(signature.signature == c["signature"] as! String, "\(name)")
            let added = Dictionary(signature.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
            #expect(added["authorization"] == c["authorization"] as? String, "\(name)")
            // The other headers we add carry what botocore sent.
            let sent = Dictionary(Self.pairs(c["signed_headers_sent"]).map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
            for header in ["x-amz-date", "x-amz-content-sha256", "x-amz-security-token"] {
                #expect(added[header] == sent[header], "\(name): \(header)")
            }
            if c["signed_payload"] as! Bool { #expect(request.payloadHash == c["payload_hash"] as! String, "\(name)") }
        }
    }

    @Test func presignedURLsMatchBotocore() throws {
        let reference = try Self.reference.get()
        for c in reference.cases("presign") {
            let name = c["name"] as! String
            let (request, endpoint) = try Self.s3Request(c)
            let signer = signer(reference, c)
            let signature = try signer.querySignature(request, date: reference.date, expires: c["expires"] as! Int)
            #expect(signature.canonicalRequest == c["canonical_request"] as! String, "\(name)")
            #expect(signature.stringToSign == c["string_to_sign"] as! String, "\(name)")
            #expect(signature.signature == c["signature"] as! String, "\(name)")
            let url = "\(endpoint.scheme)://\(request.host)\(request.path)?" + (try signer.presignedQuery(request, date: reference.date, expires: c["expires"] as! Int))
            #expect(url == c["signed_url"] as! String, "\(name)")
        }
    }

    @Test func boto3ClientPresignerAgrees() throws {
        let reference = try Self.reference.get()
        for c in reference.cases("client") {
            let region = c["region"] as! String
            let endpoint = try (c["endpoint"] as? String).map { try AWSEndpoint(url: $0) } ?? .aws(service: "s3", region: region)
            let addressing: S3Addressing = c["addressing"] as! String == "path" ? .path : .virtualHosted
            let target = addressing.target(bucket: c["bucket"] as! String, key: c["key"] as! String, endpoint: endpoint)
            let request = SigV4Request(method: "GET", host: target.host, path: target.path, payloadHash: SigV4.unsignedPayload)
            let query = try SigV4(credentials: reference.keys[c["creds"] as! String]!, region: region)
                .presignedQuery(request, date: reference.date, expires: c["expires"] as! Int)
            let name = c["name"] as! String, expected = c["signed_url"] as! String
            #expect("\(endpoint.scheme)://\(target.host)\(target.path)?\(query)" == expected, "\(name)")
        }
    }

    @Test func genericServicesMatchBotocore() throws {
        let reference = try Self.reference.get()
        for c in reference.cases("generic") {
            let name = c["name"] as! String
            let endpoint = try AWSEndpoint(url: c["endpoint"] as! String)
            let request = SigV4Request(method: c["method"] as! String, host: endpoint.hostHeader, path: c["path"] as! String,
                                       query: Self.pairs(c["params"]), headers: Self.pairs(c["headers"]),
                                       payloadHash: Self.sha256(c["body"] as? String ?? ""))
            let signature = signer(reference, c).headerSignature(request, date: reference.date)
            #expect(signature.canonicalRequest == c["canonical_request"] as! String, "\(name)")
            #expect(signature.signature == c["signature"] as! String, "\(name)")
            #expect(signature.headers.last?.value == c["authorization"] as? String, "\(name)")
            #expect(!signature.headers.contains { $0.name == "x-amz-content-sha256" }, "\(name): only S3 sends the payload hash")
        }
    }
}
