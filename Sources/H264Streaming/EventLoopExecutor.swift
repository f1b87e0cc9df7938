public import NIOCore

/// A task executor on a SwiftNIO event loop: a task that prefers it runs its nonisolated code —
/// a live loop's `for await`, an ``AnnexBFilePlayer``'s iterator, a ``Broadcaster``'s
/// broadcast, a publisher's send — on the loop's thread, where the pacing timer fires and the
/// sockets are written. A frame then costs no hop to Swift's cooperative pool and back: the
/// timer's wake-up runs the task in the same turn of the loop (the file source of 8 RTMP streams
/// spent most of its CPU on those hops).
///
/// ```swift
/// let loop = group.next()
/// let executor = EventLoopExecutor(loop)
/// Task(executorPreference: executor) {
///     for try await frame in AnnexBFilePlayer(path: "camera.264", loops: true, eventLoop: loop) {
///         try await publisher.send(frame)
///     }
/// }
/// ```
///
/// Code that blocks (a long computation, a blocking read of a slow disk) blocks every channel
/// of the loop too: run such a task on the default executor.
public final class EventLoopExecutor: TaskExecutor {
    /// The loop the jobs run on.
    public let eventLoop: any EventLoop

    /// An executor running its jobs on `eventLoop`.
    ///
    /// - Parameter eventLoop: the loop (a server's, a publisher's group's).
    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs `job` on the loop, in a later turn or in this one's queue (from the loop itself).
    ///
    /// - Parameter job: the job.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
