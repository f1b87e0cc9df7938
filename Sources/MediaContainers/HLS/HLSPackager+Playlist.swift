extension HLSPackager {
    /// The answer to `GET index.m3u8` with `request`'s query: the live media playlist, held
    /// (``HLSPlaylistAnswer/wait``) until it holds the segment or part a blocking reload asks for,
    /// refused when that is more than two segments ahead (RFC 8216bis §6.2.5.2), a delta update
    /// when the player asks for one and segments can be skipped. The first playlist waits for
    /// ``Configuration/minimumSegments`` whole segments.
    ///
    /// - Parameter request: the query's `_HLS_msn`, `_HLS_part` and `_HLS_skip`.
    /// - Returns: the playlist, wait, or bad request.
    public func playlist(for request: HLSPlaylistRequest) -> HLSPlaylistAnswer {
        if request.isMalformed { return .badRequest("_HLS_part needs _HLS_msn, and both are decimal numbers") }
        let last = lastSequence ?? -1
        if let sequence = request.mediaSequence, !isFinished {
            if sequence > last + 2 {
                return .badRequest("_HLS_msn=\(sequence) is more than two segments past the last one (\(last))")
            }
            if !holds(sequence: sequence, part: configuration.partDuration == nil ? nil : request.part) { return .wait }
        }
        // The first playlist waits for the first whole segments (Configuration.minimumSegments):
        // players that take segments only (FFmpeg, Chromium's own) find nothing to play in parts.
        guard isServed || isFinished else { return .wait }
        return .playlist(render(skip: request.skip))
    }

    /// The Media Sequence Number of the last segment in the playlist: the one being written
    /// when it has a part, else the last complete one.
    var lastSequence: Int? {
        if let current, !current.parts.isEmpty { return current.sequence }
        return segments.last?.sequence
    }

    /// True when the playlist holds part `part` of segment `sequence` (the whole segment when nil).
    func holds(sequence: Int, part: Int?) -> Bool {
        guard let current else { return true }
        if sequence < current.sequence { return true }
        guard sequence == current.sequence, let part else { return false }
        return current.parts.count > part
    }

    /// The segments the playlist lists: the window's, then the one being written when it has a part.
    private var listed: [HLSSegment] {
        var listed = Array(segments.suffix(configuration.windowSegments))
        if let current, !current.parts.isEmpty { listed.append(current) }
        return listed
    }

    /// `CAN-SKIP-UNTIL`: six target durations (RFC 8216bis §4.4.3.8).
    var skipBoundary: Duration { .seconds(6 * targetDuration) }

    /// The playlist's text.
    ///
    /// - Parameters:
    ///   - skip: a delta update (`EXT-X-SKIP`) when segments can be skipped.
    ///   - served: false for a playlist written as a file (``HLSDirectoryWriter``): no
    ///     `EXT-X-SERVER-CONTROL` (a static file server blocks no reload).
    ///   - growsOnly: `EXT-X-PLAYLIST-TYPE:EVENT` while the stream goes on (no segment ever leaves it).
    ///   - dates: `EXT-X-PROGRAM-DATE-TIME` lines (false for a file converted, whose arrival times mean nothing).
    func render(skip: Bool, served: Bool = true, growsOnly: Bool = false, dates: Bool = true) -> String {
        let listed = self.listed
        var lines = ["#EXTM3U", "#EXT-X-VERSION:9", "#EXT-X-TARGETDURATION:\(targetDuration)"]
        var control = "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES"
        if let part = configuration.partDuration { control += ",PART-HOLD-BACK=\(Self.decimal(part * 3))" }
        control += ",CAN-SKIP-UNTIL=\(Self.decimal(skipBoundary))"
        if !isFinished && served { lines.append(control) }
        if let part = configuration.partDuration { lines.append("#EXT-X-PART-INF:PART-TARGET=\(Self.decimal(part))") }
        if isFinished && !hasDroppedSegments {
            lines.append("#EXT-X-PLAYLIST-TYPE:VOD")
        } else if growsOnly && !hasDroppedSegments {
            lines.append("#EXT-X-PLAYLIST-TYPE:EVENT")
        }
        lines.append("#EXT-X-MEDIA-SEQUENCE:\(listed.first?.sequence ?? 0)")
        let unlisted = segments.dropLast(min(configuration.windowSegments, segments.count)).filter(\.discontinuity).count
        let discontinuitySequence = droppedDiscontinuities + unlisted
        if discontinuitySequence > 0 { lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)") }
        // The time from each segment's end to the playlist's end, for skipping and for parts.
        var after: [Duration] = Array(repeating: .zero, count: listed.count)
        var total = Duration.zero
        for index in listed.indices.reversed() {
            after[index] = total
            total += listed[index].duration ?? listed[index].partsDuration
        }
        var skipped = 0
        if skip && !isFinished {
            while skipped < listed.count, listed[skipped].duration != nil, after[skipped] >= skipBoundary { skipped += 1 }
            if skipped > 0 { lines.append("#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skipped)") }
        }
        var map: Int?
        for (index, segment) in listed.enumerated().dropFirst(skipped) {
            if segment.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            if segment.map != map {
                lines.append("#EXT-X-MAP:URI=\"init-\(segment.map).mp4\"")
                map = segment.map
            }
            if dates, let time = segment.programDateTime { lines.append("#EXT-X-PROGRAM-DATE-TIME:\(Self.dateTime(time))") }
            // Parts of the segments within three target durations of the end (RFC 8216bis §4.4.4.9:
            // a player part-way through a segment that completes goes on with its parts). Without
            // INDEPENDENT=YES: Chromium 156's own HLS player fails (DEMUXER_ERROR_COULD_NOT_PARSE) on
            // a playlist whose complete segments list parts when any part carries it (measured).
            if configuration.partDuration != nil, !isFinished, after[index] < .seconds(3 * targetDuration) {
                for (number, part) in segment.parts.enumerated() {
                    lines.append("#EXT-X-PART:DURATION=\(Self.decimal(part.duration)),URI=\"\(segment.partName(number))\"")
                }
            }
            if let duration = segment.duration {
                lines.append("#EXTINF:\(Self.decimal(duration)),")
                lines.append(segment.name)
            }
        }
        if configuration.partDuration != nil, let current, !isFinished {
            lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(current.partName(current.parts.count))\"")
        }
        if isFinished { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A file of the stream by its name in the playlist.
    ///
    /// - Parameter name: `init-N.mp4`, `seg-N.m4s` or `part-N-I.m4s`.
    /// - Returns: the file; upcoming for the part the preload hint names and the segment being
    ///   written (hold the request); missing for a name never written or out of the window.
    public func resource(named name: String) -> HLSResourceState {
        guard let resource = HLSResourceName(Substring(name)) else { return .missing }
        let upcoming: HLSResourceState = isFinished ? .missing : .upcoming
        switch resource {
        case .initialization(let number):
            guard let bytes = initializations[number] else { return number == nextMap ? upcoming : .missing }
            return .available(HLSResource(bytes: bytes, contentType: "video/mp4"))
        case .segment(let sequence):
            if let segment = segments.first(where: { $0.sequence == sequence }) {
                return .available(HLSResource(bytes: segment.bytes, contentType: "video/mp4"))
            }
            return sequence == current?.sequence ? upcoming : .missing
        case .part(let sequence, let number):
            let segment = current?.sequence == sequence ? current : segments.first { $0.sequence == sequence }
            if let segment, number < segment.parts.count {
                return .available(HLSResource(bytes: Array(segment.bytes[segment.parts[number].range]), contentType: "video/mp4"))
            }
            guard let current else { return .missing }
            let isNext = sequence == current.sequence && number == current.parts.count
            let isAfter = sequence == current.sequence + 1 && number == 0
            return isNext || isAfter ? upcoming : .missing
        }
    }

    /// `duration` in seconds with three decimals (`2.000`), as playlists write durations.
    static func decimal(_ duration: Duration) -> String {
        let milliseconds = max(0, Int((duration / .microseconds(1)).rounded()) + 500) / 1000
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// `time` since 1970 as an ISO 8601 date and time in UTC with milliseconds
    /// (`2026-11-29T23:10:00.000Z`), as `EXT-X-PROGRAM-DATE-TIME` writes it.
    static func dateTime(_ time: Duration) -> String {
        let milliseconds = Int((time / .milliseconds(1)).rounded())
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let ofDay = milliseconds - days * 86_400_000
        // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar, eras of 400 years).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let seconds = ofDay / 1000
        let fraction = String(ofDay % 1000)
        return "\(year)-\(two(month))-\(two(day))T\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))."
            + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}
