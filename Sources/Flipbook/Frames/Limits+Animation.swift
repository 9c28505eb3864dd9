extension Limits {
    /// Throws `.limitExceeded` naming the format if the header's numbers (canvas, frames, duration) are
    /// over the limits. Frame sources call it before the canvas is allocated.
    package func check(_ info: AnimationInfo, what: String) throws {
        try checkAnimation(width: info.width, height: info.height, frames: info.frameCount, durationMs: info.durationMs, what: what)
    }
}

/// The animation limits are part of the one `Limits` value now (canvas, frames, duration).
@available(*, deprecated, renamed: "Limits")
public typealias AnimationLimits = Limits
