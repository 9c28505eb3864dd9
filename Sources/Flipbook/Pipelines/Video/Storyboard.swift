import CFFmpeg

/// Seek-bar preview sprites: JPEG sheets of tiles plus a WebVTT file whose cues point at
/// `sheet.jpg#xywh=x,y,w,h` (the format video.js, Plyr, JW Player and Shaka read).
public struct Storyboard: Sendable {
    /// One WebVTT cue: from `startMs` to `endMs` the seek bar shows the tile at (`x`, `y`), `width` x
    /// `height`, of sheet `sheet` (0-based).
    public struct Cue: Sendable, Equatable {
        /// When the cue starts, in ms from the video's start.
        public var startMs: Int
        /// When the cue ends, in ms.
        public var endMs: Int
        /// Which sheet (0-based) holds the tile.
        public var sheet: Int
        /// The tile's rectangle on its sheet, in pixels (the `#xywh=` of the cue's URL).
        public var x: Int, y: Int, width: Int, height: Int
    }

    /// Sheet images, JPEG.
    public var sheets: [EncodedImage]
    /// One cue per tile, in time order.
    public var cues: [Cue]
    /// The video's duration, which the last cue reaches.
    public var durationMs: Int

    /// The WebVTT text; sheet `i` is referred to as `sheetName(i)`.
    public func webVTT(sheetName: (Int) -> String = { "sheet-\($0).jpg" }) -> String {
        func time(_ ms: Int) -> String {
            let h = ms / 3_600_000, m = ms / 60_000 % 60, s = ms / 1000 % 60, f = ms % 1000
            func pad(_ v: Int, _ n: Int) -> String { String(repeating: "0", count: max(0, n - String(v).count)) + String(v) }
            return "\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(f, 3))"
        }
        var text = "WEBVTT\n\n"
        for cue in cues {
            text += "\(time(cue.startMs)) --> \(time(cue.endMs))\n"
            text += "\(sheetName(cue.sheet))#xywh=\(cue.x),\(cue.y),\(cue.width),\(cue.height)\n\n"
        }
        return text
    }
}

extension Storyboard {
    /// Decodes the video forward once, keeping the frame on screen at each tile's time (the last frame whose
    /// time is at or before it), and lays the tiles out in sheets. Each decoded frame is decoded and scaled at
    /// most once, so dense storyboards (more tiles than frames) cost one pass; a seek happens only when the
    /// next tile lies more than `seekGap` seconds past the last decoded frame. Memory: two decoded frames plus
    /// the tiles and the sheet being filled.
    public static func make(_ input: MediaInput, options: StoryboardOptions = StoryboardOptions()) throws -> Storyboard {
        try build(input, options: options).board
    }

    /// Tiles further apart than this (seconds) are reached by seeking instead of decoding through.
    static let seekGap = 2.0

    /// `make`, also saying how many frames it decoded and scaled (the tests check that none is done twice).
    static func build(_ input: MediaInput, options: StoryboardOptions) throws -> (board: Storyboard, decoded: Int, rendered: Int) {
        try options.validate()
        let av = try LibAV.api()
        // Frame threads: dense storyboards are one forward pass; sparse ones lose at most a frame or two in
        // flight at each seek.
        let reader = try VideoReader.spanning(input, maxPixelSize: options.tileSize, for: "storyboards", forwardPass: true,
                                           threads: options.decodeThreads)
        let plan = Plan(durationSeconds: reader.durationSeconds, options: options)
        // Tiles are a few percent of the frame: deblocking averages away (as for posters, see PosterExtractor).
        let par = reader.stream.pointee.codecpar.pointee
        if max(Int(par.width), Int(par.height)) >= 4 * options.tileSize { reader.codec.pointer.pointee.skip_loop_filter = AVDISCARD_ALL }
        let times = plan.starts.map { Double($0) / 1000 }
        var tiles: [Image] = []
        tiles.reserveCapacity(times.count)
        var rendered = 0
        // The frame on screen before the one just decoded: its tile once scaled, else the frame itself.
        let held = try Frame()
        var haveHeld = false, heldTile: Image?, gap = 0.0
        var lastSeconds: Double?, lastSeek: Double?
        // Seek across a long gap, once per target (a seek lands on the keyframe before it, maybe long before).
        func shouldSeek(to t: Double) -> Bool {
            guard let lastSeconds, let lastSeek else { return true }
            return t - lastSeconds > seekGap && t > lastSeek
        }
        func heldPicture() throws -> Image {
            if let heldTile { return heldTile }
            let tile = try reader.renderer.render(held.pointer)
            rendered += 1
            heldTile = tile
            return tile
        }
        // A frame that a tile will likely show (the next tile is due within two frame gaps) is scaled at
        // once and not kept: holding 8K frames past the decoder's own use costs 50 MB each.
        func hold(_ frame: UnsafeMutablePointer<AVFrame>, likelyShown: Bool) throws {
            av.av_frame_unref(held.pointer)
            haveHeld = true
            heldTile = nil
            if likelyShown {
                heldTile = try reader.renderer.render(frame)
                rendered += 1
            } else {
                try LibAV.check(av.av_frame_ref(held.pointer, frame), "av_frame_ref")
            }
        }
        decoding: while tiles.count < times.count {
            if shouldSeek(to: times[tiles.count]) {
                lastSeek = times[tiles.count]
                try reader.seek(to: times[tiles.count])
                av.av_frame_unref(held.pointer)
                haveHeld = false
                heldTile = nil
            }
            while let decoded = try reader.nextFrame() {
                let frame = decoded.pointer  // borrowed for this pass of the loop; `decoded` owns it
                if options.isCancelled?() == true { throw FlipbookError(.cancelled, "the storyboard was cancelled") }
                guard let s = reader.seconds(frame) else {
                    // No timestamp: it stands for the next tile.
                    try hold(frame, likelyShown: true)
                    tiles.append(try heldPicture())
                    if tiles.count == times.count { break decoding }
                    continue
                }
                if let lastSeconds, s > lastSeconds { gap = s - lastSeconds }
                lastSeconds = s
                // Tiles before this frame's time show the held frame (or this one, if it is the first).
                var heldIsThis = false
                while tiles.count < times.count, times[tiles.count] + 1e-6 < s {
                    if !haveHeld {
                        try hold(frame, likelyShown: true)
                        heldIsThis = true
                    }
                    tiles.append(try heldPicture())
                }
                if tiles.count == times.count { break decoding }
                if !heldIsThis { try hold(frame, likelyShown: times[tiles.count] - s < 2 * gap) }
                if shouldSeek(to: times[tiles.count]) { continue decoding }
            }
            // End of the stream: the last frame stays on screen for every remaining tile.
            guard haveHeld || !tiles.isEmpty else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
            while tiles.count < times.count { tiles.append(haveHeld ? try heldPicture() : tiles.last!) }
        }
        return (try assemble(tiles, plan: plan, options: options), reader.framesDecoded, rendered)
    }

    /// When the tiles are taken: `count` start times in ms, evenly spread, the first at 0.
    struct Plan {
        let durationMs: Int
        let starts: [Int]

        init(durationSeconds: Double, options: StoryboardOptions) {
            durationMs = Int((durationSeconds * 1000).rounded())
            let count = min(options.maxTiles, max(1, options.count ?? Int((durationSeconds / options.interval).rounded(.up))))
            starts = FrameSelector.evenlySpaced(count: count).times(durationMs: durationMs) ?? []
        }
    }

    /// Lays `tiles` (one per planned start) out in sheets and writes the cues.
    static func assemble(_ tiles: [Image], plan: Plan, options: StoryboardOptions) throws -> Storyboard {
        let count = plan.starts.count
        guard tiles.count == count, let first = tiles.first else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        let tileW = first.width, tileH = first.height
        let columns = max(1, min(options.columns, options.maxSheetSide / tileW, count))
        let rowsPerSheet = max(1, options.maxSheetSide / tileH)
        let perSheet = columns * rowsPerSheet
        var sheets: [EncodedImage] = []
        var cues: [Cue] = []
        for firstIndex in stride(from: 0, to: count, by: perSheet) {
            let n = min(perSheet, count - firstIndex)
            let rows = (n + columns - 1) / columns
            var sheet = Image(width: columns * tileW, height: rows * tileH, channels: 3)
            for k in 0..<n {
                let tile = tiles[firstIndex + k]
                let x = (k % columns) * tileW, y = (k / columns) * tileH
                // Tiles can differ by a pixel if the stream changes size; copy what fits.
                for row in 0..<min(tileH, tile.height) {
                    let src = row * tile.width * tile.channels
                    let dst = ((y + row) * sheet.width + x) * 3
                    for col in 0..<min(tileW, tile.width) {
                        for c in 0..<3 { sheet.pixels[dst + col * 3 + c] = tile.pixels[src + col * tile.channels + c] }
                    }
                }
                let index = firstIndex + k
                let end = index + 1 < count ? plan.starts[index + 1] : plan.durationMs
                cues.append(Cue(startMs: plan.starts[index], endMs: end, sheet: sheets.count, x: x, y: y, width: tileW, height: tileH))
            }
            sheets.append(try EncodedImage(image: sheet, format: .jpeg, quality: options.quality))
        }
        return Storyboard(sheets: sheets, cues: cues, durationMs: plan.durationMs)
    }
}
