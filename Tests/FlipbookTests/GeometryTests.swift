import Testing
import FlipbookTestSupport
@testable import Flipbook

@Suite(.offPool) struct GeometryTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let source: Size, size: Int, fit: Fit, upscale: Bool, output: Size, crop: (Double, Double)
        var testDescription: String { "\(source) \(fit) \(size) up=\(upscale)" }
    }

    static let cases: [Case] = [
        Case(source: Size(width: 6000, height: 4000), size: 256, fit: .inside, upscale: false, output: Size(width: 256, height: 171), crop: (6000, 4000)),
        Case(source: Size(width: 4000, height: 6000), size: 256, fit: .inside, upscale: false, output: Size(width: 171, height: 256), crop: (4000, 6000)),
        Case(source: Size(width: 100, height: 50), size: 256, fit: .inside, upscale: false, output: Size(width: 100, height: 50), crop: (100, 50)),
        Case(source: Size(width: 100, height: 50), size: 200, fit: .inside, upscale: true, output: Size(width: 200, height: 100), crop: (100, 50)),
        // Extreme aspect ratio: never shrink an axis to zero.
        Case(source: Size(width: 1, height: 1000), size: 100, fit: .inside, upscale: false, output: Size(width: 1, height: 100), crop: (1, 1000)),
        Case(source: Size(width: 10000, height: 3), size: 100, fit: .inside, upscale: false, output: Size(width: 100, height: 1), crop: (10000, 3)),
        Case(source: Size(width: 6000, height: 4000), size: 256, fit: .cover, upscale: false, output: Size(width: 256, height: 256), crop: (4000, 4000)),
        Case(source: Size(width: 300, height: 900), size: 100, fit: .cover, upscale: false, output: Size(width: 100, height: 100), crop: (300, 300)),
        // Cover without upscaling a small source: the largest centred square, unscaled.
        Case(source: Size(width: 120, height: 80), size: 256, fit: .cover, upscale: false, output: Size(width: 80, height: 80), crop: (80, 80)),
        Case(source: Size(width: 120, height: 80), size: 160, fit: .cover, upscale: true, output: Size(width: 160, height: 160), crop: (80, 80)),
        Case(source: Size(width: 1, height: 1), size: 256, fit: .inside, upscale: false, output: Size(width: 1, height: 1), crop: (1, 1)),
    ]

    @Test(arguments: cases)
    func plans(c: Case) {
        let plan = ThumbnailPlan.make(source: c.source, maxPixelSize: c.size, fit: c.fit, upscale: c.upscale)
        #expect(plan.output == c.output)
        #expect(abs(plan.cropWidth - c.crop.0) < 1e-6 && abs(plan.cropHeight - c.crop.1) < 1e-6)
    }

    @Test func storedPlanSwapsForQuarterTurns() {
        let plan = ThumbnailPlan.make(source: Size(width: 1200, height: 1800), maxPixelSize: 300, fit: .inside)
        #expect(plan.output == Size(width: 200, height: 300))
        for o in Orientation.allCases {
            let stored = plan.stored(for: o)
            #expect(stored.output == (o.swapsAxes ? Size(width: 300, height: 200) : plan.output))
        }
    }

    /// Shrink-on-load takes the strongest reduction that still leaves a factor of two for the resample.
    @Test func shrinkOnLoadLeavesAFactorOfTwo() {
        let factors = (1...8).map { Double($0) / 8 }
        func chosen(_ source: Int, _ size: Int) -> Double {
            ThumbnailPlan.make(source: Size(width: source, height: source), maxPixelSize: size, fit: .inside).shrinkOnLoad(from: factors)
        }
        #expect(chosen(6000, 256) == 1.0 / 8)   // 750 px decoded, 2.9x left
        #expect(chosen(2000, 256) == 3.0 / 8)   // 750 decoded; 2/8 would give 500 < 2 x 256
        #expect(chosen(1024, 256) == 4.0 / 8)   // 512 decoded: exactly 2x left
        #expect(chosen(1000, 256) == 5.0 / 8)   // 4/8 would give 500 < 512
        #expect(chosen(1000, 600) == 1)         // 1200 needed, more than the source: full size
        #expect(chosen(100, 256) == 1)
    }

    @Test func orientationMapsEveryCornerLikeTheEXIFSpecification() {
        // A 3x2 image whose pixels are numbered 0...5 in reading order.
        let stored = Image(width: 3, height: 2, channels: 3, pixels: (0..<6).flatMap { [UInt8($0), 0, 0] })
        func upright(_ o: Orientation) -> [UInt8] { o.apply(to: stored).pixels.enumerated().filter { $0.offset % 3 == 0 }.map(\.element) }
        // Expected displays written out by hand from the tag's definition (where row 0 / column 0 belong).
        #expect(upright(.up) == [0, 1, 2, 3, 4, 5])
        #expect(upright(.upMirrored) == [2, 1, 0, 5, 4, 3])
        #expect(upright(.down) == [5, 4, 3, 2, 1, 0])
        #expect(upright(.downMirrored) == [3, 4, 5, 0, 1, 2])
        #expect(upright(.leftMirrored) == [0, 3, 1, 4, 2, 5])
        #expect(upright(.right) == [3, 0, 4, 1, 5, 2])
        #expect(upright(.rightMirrored) == [5, 2, 4, 1, 3, 0])
        #expect(upright(.left) == [2, 5, 1, 4, 0, 3])
        #expect(Orientation(exifValue: 0) == .up)
        #expect(Orientation(exifValue: nil) == .up)
        #expect(Orientation(exifValue: 9) == .up)
    }
}
