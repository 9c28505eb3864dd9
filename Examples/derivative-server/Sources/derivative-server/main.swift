// A Hummingbird 2 app with its own routes over Flipbook's DerivativeService: /thumbnails/<path> (a 320 px
// WebP of a still, an animation's first frame or a video's poster) and /videos/<path> (an animation's looping
// MP4). The service resolves paths under the root (nothing outside it is read), coalesces identical
// requests, caches results and runs the work on its own threads.
import FlipbookService
import Flipbook
import Hummingbird

let arguments = Array(CommandLine.arguments.dropFirst())
let root = arguments.first ?? "."
let port = arguments.count > 1 ? Int(arguments[1]) ?? 8081 : 8081

var configuration = DerivativeService.Configuration(root: root)
configuration.memoryCacheBytes = 64 << 20
let service = try DerivativeService(configuration: configuration)

func respond(_ request: DerivativeRequest) async throws -> Response {
    do {
        let derivative = try await service.derivative(request)
        return Response(status: .ok, headers: [.contentType: derivative.contentType, .eTag: derivative.etag],
                        body: ResponseBody(byteBuffer: derivative.bytes))
    } catch let error as DerivativeServiceError {
        switch error {
        case .notFound, .badPath: throw HTTPError(.notFound, message: error.description)
        case .unsupportedMedia: throw HTTPError(.unsupportedMediaType, message: error.description)
        case .busy: throw HTTPError(.serviceUnavailable, message: error.description)
        default: throw HTTPError(.internalServerError, message: error.description)
        }
    }
}

let router = Router()
router.get("/thumbnails/**") { _, context in
    try await respond(DerivativeRequest(path: context.parameters.getCatchAll().joined(separator: "/"),
                                        operation: .thumb(ThumbnailRequest(maxPixelSize: 320, format: .webp))))
}
router.get("/videos/**") { _, context in
    try await respond(DerivativeRequest(path: context.parameters.getCatchAll().joined(separator: "/"),
                                        operation: .mp4(maxSize: nil)))
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
