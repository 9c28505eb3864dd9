import Foundation
import FlipbookTestSupport
import Testing
import Flipbook
import FlipbookIngest
@testable import FlipbookGallery

/// `/list` logic on a folder made by ffmpeg: what is listed and how (kinds, URLs, sizes checked against
/// ffprobe), what never is (dotfiles, links out of the root or to hidden files, non-media), paging with
/// cursors, and signing of every URL.
@Suite(.offPool) struct ListingTests {
    /// root/: anim.gif (10 frames), clip.mp4 (2 s), still.jpg, single.gif (1 frame), "été #1.gif", notes.txt,
    /// .hidden.gif, .dotdir/, sub/, link-in.gif -> anim.gif, link-out.gif -> ../outside.gif,
    /// link-hidden.gif -> .hidden.gif.
    static func makeLibrary(_ dir: TemporaryDirectory) throws -> String {
        let root = dir.path("root")
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/.dotdir", withIntermediateDirectories: true)
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=1", root + "/anim.gif"])
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                    root + "/clip.mp4"])
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=200x100", "-frames:v", "1", root + "/still.jpg"])
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1", root + "/single.gif"])
        try fm.copyItem(atPath: root + "/anim.gif", toPath: root + "/été #1.gif")
        try fm.copyItem(atPath: root + "/anim.gif", toPath: root + "/.hidden.gif")
        try fm.copyItem(atPath: root + "/anim.gif", toPath: dir.path("outside.gif"))
        try "not media".write(toFile: root + "/notes.txt", atomically: true, encoding: .utf8)
        try fm.createSymbolicLink(atPath: root + "/link-in.gif", withDestinationPath: "anim.gif")
        try fm.createSymbolicLink(atPath: root + "/link-out.gif", withDestinationPath: "../outside.gif")
        try fm.createSymbolicLink(atPath: root + "/link-hidden.gif", withDestinationPath: ".hidden.gif")
        return root
    }

    /// Every media item carries the ThumbHash ingestion computes for the same file (the hash itself is
    /// checked against an independent decoder in FlipbookIngestTests); folders none; none when turned off.
    @Test func itemsCarryTheIngestPlaceholder() throws {
        let dir = try TemporaryDirectory()
        let root = try Self.makeLibrary(dir)
        let listing = try Gallery(configuration: .init(root: root)).list(segments: [], cursor: nil, limit: 200)
        for item in listing.items {
            if item.kind == "folder" {
                #expect(item.thumbhash == nil)
                continue
            }
            let expected = try Placeholder(input: MediaInput(path: root + "/" + item.name)).thumbhash
            #expect(item.thumbhash == expected, "\(item.name)")
        }
        #expect(listing.json.contains("\"thumbhash\":\"") && listing.json.contains("\"thumbhash\":null"))
        var off = Gallery.Configuration(root: root)
        off.placeholders = false
        #expect(try Gallery(configuration: off).list(segments: [], cursor: nil, limit: 200).items.allSatisfy { $0.thumbhash == nil })
    }

    static func ffprobeSize(_ path: String) throws -> (Int, Int) {
        let r = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                                     "-of", "csv=p=0", path])
        let parts = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        guard parts.count == 2 else { throw ToolFailed(description: "ffprobe said \(r.stdout) \(r.stderr)") }
        return (parts[0], parts[1])
    }

    @Test func listsMediaAndFoldersSortedAndNothingHiddenOrOutside() throws {
        let dir = try TemporaryDirectory()
        let root = try Self.makeLibrary(dir)
        let gallery = try Gallery(configuration: .init(root: root))
        let listing = try gallery.list(segments: [], cursor: nil, limit: 200)
        #expect(listing.next == nil && listing.nextURL == nil)
        let names = listing.items.map(\.name)
        #expect(names == ["anim.gif", "clip.mp4", "link-in.gif", "single.gif", "still.jpg", "sub", "été #1.gif"])
        let byName = Dictionary(uniqueKeysWithValues: listing.items.map { ($0.name, $0) })

        let anim = try #require(byName["anim.gif"])
        #expect(anim.kind == "animation" && anim.frames == 10)
        #expect(anim.video == "/mp4/anim.gif?size=320" && anim.poster == "/poster/anim.gif?size=320" && anim.link == "/original/anim.gif")
        let (gw, gh) = try Self.ffprobeSize(root + "/anim.gif")
        #expect(anim.width == gw && anim.height == gh)

        let clip = try #require(byName["clip.mp4"])
        #expect(clip.kind == "video" && clip.video == "/preview/clip.mp4?size=320")
        let (vw, vh) = try Self.ffprobeSize(root + "/clip.mp4")
        #expect(clip.width == vw && clip.height == vh)
        #expect(abs((clip.durationMs ?? 0) - 2000) <= 80)

        let still = try #require(byName["still.jpg"])
        #expect(still.kind == "image" && still.video == nil && still.poster == "/thumb/still.jpg?size=320")
        #expect(still.width == 200 && still.height == 100)
        #expect(byName["single.gif"]?.kind == "image")
        #expect(byName["sub"]?.kind == "folder" && byName["sub"]?.link == "/gallery/sub" && byName["sub"]?.poster == nil)
        // Non-ASCII and reserved characters are percent-encoded byte for byte.
        #expect(byName["été #1.gif"]?.video == "/mp4/%C3%A9t%C3%A9%20%231.gif?size=320")
        // Links to one file share its probe: anim.gif, link-in.gif (same inode), and the copy.
        #expect(gallery.probes.count <= 6)
    }

    @Test func folderOutsideOrHiddenIsNotFound() throws {
        let dir = try TemporaryDirectory()
        let root = try Self.makeLibrary(dir)
        try FileManager.default.createSymbolicLink(atPath: root + "/up", withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: root + "/etc", withDestinationPath: "/etc")
        let gallery = try Gallery(configuration: .init(root: root))
        for segments in [[".."], ["up"], ["etc"], [".dotdir"], ["sub", ".."], ["anim.gif"], ["missing"], [""], ["a/b"]] {
            #expect(throws: GalleryError.self) { try gallery.list(segments: segments, cursor: nil, limit: 10) }
            #expect((try? gallery.page(segments: segments)) == nil)
        }
        let names = try gallery.list(segments: [], cursor: nil, limit: 200).items.map(\.name)
        #expect(!names.contains("up") && !names.contains("etc"))
        #expect(try gallery.list(segments: ["sub"], cursor: nil, limit: 10).items.isEmpty)
    }

    @Test func limitsAndCursorsAreChecked() throws {
        let dir = try TemporaryDirectory()
        let root = try Self.makeLibrary(dir)
        let gallery = try Gallery(configuration: .init(root: root))
        for limit in [0, 201, -1] {
            #expect(throws: GalleryError(400, "bad-parameter", "limit must be a whole number from 1 to 200")) {
                try gallery.list(segments: [], cursor: nil, limit: limit)
            }
        }
        for cursor in ["", "%%%", "abc", Base64URL.encode(Array("v2\nx".utf8))] {
            #expect(throws: GalleryError.self) { try gallery.list(segments: [], cursor: cursor, limit: 5) }
        }
    }

    @Test func cursorsPageThroughEverythingOnceAndStayStable() throws {
        let dir = try TemporaryDirectory()
        let root = dir.path("many")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=32x24:rate=5:duration=0.4", root + "/.source.gif"])
        for i in 0..<53 { try FileManager.default.createSymbolicLink(atPath: root + String(format: "/g%03d.gif", i), withDestinationPath: ".source.gif") }
        // A link to a hidden file is hidden: make visible copies instead.
        for i in 0..<53 {
            let p = root + String(format: "/g%03d.gif", i)
            try FileManager.default.removeItem(atPath: p)
            try FileManager.default.copyItem(atPath: root + "/.source.gif", toPath: p)
        }
        let gallery = try Gallery(configuration: .init(root: root))
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try gallery.list(segments: [], cursor: cursor, limit: 7)
            let again = try gallery.list(segments: [], cursor: cursor, limit: 7)
            #expect(page.items.map(\.name) == again.items.map(\.name) && page.next == again.next)
            seen += page.items.map(\.name)
            cursor = page.next
            pages += 1
        } while cursor != nil && pages < 20
        #expect(pages == 8)
        #expect(seen == (0..<53).map { String(format: "g%03d.gif", $0) })
        // A file added before the cursor's position does not shift the pages after it.
        let first = try gallery.list(segments: [], cursor: nil, limit: 7)
        try FileManager.default.copyItem(atPath: root + "/.source.gif", toPath: root + "/a-new.gif")
        let second = try gallery.list(segments: [], cursor: first.next, limit: 7)
        #expect(second.items.first?.name == "g007.gif")
    }

    @Test func everyEmittedURLIsSigned() throws {
        let dir = try TemporaryDirectory()
        let root = try Self.makeLibrary(dir)
        var configuration = Gallery.Configuration(root: root)
        configuration.sign = { $0 + ($0.contains("?") ? "&" : "?") + "sig=TEST" }
        let gallery = try Gallery(configuration: configuration)
        let page = try gallery.list(segments: [], cursor: nil, limit: 3)
        let urls = page.items.flatMap { [$0.poster, $0.video, $0.link].compactMap { $0 } } + [page.nextURL].compactMap { $0 }
        #expect(page.nextURL?.hasPrefix("/list/?cursor=") == true)
        #expect(urls.count >= 7)
        for url in urls { #expect(url.hasSuffix("sig=TEST"), "\(url)") }
        let html = try gallery.page(segments: ["sub"])
        #expect(html.contains(#""list":"/list/sub?limit=60\u0026sig=TEST""#))
        #expect(html.contains(#""link":"/gallery/?sig=TEST""#) && html.contains(#""link":"/gallery/sub?sig=TEST""#))
    }

    @Test func pageIsSelfContainedAndEscapesNames() throws {
        let dir = try TemporaryDirectory()
        let root = dir.path("r")
        try FileManager.default.createDirectory(atPath: root + "/<script>x<!--", withIntermediateDirectories: true)
        let gallery = try Gallery(configuration: .init(root: root))
        let html = try gallery.page(segments: ["<script>x<!--"])
        #expect(html.contains("<title>&lt;script&gt;x&lt;!--</title>"))
        #expect(html.components(separatedBy: "<script").count == 3) // the name never opens a script element
        #expect(html.components(separatedBy: "</script>").count == 3)
        for forbidden in ["src=\"http", "href=\"http", "@import", "import("] { #expect(!html.contains(forbidden)) }
        #expect(html.contains("IntersectionObserver") && html.contains("removeAttribute(\"src\")") && html.contains("prefers-reduced-motion"))
    }
}
