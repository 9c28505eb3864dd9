/// The router every entry point uses by default. It lives with the pipelines it lists, so the core's
/// router knows no pipeline.
extension MediaRouter {
    /// Animated WebP and APNG (ahead of stills, which would otherwise take their first frame), stills, GIF
    /// and video, in that order.
    public static let standard = MediaRouter(pipelines: [AnimationPipeline(), StillPipeline(), GIFPipeline(), VideoPipeline()])
}
