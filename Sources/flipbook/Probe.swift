import ArgumentParser
import Flipbook

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe media files: type, size, orientation, frames, duration, loop count, alpha, codec.")

    @Argument(help: "Input files or http(s) URLs.") var inputs: [String]
    @OptionGroup var sources: SourceOptions

    @Flag(help: "One JSON object per file.") var json = false

    func run() throws {
        var failed = false
        for path in inputs {
            do {
                let info = try openMedia(path, sources: sources).probe()
                printOut(json ? info.jsonLine(file: path) : info.humanLine(file: path))
            } catch {
                failed = true
                if json {
                    printOut(MediaInfo.errorJSONLine(file: path, error: error))
                } else {
                    printError(failureLine(path, error))
                }
            }
        }
        if failed { throw ExitCode(1) }
    }
}
