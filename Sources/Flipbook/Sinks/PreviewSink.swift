/// Where the segment walk's frames go: each frame once, in order, with its start in ms, then the end.
protocol PreviewSink {
    mutating func add(_ image: Image, atMs ms: Int) throws
    mutating func finish(endMs: Int) throws -> PreviewFile
}
