import CFFmpeg

/// Scales decoded frames straight to the thumbnail with libswscale (Lanczos), honouring the stream's
/// colour matrix and range, its sample aspect ratio and its display matrix (rotation and mirroring).
package final class FrameRenderer {
    package let orientation: Orientation
    package let request: ThumbnailRequest
    package let format: FormatInput
    package let stream: UnsafeMutablePointer<AVStream>
    /// The scaler for the last frame's size and format, remade when they change.
    private var scaler: SwsScaler?
    private let shrunk: Frame
    private var swsKey: (Int32, Int32, Int32, Int32) = (0, 0, -1, -1)

    package init(format: FormatInput, stream: UnsafeMutablePointer<AVStream>, request: ThumbnailRequest) throws {
        self.format = format
        self.stream = stream
        self.request = request
        orientation = Orientation(displayMatrix: FormatInput.displayMatrix(of: stream))
        shrunk = try Frame()
    }

    /// AV_PIX_FMT_RGB48 is a C macro for the native-endian variant.
    #if _endian(little)
    package static let rgb48 = AV_PIX_FMT_RGB48LE
    #else
    package static let rgb48 = AV_PIX_FMT_RGB48BE
    #endif

    package func render(_ frame: UnsafeMutablePointer<AVFrame>) throws -> Image {
        let av = try LibAV.api()
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        guard w > 0, h > 0 else { throw FlipbookError(.corrupt, "decoded an empty frame") }
        // Anamorphic pixels: the stored width times the sample aspect ratio is the displayed width.
        let sar = av.av_guess_sample_aspect_ratio(format.pointer, stream, frame)
        let aspect = sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1
        let displayW = max(1, Int((Double(w) * aspect).rounded()))
        let stored = Size(width: displayW, height: h)
        let shown = orientation.swapsAxes ? stored.transposed : stored
        let plan = ThumbnailPlan.make(source: shown, maxPixelSize: request.maxPixelSize, fit: request.fit,
                                      upscale: request.upscale).stored(for: orientation)
        // Scale the whole frame so the planned crop has the output size, then crop the centre.
        let scaledW = max(plan.output.width, Int((Double(displayW) * plan.scale).rounded()))
        let scaledH = max(plan.output.height, Int((Double(h) * plan.scale).rounded()))
        // Shrink by whole factors first when the reduction is large; Lanczos then does the last 2-4x.
        var source = frame
        let k = FrameShrinker.factor(width: w, height: h, scaledWidth: scaledW, scaledHeight: scaledH)
        if k > 1, try FrameShrinker.shrink(frame, by: k, into: shrunk) { source = shrunk.pointer }
        let sw = source.pointee.width, sh = source.pointee.height
        // HDR goes through 16-bit RGB and the tone mapper; everything else straight to 8-bit RGB.
        let toneMapper = ToneMapper(frame: frame)
        let output = toneMapper == nil ? AV_PIX_FMT_RGB24 : Self.rgb48
        if scaler == nil || swsKey != (sw, sh, source.pointee.format, output.rawValue) {
            scaler = nil  // the old context goes before the new one is made
            let flags = Int32(SWS_LANCZOS | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP)
            let made = try SwsScaler(sourceWidth: sw, sourceHeight: sh, sourceFormat: AVPixelFormat(rawValue: source.pointee.format),
                                     width: Int32(scaledW), height: Int32(scaledH), format: output, flags: flags,
                                     failure: FlipbookError(.unsupported, "cannot convert this video's pixel format"))
            scaler = made
            swsKey = (sw, sh, source.pointee.format, output.rawValue)
            // The stream's matrix (BT.601/709/2020) and range; RGB out is full range.
            let matrix: Int32
            switch frame.pointee.colorspace {
            case AVCOL_SPC_BT709: matrix = Int32(SWS_CS_ITU709)
            case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: matrix = Int32(SWS_CS_BT2020)
            case AVCOL_SPC_UNSPECIFIED: matrix = Int32(h >= 720 ? SWS_CS_ITU709 : SWS_CS_DEFAULT)
            default: matrix = Int32(SWS_CS_DEFAULT)
            }
            try made.setColourspace(sourceMatrix: matrix, sourceFullRange: frame.pointee.color_range == AVCOL_RANGE_JPEG)
        }
        guard let scaler else { throw FlipbookError(.codec, "no pixel converter") }
        var pixels = [UInt8](repeating: 0, count: scaledW * scaledH * 3)
        if let toneMapper {
            var wide = [UInt16](repeating: 0, count: scaledW * scaledH * 3)
            try wide.withUnsafeMutableBufferPointer { dst in
                try dst.baseAddress!.withMemoryRebound(to: UInt8.self, capacity: dst.count * 2) {
                    try scaler.scale(source, sourceHeight: Int(sh), into: $0, rowBytes: scaledW * 6, expectedRows: scaledH)
                }
            }
            pixels.withUnsafeMutableBufferPointer { dst in
                wide.withUnsafeBufferPointer { toneMapper.map($0.baseAddress!, to: dst.baseAddress!, count: scaledW * scaledH) }
            }
        } else {
            try pixels.withUnsafeMutableBufferPointer { dst in
                try scaler.scale(source, sourceHeight: Int(sh), into: dst.baseAddress!, rowBytes: scaledW * 3, expectedRows: scaledH)
            }
        }
        let scaled = Image(width: scaledW, height: scaledH, channels: 3, pixels: pixels)
        let cropped = scaled.croppedCentre(to: plan.output)
        return orientation.apply(to: cropped)
    }
}
