#if canImport(Glibc)
import Glibc
#endif

/// How colours missing from a GIF's palette are approximated.
public enum GIFDither: String, Sendable, CaseIterable {
    /// Nearest palette colour only: flat, banded gradients, smallest files.
    case none
    /// 8x8 Bayer threshold pattern: stable from frame to frame, so still areas stay still.
    case ordered
    /// Floyd-Steinberg error diffusion (serpentine): the closest average colour.
    case floydSteinberg = "floyd-steinberg"
}
