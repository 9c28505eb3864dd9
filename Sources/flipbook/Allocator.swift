import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// glibc malloc settings for the long-running commands (`ingest`, `worker`, `convert` of several files), set by this executable and
/// never by the library. Without them a batch keeps what its largest file used and then some: glibc raises
/// its mmap threshold each time a large block is freed (up to 32 MB), so the next frame buffers and decode
/// tables come from the heap instead of fresh mappings, and a heap fragmented by a 12 MP decode is never
/// given back. `flipbook ingest --jobs 1` over 80 mixed uploads peaked at 224 MB with glibc's defaults and
/// at 147 MB with the threshold fixed at 128 KiB (its largest file alone: 104 MB); bench/ingest_worker.py
/// prints the worker's resident memory after every 100 jobs.
enum Allocator {
    /// Fixes the mmap threshold at 128 KiB (glibc's starting value), which also stops it from moving.
    static func keepLargeBlocksMapped() {
        #if canImport(Glibc)
        _ = glibcMallopt(-3 /* M_MMAP_THRESHOLD */, 128 * 1024)
        #endif
    }

    /// Gives free heap pages back to the kernel (every arena, not only the top of the main heap). Called
    /// between jobs, it trims at most once per `trimInterval` per process: the trim is cheap, but the next
    /// job faults the same pages back in (zero-filled), and for millisecond jobs that was a tenth of their
    /// cost (2,000 `probe` jobs: 1.24 s with a trim after each, 1.11 s without). Jobs slower than the
    /// interval (every real recipe's) still trim after each, so what a large decode leaves behind is given
    /// back at once; millisecond jobs leave little, and the next trim takes it. `make bench-ingest`: one
    /// worker still holds 62 MB after 1,000 default-recipe jobs, peak 1.18x its largest job alone.
    static func releaseFreeMemory() {
        #if canImport(Glibc)
        let now = Int64(DispatchTime.now().uptimeNanoseconds)
        let last = lastTrim.load(ordering: .relaxed)
        guard now - last >= trimInterval,
              lastTrim.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged else { return }
        _ = glibcMallocTrim(0)
        #endif
    }

    /// Nanoseconds between trims (see `releaseFreeMemory`).
    static let trimInterval: Int64 = 100_000_000
    private static let lastTrim = Atomic<Int64>(0)
}

#if canImport(Glibc)
/// glibc's `int mallopt(int param, int value)` and `int malloc_trim(size_t pad)`, from <malloc.h>, which the
/// Glibc module does not export.
@_silgen_name("mallopt")
private func glibcMallopt(_ param: Int32, _ value: Int32) -> Int32


@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
