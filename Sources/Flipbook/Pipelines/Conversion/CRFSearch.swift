#if canImport(Glibc)
import Glibc
#endif

/// Chooses the crf per file from measured quality, as ab-av1's crf search does: encode, measure the SSIM
/// of the result against its own input frames (`QualityMeter`), and encode again at another crf while the
/// rule asks for it.
///
/// - Floor (`VideoConversionOptions.minimumSSIM`, or the format's `defaultFloor`): start at `crf`; while the SSIM is under
///   the floor, go lower, to the crf the measurements so far predict for the floor (at most three encodes,
///   at most `reach` steps down).
///   Easy files (logos, flat animation, photos) stay at the default crf; noise and fine detail get the
///   bits they need.
/// - Target (`targetSSIM`): the largest crf from 1 to 51 whose SSIM reaches the target, bracketed from
///   `crf` and narrowed by interpolation (at most six encodes).
///
/// Predictions work on SSIM in decibels, -10 log10(1 - SSIM), which falls roughly linearly with the crf.
/// Every step depends only on the measurements, which are deterministic, so the chosen encode is too.
public struct CRFSearch: Sendable {
    /// The floor used when `VideoConversionOptions.minimumSSIM` is not given, on `QualityMeter`'s scale.
    /// Animated WebP and APNG (true colour, often lossless): 0.97, chosen when uniform noise scored 0.936
    /// against Pillow at crf 23 and this floor took it to a crf where it held 0.95. Since `FrameEncoder`
    /// takes chroma as 2x2 means, the same noise holds 0.962 at crf 23 (0.980 on this scale) and is not
    /// encoded again. GIF: none; its defaults are
    /// `GIFTuning`'s (a crf per kind of picture, chroma QP offset -4, thorough analysis), whose worst GIF in
    /// `make bench-gif` (moon_impact.gif) is 0.003 SSIM under the peer without any measuring. (With crf 28, 0.955 with a
    /// reach of 3 crf steps (`floorReach(for:)`) lifted moon_impact.gif, 0.015 under the peer in the browser
    /// there, while a GIF's dithering, which reads as noise to SSIM, cost at most 3 steps, and every file
    /// paid a decode for the measuring; `--min-ssim 0.955 --crf 28` reproduces it.)
    public static func defaultFloor(for type: MediaType) -> Double? { type == .gif ? nil : 0.97 }

    /// How many crf steps under the starting crf the default floor may go.
    static func floorReach(for type: MediaType) -> Int { type == .gif ? 3 : 10 }

    /// The least SSIM gain, in dB per crf step, for which the default floor keeps a lower-crf encode that
    /// still misses the floor. GIF: 0.4. Measured from crf 28: moon_impact.gif gains 0.64 dB a step (and
    /// passes), while dithered or noisy GIFs gain 0.02-0.31 (photo-loop 0.19, partial_gif_decode 0.31,
    /// dispose_bgnd_transparency 0.02) and keep the peer's look at crf 28 anyway; they keep the first
    /// encode. Other formats: 0 (noise WebP gains 0.35 and needs it).
    static func minimumGain(for type: MediaType) -> Double { type == .gif ? 0.4 : 0 }

    /// x264's crf range for 8-bit video.
    public static let crfRange = 1...51
    static let floorPasses = 3
    static let targetPasses = 6
    /// dB per crf step before two measurements give the file's own slope.
    static let defaultSlope = -0.3

    enum Rule { case floor(Double), target(Double) }
    let rule: Rule
    /// The floor never takes a file more than this many steps under the starting crf (x264's file size
    /// roughly doubles every 6 steps): content whose SSIM stays low at any crf gets the best of that range.
    let reach: Int
    /// dB per crf step under which a failing lower-crf trial is not worth its bytes (floor only).
    let minimumGain: Double
    private(set) var trials: [(crf: Int, ssim: Double)] = []

    init(rule: Rule, reach: Int = 10, minimumGain: Double = 0) { (self.rule, self.reach, self.minimumGain) = (rule, reach, minimumGain) }

    static func decibels(_ ssim: Double) -> Double { -10 * log10(max(1e-10, 1 - ssim)) }

    /// Checks a target or floor: an SSIM strictly between 0 and 1.
    public static func validate(_ ssim: Double, name: String) throws {
        guard ssim.isFinite, ssim > 0, ssim < 1 else {
            throw FlipbookError(.invalidArgument, "\(name) must be an SSIM between 0 and 1 (exclusive), not \(ssim)")
        }
    }

    var goal: Double {
        switch rule { case .floor(let s), .target(let s): s }
    }

    /// The crf predicted to give the goal, from the two trials nearest to it (or the one trial and the
    /// default slope).
    func predicted() -> Int {
        let goalDB = Self.decibels(goal)
        let sorted = trials.sorted { abs(Self.decibels($0.ssim) - goalDB) < abs(Self.decibels($1.ssim) - goalDB) }
        let a = sorted[0]
        var slope = Self.defaultSlope
        if sorted.count > 1, sorted[1].crf != a.crf {
            let b = sorted[1]
            slope = (Self.decibels(b.ssim) - Self.decibels(a.ssim)) / Double(b.crf - a.crf)
            slope = min(-0.05, max(-2, slope))
        }
        let crf = Double(a.crf) + (goalDB - Self.decibels(a.ssim)) / slope
        return Int(crf.rounded(.down))
    }

    /// Records a trial; returns the next crf to try, or nil when the search is over.
    mutating func next(after crf: Int, ssim: Double) -> Int? {
        trials.append((crf, ssim))
        let passing = trials.filter { $0.ssim >= goal }.map(\.crf)
        let failing = trials.filter { $0.ssim < goal }.map(\.crf)
        switch rule {
        case .floor:
            if !passing.isEmpty || trials.count >= Self.floorPasses || !gainsEnough { return nil }
            let lowest = failing.min()!
            let bottom = max(Self.crfRange.lowerBound, trials[0].crf - reach)
            guard lowest > bottom else { return nil }
            return max(bottom, min(lowest - 1, predicted()))
        case .target:
            if trials.count >= Self.targetPasses { return nil }
            let low = passing.max() ?? Self.crfRange.lowerBound - 1  // largest crf known to pass
            let high = failing.min() ?? Self.crfRange.upperBound + 1  // smallest crf known to fail
            if high - low <= 1 { return nil }
            return min(high - 1, max(low + 1, predicted()))
        }
    }

    /// Whether the latest trial gained at least `minimumGain` dB per crf step over the first.
    var gainsEnough: Bool {
        guard trials.count > 1, let first = trials.first, let last = trials.last, last.crf != first.crf else { return true }
        return (Self.decibels(last.ssim) - Self.decibels(first.ssim)) / Double(first.crf - last.crf) >= minimumGain
    }

    /// The trial to keep: the largest crf that meets the goal; else the best-scoring one, or for a floor
    /// whose lower crf gained too little, the first.
    var chosen: Int {
        if let best = trials.filter({ $0.ssim >= goal }).map(\.crf).max() { return best }
        if case .floor = rule, !gainsEnough { return trials[0].crf }
        return trials.max { $0.ssim < $1.ssim }!.crf
    }

    /// Runs `encode` (one encode at the options' crf, SSIM measured) as the options' rule asks and returns
    /// the chosen result, with its crf, SSIM and the number of encodes.
    static func run(_ options: VideoConversionOptions, type: MediaType, encode: (VideoConversionOptions) throws -> VideoConversionResult) throws
        -> VideoConversionResult
    {
        let rule: Rule
        if options.codec != .h264 {
            // The floor and the search are tuned for x264's crf scale; other encoders use `crf` as given.
            if options.targetSSIM != nil { throw FlipbookError(.invalidArgument, "an SSIM target needs the h264 codec, not \(options.codec)") }
            var fixed = options
            fixed.minimumSSIM = nil
            fixed.automaticFloor = false
            return try encode(fixed)
        }
        if let target = options.targetSSIM {
            try validate(target, name: "the SSIM target")
            rule = .target(target)
        } else if let floor = options.minimumSSIM ?? (options.automaticFloor ? defaultFloor(for: type) : nil) {
            try validate(floor, name: "the SSIM floor")
            rule = .floor(floor)
        } else {
            return try encode(options)
        }
        guard crfRange.contains(options.crf) else {
            throw FlipbookError(.invalidArgument, "crf must be \(crfRange.lowerBound) to \(crfRange.upperBound), not \(options.crf)")
        }
        let automatic = options.minimumSSIM == nil
        var search = CRFSearch(rule: rule, reach: automatic ? floorReach(for: type) : 10,
                               minimumGain: automatic ? minimumGain(for: type) : 0)
        var pass = options
        if case .floor(let floor) = rule { pass.minimumSSIM = floor }  // so each encode measures
        var kept: VideoConversionResult?
        var encodes = 0
        while true {
            let result = try encode(pass)
            encodes += 1
            guard let ssim = result.measuredSSIM else { return result }  // nothing measured (no frames compared)
            let next = search.next(after: pass.crf, ssim: ssim)
            if search.chosen == pass.crf { kept = result }
            guard let crf = next else { break }
            pass.crf = crf
        }
        kept!.encodes = encodes
        return kept!
    }
}
