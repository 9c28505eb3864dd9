import NIOCore

/// A Swift Concurrency task executor that runs each job on an event loop of `group`: the one the job was
/// enqueued from when that is one of the group's (NIO's `any()` stays on the current loop), else any.
///
/// The server runs its service group with this executor preferred, and child tasks inherit the preference:
/// a connection's handler then runs on the event loop that read the request and writes the response there,
/// instead of hopping to Swift's cooperative pool and back on every request. Blocking decode and encode
/// never run here: `DerivativeService` sends jobs to its own worker threads.
final class EventLoopTaskExecutor: TaskExecutor {
    let group: any EventLoopGroup

    init(group: any EventLoopGroup) { self.group = group }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        group.any().execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
