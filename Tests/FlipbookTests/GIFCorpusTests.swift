import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

@Suite(.offPool) struct GIFCorpusTests {
    /// Facts the MANIFEST states about a GIF (written by the corpus's makers, not by our code).
    struct Stated {
        var frames: Int?
        var loop: Int??    // .some(nil): "no loop ext"
        var totalCs: Int?  // "total 2.50s": the sum of raw delays
    }

    static func stated(_ fullNote: String) -> Stated {
        // The structured facts follow the first " | "; before it is free text.
        let parts = fullNote.components(separatedBy: " | ")
        let note = parts.count > 1 ? parts[1] : fullNote
        var s = Stated()
        if let r = note.range(of: #", (\d+) frames?"#, options: .regularExpression) {
            s.frames = Int(note[r].dropFirst(2).split(separator: " ")[0])
        }
        if note.contains("loop=infinite") { s.loop = .some(0) }
        else if let r = note.range(of: #"loop=(\d+)"#, options: .regularExpression) { s.loop = .some(Int(note[r].dropFirst(5))) }
        else if note.contains("no loop ext") { s.loop = .some(nil) }
        if let r = note.range(of: #"total (\d+\.\d+)s"#, options: .regularExpression) {
            s.totalCs = Int((Double(note[r].dropFirst(6).dropLast())! * 100).rounded())
        }
        return s
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func scanAgreesWithTheManifest() throws {
        var checked = 0
        for entry in Corpus.entries where entry.folder == "gif" {
            let damaged = ["TRUNCATED", "zero-size frame", "ZERO canvas", "exceed canvas"].contains { entry.note.contains($0) }
            guard !damaged, let info = try? GIFDecoder.info(source: try FileByteSource(path: entry.url.path)) else { continue }
            let s = Self.stated(entry.note)
            if let frames = s.frames { #expect(info.frameCount == frames, "\(entry.path)") }
            if let loop = s.loop, !entry.note.contains("two NETSCAPE") { #expect(info.loopCount == loop, "\(entry.path)") }
            if let total = s.totalCs { #expect(info.delays.reduce(0, +) == total, "\(entry.path)") }
            checked += 1
        }
        #expect(checked >= 60)
    }

    /// The block-header scan GIF to MP4 uses (`GIFDelayScan`) finds every frame the manifest states, and
    /// each delay, as browsers play it, is the one ffmpeg's GIF reader gives that frame's packet.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func delayScanAgreesWithTheManifestAndFFmpeg() throws {
        var checked = 0
        for entry in Corpus.entries where entry.folder == "gif" {
            // Damaged block structure: the scan gives up (nil) and the conversion takes the frames' own timestamps.
            let damaged = ["TRUNCATED", "zero-size frame", "ZERO canvas", "exceed canvas", "no trailer", "garbage"]
                .contains { entry.note.contains($0) }
            let s = Self.stated(entry.note)
            guard !damaged, let frames = s.frames else { continue }
            let delays = try #require(GIFDelayScan.delays(try FileByteSource(path: entry.url.path), maxFrames: 10_000), "\(entry.path)")
            #expect(delays.count == frames, "\(entry.path)")
            if let total = s.totalCs { #expect(delays.reduce(0, +) == total, "\(entry.path)") }
            let probe = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                             "packet=duration_time", "-of", "csv=p=0", entry.url.path])
            let packets = probe.stdout.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            if packets.count == delays.count {
                let ours = delays.map { Double(GIFTiming.displayedMilliseconds(centiseconds: $0)) / 1000 }
                #expect(zip(ours, packets).allSatisfy { abs($0 - $1) < 0.0005 }, "\(entry.path): \(ours) vs ffmpeg's \(packets)")
                checked += 1
            }
        }
        #expect(checked >= 30)
        #expect(GIFDelayScan.delays(MemoryByteSource(Array("GIF89a".utf8)), maxFrames: 10) == nil)
    }

    /// Every corpus GIF decodes fully or fails with a FlipbookError; none crashes or runs away.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func everyGIFDecodesOrFailsWithATypedError() throws {
        for entry in Corpus.entries where entry.folder == "gif" {
            do {
                let source = try FileByteSource(path: entry.url.path)
                let info = try GIFDecoder.info(source: source)
                let decoder = try GIFDecoder(source: source, options: GIFDecodeOptions(maxPixelSize: 64))
                var count = 0
                while let frame = try decoder.nextFrame() {
                    #expect(max(frame.image.width, frame.image.height) <= 64)
                    count += 1
                }
                if !info.truncated { #expect(count == info.frameCount, "\(entry.path)") }
            } catch let error as FlipbookError {
                #expect(!error.message.isEmpty)
            }
        }
    }

    /// Two NETSCAPE2.0 extensions: the first one counts (the issue's rule; Pillow's test file).
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func firstLoopExtensionWins() throws {
        let path = Corpus.file("gif/pillow/duplicate_number_of_loops.gif")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // Read the two loop values straight from the bytes: "NETSCAPE2.0" 03 01 lo hi.
        let id = Array("NETSCAPE2.0".utf8)
        let values = bytes.indices.compactMap { i -> Int? in
            guard i + 16 <= bytes.count, Array(bytes[i..<(i + 11)]) == id else { return nil }
            return Int(bytes[i + 13]) | Int(bytes[i + 14]) << 8
        }
        try #require(values.count == 2 && values[0] != values[1])
        #expect(try GIFDecoder.info(source: try FileByteSource(path: path)).loopCount == values[0])
    }
}
