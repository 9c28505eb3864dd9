import Synchronization
import Tracing

/// A `Tracer` in front of swift-otel's: a span is recorded on the thread that makes it (one allocation and a
/// lock, at its start and its end) and handed to swift-otel with its own start and end times in bursts, by
/// `flush` (every 200 ms in `TraceExport`, and at shutdown).
///
/// Why: swift-otel passes every span's start and end to its background tasks through AsyncStreams, and a task
/// that finds its stream empty parks. Spans made one at a time on the worker's threads woke those tasks once
/// or more each: 2,000 `probe` jobs with five spans each made 3.9 voluntary and 2.5 involuntary context
/// switches a job instead of 0.8 and 0.2, and cost the worker 1.20x the CPU of no tracing (release build). In
/// a burst the tasks drain many at a wake-up.
///
/// What changes for a trace: nothing but when it reaches swift-otel (up to one flush interval later; its batch
/// processor holds spans for 5 s anyway). Sampling stays swift-otel's, decided as a span is handed over (a
/// parent before its children; an unended parent is started there then, at its own start time, and ended when
/// it ends). A span's `context` names it, so its children attach to it; `inject` of that context hands the
/// span over first. At most `limit` ended spans wait for a flush; beyond that they are dropped and counted,
/// as swift-otel's own queue does.
final class BufferedTracer: Tracer {
    typealias Span = BufferedSpan

    /// Where a span's `context` names it.
    enum SpanKey: ServiceContextKey {
        typealias Value = BufferedSpan
    }

    /// swift-otel's tracer.
    let inner: any Tracer
    let limit: Int
    private let pending = Mutex<[BufferedSpan]>([])
    private let droppedCount = Atomic<Int>(0)

    init(inner: any Tracer, limit: Int = 65_536) {
        self.inner = inner
        self.limit = limit
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> BufferedSpan {
        let context = context()
        return BufferedSpan(tracer: self, name: operationName, kind: kind, parent: context[SpanKey.self], base: context,
                            start: instant().nanosecondsSinceEpoch)
    }

    /// `span` has ended: it waits for the next flush.
    func ended(_ span: BufferedSpan) {
        let kept = pending.withLock { spans -> Bool in
            guard spans.count < limit else { return false }
            spans.append(span)
            return true
        }
        if !kept { droppedCount.add(1, ordering: .relaxed) }
    }

    /// Spans dropped so far because `limit` were already waiting.
    var dropped: Int { droppedCount.load(ordering: .relaxed) }

    /// Hands every ended span to swift-otel, in the order they ended; returns how many.
    @discardableResult
    func flush() -> Int {
        var spans: [BufferedSpan] = []
        pending.withLock { swap(&spans, &$0) }
        for span in spans { span.handOver() }
        return spans.count
    }

    /// Hands the buffered spans to swift-otel, which exports them on its schedule or at shutdown (its own
    /// `forceFlush` is deprecated; `TraceExport.finish` shuts it down, which exports all it holds).
    func forceFlush() {
        flush()
    }

    func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        inner.extract(carrier, into: &context, using: extractor)
    }

    func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        inner.inject(context[SpanKey.self]?.started().context ?? context, into: &carrier, using: injector)
    }
}
