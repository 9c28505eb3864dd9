import CFFmpeg

/// Owns one libswscale context (`SwsContext`); `deinit` is the only place it is freed, and the context
/// never leaves this object: conversions between libav frames and packed (single-plane) buffers are its
/// methods, with the plane-pointer plumbing written once.
package final class SwsScaler {
    private let context: OpaquePointer

    /// A converter from `sourceWidth` x `sourceHeight` in `sourceFormat` to `width` x `height` in `format`.
    /// Throws `failure` when libswscale cannot convert between the two (an unsupported pixel format).
    package init(sourceWidth: Int32, sourceHeight: Int32, sourceFormat: AVPixelFormat, width: Int32, height: Int32,
         format: AVPixelFormat, flags: Int32, failure: @autoclosure () -> FlipbookError) throws {
        let av = try LibAV.api()
        guard let context = av.sws_getContext(sourceWidth, sourceHeight, sourceFormat, width, height, format, flags, nil, nil, nil)
        else { throw failure() }
        self.context = context
    }

    deinit {
        if let av = try? LibAV.api() { av.sws_freeContext(context) }
    }

    /// Sets the source's YCbCr matrix (`SWS_CS_*`) and range; the output is full-range RGB.
    package func setColourspace(sourceMatrix: Int32, sourceFullRange: Bool) throws {
        let av = try LibAV.api()
        _ = av.sws_setColorspaceDetails(context, av.sws_getCoefficients(sourceMatrix), sourceFullRange ? 1 : 0,
                                        av.sws_getCoefficients(Int32(SWS_CS_DEFAULT)), 1, 0, 1 << 16, 1 << 16)
    }

    /// The frame's eight plane pointers and line sizes, as sws_scale takes them.
    package static func planes(of frame: UnsafeMutablePointer<AVFrame>) -> (data: [UnsafeMutablePointer<UInt8>?], lines: [Int32]) {
        let data = withUnsafeMutablePointer(to: &frame.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { Array(UnsafeBufferPointer(start: $0, count: 8)) }
        }
        let lines = withUnsafePointer(to: &frame.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { Array(UnsafeBufferPointer(start: $0, count: 8)) }
        }
        return (data, lines)
    }

    /// Converts all `sourceHeight` rows of `frame` into the packed `destination`; throws unless the
    /// scaler produced `expectedRows` rows.
    package func scale(_ frame: UnsafeMutablePointer<AVFrame>, sourceHeight: Int, into destination: UnsafeMutablePointer<UInt8>,
               rowBytes: Int, expectedRows: Int) throws {
        let av = try LibAV.api()
        let (data, lines) = Self.planes(of: frame)
        let source = data.map { UnsafePointer($0) }
        var planes: [UnsafeMutablePointer<UInt8>?] = [destination, nil, nil, nil]
        var strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
        guard av.sws_scale(context, source, lines, 0, Int32(sourceHeight), &planes, &strides) == expectedRows else {
            throw FlipbookError(.codec, "pixel conversion failed", context: "sws_scale")
        }
    }

    /// Converts the packed `source` (`height` rows of `rowBytes`) into `frame`'s planes.
    package func scale(packed source: UnsafePointer<UInt8>, rowBytes: Int, height: Int, into frame: UnsafeMutablePointer<AVFrame>) throws {
        let av = try LibAV.api()
        let (data, lines) = Self.planes(of: frame)
        var planes: [UnsafePointer<UInt8>?] = [source, nil, nil, nil]
        var strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
        guard av.sws_scale(context, &planes, &strides, 0, Int32(height), data, lines) == height else {
            throw FlipbookError(.codec, "pixel conversion failed", context: "sws_scale")
        }
    }
}
