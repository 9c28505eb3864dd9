/// What to make from a video in one pass. Each part is optional; every option documents its default in
/// its own type.
public struct VideoBundleRequest: Sendable {
    /// The poster's size and fit, and how it is chosen; nil for no poster.
    public var poster: (request: ThumbnailRequest, options: PosterOptions)?
    public var storyboard: StoryboardOptions?
    public var preview: PreviewOptions?

    public init(poster: (request: ThumbnailRequest, options: PosterOptions)? = nil,
                storyboard: StoryboardOptions? = nil, preview: PreviewOptions? = nil) {
        self.poster = poster
        self.storyboard = storyboard
        self.preview = preview
    }
}
