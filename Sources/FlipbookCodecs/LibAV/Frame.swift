import CFFmpeg

/// Owns an `AVFrame`; `deinit` is the only place it is freed.
package final class Frame {
    package let pointer: UnsafeMutablePointer<AVFrame>
    package init() throws {
        guard let frame = try LibAV.api().av_frame_alloc() else { throw FlipbookError(.codec, "av_frame_alloc failed") }
        pointer = frame
    }
    deinit {
        if let av = try? LibAV.api() {
            var frame: UnsafeMutablePointer<AVFrame>? = pointer
            av.av_frame_free(&frame)
        }
    }
}
