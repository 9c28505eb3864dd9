import Flipbook

/// The gallery page: one HTML document with its CSS and script inline (Swift string resources shipped in
/// the binary: no build step, no framework, no second request). The page gets everything it needs from a
/// JSON block: the signed `/list` target of the first page and signed links for the breadcrumbs, so with
/// signing on it only ever requests URLs the server made.
extension Gallery {
    /// The page for the folder `segments` (empty for the root). Throws 404 like `list` for folders that do
    /// not exist, are hidden or lie outside the root. Cost: one realpath and stat.
    public func page(segments: [String]) throws(GalleryError) -> String {
        if let store = configuration.store {
            _ = try objectEntries(store, segments: segments)
        } else {
            _ = try resolveFolder(segments)
        }
        let sign = configuration.sign
        var crumbs = ["{\"name\":\"All\",\"link\":\(JSON.string(sign(Self.galleryTarget([]))))}"]
        for i in segments.indices {
            let prefix = Array(segments[...i])
            crumbs.append("{\"name\":\(JSON.string(segments[i])),\"link\":\(JSON.string(sign(Self.galleryTarget(prefix))))}")
        }
        let config = "{\"list\":\(JSON.string(sign(Self.listTarget(segments) + "?limit=\(configuration.defaultLimit)"))),"
            + "\"crumbs\":[\(crumbs.joined(separator: ","))],\"maxVideos\":\(GalleryPage.maxVideos)}"
        let title = segments.last ?? "Flipbook gallery"
        return GalleryPage.template
            .replacingFirst("{{TITLE}}", with: GalleryPage.escapeHTML(title))
            .replacingFirst("{{STYLE}}", with: GalleryPage.style)
            .replacingFirst("{{CONFIG}}", with: GalleryPage.escapeScriptJSON(config))
            .replacingFirst("{{SCRIPT}}", with: GalleryPage.script)
    }
}

/// The page's parts. `maxVideos` is the number of `<video>` elements that may hold a source at once.
enum GalleryPage {
    static let maxVideos = 32

    static let template = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <meta name="referrer" content="same-origin">
        <title>{{TITLE}}</title>
        <style>{{STYLE}}</style>
        </head>
        <body>
        <header><nav id="crumbs" aria-label="Folders"></nav><span id="count" aria-live="polite"></span></header>
        <main><div id="grid" role="list" aria-label="Media in this folder"></div></main>
        <p id="status" role="status" aria-live="polite">Loading…</p>
        <script type="application/json" id="flipbook-config">{{CONFIG}}</script>
        <script>{{SCRIPT}}</script>
        </body>
        </html>

        """

    /// Text for HTML element content and attribute values.
    static func escapeHTML(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// JSON made safe inside a `<script>` element: '<' never appears raw, so no `</script>` or `<!--`.
    static func escapeScriptJSON(_ json: String) -> String {
        var out = ""
        for c in json {
            switch c {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.append(c)
            }
        }
        return out
    }
}

extension String {
    /// `self` with the first `target` replaced (templates hold each placeholder once).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}
