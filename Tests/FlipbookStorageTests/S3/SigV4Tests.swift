import FlipbookCore
@testable import FlipbookStorage
import Foundation
import Testing

/// SigV4 against the worked examples of AWS's S3 API reference ("Signature Calculations for the Authorization
/// Header", "Authenticating Requests: Using Query Parameters"): their published signatures, and the rules
/// around them.
struct SigV4Tests {
    static let credentials = AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 20130524T000000Z, the examples' instant.
    static let date = Date(timeIntervalSince1970: 1_369_353_600)
    static let signer = SigV4(credentials: credentials, region: "us-east-1")
    static let host = "examplebucket.s3.amazonaws.com"

    @Test func getObjectWithRange() {
        let request = SigV4Request(method: "GET", host: Self.host, path: "/test.txt",
                                   headers: [("Range", "bytes=0-9")])
        let signature = Self.signer.headerSignature(request, date: Self.date)
        #expect(signature.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(signature.signedHeaders == "host;range;x-amz-content-sha256;x-amz-date")
        #expect(signature.headers.last?.value == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func putObject() {
        let (_, path) = S3Addressing.virtualHosted.target(bucket: "examplebucket", key: "test$file.text", endpoint: AWSEndpoint(scheme: "https", host: "s3.amazonaws.com", port: nil, basePath: ""))
        #expect(path == "/test%24file.text")
        let request = SigV4Request(method: "PUT", host: Self.host, path: path,
                                   headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
                                   payloadHash: "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        #expect(Self.signer.headerSignature(request, date: Self.date).signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test func bucketLifecycleAndListing() {
        let lifecycle = SigV4Request(method: "GET", host: Self.host, path: "/", query: [("lifecycle", "")])
        #expect(Self.signer.headerSignature(lifecycle, date: Self.date).signature == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
        let list = SigV4Request(method: "GET", host: Self.host, path: "/", query: [("max-keys", "2"), ("prefix", "J")])
        #expect(Self.signer.headerSignature(list, date: Self.date).signature == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test func presignedGet() throws {
        let request = SigV4Request(method: "GET", host: Self.host, path: "/test.txt", payloadHash: SigV4.unsignedPayload)
        let query = try Self.signer.presignedQuery(request, date: Self.date, expires: 86_400)
        #expect(query == "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test func presignedExpiryIsBounded() {
        let request = SigV4Request(method: "GET", host: Self.host, path: "/k", payloadHash: SigV4.unsignedPayload)
        for expires in [0, -1, 604_801] {
            #expect(throws: FlipbookError.self) { try Self.signer.presignedQuery(request, date: Self.date, expires: expires) }
        }
        #expect((try? Self.signer.presignedQuery(request, date: Self.date, expires: 604_800)) != nil)
    }

    @Test func keysAreEncodedOnceWithSlashesKept() {
        #expect(S3Addressing.encodePath("a b/c+d=e~f/日本/%/") == "a%20b/c%2Bd%3De~f/%E6%97%A5%E6%9C%AC/%25/")
        #expect(S3Addressing.encodePath("a//b/./c/../d") == "a//b/./c/../d")
        #expect(AWSPercentEncoding.encode("a/b c") == "a%2Fb%20c")
    }

    @Test func timestampsAreUTCWholeSeconds() {
        #expect(AWSTimestamp.amzDate(Date(timeIntervalSince1970: 0)) == "19700101T000000Z")
        #expect(AWSTimestamp.amzDate(Date(timeIntervalSince1970: 951_782_400.999)) == "20000229T000000Z")
        #expect(AWSTimestamp.amzDate(Date(timeIntervalSince1970: 4_102_444_799)) == "20991231T235959Z")
        // Against Foundation's own ISO 8601 parser.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for text in ["2026-11-28T19:45:36.633Z", "1999-12-31T23:59:59.500+01:30", "2024-02-29T00:00:00.000-08:00"] {
            #expect(AWSTimestamp.parseISO8601(text)?.timeIntervalSince1970 == formatter.date(from: text)?.timeIntervalSince1970, "\(text)")
        }
        #expect(AWSTimestamp.parseISO8601("2026-11-28T19:45:36.633002Z") != nil)
        for bad in ["", "2026-11-28", "2026-13-01T00:00:00Z", "2026-11-28T19:45:36", "2026-11-28T19:45:36Zjunk"] {
            #expect(AWSTimestamp.parseISO8601(bad) == nil, "\(bad)")
        }
    }
}
