import AsyncHTTPClient
import Flipbook
import FlipbookStorage
import Foundation
import Synchronization

/// The S3 client of this process, made on first use from the environment and the shared AWS files, as the
/// aws CLI reads them (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL_S3, ~/.aws/config, web identity, ...). A
/// command that never names an s3:// URL never makes it.
enum S3Context {
    private static let state = Mutex<S3Client?>(nil)
    /// STS's client (web identity), made with the S3 one and, like it, kept for the life of the process.
    private static let sts = Mutex<HTTPClient?>(nil)

    /// The client if this process has made it (a command that names no s3:// URL never does), for metrics.
    static var existing: S3Client? { state.withLock { $0 } }

    /// The client, made once. Throws when the configuration cannot be read (a malformed file, a bad endpoint).
    static func client() throws -> S3Client {
        try state.withLock { held in
            if let held { return held }
            let stsClient = sts.withLock { client in
                if client == nil { client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup) }
                return client!
            }
            let configuration = try AWSConfiguration.load(environment: ProcessInfo.processInfo.environment, httpClient: stsClient)
            let client = S3Client(configuration: configuration)
            held = client
            return client
        }
    }
}

/// The MIME type an output's name asks for (S3 objects carry it as Content-Type).
func contentType(forOutput path: String) -> String? {
    switch fileExtension(path)?.lowercased() {
    case "jpg", "jpeg": "image/jpeg"
    case "png": "image/png"
    case "webp": "image/webp"
    case "gif": "image/gif"
    case "apng": "image/apng"
    case "mp4": "video/mp4"
    case "webm": "video/webm"
    case "vtt": "text/vtt; charset=utf-8"
    case "json": "application/json"
    case "jsonl": "application/x-ndjson"
    default: nil
    }
}
