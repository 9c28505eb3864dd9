import CFFmpeg
import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// The display-matrix geometry moved into the core (pure Swift, no libav) must read rotations exactly as
/// libavutil's `av_display_rotation_get` does: compared here on quarter turns, arbitrary angles, scaled,
/// sheared, degenerate and random matrices.
@Suite(.offPool) struct DisplayMatrixTests {
    /// libavutil's answer; nil where it returns NaN (a degenerate matrix).
    static func libav(_ m: [Int32]) throws -> Double? {
        let av = try LibAV.api()
        let r = m.withUnsafeBufferPointer { av.av_display_rotation_get($0.baseAddress!) }
        return r.isNaN ? nil : r
    }

    /// A clockwise rotation by `degrees`, scaled, in libav's 16.16 layout: what av_display_rotation_set
    /// writes (its `av_display_rotation_get` is then -`degrees`, counter-clockwise).
    static func rotation(_ degrees: Double, scale: Double = 1) -> [Int32] {
        let r = -degrees * Double.pi / 180, c = cos(r) * scale, s = sin(r) * scale
        func fp(_ v: Double) -> Int32 { Int32((v * 65536).rounded()) }
        return [fp(c), fp(-s), 0, fp(s), fp(c), 0, 0, 0, 1 << 30]
    }

    @Test func matchesLibavutil() throws {
        var matrices: [[Int32]] = []
        for degrees in stride(from: -270.0, through: 360, by: 7.5) {
            matrices.append(Self.rotation(degrees))
            matrices.append(Self.rotation(degrees, scale: 3.5))
            var flipped = Self.rotation(degrees)
            for i in [0, 3, 6] { flipped[i] = 0 &- flipped[i] }
            matrices.append(flipped)
        }
        matrices.append([0, 0, 0, 0, 0, 0, 0, 0, 1 << 30])  // degenerate
        matrices.append([Int32.min, Int32.max, 0, Int32.max, Int32.min, 0, 0, 0, 1 << 30])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 { matrices.append((0..<9).map { _ in Int32.random(in: .min ... .max, using: &generator) }) }
        for m in matrices {
            let ours = Orientation.rotationDegrees(displayMatrix: m), theirs = try Self.libav(m)
            #expect((ours == nil) == (theirs == nil), "\(m)")
            if let ours, let theirs { #expect(abs(ours - theirs) < 1e-9, "\(m): \(ours) vs \(theirs)") }
        }
    }

    @Test func quarterTurnsAndMirrors() {
        #expect(Orientation(displayMatrix: []) == .up)
        #expect(Orientation(displayMatrix: Self.rotation(0)) == .up)
        // A matrix that turns the stored frame 90 degrees clockwise for display is EXIF 6, "rotate 90 CW".
        #expect(Orientation(displayMatrix: Self.rotation(90)) == .right)
        #expect(Orientation(displayMatrix: Self.rotation(180)) == .down)
        #expect(Orientation(displayMatrix: Self.rotation(-90)) == .left)
        var mirror = Self.rotation(0)
        for i in [0, 3, 6] { mirror[i] = 0 &- mirror[i] }
        #expect(Orientation(displayMatrix: mirror) == .upMirrored)
        #expect(Orientation(displayMatrix: Self.rotation(45)) == .up)  // not a quarter turn
    }
}
