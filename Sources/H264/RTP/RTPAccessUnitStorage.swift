/// How ``RTPDepacketizer`` (one AVCC copy, ``AccessUnitAssembler``) and
/// ``RTPZeroCopyDepacketizer`` (references to the packets, ``AccessUnitViewAssembler``) keep the
/// bytes of the access unit being received; everything else about receiving is the one
/// ``RTPDepacketizerCore``.
protocol RTPAccessUnitStorage: Sendable {
    /// What a complete access unit is handed out as.
    associatedtype Unit: Sendable

    /// Creates an empty storage knowing `parameterSets` already.
    init(parameterSets: ParameterSetCache)
    /// The parameter sets seen so far.
    var parameterSets: ParameterSetCache { get }
    /// The bytes given next come from `bytes`, held by `owner` (which the storage may keep
    /// instead of copying them); empty when nothing holds them beyond the call.
    mutating func usePacket(_ owner: borrowing [UInt8], bytes: UnsafeRawBufferPointer)
    /// Adds a whole NAL unit; returns the access unit it completed, if it begins a new one.
    mutating func append(nalUnit: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Unit?
    /// Begins a NAL unit whose bytes arrive in pieces; see
    /// ``AccessUnitAssembler/beginNALUnit(header:leading:streamOffset:)``.
    mutating func beginNALUnit(header: UInt8, leading: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Bool
    /// Adds the next piece of the NAL unit begun.
    mutating func appendToNALUnit(_ bytes: UnsafeBufferPointer<UInt8>)
    /// Ends the NAL unit begun.
    mutating func endNALUnit()
    /// Ends the access unit being received: returns it, if it holds any NAL unit.
    mutating func finishAccessUnit() -> Unit?
    /// Drops the access unit being received, with the NAL unit begun if one is open.
    mutating func dropAccessUnit()
}

extension AccessUnitAssembler: RTPAccessUnitStorage {
    /// Copies every byte: nothing to keep.
    func usePacket(_ owner: borrowing [UInt8], bytes: UnsafeRawBufferPointer) {}

    mutating func finishAccessUnit() -> AccessUnit? { finish() }
}
