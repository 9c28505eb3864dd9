import CFFmpeg

/// libav's log level, which is one setting for the whole process.
///
/// Flipbook's own codec contexts log three levels below what libav would (see `CodecContext`), and so do the
/// decoders avformat_find_stream_info opens for it (`FormatInput.probeStreams`), so a host at libav's default
/// level sees none of their messages; the demuxers' warnings about damaged files still reach libav's log (a
/// format context has no level offset). Flipbook never changes the process-wide level itself: the `flipbook`
/// executable calls ``silenceProcessWide()`` at start, as an app that wants quiet may.
public enum LibAVLog {
    /// Sets libav's process-wide log level to quiet, now if libav is loaded, else the moment Flipbook
    /// loads it (this call does not load it). Every libav user in the process is silenced, so call it from
    /// an executable's `main`, never from a library.
    public static func silenceProcessWide() { fb_av_quiet_logs() }
}
