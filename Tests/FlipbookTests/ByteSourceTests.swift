import CFFmpeg
import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

@Suite(.offPool) struct ByteSourceTests {
    static let bytes: [UInt8] = (0..<1000).map { UInt8($0 % 251) }

    func read(_ source: some ByteSource, at offset: Int, length: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0xEE, count: length)
        let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: offset) }
        return Array(buffer.prefix(n))
    }

    func checkBoundaries(_ source: some ByteSource) throws {
        #expect(source.count == 1000)
        #expect(try read(source, at: 0, length: 10) == Array(Self.bytes[0..<10]))   // start
        #expect(try read(source, at: 995, length: 10) == Array(Self.bytes[995...]))  // runs over the end: short
        #expect(try read(source, at: 1000, length: 10) == [])                        // at the end
        #expect(try read(source, at: 5000, length: 10) == [])                        // past the end
        #expect(try read(source, at: 10, length: 0) == [])                           // zero length
        #expect(try read(source, at: 0, length: 1000) == Self.bytes)                  // everything
        #expect(throws: FlipbookError.self) { try read(source, at: -1, length: 1) }
        #expect(try source.withContiguousBytes { Array($0) } == Self.bytes)
    }

    @Test func memorySourceBoundaries() throws {
        try checkBoundaries(MemoryByteSource(Self.bytes))
    }

    @Test func fileSourceBoundaries() throws {
        let dir = try TemporaryDirectory()
        try Data(Self.bytes).write(to: URL(fileURLWithPath: dir.path("f")))
        try checkBoundaries(try FileByteSource(path: dir.path("f")))
    }

    @Test func fileSourceRejectsMissingFilesAndDirectories() throws {
        #expect(throws: FlipbookError.self) { try FileByteSource(path: "/nonexistent/flipbook") }
        #expect(throws: FlipbookError.self) { try FileByteSource(path: "/tmp") }
    }

    @Test func slicesShareOneBufferAndOneCounter() throws {
        let source = MemoryByteSource(Self.bytes)
        let other = MemoryByteSource(Self.bytes)
        let slice = source.slice(100..<200)
        let inner = slice.slice(50..<80)
        #expect(slice.count == 100)
        #expect(try read(slice, at: 0, length: 5) == Array(Self.bytes[100..<105]))
        #expect(try read(inner, at: 0, length: 100) == Array(Self.bytes[150..<180]))
        // No copies: every slice points into the parent's storage.
        let base = try source.withContiguousBytes { $0.baseAddress! }
        #expect(try inner.withContiguousBytes { $0.baseAddress! } == base + 150)
        #expect(source.slice(900..<2000).count == 100)   // clamped to the parent
        #expect(source.slice(2000..<3000).count == 0)
        // Reads through any slice are counted once, on the shared counter.
        // withContiguousBytes hands out the whole view (1000 + 30 bytes); unrelated sources count apart.
        #expect(source.bytesRead == 5 + 30 + 1000 + 30)
        #expect(other.bytesRead == 0)
    }

    @Test func countsExactlyTheBytesHandedOut() throws {
        let source = MemoryByteSource(Self.bytes)
        _ = try read(source, at: 0, length: 10)
        _ = try read(source, at: 990, length: 100)  // 10 bytes
        _ = try read(source, at: 2000, length: 100) // none
        #expect(source.bytesRead == 20)
    }

    // MARK: AVIO bridge

    /// The seek/read callbacks libav will call, driven directly.
    @Test func avioCallbacksSeekAndReadLikeAFile() throws {
        try #require(fb_av_load() == nil, "libav must load")
        let bridge = try AVIOBridge(source: MemoryByteSource(Self.bytes))
        let ctx = bridge.context.pointee
        let seek = try #require(ctx.seek), readPacket = try #require(ctx.read_packet)
        #expect(seek(ctx.opaque, 0, fb_avseek_size()) == 1000)
        #expect(seek(ctx.opaque, 100, SEEK_SET) == 100)
        #expect(seek(ctx.opaque, 50, SEEK_CUR) == 150)
        #expect(seek(ctx.opaque, -10, SEEK_END) == 990)
        #expect(seek(ctx.opaque, -2000, SEEK_END) < 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBufferPointer { readPacket(ctx.opaque, $0.baseAddress, 64) }
        #expect(n == 10)
        #expect(Array(buffer.prefix(10)) == Array(Self.bytes[990...]))
        let atEnd = buffer.withUnsafeMutableBufferPointer { readPacket(ctx.opaque, $0.baseAddress, 64) }
        #expect(atEnd == fb_averror_eof())
    }

    /// libavformat demuxes a corpus MP4 entirely from memory; its answers match ffprobe's on the file.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage),
          arguments: ["video/androidx-media/internal_emulator_transformer_output_270_rotated.mp4",
                      "video/go-mp4/sample_fragmented.mp4", "video/androidx-media/bear-vp9-odd-dimensions.webm"])
    func libavformatOpensFromMemory(relative: String) throws {
        let path = Corpus.file(relative)
        let memory = MemoryByteSource(try Data(contentsOf: URL(fileURLWithPath: path)))
        let input = MediaInput(source: memory, name: relative)
        let info = try input.probe()
        let probe = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                          "stream=codec_name,width,height", "-of", "csv=p=0", path])
        let fields = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
        #expect(info.codec == fields[0])
        let stored = Set([info.width, info.height].compactMap { $0 })
        #expect(stored == Set([Int(fields[1])!, Int(fields[2])!]))
        #expect(memory.bytesRead > 0)
        #expect(memory.bytesRead <= memory.count * 2)
    }
}
