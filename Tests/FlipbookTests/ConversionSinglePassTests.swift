import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// GIF to MP4 reads and parses its input once: no block scan ahead of the decoder beyond block headers.
@Suite(.serialized, .offPool) struct ConversionSinglePassTests {
    /// Bytes read from the file, counted by the source itself: at most the file's size plus the sniff's
    /// few bytes plus what `GIFDelayScan` reads (each block's header and one length byte per sub-block of
    /// up to 255 bytes). giflib's scan and a decode read it twice.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func aGIFIsReadOnce() throws {
        for relative in ["gif/android-gif-drawable/led7.gif", "gif/giflib/fire.gif", "gif/gifsicle/002-cropresize.gif"] {
            let source = try FileByteSource(path: Corpus.file(relative))
            let result = try GIFToVideo.convert(source)
            #expect(result.gifFrames > 1)
            #expect(source.bytesRead <= source.count + source.count / 200 + 64 + 32 * result.gifFrames, "\(relative): read \(source.bytesRead) of \(source.count) bytes")
        }
    }

    /// What the scan used to learn up front is still right when learnt while decoding: a loop extension
    /// placed after the last frame (valid: extensions may come anywhere before the trailer) reaches the
    /// MP4's loop_count, as ffprobe reads it, and the frame count and end time are the GIF's.
    @Test func aLateLoopExtensionStillReachesTheVideo() throws {
        var gif = TestGIF(width: 8, height: 8)
        gif.loops = [3]
        gif.frames = [
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 1, count: 64), delay: 10),
            .init(width: 8, height: 8, pixels: [UInt8](repeating: 2, count: 64), delay: 20),
        ]
        var bytes = gif.encode()
        // Move the 19-byte NETSCAPE2.0 block (21 FF 0B "NETSCAPE2.0" 03 01 lo hi 00) before the trailer.
        let id = Array("NETSCAPE2.0".utf8)
        var found: Int?
        for k in 0..<(bytes.count - 14) where bytes[k] == 0x21 && bytes[k + 1] == 0xFF {
            if Array(bytes[(k + 3)..<(k + 14)]) == id { found = k; break }
        }
        let start = try #require(found)
        let block = Array(bytes[start..<(start + 19)])
        #expect(block.last == 0)
        bytes.removeSubrange(start..<(start + 19))
        #expect(bytes.last == 0x3B)
        bytes.insert(contentsOf: block, at: bytes.count - 1)

        let result = try GIFToVideo.convert(MemoryByteSource(bytes))
        #expect(result.gifFrames == 2 && result.durationMs == 300 && result.loopCount == 3)
        let dir = try TemporaryDirectory()
        try Data(result.data).write(to: URL(fileURLWithPath: dir.path("late.mp4")))
        let p = try ConversionTests.ffprobe(dir.path("late.mp4"))
        #expect(p.tags["loop_count"] == "3" && p.framePTS == [0, 0.1] && abs(p.duration - 0.3) < 0.001, "\(p)")
    }
}
