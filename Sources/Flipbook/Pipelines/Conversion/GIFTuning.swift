/// The x264 settings of Flipbook's defaults for an animation, applied by `GIFToVideo` when the caller left
/// the crf to Flipbook (`VideoConversionOptions.automaticTuning`) and asked for H.264 at the default preset
/// with no SSIM floor or target; a given `--crf` is used as it is, with x264's own analysis settings.
///
/// Chosen per GIF at its first frame, from what `GIFContent` measures there and the size of the work (file
/// bytes, pixels times frames): the crf of its `Kind` (drawn 28, shaded 27, photographic 25), drawn GIFs'
/// `qcomp` 0.75, chroma QP offset -4 (x264's `-tune animation` leaves -2) and, for GIFs up to 256 KB, a more
/// thorough analysis than the medium preset's (`baseAnalysis` for photographic GIFs, `flatAnalysis` for
/// drawn and shaded ones, with an exhaustive motion search over `Kind.searchRange` up to `searchBudget`
/// pixels times frames).
///
/// The crfs were chosen by cross-validation (issue 46; `bench/gif_cv.py FLIPBOOK --dir DIR --crfs
/// drawn=25-28,shaded=24-27,photo=23-26 --s2-instants 6`, the GIFs of `make bench-gif` plus 35 real GIFs of
/// other projects' suites, 20 random halves; docs/benchmarks.md), after `FrameEncoder` took chroma as 2x2
/// means: the rule (fewest bytes among the settings that meet the targets there, else the fewest GIFs that
/// miss them) picked shaded 27 and photographic 25 on every half and drawn 28 on 19 of 20, at 0.720x the
/// peer's bytes held out (spread 0.04), every held-out GIF within 0.005 SSIM of the peer on all 20 halves
/// (with `Kind.searchRange` and 8 references since: the same choices, 0.727x, the same 20 of 20). Those are
/// also what the rule picks on all 74 GIFs, and what it picks there from the wider ranges
/// drawn 27-30, shaded 26-28, photographic 24-26; from those ranges some halves picked drawn 29 or 30 and
/// lost 0.006-0.010 SSIM on gifsicle's logo.gif held out, so the ranges stop at 28. (With the earlier
/// bicubic chroma no crf per kind kept every GIF within 0.005: the rule picked 27/26/25 and a dithered video
/// clip was 0.008 under the peer.) The same rule against the peer's recipe given Chromium's frames of the 4
/// GIFs ffmpeg decodes wrongly (`--peer-on-reference`, where the peer's quality is of the right picture) picks
/// the same crfs on all 74 GIFs: 0.692x held out, its pooled held-out SSIM and SSIMULACRA2 0.0011 and 0.58
/// over the peer's, and wider ranges down to drawn 22 and shaded 23 change nothing.
///
/// The rest was tuned on the tuning half of `make bench-gif`'s split only (`bench/gif_sweep.py --half tuning --ref browser --s2`: 16
/// GIFs, against ffmpeg's `-tune animation` recipe at crf 23, scored against Chromium's rendering; one run on
/// a loaded shared machine, with SSIMULACRA2 over 8 evenly spaced frame pairs a GIF, an option of the sweep
/// since dropped: `--s2` now scores every pair):
///
/// | settings | bytes (geomean) | largest SSIM shortfall |
/// |---|---|---|
/// | crf 26 for every GIF (before) | 0.825 | moon_impact.gif -0.0078 |
/// | photographic crf 24, every other GIF 26 | 0.872 | -0.0032 |
/// | drawn 26 with `flatAnalysis`, shaded 25, photographic 24 | 0.840 | -0.0032 |
/// | the same with drawn GIFs at crf 27 | 0.813 | |
///
/// Shaded GIFs got `flatAnalysis` too in a later round (`--half tuning --ref browser --s2`, B-frames at a
/// constant rate by then): the tuning half's two shaded GIFs went from 0.80x to 0.78x (fire.gif) and 0.93x
/// to 0.76x (002-cropresize.gif, whose parts move back over earlier pictures) at a higher SSIM and
/// SSIMULACRA2 each, the half from 0.859x to 0.848x at the same means, for 1% more summed encode time (the
/// 278x183 four-frame flags of the held-out half take about 13 ms more each). The same for photographic
/// GIFs changed only moon_impact.gif (0.83x to 0.82x, 0.0003 less SSIM), so they keep `baseAnalysis`.
///
/// A third round (same command, constant-rate B-frames): drawn GIFs' qcomp from x264's 0.6 to 0.75 took the
/// half from 0.848x to 0.799x; it lowered the mean SSIM by 0.0005 and SSIMULACRA2 by 0.35 (without the two
/// GIFs ffmpeg disposes wrongly, 0.9685 / 72.57 against the peer's 0.9679 / 72.56: level), where drawn crf 27
/// bought 0.821x for the same loss. 0.7 gave 0.814x at SSIMULACRA2 65.00, 0.8 0.786x at 64.66. Then
/// `me=esa:merange=32` on drawn and shaded GIFs up to 2 Mi pixel-frames: 0.790x at SSIMULACRA2 64.95 (from
/// 64.81), for 15-20% more CPU on such GIFs (about 17 ms on a 278x183 four-frame flag) and 3% over the bench;
/// on every GIF it gave 0.830x for 1.6x the time. Not taken in that round: qcomp 0.5 for shaded and
/// photographic GIFs (0.841x; photo-loop.gif 5% smaller but under the peer's SSIM), `me=tesa`, subme 11 and
/// no fast P-skip on every GIF (0.822x for 4-5 times the encode time), psy-rd 0.2 and aq-strength 0.8
/// (0.818x and 0.812x, but quality lost on every kind).
///
/// The first two rounds' settings scored mean SSIM 0.9683 against the peer's 0.9578 and SSIMULACRA2 65.29 against 62.26
/// there (the peer's mean is pulled down by its disposal of dispose_bgnd.gif).
/// One crf for every GIF left the dithered photographs and smooth shading under the peer (moon_impact.gif
/// -0.0078 SSIM; on real GIFs from other projects' suites, a 400x400 rotating globe 3.7 SSIMULACRA2 points
/// under) while flat drawings had quality to spare. Flatness separates them cleanly on every GIF measured:
/// drawn 0.89-1.00, flags and globes 0.61-0.81, photographic 0.10-0.40. Measured and not chosen: x264's
/// exhaustive analysis (tesa, 16 references, every partition, merange 32, no fast P-skip) at 0.755x the
/// bytes but three times the encode time (the target is the peer's wall time); no MB-tree (better on
/// dithered loops, worse on moon_impact); B-frames for every GIF, which saved 10-25% on logos and dithered
/// photos but cost ffmpeg's per-packet durations where frames last unalike (`FrameEncoder`; GIFs whose
/// frames all last alike get them). Every GIF's row on both halves: `make bench-gif`.
struct GIFTuning: Sendable, Equatable {
    /// The constant rate factor.
    var crf: Int
    /// x264 settings added after Flipbook's own (`FrameEncoder`), before any `VideoConversionOptions.x264Params`.
    var x264Params: String

    /// What kind of picture a GIF holds, from its first frame's `GIFContent.flatness`.
    enum Kind: Sendable {
        /// Flatness at least 0.9: logos, pixel art, stickers, screen recordings, LED signs.
        case drawn
        /// Flatness 0.5 to 0.9: rendered or lit graphics, gradients over flat areas (cogs, flags, globes).
        case shaded
        /// Flatness under 0.5: photographic frames dithered to a palette.
        case photographic

        init(_ content: GIFContent) {
            self = content.flatness >= 0.9 ? .drawn : content.flatness >= 0.5 ? .shaded : .photographic
        }

        /// The constant rate factor, chosen by cross-validation (see the type's documentation).
        var crf: Int {
            switch self {
            case .drawn: 28
            case .shaded: 27
            case .photographic: 25
            }
        }

        /// x264's `qcomp` when not its default 0.6, which also sets MB-tree's strength (5 x (1 - qcomp)). At
        /// 0.6 MB-tree gives a drawn GIF's first frame far more bits than its quality needs, because every
        /// later frame copies its unchanged areas: 0.75 keeps the tuning half at the peer's quality for 5.8%
        /// fewer bytes over the half (screen-recording.gif 0.85x to 0.63x). Shaded and photographic GIFs,
        /// whose frames change everywhere, grow with it (fire.gif 0.78x to 0.83x, photo-loop.gif 1.26x to 1.33x
        /// at 0.7), so they keep x264's 0.6.
        var qcomp: Double? {
            self == .drawn ? 0.75 : nil
        }

        /// The range of the exhaustive motion search (`me=esa`) a small GIF of this kind gets, in pixels;
        /// nil for photographic GIFs, which keep `patternSearch`. Drawn GIFs' sprites and scrolled text jump
        /// far: bench/pixel-art.gif keeps 88.64 SSIMULACRA2 at 24 (89.07 at 32, 88.12 at 16, 87.80 with umh;
        /// the peer 89.86). Flags and globes move a few pixels a frame, so 16 finds what 32 did on shaded
        /// GIFs. Cross-validated with `ref=8` in `flatAnalysis` (`bench/gif_cv.py`'s `base` against
        /// `esa32-ref16`, the settings before, at the shipped crfs; docs/benchmarks.md): 0.725x the peer's bytes
        /// held out against 0.719x, the same halves meeting every quality target, for 0.898x the CPU and
        /// 0.832x the instructions on those GIFs (`bench/gif_variant_time.py`).
        var searchRange: Int? {
            switch self {
            case .drawn: 24
            case .shaded: 16
            case .photographic: nil
            }
        }
    }

    /// Flipbook's default settings for a GIF of `inputBytes` whose first frame measured `content`: the crf
    /// and rate-control curve of its `Kind`, and the thorough analysis only up to `analysisBudget`. A GIF's
    /// size stands for the work of encoding it (its LZW data grows with pixels times frames), and the
    /// analysis costs its time in proportion while buying few bytes on large files: sample_big.gif (751 KB,
    /// 259 frames) took 1.6 s with it and 1.0 s without, and was 0.7% larger with it; partial_gif_decode.gif
    /// (716 KB) and photo-loop.gif (2 MB) were 6% and 3% smaller. Drawn and shaded GIFs of at most
    /// `searchBudget` pixels times frames (`pixelFrames`, nil when the count is not known before decoding, as
    /// for a streamed GIF) also get the exhaustive motion search (`me=esa`, which tries every vector within
    /// `Kind.searchRange` instead of umh's pattern and finds the far jumps of sprites and scrolled text).
    static func automatic(inputBytes: Int, pixelFrames: Int? = nil, content: GIFContent) -> GIFTuning {
        let kind = Kind(content)
        var analysis = inputBytes > analysisBudget ? "" : kind == .photographic ? baseAnalysis : flatAnalysis
        if !analysis.isEmpty {
            let range = pixelFrames.map { $0 <= searchBudget } == true ? kind.searchRange : nil
            analysis = (range.map { "me=esa:merange=\($0)" } ?? patternSearch) + ":" + analysis
        }
        let curve = kind.qcomp.map { "qcomp=\($0)" } ?? ""
        return GIFTuning(crf: kind.crf, x264Params: [analysis, curve, "chroma-qp-offset=-4"].filter { !$0.isEmpty }.joined(separator: ":"))
    }

    /// The analysis of photographic GIFs up to `analysisBudget`: subpixel refinement 9, trellis quantisation on
    /// every macroblock decision, with `patternSearch`.
    static let baseAnalysis = "subme=9:trellis=2"

    /// Drawn and shaded GIFs' analysis: subpixel refinement 10 (quarter-pel rate-distortion on every
    /// macroblock type), 8 reference frames (a sprite, a blinking cursor or a waving flag comes back to a
    /// picture several frames old) and every partition size (thin lines, text and flag edges). 16 references
    /// were 0.1% smaller over the small drawn and shaded GIFs for about 5% more CPU there.
    static let flatAnalysis = "subme=10:trellis=2:ref=8:partitions=all"

    /// The largest GIF, in bytes, that gets the thorough analysis.
    static let analysisBudget = 256 << 10

    /// The motion search of every other analysed GIF: uneven multi-hexagon (`me=umh`), x264's default range.
    static let patternSearch = "me=umh"

    /// The most pixels times frames (2 Mi: 40 frames of 256x200) that get the exhaustive motion search, whose
    /// cost grows in proportion to them.
    static let searchBudget = 2 << 20

    /// Whether `options` leave the settings to Flipbook: automatic tuning on, H.264 at x264's default
    /// preset, no SSIM floor or target (their crf search starts from `crf` as given).
    static func applies(to options: VideoConversionOptions) -> Bool {
        options.automaticTuning && options.codec == .h264 && options.preset == VideoConversionOptions().preset
            && options.minimumSSIM == nil && options.targetSSIM == nil
    }

    /// `options` with these settings (`VideoConversionOptions.x264Params` still last, so they can override).
    func applied(to options: VideoConversionOptions) -> VideoConversionOptions {
        var tuned = options
        tuned.crf = crf
        tuned.x264Params = [x264Params, options.x264Params ?? ""].filter { !$0.isEmpty }.joined(separator: ":")
        return tuned
    }
}
