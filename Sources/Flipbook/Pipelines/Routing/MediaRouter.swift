/// Sends each input to the first registered pipeline that accepts its sniffed type.
public struct MediaRouter: Sendable {
    /// The pipelines, tried in order.
    public private(set) var pipelines: [any MediaPipeline]

    /// A router trying `pipelines` in order.
    public init(pipelines: [any MediaPipeline]) { self.pipelines = pipelines }

    /// Adds `pipeline` ahead of the existing ones, so it can take over a type.
    public mutating func register(_ pipeline: any MediaPipeline) { pipelines.insert(pipeline, at: 0) }

    /// The pipeline for `type`, or a typed error naming what was found.
    public func pipeline(for type: MediaType) throws -> any MediaPipeline {
        if type == .unknown { throw FlipbookError(.unknownFormat, "not a recognised image or video format") }
        guard let pipeline = pipelines.first(where: { $0.accepts(type) }) else {
            throw FlipbookError(.unsupported, "no pipeline handles \(type) input")
        }
        return pipeline
    }
}
