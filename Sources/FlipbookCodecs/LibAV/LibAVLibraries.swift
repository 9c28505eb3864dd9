/// Loading libav ahead of its first use, for processes that run for a long time.
public enum LibAVLibraries {
    /// Loads libavformat, libavcodec, libswscale and libavutil now rather than in the first job that needs
    /// them (about 25 ms of one core and 30 MB, once per process; the libraries are loaded under a lock, so
    /// a second thread that needs them meanwhile waits). Call it from the start-up of a worker that will
    /// meet video (as nginx loads its modules before it accepts); a one-shot command gains nothing from it,
    /// and a server of stills only would carry the libraries for nothing. Throws
    /// `libraryUnavailable` if they cannot be loaded (jobs that need them then fail with the same error).
    public static func load() throws {
        _ = try LibAV.api()
    }
}
