public import H264
public import RTP

/// What a receiver's depacketizer counted (``RTSPPublisher/statistics``, ``RTPReceiver/statistics``).
public struct RTPReceptionStatistics: Sendable, Equatable {
    /// RTP packets received.
    public var packets = 0
    /// Packets found missing.
    public var lostPackets = 0
    /// Access units dropped because of loss or damage.
    public var droppedAccessUnits = 0

    /// Counts of a depacketizer.
    public init(packets: Int = 0, lostPackets: Int = 0, droppedAccessUnits: Int = 0) {
        self.packets = packets
        self.lostPackets = lostPackets
        self.droppedAccessUnits = droppedAccessUnits
    }

    /// What `depacketizer` has counted so far.
    public init(counting depacketizer: some RTPDepacketizing) {
        self.init(packets: depacketizer.packetCount, lostPackets: depacketizer.lostPacketCount,
                  droppedAccessUnits: depacketizer.droppedAccessUnitCount)
    }

    /// The counts of a depacketizer of either codec.
    ///
    /// - Parameter depacketizer: the depacketizer counted.
    public init(counting depacketizer: VideoRTPDepacketizer) {
        self.init(packets: depacketizer.packetCount, lostPackets: depacketizer.lostPacketCount,
                  droppedAccessUnits: depacketizer.droppedAccessUnitCount)
    }
}
