import CFFmpeg
import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// The same GIF gives the same video bytes, however many conversions run at once and whatever the process
/// did before. With B-frames, libx264 0.164's AVX-512 MB-tree code read heap memory x264 had allocated and
/// never written, so the bytes depended on what earlier (or concurrent) conversions had freed, and Flipbook
/// no longer changes glibc's malloc for the whole process. Without B-frames, x264's AVX-512 code still let
/// concurrent encodes change each other's bytes; Flipbook masks AVX-512 for x264 only (`X264CPU`), which
/// keeps B-frames deterministic too: this test pattern's frames all last 100 ms, so it is encoded at a
/// constant rate with B-frames (`FrameEncoder`).
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

    /// Frames at an even pace and a held last frame: B-frames at a variable rate (`SampleTiming.averaged`,
    /// the last picture repeated), as deterministic as at a constant rate.
    @Test func concurrentAveragedConversionsGiveTheSequentialBytes() throws {
        var gif = TestGIF(width: 96, height: 64)
        for i in 0..<24 {
            var pixels = [UInt8](repeating: 0, count: 96 * 64)
            for y in 0..<64 { for x in 0..<96 where (x + 2 * i) % 24 < 8 || (y * 3 + i) % 20 < 4 { pixels[y * 96 + x] = UInt8(1 + (x / 24 + i) % 3) } }
            gif.frames.append(.init(width: 96, height: 64, pixels: pixels, delay: i == 23 ? 30 : 4))
        }
        let bytes = gif.encode()
        let reference = try GIFToVideo.convert(MemoryByteSource(bytes)).data
        #expect(String(decoding: reference, as: UTF8.self).contains("ctts"), "not encoded with B-frames")
        let count = 6
        let results = Results(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { i in
            Self.dirtyTheHeap(UInt8(truncatingIfNeeded: 0x53 &* (i + 1)))
            results.set(i, try? GIFToVideo.convert(MemoryByteSource(bytes)).data)
        }
        let distinct = Set(results.all.compactMap { $0 })
        #expect(Bool(results.all.allSatisfy { $0 != nil } && distinct.count == 1 && distinct.first == reference))
    }
}

extension DeterminismTests {
    /// Separate processes whose heaps hold different garbage (glibc's MALLOC_PERTURB_ fills every new block
    /// with a non-zero byte; without it, a fresh process's blocks are mostly zero) write the same bytes. With
    /// x264's B-frames on a machine with AVX-512 they did not (bframes=3: two different files).
    @Test func processesWithDifferentHeapsWriteTheSameBytes() throws {
        let dir = try TemporaryDirectory()
        try Data(Self.testPatternGIF(size: "160x128")).write(to: URL(fileURLWithPath: dir.path("t.gif")))
        var outputs: [Data] = []
        for perturb in ["0", "165", "1"] {
            let out = dir.path("t-\(perturb).mp4")
            let run = try Run.program("/usr/bin/env", ["MALLOC_PERTURB_=\(perturb)", CLITests.binary, "convert", dir.path("t.gif"), "-o", out])
            try #require(run.status == 0, "\(run.stderr)")
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(Set(outputs).count == 1, "\(Set(outputs).count) different videos from processes with different heap contents")
    }

    /// Flipbook leaves glibc's malloc as it found it: after a conversion, a new block is not filled by
    /// malloc (M_PERTURB, which Flipbook once set process-wide, fills every block malloc hands out).
    @Test func aConversionLeavesMallocAlone() throws {
        _ = try GIFToVideo.convert(MemoryByteSource(Self.testPatternGIF(size: "64x48")))
        // 64 MiB: over glibc's largest dynamic mmap threshold (32 MiB), so the block is a fresh mapping of
        // zero pages, which M_PERTURB would fill with the complement of its byte. (The check once freed a
        // 4096-byte block and expected malloc to hand it back; in the arena the other suites' threads share
        // it did not always, and two fresh-clone runs failed on that.) Perturb byte 0xff, whose complement
        // is zero, is the one this cannot see.
        let size = 64 << 20
        let block = malloc(size)!
        defer { free(block) }
        let bytes = block.assumingMemoryBound(to: UInt8.self)
        for offset in [0, 4096, size / 2, size - 1] {
            #expect(bytes[offset] == 0, "malloc filled a new block with \(bytes[offset]) at \(offset): malloc was reconfigured")
        }
    }
}

extension DeterminismTests {
    /// libav's log level is one per process and belongs to the host: a conversion (which loads libav and
    /// opens x264) leaves it where libav starts, AV_LOG_INFO. Flipbook once set it to quiet on loading libav.
    @Test func aConversionLeavesLibAVLoggingAlone() throws {
        _ = try GIFToVideo.convert(MemoryByteSource(Self.testPatternGIF(size: "64x48")))
        let av = try LibAV.api()
        #expect(av.av_log_get_level() == AV_LOG_INFO, "libav's log level is \(av.av_log_get_level()), not the default \(AV_LOG_INFO)")
    }
}

private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [[UInt8]?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ value: [UInt8]?) { lock.withLock { values[i] = value } }
    var all: [[UInt8]?] { lock.withLock { values } }
}

extension DeterminismTests {
    /// A server makes many derivatives at once; each must have the bytes a fresh process makes. Without
    /// B-frames, libx264's AVX-512 code still made a video preview's bytes depend on the encodes running
    /// beside it: here 2-4 of these 12 previews differed from the CLI's in every run, and two `flipbook
    /// serve` replicas disagreed on `/preview/clip.mp4?size=160`. Flipbook masks AVX-512 for x264 (`X264CPU`).
    @Test func concurrentPreviewsMatchAFreshProcess() throws {
        let dir = try TemporaryDirectory()
        let clip = dir.path("clip.mp4")
        let made = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=5",
                                                      "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", clip])
        try #require(made.status == 0, "\(made.stderr)")
        var references: [Int: Data] = [:]
        for size in [160, 200] {
            let out = dir.path("fresh-\(size).mp4")
            let run = try Run.program(CLITests.binary, ["preview", clip, "-o", out, "--size", String(size)])
            try #require(run.status == 0, "\(run.stderr)")
            references[size] = try Data(contentsOf: URL(fileURLWithPath: out))
        }

        let count = 12
        let results = Results(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { i in
            var options = PreviewOptions()
            options.size = i % 2 == 0 ? 160 : 200
            options.format = .mp4
            options.video.threads = 1
            results.set(i, (try? MediaInput(path: clip)).flatMap { try? VideoPreview.make($0, options: options).data })
        }
        let differing = results.all.enumerated().filter { i, data in
            data.map { Data($0) } != references[i % 2 == 0 ? 160 : 200]
        }.map(\.offset)
        #expect(differing.isEmpty, "previews \(differing) of \(count) differ from a fresh process's (or failed)")
    }
}
