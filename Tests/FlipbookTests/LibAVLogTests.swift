import CFFmpeg
import FlipbookTestSupport
import Synchronization
import Testing
@testable import Flipbook

/// Codec messages libav logged at a level a host at libav's default level prints (INFO or more urgent), while
/// `LibAVLogTests` listens. The level reaching the callback already carries the context's offset.
private let loudCodecMessages = Atomic<Int>(0)

/// A host at libav's default log level must not see the decoders Flipbook runs complain about damaged files:
/// `CodecContext` gives its own an offset, and `FormatInput.probeStreams` gives the ones
/// avformat_find_stream_info opens to decode ahead the same (before, a probe of the corpus's
/// `no_timescale.mp4` printed h264's "error while decoding MB" lines). The callback is libav's one per process:
/// only this test sets it, and it puts libav's own back.
@Suite(.offPool) struct LibAVLogTests {
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func decodingAheadIsQuietAtTheDefaultLevel() throws {
        let av = try LibAV.api()
        loudCodecMessages.store(0, ordering: .relaxed)
        av.av_log_set_callback { context, level, _, _ in
            guard level <= AV_LOG_INFO, let context, let avClass = context.load(as: UnsafePointer<AVClass>?.self),
                  let name = avClass.pointee.class_name, String(cString: name) == "AVCodecContext" else { return }
            loudCodecMessages.add(1, ordering: .relaxed)
        }
        defer { av.av_log_set_callback(av.av_log_default_callback) }
        var opened = 0
        for entry in Corpus.entries where entry.folder == "video" {
            // probeStreams: true, as the reference decoders open files: decodes ahead on every file.
            if (try? FormatInput(source: FileByteSource(path: entry.url.path))) != nil { opened += 1 }
        }
        #expect(opened >= 14)
        #expect(loudCodecMessages.load(ordering: .relaxed) == 0,
                "decoders opened by avformat_find_stream_info logged at INFO or above")
    }
}
