extension Image {
    /// This image marked as being in `profile` (for `keepProfile`: the encoder embeds it).
    package func tagged(_ profile: [UInt8]?) -> Image {
        var copy = self
        copy.iccProfile = profile
        return copy
    }
}
