import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// Replays every input the fuzzers flagged (Tests/Fuzz/Crashers/<target>/, see Tests/Fuzz/README.md)
/// through the same entry point as its fuzzer (Tests/Fuzz/Targets): a result or a `FlipbookError`,
/// never a crash. A crash here takes the test process down, which `swift test` reports as a failure.
@Suite(.offPool) struct FuzzReplayTests {
    static let root = Corpus.packageRoot.appendingPathComponent("Tests/Fuzz/Crashers")

    static func inputs() -> [(target: String, file: String)] {
        let fm = FileManager.default
        let targets = ((try? fm.contentsOfDirectory(atPath: root.path)) ?? []).sorted()
        return targets.flatMap { target in
            ((try? fm.contentsOfDirectory(atPath: root.appendingPathComponent(target).path)) ?? []).sorted()
                .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.map { (target, $0) }
        }
    }

    /// Runs `body`; any error it throws must be a FlipbookError with a message.
    static func typed(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch let error as FlipbookError {
            #expect(!error.message.isEmpty, "\(what): empty message")
        } catch {
            Issue.record("\(what): untyped error \(error)")
        }
    }

    @Test func crashersDirectoryIsThere() {
        #expect(FileManager.default.fileExists(atPath: Self.root.path))
        #expect(!Self.inputs().isEmpty, "no fuzz inputs to replay under \(Self.root.path)")
    }

    @Test(arguments: inputs().map { "\($0.target)/\($0.file)" })
    func replay(_ relative: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.root.appendingPathComponent(relative)))
        let target = String(relative.split(separator: "/")[0])
        let source = MemoryByteSource(bytes)
        switch target {
        case "fuzz-sniff":
            _ = MediaType.sniff(source)
        case "fuzz-gif":
            let options = GIFDecodeOptions(maxCanvasPixels: 1 << 20, maxFrames: 64, maxTotalPixels: 1 << 24)
            Self.typed(relative) { _ = try GIFDecoder.info(source: source, options: options) }
            Self.typed(relative) {
                let decoder = try GIFDecoder(source: source, options: options)
                while try decoder.nextFrame() != nil {}
            }
        case "fuzz-frames":
            let limits = Limits(maxPixels: 1 << 20, maxCanvasPixels: 1 << 20, maxFrames: 64, maxTotalPixels: 1 << 24)
            Self.typed(relative) {
                let frames = try FrameSources.open(source, limits: limits)
                try frames.forEachFrame { _, _ in true }
            }
        case "fuzz-jpeg":
            Self.typed(relative) { _ = try bytes.withUnsafeBytes { try StillHeader.jpeg($0) } }
            _ = bytes.withUnsafeBytes { EXIFInfo(tiff: $0) }
            let input = try MediaInput(bytes: bytes, limits: Limits(maxPixels: 1 << 22))
            Self.typed(relative) { _ = try input.probe() }
            Self.typed(relative) { _ = try input.thumbnailImage(ThumbnailRequest(maxPixelSize: 32)) }
        case "fuzz-png-webp":
            Self.typed(relative) { _ = try StillHeader.png(source) }
            Self.typed(relative) { _ = try StillHeader.webp(source) }
        case "fuzz-probe":
            let input = MediaInput(source: source, limits: Limits(maxPixels: 1 << 22))
            Self.typed(relative) { _ = try VideoPipeline().probe(input) }
        default:
            Issue.record("\(relative): no fuzz target named \(target)")
        }
    }
}
