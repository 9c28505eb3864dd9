import Logging

/// Points swift-log at standard error with `levelName` (trace ... critical; info if unknown), once per
/// process, and returns the logger a long-running command (`serve`, `worker`) logs under `label`.
func bootstrapStderrLogging(levelName: String, label: String) -> Logger {
    let level = Logger.Level(rawValue: levelName) ?? .info
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    var logger = Logger(label: label)
    logger.logLevel = level
    return logger
}
