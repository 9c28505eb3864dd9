import Foundation
import Tracing

/// A point in wall-clock time for spans that begin at a time the database gave (a job's `created_at`).
struct WallInstant: TracerInstant {
    var nanosecondsSinceEpoch: UInt64

    init(seconds: Double) { nanosecondsSinceEpoch = UInt64(max(0, seconds) * 1e9) }

    static var now: WallInstant { WallInstant(seconds: Date().timeIntervalSince1970) }

    static func < (a: WallInstant, b: WallInstant) -> Bool { a.nanosecondsSinceEpoch < b.nanosecondsSinceEpoch }
}
