/// How a frame leaves the canvas for the next one (the GIF89a disposal method).
package enum GIFDisposal: Int, Sendable {
    /// 0: unspecified; treated like `keep`.
    case unspecified = 0
    /// 1: leave the frame in place.
    case keep = 1
    /// 2: clear the frame's rectangle to transparent (browsers do not paint the background colour).
    case background = 2
    /// 3: restore the canvas as it was before the frame.
    case previous = 3

    package init(raw: Int) { self = GIFDisposal(rawValue: raw) ?? .unspecified }  // 4-7 are reserved: keep
}
