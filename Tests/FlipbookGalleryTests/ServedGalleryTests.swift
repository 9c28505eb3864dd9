import Foundation
import FlipbookTestSupport
import Testing

/// The browser and replica scenarios as tests, so `make test` runs them: each starts real processes
/// (`flipbook serve`, chromium headless, nginx), checks states and stops everything it started. The Python
/// harnesses print one line per check; the test fails on any failed check.
@Suite(.serialized, .offPool) struct ServedGalleryTests {
    /// The `flipbook` built with these tests: beside the test bundle (whatever --scratch-path), else .build/debug.
    static let flipbook: String = {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("flipbook").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/flipbook").path
    }()
    static var haveChromium: Bool { Run.which("chromium") != nil }
    static var haveNginx: Bool { Run.which("nginx") != nil }

    static func harness(_ script: String, _ arguments: [String], summary: String) throws {
        #expect(FileManager.default.isExecutableFile(atPath: flipbook), "build flipbook first (swift build)")
        let path = packageRoot.appendingPathComponent(script).path
        let result = try Run.program(Run.python, [path, "--flipbook", flipbook] + arguments)
        print(result.stdout)
        #expect(result.status == 0, "\(script) failed:\n\(result.stdout)\n\(result.stderr.suffix(4000))")
        #expect(result.stdout.contains("\(summary):") && result.stdout.contains(" 0 failed"))
    }

    @Test(.enabled(if: haveChromium, "chromium is not installed (make deps installs it)"))
    func galleryPlaysInChromiumWithBoundedDOMAndVideos() throws {
        try Self.harness("Tests/browser/gallery_browser.py", ["--entries", "2000"], summary: "browser")
    }

    @Test(.enabled(if: haveNginx, "nginx is not installed (make deps installs nginx-light)"))
    func replicasBehindNginxShareOneCache() throws {
        try Self.harness("Tests/replicas/replicas.py", ["--replicas", "2"], summary: "replicas")
    }
}
