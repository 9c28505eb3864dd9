// The codecs work on the core's types (byte sources, images, limits, errors) in every file.
@_exported import FlipbookCore
