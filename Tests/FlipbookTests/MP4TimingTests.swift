import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// Issue 21.1: every corpus animation's MP4 keeps the animation's timing in every reader: ffprobe's packets
/// (ffmpeg 5.1's MP4 reader), the boxes, an ffmpeg remux and re-encode, and Chromium, which must also play
/// and loop it. The checks and the references (Pillow's frame durations with the browsers' 10 ms rule,
/// ffprobe, Chromium over the DevTools protocol) are Tests/browser/mp4_timing.py; none is our code.
@Suite(.serialized, .offPool, .enabled(if: Corpus.available, Corpus.skipMessage))
struct MP4TimingTests {
    static let script = Corpus.packageRoot.appendingPathComponent("Tests/browser/mp4_timing.py").path

    /// Animations that convert (the rest are refused with a typed error, checked in GIFCorpusTests and
    /// AnimationSourceTests), written beside their sources' names.
    static func convertAll(into dir: TemporaryDirectory) throws -> [(source: String, mp4: String)] {
        var pairs: [(String, String)] = []
        for (index, entry) in Corpus.entries.enumerated() where entry.note.contains("animated") {
            guard let result = try? GIFToVideo.convert(try FileByteSource(path: entry.url.path)) else { continue }
            let out = dir.path("\(index).mp4")
            try Data(result.data).write(to: URL(fileURLWithPath: out))
            pairs.append((entry.url.path, out))
        }
        return pairs
    }

    @Test func everyConvertedAnimationKeepsItsTimingInFFmpegAndChromium() throws {
        let dir = try TemporaryDirectory()
        let pairs = try Self.convertAll(into: dir)
        #expect(pairs.count >= 40, "only \(pairs.count) corpus animations converted")
        let run = try Run.program(ConversionTests.python, [Self.script] + pairs.flatMap { [$0.source, $0.mp4] })
        let failures = run.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        #expect(failures.isEmpty, "\(failures.count) timing checks failed:\n\(failures.prefix(40).joined(separator: "\n"))")
        #expect(run.status == 0 && run.stdout.contains("passed"), "mp4_timing.py: \(run.stderr.suffix(2000))")
    }
}
