/// The x264 settings of Flipbook's defaults for an animation, applied by `GIFToVideo` when the caller left
/// the crf to Flipbook (`VideoConversionOptions.automaticTuning`) and asked for H.264 at the default preset
/// with no SSIM floor or target; a given `--crf` is used as it is, with x264's own analysis settings.
///
/// crf 26, chroma QP offset -4 (x264's `-tune animation` leaves -2), and for GIFs up to 256 KB a more thorough analysis than the
/// medium preset's (uneven multi-hexagon motion search, subpixel refinement 9, trellis on every
/// macroblock decision). Against ffmpeg's `-tune animation` recipe at crf 23, scored against Chromium's
/// rendering on `make bench-gif`'s 24 GIFs (`bench/gif_sweep.py`, one run on the shared machine):
///
/// | settings | bytes (geomean) | mean SSIM | worst GIF | encode time |
/// |---|---|---|---|---|
/// | peer | 1.000 | 0.9446 | | 20.0 s |
/// | crf 23 (before) | 0.891 | 0.9604 | -0.0019 | 23.5 s |
/// | crf 26, chroma -4 | 0.807 | 0.9592 | -0.0087 | 25.4 s |
/// | crf 26, chroma -4, analysis (these) | 0.782 | 0.9595 | -0.0080 | 33.3 s |
/// | crf 27, chroma -5, analysis | 0.751 | 0.9588 | -0.0110 | |
/// | crf 28, chroma -6 | 0.731 | 0.9580 | -0.0153 | 24.5 s |
///
/// The worst GIF is always moon_impact.gif (smooth photographic luma). The analysis settings pay for
/// themselves in quality on flat graphics: pixel-art.gif scores SSIMULACRA2 89.7 (the peer 89.9) at crf 26
/// with them, 88.8 at crf 23 without. Measured and not chosen: a split by content (flat 2x2 blocks of the
/// first frame): dithered photographic GIFs keep the peer's SSIMULACRA2 only at crf 24 (photo-loop 57.7
/// against 57.1, 0.93x the bytes; at crf 26 54.9, 0.67x), which took the geometric mean over 0.8x;
/// psy-rd 1.0 on them cost 16% more bytes for no SSIMULACRA2; b-adapt 2 with 8 B-frames made logos larger.
///
/// The frontier per preset (`make bench-gif-frontier`: each preset with chroma -4, at medium with the
/// analysis up to 256 KB, at the highest crf that keeps the peer's mean SSIM, mean SSIMULACRA2 and every
/// GIF within 0.01 SSIM; wall time of one process per file against the peer's, alternating, same run,
/// load average 1-3; two runs of the same peer command differed by 5%):
///
/// | preset | crf | bytes (geomean) | mean SSIM | mean S2 | wall vs peer |
/// |---|---|---|---|---|---|
/// | peer (medium, crf 23) | | 1.000 | 0.9446 | 44.22 | 1.00x |
/// | ultrafast | 24 | 1.526 | 0.9603 | 55.20 | 0.46x |
/// | superfast | 24 | 1.322 | 0.9605 | 55.38 | 0.55x |
/// | veryfast | 25 | 0.902 | 0.9575 | 53.27 | 0.55x |
/// | faster | 26 | 0.797 | 0.9579 | 53.40 | 0.64x |
/// | fast | 26 | 0.809 | 0.9591 | 54.31 | 0.72x |
/// | medium, analysis (these) | 26 | 0.784 | 0.9594 | 54.45 | 0.82x |
/// | slow | 26 | 0.787 | 0.9594 | 54.48 | 0.99x |
///
/// At crf 27 every preset from faster to slow put a GIF more than 0.01 under the peer (moon_impact.gif or
/// logo.gif). Only medium, slow and faster (by 0.003) stay under 0.8x the bytes; none reaches half the
/// peer's wall time, because a small GIF's process costs ~43 ms CPU against the peer's ~60 ms, most of it
/// loading libavcodec and libavformat (`make bench-start-cost`). Measured and not chosen: faster everywhere
/// (0.65x the peer's wall in a second run, but pixel-art.gif +13% and led7.gif +11% bytes over these);
/// x264's fast preset from 16 M pixels x frames (0.80x wall against these 0.82x in the same run, within its
/// 5% noise): on sample_big.gif, the bench's one such GIF, fast wrote fewer bytes than medium at the same
/// quality (0.744x the peer's against 0.753x) for a fifth less CPU, but on three larger synthetic GIFs
/// (`bench/gif_large_presets.sh`: ffmpeg testsrc2 480x480 x 400 frames, mandelbrot 400x300 x 200, a
/// 16-colour cellular automaton 640x480 x 300) it cost 3.5%, 3.5% and 15% more bytes at the same SSIM, for
/// 15% and 14% less CPU on the first two and none on the third.
struct GIFTuning: Sendable, Equatable {
    /// The constant rate factor.
    var crf: Int
    /// x264 settings added after Flipbook's own (`FrameEncoder`), before any `VideoConversionOptions.x264Params`.
    var x264Params: String

    /// What kind of picture a GIF holds, from its first frame's `GIFContent.flatness`.
    enum Kind: String, Sendable {
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
        let analysis = inputBytes > analysisBudget ? "" : kind == .drawn ? drawnAnalysis : baseAnalysis
        return GIFTuning(crf: kind.crf, x264Params: [analysis, "chroma-qp-offset=-4"].filter { !$0.isEmpty }.joined(separator: ":"))
    }

    /// The analysis of every GIF up to `analysisBudget`: uneven multi-hexagon motion search, subpixel
    /// refinement 9, trellis quantisation on every macroblock decision.
    static let baseAnalysis = "me=umh:subme=9:trellis=2"

    /// Drawn GIFs' analysis: subpixel refinement 10 (quarter-pel rate-distortion on every macroblock type),
    /// 16 reference frames (a sprite or a blinking cursor comes back to a picture several frames old) and
    /// every partition size (thin lines and text edges).
    static let drawnAnalysis = "me=umh:subme=10:trellis=2:ref=16:partitions=all"

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
