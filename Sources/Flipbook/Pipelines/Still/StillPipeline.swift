/// Stills: JPEG through libjpeg with shrink-on-load (streamed), WebP through libwebp's scaled decode, PNG streamed
/// through libpng, AVIF/HEIC through libheif, everything else (BMP, TIFF, APNG) through libavcodec. Two
/// phases, as in libvips: read the header and check limits, then decode at the chosen scale. Embedded ICC
/// profiles are applied on the small image (see `ColourManagement`).
struct StillPipeline: MediaPipeline {
    init() {}
    var name: String { "still" }

    func accepts(_ type: MediaType) -> Bool {
        [.jpeg, .png, .apng, .webp, .animatedWebP, .bmp, .tiff, .avif, .heic].contains(type)
    }

    func probe(_ input: MediaInput) throws -> MediaInfo {
        let header = try StillHeader.read(input.source, type: input.type)
        var info = MediaInfo(type: input.type)
        let swap = header.orientation.swapsAxes
        info.width = swap ? header.height : header.width
        info.height = swap ? header.width : header.height
        info.orientation = header.orientation.rawValue
        info.frames = header.frames
        info.durationMs = header.durationMs
        info.loopCount = header.loopCount
        info.hasAlpha = header.hasAlpha
        info.codec = header.codec
        return info
    }

    func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        try decode(input, for: [request]).thumbnail(request)
    }

    /// One image per request from one decode of `input`, sized for the largest (see `ScaledStill`).
    func thumbnails(_ input: MediaInput, _ requests: [ThumbnailRequest]) throws -> [Image] {
        guard !requests.isEmpty else { return [] }
        let still = try decode(input, for: requests)
        return requests.map { still.thumbnail($0) }
    }

    /// The one decode `requests` need: shrunk on load to the largest scale any of them asks for (a single
    /// request: its own plan, exactly as before). Reported to `input.onDecode`.
    func decode(_ input: MediaInput, for requests: [ThumbnailRequest]) throws -> ScaledStill {
        switch input.type {
        case .jpeg:
            return try jpegDecode(input, requests)
        case .webp: return try webpDecode(input, requests)
        case .png: return try pngDecode(input, requests)
        case .avif, .heic: return try heifDecode(input, requests)
        case .animatedWebP:
            throw FlipbookError(.unsupported, "animated WebP is not decodable by this libavcodec (5.x); only still WebP is")
        default:
            let header = try StillHeader.read(input.source, type: input.type)
            try input.limits.checkPixels(width: header.width, height: header.height)
            let image = try input.source.withContiguousBytes {
                try LibAVStillCodec.decode($0, type: input.type, limits: input.limits)
            }
            input.report("libavcodec", image)
            let full = Size(width: image.width, height: image.height)
            let display = header.orientation.swapsAxes ? full.transposed : full
            let plan = ScaledStill.decodePlan(display: display, orientation: header.orientation, requests: requests)
            return ScaledStill(image: image, fullSize: full, orientation: header.orientation, colour: .done,
                               plannedScale: plan.scale, warnings: image.warnings)
        }
    }

    /// The JPEG path: EXIF orientation, shrink-on-load through libjpeg's DCT scaling with the file streamed
    /// (only the segments before the first scan are held in memory), the embedded EXIF thumbnail when it is
    /// big enough, and libavcodec for what libjpeg-turbo cannot read (12-bit, lossless).
    func jpegDecode(_ input: MediaInput, _ requests: [ThumbnailRequest]) throws -> ScaledStill {
        let source = input.source
        if let head = try JPEGMarkers.headerPrefix(source) {
            return try head.withUnsafeBytes { try jpegDecode(input, head: $0, requests) }
        }
        // Segments a walk cannot follow: the markers from the whole file, as JPEGMarkers tolerates junk.
        return try source.withContiguousBytes { try jpegDecode(input, head: $0, requests) }
    }

    /// `bytes`: the file from its start through at least the first SOS segment.
    private func jpegDecode(_ input: MediaInput, head bytes: UnsafeRawBufferPointer, _ requests: [ThumbnailRequest]) throws -> ScaledStill {
        let source = input.source, limits = input.limits
        let markers = JPEGMarkers(bytes)
        // Limits first, from our own reading of the SOF segment, before any decoder allocates.
        guard let w = markers.width, let h = markers.height else {
            throw FlipbookError(source.count < 1024 ? .truncated : .corrupt, "JPEG has no frame header (SOF)")
        }
        try limits.checkPixels(width: w, height: h, what: "JPEG")
        let decoder = try JPEGStreamDecoder(source: source)
        let header: JPEGStreamDecoder.Header
        do {
            header = try decoder.readHeader()
        } catch let jpegError {
            return try libavFallback(input, requests, orientation: .up, jpegError: jpegError)
        }
        try limits.checkPixels(width: header.width, height: header.height, what: "JPEG")
        let exif = markers.exif.flatMap { EXIFInfo(tiff: UnsafeRawBufferPointer(rebasing: bytes[$0])) }
        let orientation = Orientation(exifValue: exif?.orientation)
        let full = Size(width: header.width, height: header.height)
        let display = orientation.swapsAxes ? full.transposed : full
        let plan = ScaledStill.decodePlan(display: display, orientation: orientation, requests: requests)

        // The writer colour-converted an embedded thumbnail of a CMYK image its own way (Photoshop's
        // differs from the main image's naive conversion by ~30 levels on pil_sample_cmyk.jpg): decode those.
        let isCMYK = header.isCMYK
        let profile = EmbeddedProfile.jpeg(bytes, markers: markers)
        // RGB/grey profiles apply to each finished thumbnail (fewest pixels); CMYK ones inside the decode.
        let colour: ScaledStill.Colour = isCMYK ? .done : .embedded(profile)
        if !isCMYK, let range = exif?.thumbnail, let exifStart = markers.exif?.lowerBound,
           let image = try? embeddedThumbnail(bytes, range: (exifStart + range.lowerBound)..<(exifStart + range.upperBound),
                                              full: full, plan: plan) {
            // The embedded thumbnail shows the whole main image: the plan's crop is in main-image pixels.
            input.report("libjpeg exif-thumbnail", image)
            return ScaledStill(image: image, fullSize: full, orientation: orientation, colour: colour, plannedScale: plan.scale)
        }

        let factors = TurboJPEG.scalingFactors.filter { $0.num <= $0.denom }
        let chosen = plan.shrinkOnLoad(from: factors.map { Double($0.num) / Double($0.denom) })
        let factor = factors.first { abs(Double($0.num) / Double($0.denom) - chosen) < 1e-9 } ?? factors[0]
        let decoded: Image, warning: String?
        do {
            (decoded, warning) = try decoder.decode(header, num: Int(factor.num), denom: Int(factor.denom), adobe: markers.adobe,
                                                    cmykProfile: isCMYK ? profile : nil)
        } catch let jpegError {
            return try libavFallback(input, requests, orientation: orientation, jpegError: jpegError)
        }
        input.report("libjpeg", decoded)
        // libjpeg rounds scaled sizes up; the last row/column then covers less than a full block and
        // comes out dark. Keep the rounded-down size, as libvips does.
        let exactW = max(1, header.width * Int(factor.num) / Int(factor.denom))
        let exactH = max(1, header.height * Int(factor.num) / Int(factor.denom))
        let trimmed = decoded.croppedTopLeft(width: min(exactW, decoded.width), height: min(exactH, decoded.height))
        return ScaledStill(image: trimmed, fullSize: full, orientation: orientation, colour: colour, plannedScale: plan.scale,
                           warnings: warning.map { [$0] } ?? [])
    }

    /// The EXIF thumbnail, decoded, if it covers the output at full resolution and has the main image's shape.
    private func embeddedThumbnail(_ bytes: UnsafeRawBufferPointer, range: Range<Int>, full: Size, plan: ThumbnailPlan) throws -> Image? {
        guard range.upperBound <= bytes.count else { return nil }
        let thumb = UnsafeRawBufferPointer(rebasing: bytes[range])
        let header = try TurboJPEG.header(thumb)
        guard header.width >= plan.output.width, header.height >= plan.output.height,
              abs(Double(header.width) / Double(header.height) - Double(full.width) / Double(full.height)) < 0.01
        else { return nil }
        let (image, warning) = try TurboJPEG.decode(thumb, header: header, factor: tjscalingfactorOne, adobe: false)
        return warning == nil ? image : nil
    }

    private func libavFallback(_ input: MediaInput, _ requests: [ThumbnailRequest], orientation: Orientation,
                               jpegError: Error) throws -> ScaledStill {
        try input.source.withContiguousBytes { bytes in
            let image: Image
            do {
                image = try LibAVStillCodec.decode(bytes, type: .jpeg, limits: input.limits)
            } catch let error as FlipbookError where error.code == .limitExceeded || error.code == .libraryUnavailable {
                throw error
            } catch {
                throw jpegError  // libjpeg's diagnosis is the more precise one
            }
            input.report("libavcodec", image)
            let full = Size(width: image.width, height: image.height)
            let display = orientation.swapsAxes ? full.transposed : full
            let plan = ScaledStill.decodePlan(display: display, orientation: orientation, requests: requests)
            return ScaledStill(image: image, fullSize: full, orientation: orientation,
                               colour: .alwaysConverted(EmbeddedProfile.jpeg(bytes)), plannedScale: plan.scale,
                               warnings: image.warnings)
        }
    }
}

import CTurboJPEG
private let tjscalingfactorOne = tjscalingfactor(num: 1, denom: 1)
