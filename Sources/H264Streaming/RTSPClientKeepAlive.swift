import H264
import NIOCore
import RTSPMessages

/// The keepalive of an ``RTSPClient``'s session: every `interval`, on the event loop's own clock
/// (so a test on an `EmbeddedEventLoop` moves it with `advanceTime`), `send` writes a request
/// (GET_PARAMETER or OPTIONS with the `Session`) and its reply is awaited; a failed request (no
/// answer within the request timeout, the connection closed) or an answer other than 2xx runs
/// `onFailure` once and stops the keepalive. Used on its loop only; ``cancel()`` ends it.
final class RTSPClientKeepAlive {
    private let interval: TimeAmount
    private let request: String
    private let loop: any EventLoop
    private let send: () -> EventLoopFuture<RTSPResponse>
    private let onFailure: (RTSPClientError) -> Void
    private var scheduled: Scheduled<Void>?
    private var running = false

    /// A keepalive every `interval` on `loop`, not yet started; `request` (`GET_PARAMETER URL`)
    /// names it in the failure's message.
    init(interval: Duration, request: String, loop: any EventLoop, send: @escaping () -> EventLoopFuture<RTSPResponse>,
         onFailure: @escaping (RTSPClientError) -> Void) {
        self.interval = TimeAmount(interval)
        self.request = request
        self.loop = loop
        self.send = send
        self.onFailure = onFailure
    }

    /// The first request goes out one interval from now.
    func start() {
        running = true
        schedule()
    }

    /// No more requests; a reply still awaited is ignored.
    func cancel() {
        running = false
        scheduled?.cancel()
        scheduled = nil
    }

    private func schedule() {
        scheduled = loop.assumeIsolated().scheduleTask(in: interval) { [self] in
            guard running else { return }
            schedule()
            send().assumeIsolated().whenComplete { [self] result in
                guard running else { return }
                switch result {
                case .success(let answer) where (200..<300).contains(answer.status.code):
                    break
                case .success(let answer):
                    fail(RTSPClientError(.status, "keepalive \(request): \(answer.status)", status: answer.status))
                case .failure(let error as RTSPClientError):
                    fail(RTSPClientError(error.code, "keepalive \(error.description)", status: error.status))
                case .failure(let error):
                    fail(RTSPClientError(.connectionClosed, "keepalive \(request): \(error)"))
                }
            }
        }
    }

    private func fail(_ error: RTSPClientError) {
        cancel()
        onFailure(error)
    }
}
