import CFFmpeg

/// Access to libav, loaded on first use. Every libav call in Flipbook goes through `LibAV.api()` so that
/// processes that never touch libav (a JPEG thumbnail) never load it.
package enum LibAV {
    /// The resolved function table; loads the libraries on the first call (about 25 ms, once per process).
    package static func api() throws -> FBAVTable {
        if let error = fb_av_load() {
            throw FlipbookError(.libraryUnavailable, "libav is not available", underlying: String(cString: error))
        }
        return fb_av_table().pointee
    }

    /// libav's description of an error code.
    package static func describe(_ code: Int32) -> String {
        guard let av = try? api() else { return "libav error \(code)" }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = av.av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Turns a libav status (negative on error) into a thrown `FlipbookError`; returns non-negative values.
    @discardableResult
    package static func check(_ status: Int32, _ what: String, code: FlipbookError.Code = .codec) throws -> Int32 {
        if status >= 0 { return status }
        let errorCode: FlipbookError.Code = status == fb_averror_invaliddata() ? .corrupt : code
        throw FlipbookError(errorCode, "\(what) failed", underlying: describe(status), context: what)
    }

    /// libavcodec's short name for a codec ("h264", "png", ...).
    package static func codecName(_ id: AVCodecID) -> String {
        guard let av = try? api(), let name = av.avcodec_get_name(id) else { return "unknown" }
        return String(cString: name)
    }

    /// libavutil's name for a pixel format.
    package static func pixelFormatName(_ format: AVPixelFormat) -> String {
        guard let av = try? api(), let name = av.av_get_pix_fmt_name(format) else { return "unknown" }
        return String(cString: name)
    }

    package static let eof = fb_averror_eof()
    package static let eagain = fb_averror_eagain()
    package static let noPTS = fb_av_nopts_value()
    package static let paddingSize = Int(fb_av_input_buffer_padding_size())
}
