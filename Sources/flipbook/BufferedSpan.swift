import Synchronization
import Tracing

/// A span of `BufferedTracer`: what it records until it is handed to swift-otel (its name, times, attributes,
/// status, events and links; an error as the `exception` event swift-otel would make of it), and then
/// swift-otel's span for it. Costs one allocation and a lock per call; the swift-otel span is made by
/// `started` (from the flush, or an `inject` of its context).
final class BufferedSpan: Span {
    private struct State {
        var name: String
        var attributes = SpanAttributes()
        var status: SpanStatus?
        var events: [SpanEvent] = []
        var links: [SpanLink] = []
        var end: UInt64?
        var inner: (any Tracing.Span)?
    }

    let tracer: BufferedTracer
    let kind: SpanKind
    /// The buffered span it is a child of, if any (else `base` carries swift-otel's parent, or none).
    let parent: BufferedSpan?
    /// The context it was started in.
    let base: ServiceContext
    let start: UInt64
    private let state: Mutex<State>

    init(tracer: BufferedTracer, name: String, kind: SpanKind, parent: BufferedSpan?, base: ServiceContext, start: UInt64) {
        self.tracer = tracer
        self.kind = kind
        self.parent = parent
        self.base = base
        self.start = start
        state = Mutex(State(name: name))
    }

    /// The context it was started in, naming this span (computed: a stored one would hold the span itself).
    var context: ServiceContext {
        var context = base
        context[BufferedTracer.SpanKey.self] = self
        return context
    }

    var operationName: String {
        get { state.withLock { $0.name } }
        set { state.withLock { $0.name = newValue } }
    }

    var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }

    var isRecording: Bool { state.withLock { $0.end == nil } }

    func setStatus(_ status: SpanStatus) { state.withLock { $0.status = status } }

    func addEvent(_ event: SpanEvent) { state.withLock { $0.events.append(event) } }

    func addLink(_ link: SpanLink) { state.withLock { $0.links.append(link) } }

    /// Recorded as swift-otel records one: an `exception` event with the error's type and description.
    func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        var eventAttributes: SpanAttributes = [
            "exception.type": .string(String(describing: type(of: error))),
            "exception.message": .string(String(describing: error)),
        ]
        eventAttributes.merge(attributes)
        addEvent(SpanEvent(name: "exception", at: instant(), attributes: eventAttributes))
    }

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let at = instant().nanosecondsSinceEpoch
        let first = state.withLock { s -> Bool in
            guard s.end == nil else { return false }
            s.end = at
            return true
        }
        if first { tracer.ended(self) }
    }

    /// swift-otel's span for this one, started the first time it is asked for (its parent's first), at this
    /// span's own start time, with what it recorded so far.
    func started() -> any Tracing.Span {
        if let inner = state.withLock({ $0.inner }) { return inner }
        let parentContext = parent?.started().context ?? base
        return state.withLock { s in
            if let inner = s.inner { return inner }
            let inner = tracer.inner.startSpan(s.name, context: parentContext, ofKind: kind,
                                               at: DefaultTracerClock.Instant(nanosecondsSinceEpoch: start))
            s.inner = inner
            return inner
        }
    }

    /// Gives swift-otel this ended span: started there if it was not, then its attributes, events, links and
    /// status, and its end at its own end time.
    func handOver() {
        let inner = started()
        let s = state.withLock { s -> State in
            let copy = s
            s.events = []
            s.links = []
            return copy
        }
        guard let end = s.end else { return }
        if inner.operationName != s.name { inner.operationName = s.name }
        if !s.attributes.isEmpty { inner.updateAttributes { $0.merge(s.attributes) } }
        for event in s.events { inner.addEvent(event) }
        for link in s.links { inner.addLink(link) }
        if let status = s.status { inner.setStatus(status) }
        inner.end(at: DefaultTracerClock.Instant(nanosecondsSinceEpoch: end))
    }
}
