/// What to make from a video in one pass. Each part is optional; every option documents its default in
/// its own type.
public struct VideoBundleRequest: Sendable {
    /// The poster's size and fit, and how it is chosen; nil for no poster.
    public var poster: (request: ThumbnailRequest, options: PosterOptions)?
    /// The storyboard's sampling and layout; nil for no storyboard.
    public var storyboard: StoryboardOptions?
    /// The preview's segments and format; nil for no preview.
    public var preview: PreviewOptions?

    /// A request for any of the three parts; all nil by default.
    public init(poster: (request: ThumbnailRequest, options: PosterOptions)? = nil,
                storyboard: StoryboardOptions? = nil, preview: PreviewOptions? = nil) {
        self.poster = poster
        self.storyboard = storyboard
        self.preview = preview
    }
}
