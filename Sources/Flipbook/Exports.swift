// `import Flipbook` gives the whole library: the core's and the codecs' public types are part of its API.
@_exported import FlipbookCore
@_exported import FlipbookCodecs
