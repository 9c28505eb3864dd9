import Dispatch

/// CMYK rows to sRGB on a second thread while libjpeg decodes the next ones: the transform (a LUT built
/// from the profile, ~12 ms for a CMYK LUT profile) is made first on that thread, then each band is
/// converted as soon as it is decoded, so the conversion overlaps the entropy decoding instead of
/// following it. Owns both buffers.
package final class CMYKBandConverter {
    /// What the queued work touches. Unchecked: `transform` and the RGB rows are written only on the
    /// serial queue; the CMYK rows of a band are written by the decoding thread before the band is queued
    /// and never after; the owner reads or frees them only after waiting for the queue.
    private final class Shared: @unchecked Sendable {
        package var transform: Result<ColourTransform, any Error>?
        package let width: Int
        package let cmyk: UnsafeMutablePointer<UInt8>
        package let rgb: UnsafeMutablePointer<UInt8>
        package init(width: Int, height: Int) {
            self.width = width
            cmyk = .allocate(capacity: width * height * 4)
            cmyk.initialize(repeating: 0, count: width * height * 4)
            rgb = .allocate(capacity: width * height * 3)
        }
    }

    /// Serial, so on libdispatch's overcommitting pool: it gets a thread even when every CPU's thread is a
    /// concurrentPerform worker (`thumb` with several files) waiting on it.
    private let queue = DispatchQueue(label: "flipbook.cmyk-to-srgb")
    private let shared: Shared
    package let width: Int
    package let height: Int

    package init(width: Int, height: Int, profile: [UInt8]?, inverted: Bool) {
        self.width = width
        self.height = height
        let shared = Shared(width: width, height: height)
        self.shared = shared
        queue.async { shared.transform = Result { try ColourManagement.cmykTransform(profile: profile, inverted: inverted) } }
    }

    // The queued work holds `shared`, never `self`: this runs on the owner's thread, after the queue drains.
    deinit {
        queue.sync {}
        shared.cmyk.deallocate()
        shared.rgb.deallocate()
    }

    /// Where the decoder writes CMYK rows (`width * 4` bytes each, zeros until written).
    package var cmyk: UnsafeMutablePointer<UInt8> { shared.cmyk }

    /// Queues `rows` (decoded, complete) for conversion.
    package func convert(_ rows: Range<Int>) {
        let shared = shared
        queue.async {
            guard case .success(let transform)? = shared.transform else { return }
            transform.apply(UnsafeRawPointer(shared.cmyk + rows.lowerBound * shared.width * 4),
                            UnsafeMutableRawPointer(shared.rgb + rows.lowerBound * shared.width * 3),
                            count: rows.count * shared.width)
        }
    }

    /// Waits for every queued band; the sRGB image of the first `rows` rows (all of them converted).
    package func finish(rows: Int) throws -> Image {
        queue.sync {}
        _ = try shared.transform!.get()
        return Image(width: width, height: rows, channels: 3,
                     pixels: Array(UnsafeBufferPointer(start: shared.rgb, count: width * rows * 3)))
    }
}
