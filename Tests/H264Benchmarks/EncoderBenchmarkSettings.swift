import CX264Baseline
import H264Encoder

/// The encoder settings of `encoder_vs_c_*`: ultrafast, zerolatency, CRF 23, no B-frames,
/// High profile, 30 fps; threads 1 or x264's choice.
func benchmarkConfiguration(threads: Int?) -> EncoderConfiguration {
    var c = EncoderConfiguration()
    c.realTime = true
    c.preset = .ultrafast
    c.tune = .zerolatency
    c.constantRateFactor = 23
    c.allowFrameReordering = false
    c.profile = .high
    c.expectedFrameRate = 30
    c.threads = threads
    return c
}

/// The same settings for the C loop, passed to `body` (the preset, tune and profile strings
/// are valid only inside it).
func withBaselineSettings<R>(threads: Int, _ body: (inout cx264_baseline_settings) -> R) -> R {
    var s = cx264_baseline_settings()
    s.width = Int32(Frames720p.width)
    s.height = Int32(Frames720p.height)
    s.threads = Int32(threads)
    s.crf = 23
    s.no_bframes = 1
    s.fps_num = 30
    s.fps_den = 1
    return "ultrafast".withCString { preset in
        "zerolatency".withCString { tune in
            "high".withCString { profile in
                s.preset = preset
                s.tune = tune
                s.profile = profile
                return body(&s)
            }
        }
    }
}
