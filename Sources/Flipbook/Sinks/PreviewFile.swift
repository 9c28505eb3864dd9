/// What a sink made of the frames it was given.
struct PreviewFile {
    var data: [UInt8]
    var frames: Int
    var size: Size
    var durationMs: Int
}
