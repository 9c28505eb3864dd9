import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// The same GIF gives the same video bytes, however many conversions run at once and whatever the process
/// did before. libx264's MB-tree lookahead with a B-frame pyramid read uninitialised heap memory, so the
/// bytes depended on what earlier (or concurrent) conversions had freed.
@Suite(.serialized, .offPool) struct DeterminismTests {
    /// An animated GIF from ffmpeg's test pattern: motion, so x264 uses B-frames and MB-tree.
    static func testPatternGIF(size: String) throws -> [UInt8] {
        let dir = try TemporaryDirectory()
        let path = dir.path("t.gif")
        let run = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=10:duration=2", path])
        #expect(run.status == 0)
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Leaves freed heap blocks of many sizes full of non-zero bytes, as a busy process does.
    static func dirtyTheHeap(_ seed: UInt8) {
        var blocks: [UnsafeMutableRawPointer] = []
        for size in stride(from: 64, through: 256 * 1024, by: 1031) {
            guard let p = malloc(size) else { continue }
            memset(p, Int32(seed | 1), size)
            blocks.append(p)
        }
        for p in blocks { free(p) }
    }

    @Test(arguments: ["151x113", "160x128"])
    func concurrentConversionsGiveTheSequentialBytes(size: String) throws {
        let gif = try Self.testPatternGIF(size: size)
        let reference = try GIFToVideo.convert(MemoryByteSource(gif)).data
        Self.dirtyTheHeap(0xA5)
        let again = try GIFToVideo.convert(MemoryByteSource(gif)).data
        #expect(Bool(again == reference), "a second conversion in the same process differs")

        let count = 8
        let results = Results(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { i in
            Self.dirtyTheHeap(UInt8(truncatingIfNeeded: 0x31 &* (i + 1)))
            results.set(i, try? GIFToVideo.convert(MemoryByteSource(gif)).data)
        }
        let all = results.all
        #expect(all.allSatisfy { $0 != nil })
        let distinct = Set(all.compactMap { $0 })
        #expect(Bool(distinct.count == 1 && distinct.first == reference),
                "\(distinct.count) different videos from \(count) concurrent conversions of one \(size) GIF")
    }
}

private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [[UInt8]?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ value: [UInt8]?) { lock.withLock { values[i] = value } }
    var all: [[UInt8]?] { lock.withLock { values } }
}
