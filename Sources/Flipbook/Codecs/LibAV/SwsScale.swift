import CFFmpeg

/// libswscale between libav frames and packed (single-plane) buffers, with the plane-pointer plumbing
/// written once.
enum SwsScale {
    /// The frame's eight plane pointers and line sizes, as sws_scale takes them.
    static func planes(of frame: UnsafeMutablePointer<AVFrame>) -> (data: [UnsafeMutablePointer<UInt8>?], lines: [Int32]) {
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
    static func frame(_ frame: UnsafeMutablePointer<AVFrame>, sourceHeight: Int, into destination: UnsafeMutablePointer<UInt8>,
                      rowBytes: Int, expectedRows: Int, with sws: OpaquePointer) throws {
        let av = try LibAV.api()
        let (data, lines) = planes(of: frame)
        let source = data.map { UnsafePointer($0) }
        var planes: [UnsafeMutablePointer<UInt8>?] = [destination, nil, nil, nil]
        var strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
        guard av.sws_scale(sws, source, lines, 0, Int32(sourceHeight), &planes, &strides) == expectedRows else {
            throw FlipbookError(.codec, "pixel conversion failed", context: "sws_scale")
        }
    }

    /// Converts the packed `source` (`height` rows of `rowBytes`) into `frame`'s planes.
    static func packed(_ source: UnsafePointer<UInt8>, rowBytes: Int, height: Int, into frame: UnsafeMutablePointer<AVFrame>,
                       with sws: OpaquePointer) throws {
        let av = try LibAV.api()
        let (data, lines) = planes(of: frame)
        var planes: [UnsafePointer<UInt8>?] = [source, nil, nil, nil]
        var strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
        guard av.sws_scale(sws, &planes, &strides, 0, Int32(height), data, lines) == height else {
            throw FlipbookError(.codec, "pixel conversion failed", context: "sws_scale")
        }
    }
}
