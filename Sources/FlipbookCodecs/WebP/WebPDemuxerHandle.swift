import CWebP

/// libwebp's demuxer over `WebPBytes`: header facts only, no pixel decoding. Freed in `deinit` only.
package final class WebPDemuxerHandle {
    package let pointer: OpaquePointer
    private let bytes: WebPBytes  // the demuxer points into these

    package init(_ bytes: WebPBytes) throws {
        guard let demux = fb_webp_demux(bytes.bytes, bytes.count) else {
            throw FlipbookError(.corrupt, "WebP container is damaged or incomplete", context: "WebPDemux")
        }
        pointer = demux
        self.bytes = bytes
    }

    deinit { WebPDemuxDelete(pointer) }

    /// Canvas, frame count, loop count, alpha flag and each frame's stored duration (ms).
    package func header() -> (width: Int, height: Int, frames: Int, loops: Int, alpha: Bool, durations: [Int]) {
        let width = Int(WebPDemuxGetI(pointer, WEBP_FF_CANVAS_WIDTH))
        let height = Int(WebPDemuxGetI(pointer, WEBP_FF_CANVAS_HEIGHT))
        let frames = Int(WebPDemuxGetI(pointer, WEBP_FF_FRAME_COUNT))
        let loops = Int(WebPDemuxGetI(pointer, WEBP_FF_LOOP_COUNT))
        let alpha = WebPDemuxGetI(pointer, WEBP_FF_FORMAT_FLAGS) & ALPHA_FLAG.rawValue != 0
        var durations: [Int] = []
        durations.reserveCapacity(min(frames, 100_000))
        var iterator = WebPIterator()
        if WebPDemuxGetFrame(pointer, 1, &iterator) != 0 {
            repeat { durations.append(Int(iterator.duration)) } while WebPDemuxNextFrame(&iterator) != 0
            WebPDemuxReleaseIterator(&iterator)
        }
        return (width, height, frames, loops, alpha, durations)
    }
}
