import FlipbookGallery
import FlipbookStorage
import Hummingbird

/// The gallery's two routes on the server (issue 12), kept out of the main handler: `GET|HEAD /gallery/<dir>`
/// (the page; `/gallery/` for the root) and `GET|HEAD /list/<dir>?cursor=&limit=` (JSON). A trailing slash
/// names the folder itself. Signed like every other route when signing is on; the gallery signs every URL
/// it emits with the same signer.
extension FlipbookHTTPServer {
    /// The gallery that lists `configuration.service.root` (the S3 prefix `store`, when the root is one),
    /// signing with `configuration.signer`.
    static func makeGallery(_ configuration: Configuration, store: S3Store?) throws -> Gallery {
        var galleryConfiguration = Gallery.Configuration(root: configuration.service.root)
        galleryConfiguration.store = store
        galleryConfiguration.limits = configuration.service.limits
        if let signer = configuration.signer { galleryConfiguration.sign = { signer.sign($0) } }
        return try Gallery(configuration: galleryConfiguration)
    }

    /// The response and the route's name for `/gallery` and `/list` targets; nil for every other target.
    func galleryResponse(_ target: String, head: Bool) async throws -> (Response, String)? {
        let queryStart = target.firstIndex(of: "?") ?? target.endIndex
        var path = String(target[..<queryStart])
        let route: String
        if path == "/gallery" || path.hasPrefix("/gallery/") {
            route = "gallery"
        } else if path == "/list" || path.hasPrefix("/list/") {
            route = "list"
        } else {
            return nil
        }
        if let signer = configuration.signer, !signer.verify(target) {
            throw RequestTarget.RouteError(403, "bad-signature", "the sig parameter is missing or wrong")
        }
        if path.hasSuffix("/") { path.removeLast() }
        let parsed = try RequestTarget(path + target[queryStart...])
        var headers = HTTPFields()
        headers[.cacheControl] = "no-cache"
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        let body: String
        do {
            if route == "gallery" {
                body = try await gallery.pageHTML(segments: parsed.segments)
                headers[.contentType] = "text/html; charset=utf-8"
                headers[.init("Content-Security-Policy")!] = "default-src 'none'; img-src 'self'; media-src 'self'; connect-src 'self'; "
                    + "style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
                headers[.init("Referrer-Policy")!] = "same-origin"
            } else {
                var limit: Int?
                if let text = try parsed.parameter("limit") {
                    guard !text.isEmpty, text.utf8.count <= 4, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(text) else {
                        throw GalleryError(400, "bad-parameter", "limit must be a whole number from 1 to \(gallery.configuration.maxLimit)")
                    }
                    limit = n
                }
                let listing = try await gallery.listing(segments: parsed.segments, cursor: try parsed.parameter("cursor"), limit: limit)
                body = listing.json
                headers[.contentType] = "application/json"
            }
        } catch let error as GalleryError {
            return (Self.error(error.status, error.code, error.message), route)
        }
        let bytes = ByteBuffer(string: body)
        headers[.contentLength] = String(bytes.readableBytes)
        return (Response(status: .ok, headers: headers, body: head ? ResponseBody() : ResponseBody(byteBuffer: bytes)), route)
    }
}
