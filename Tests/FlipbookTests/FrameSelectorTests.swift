import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// `FrameSelector` over a real animation whose timing the corpus MANIFEST gives (led7.gif: 16 frames of
/// 1.5 s each, 24 s in all, from a block scan and ffprobe), so the expected frame indices follow from the
/// file, not from our decoder.
@Suite(.offPool, .enabled(if: Corpus.available, Corpus.skipMessage))
struct FrameSelectorTests {
    static let path = Corpus.file("gif/android-gif-drawable/led7.gif")

    func selected(_ selector: FrameSelector) throws -> [Int] {
        let source = try FrameSources.open(try FileByteSource(path: Self.path))
        #expect(source.info.frameCount == 16 && source.info.durationMs == 24_000)
        var indices: [Int] = []
        try source.forEachSelected(selector) { frame, canvas in
            #expect(canvas.count == 600 * 752 * 4)
            indices.append(frame.index)
            return true
        }
        return indices
    }

    @Test func indexSelectors() throws {
        #expect(try selected(.all) == Array(0..<16))
        #expect(try selected(.every(5)) == [0, 5, 10, 15])
    }

    /// The frame on screen at each time: 1499 ms is still frame 0, 1500 ms is frame 1; past the end, the last.
    @Test func timeSelectors() throws {
        #expect(try selected(.at([1499])) == [0])
        #expect(try selected(.at([1500])) == [1])
        #expect(try selected(.at([60_000])) == [15])
        #expect(try selected(.at([23_999, 0])) == [0, 15])
        // 5 tiles: 0, 4.8, 9.6, 14.4, 19.2 s -> frames 0, 3, 6, 9, 12.
        #expect(try selected(.evenlySpaced(count: 5)) == [0, 3, 6, 9, 12])
        // More tiles than frames: every tile gets the frame then on screen, repeats allowed.
        let dense = try selected(.evenlySpaced(count: 32))
        #expect(dense.count == 32 && dense == (0..<32).map { $0 * 750 / 1500 })
    }
}
