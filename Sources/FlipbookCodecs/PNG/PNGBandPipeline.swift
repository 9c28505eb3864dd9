import Dispatch
import Synchronization

/// The fast path for 8-bit RGB and RGBA PNGs (not interlaced, no tRNS): one thread inflates the IDAT
/// stream with ISA-L into a ring of row bands while the calling thread unfilters each band's rows and
/// box-shrinks them into the output (`PNGStreamDecoder`'s accumulator). Memory: the ring (about 1 MB),
/// one source row and the shrunk image.
package final class PNGBandPipeline: @unchecked Sendable {
    // Unchecked: the producer thread writes a slot and `error` only between a `free` wait and a `full`
    // signal, the consumer reads them only between a `full` wait and a `free` signal; the semaphores order
    // every access, and `deinit` runs after the producer has signalled `done`.
    private let inflater: IDATInflater
    private let rowBytes: Int
    private let rowsPerBand: Int
    private let height: Int
    private let slots = 4
    private let storage: UnsafeMutableRawBufferPointer
    private var error: Error?
    private var finishError: Error?
    private let stop = Atomic<Bool>(false)
    private let free: DispatchSemaphore
    private let full = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    private init(inflater: IDATInflater, rowBytes: Int, height: Int) {
        self.inflater = inflater
        self.rowBytes = rowBytes
        self.height = height
        rowsPerBand = max(1, min(height, (256 << 10) / rowBytes))
        storage = .allocate(byteCount: slots * rowsPerBand * rowBytes, alignment: 64)
        // Created at 0 and signalled up: libdispatch traps when a semaphore is freed below its initial
        // value, which an early stop leaves this one at.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<slots { free.signal() }
    }

    deinit { storage.deallocate() }

    private var bands: Int { (height + rowsPerBand - 1) / rowsPerBand }

    private func slot(_ band: Int) -> UnsafeMutablePointer<UInt8> {
        (storage.baseAddress! + (band % slots) * rowsPerBand * rowBytes).assumingMemoryBound(to: UInt8.self)
    }

    private func rows(in band: Int) -> Int { min(rowsPerBand, height - band * rowsPerBand) }

    /// The producer: inflates band after band into free slots; stops at the first error or when told to.
    private func produce() {
        defer { done.signal() }
        for band in 0..<bands {
            free.wait()
            if stop.load(ordering: .acquiring) { return }
            let wanted = rows(in: band) * rowBytes
            do {
                let got = try inflater.inflate(into: UnsafeMutableRawBufferPointer(start: slot(band), count: wanted))
                if got < wanted {
                    throw FlipbookError(.corrupt, "PNG data is not decodable", underlying: "Not enough image data", context: "IDAT")
                }
            } catch {
                self.error = error
                full.signal()
                return
            }
            full.signal()
        }
        do { try inflater.finish() } catch { finishError = error }
    }

    /// Decodes `width` x `height` pixels of `channels` (3 or 4) bytes, shrunk by `factor` while decoding.
    package static func decode(_ inflater: IDATInflater, width: Int, height: Int, channels: Int, factor k: Int) throws -> Image {
        let count = width * channels
        let pipeline = PNGBandPipeline(inflater: inflater, rowBytes: count + 1, height: height)
        // A queue of its own, not a global one: a serial queue runs on libdispatch's overcommitting pool,
        // which starts a thread even when `thumb`'s concurrentPerform workers hold every CPU's thread (one of
        // them is this caller, waiting for the producer).
        DispatchQueue(label: "flipbook.png-inflate").async { pipeline.produce() }
        defer {
            pipeline.stop.store(true, ordering: .releasing)
            pipeline.free.signal()
            pipeline.done.wait()
        }
        let outW = (width + k - 1) / k, outH = (height + k - 1) / k
        var out = [UInt8](repeating: 0, count: outW * outH * channels)
        var previous = [UInt8](repeating: 0, count: count)
        var sums = [UInt32](repeating: 0, count: outW * channels)
        try out.withUnsafeMutableBufferPointer { dst in
            try sums.withUnsafeMutableBufferPointer { acc in
                try previous.withUnsafeMutableBufferPointer { above in
                    var rowsInBand = 0, outRow = 0, y = 0
                    for band in 0..<pipeline.bands {
                        pipeline.full.wait()
                        if let error = pipeline.error { throw error }
                        var row = pipeline.slot(band)
                        var prior = UnsafePointer(above.baseAddress!)
                        for _ in 0..<pipeline.rows(in: band) {
                            try PNGUnfilter.apply(row[0], row: row + 1, previous: prior, count: count, bpp: channels)
                            PNGStreamDecoder.accumulate(UnsafeMutableBufferPointer(start: row + 1, count: count), into: acc,
                                                        width: width, channels: channels, factor: k)
                            rowsInBand += 1
                            if rowsInBand == k || y == height - 1 {
                                PNGStreamDecoder.emit(acc, into: dst.baseAddress! + outRow * outW * channels, width: width,
                                                      outWidth: outW, channels: channels, factor: k, rows: rowsInBand)
                                acc.update(repeating: 0)
                                rowsInBand = 0
                                outRow += 1
                            }
                            prior = UnsafePointer(row + 1)
                            row += count + 1
                            y += 1
                        }
                        // The slot goes back to the producer: keep its last row for the next band's first.
                        above.baseAddress!.update(from: prior, count: count)
                        pipeline.free.signal()
                    }
                }
            }
        }
        pipeline.done.wait()
        pipeline.done.signal()  // for the deferred wait
        if let error = pipeline.finishError { throw error }
        return Image(width: outW, height: outH, channels: channels, pixels: out)
    }
}
