package import NIOCore
import NIOPosix

/// The UDP port pair of one RTP stream (RFC 3550 clause 11): RTP on an even port P, RTCP on
/// P + 1, both bound on one address, P chosen by the system. ``RTSPServer`` sends from
/// such a pair (its `server_port`), the record server receives on one.
package enum UDPPortPair {
    /// Two UDP channels on `host`, on `loop`: RTP on an even port and RTCP on the next, from
    /// free ports (tried `attempts` times: the system's free port may be odd, or its successor taken).
    package static func bind(host: String, on loop: any EventLoop, attempts: Int = 16) -> EventLoopFuture<(any Channel, any Channel)> {
        DatagramBootstrap(group: loop).bind(host: host, port: 0).flatMap { rtp in
            let port = rtp.localAddress?.port ?? 1
            let retry: @Sendable (any Error) -> EventLoopFuture<(any Channel, any Channel)> = { error in
                rtp.close(promise: nil)
                return attempts > 1 ? bind(host: host, on: loop, attempts: attempts - 1) : loop.makeFailedFuture(error)
            }
            guard port % 2 == 0, port < 65_535 else { return retry(ChannelError.inappropriateOperationForState) }
            return DatagramBootstrap(group: loop).bind(host: host, port: port + 1).map { (rtp, $0) }.flatMapError(retry)
        }
    }
}
