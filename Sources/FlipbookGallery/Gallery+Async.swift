import Dispatch

extension Gallery {
    /// `list(segments:cursor:limit:)` on a Dispatch worker, off the event loops and off Swift's cooperative
    /// pool (a cold page stats, resolves and probes up to `limit` files).
    public func listing(segments: [String], cursor: String?, limit: Int?) async throws(GalleryError) -> Listing {
        try await offloaded { () throws(GalleryError) -> Listing in try self.list(segments: segments, cursor: cursor, limit: limit) }
    }

    /// `page(segments:)` on a Dispatch worker (one realpath and stat).
    public func pageHTML(segments: [String]) async throws(GalleryError) -> String {
        try await offloaded { () throws(GalleryError) -> String in try self.page(segments: segments) }
    }

    private func offloaded<T: Sendable>(_ work: @escaping @Sendable () throws(GalleryError) -> T) async throws(GalleryError) -> T {
        let result: Result<T, GalleryError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do throws(GalleryError) { continuation.resume(returning: .success(try work())) } catch { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }
}
