/// How a thumbnail fills its box.
public enum Fit: String, Sendable, CaseIterable {
    /// Keep the aspect ratio; the longer side becomes the requested size.
    case inside
    /// Fill a square of the requested size, cropping the centre.
    case cover
}
