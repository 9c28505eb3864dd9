/// The x264 settings of Flipbook's defaults for an animation, applied by `GIFToVideo` when the caller left
/// the crf to Flipbook (`VideoConversionOptions.automaticTuning`) and asked for H.264 at the default preset
/// with no SSIM floor or target; a given `--crf` is used as it is, with x264's own analysis settings.
///
/// Chosen per GIF at its first frame, from what `GIFContent` measures there: the crf of its `Kind` (drawn
/// 26, shaded 25, photographic 24), chroma QP offset -4 (x264's `-tune animation` leaves -2) and, for GIFs
/// up to 256 KB, a more thorough analysis than the medium preset's (`baseAnalysis` for photographic GIFs,
/// `flatAnalysis` for drawn and shaded ones). Tuned on the tuning half of `make bench-gif`'s split only (`bench/gif_sweep.py --half
/// tuning --ref browser --s2`: 16 GIFs, against ffmpeg's `-tune animation` recipe at crf 23, scored
/// against Chromium's rendering; one run on a loaded shared machine, with SSIMULACRA2 over 8 evenly spaced
/// frame pairs a GIF, an option of the sweep since dropped: `--s2` now scores every pair):
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
/// These settings scored mean SSIM 0.9683 against the peer's 0.9578 and SSIMULACRA2 65.29 against 62.26
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

        /// The constant rate factor: the highest that kept each kind of the tuning half at the peer's quality.
        var crf: Int {
            switch self {
            case .drawn: 26
            case .shaded: 25
            case .photographic: 24
            }
        }
    }

    /// Flipbook's default settings for a GIF of `inputBytes` whose first frame measured `content`: the crf
    /// of its `Kind`, and the thorough analysis only up to `analysisBudget`. A GIF's size stands for the
    /// work of encoding it (its LZW data grows with pixels times frames), and the analysis costs its time in
    /// proportion while buying few bytes on large files: sample_big.gif (751 KB, 259 frames) took 1.6 s
    /// with it and 1.0 s without, and was 0.7% larger with it; partial_gif_decode.gif (716 KB) and
    /// photo-loop.gif (2 MB) were 6% and 3% smaller.
    static func automatic(inputBytes: Int, content: GIFContent) -> GIFTuning {
        let kind = Kind(content)
        let analysis = inputBytes > analysisBudget ? "" : kind == .photographic ? baseAnalysis : flatAnalysis
        return GIFTuning(crf: kind.crf, x264Params: [analysis, "chroma-qp-offset=-4"].filter { !$0.isEmpty }.joined(separator: ":"))
    }

    /// The analysis of photographic GIFs up to `analysisBudget`: uneven multi-hexagon motion search, subpixel
    /// refinement 9, trellis quantisation on every macroblock decision.
    static let baseAnalysis = "me=umh:subme=9:trellis=2"

    /// Drawn and shaded GIFs' analysis: subpixel refinement 10 (quarter-pel rate-distortion on every
    /// macroblock type), 16 reference frames (a sprite, a blinking cursor or a waving flag comes back to a
    /// picture several frames old) and every partition size (thin lines, text and flag edges).
    static let flatAnalysis = "me=umh:subme=10:trellis=2:ref=16:partitions=all"

    /// The largest GIF, in bytes, that gets the thorough analysis.
    static let analysisBudget = 256 << 10

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
