extension MediaInfo {
    /// One JSON object with the documented keys, null where unknown.
    public func jsonLine(file: String) -> String {
        func number(_ v: Int?) -> String { v.map(String.init) ?? "null" }
        func bool(_ v: Bool?) -> String { v.map { $0 ? "true" : "false" } ?? "null" }
        let fields = [
            "\"file\":\(JSON.string(file))",
            "\"type\":\(JSON.string(type.rawValue))",
            "\"width\":\(number(width))",
            "\"height\":\(number(height))",
            "\"orientation\":\(number(orientation))",
            "\"frames\":\(number(frames))",
            "\"durationMs\":\(number(durationMs))",
            "\"loopCount\":\(number(loopCount))",
            "\"hasAlpha\":\(bool(hasAlpha))",
            "\"codec\":\(codec.map(JSON.string) ?? "null")",
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The JSON object for a file that could not be probed: the same keys, null, plus `error`.
    public static func errorJSONLine(file: String, error: Error) -> String {
        let typed = error as? FlipbookError
        var line = "{\"file\":\(JSON.string(file)),\"type\":null,\"width\":null,\"height\":null,\"orientation\":null,"
        line += "\"frames\":null,\"durationMs\":null,\"loopCount\":null,\"hasAlpha\":null,\"codec\":null,"
        line += "\"error\":{\"code\":\(JSON.string(typed?.code.rawValue ?? "error")),"
        line += "\"message\":\(JSON.string(typed?.description ?? String(describing: error)))}}"
        return line
    }

    /// A line for people.
    public func humanLine(file: String) -> String {
        var parts = ["\(file): \(type)"]
        if let width, let height { parts.append("\(width)x\(height)") }
        if let codec { parts.append(codec) }
        if let orientation, orientation != 1 { parts.append("orientation \(orientation)") }
        if let frames, frames != 1 { parts.append("\(frames) frames") }
        if let durationMs { parts.append("\(durationMs) ms") }
        if let loopCount { parts.append(loopCount == 0 ? "loops forever" : "loop count \(loopCount)") }
        if hasAlpha == true { parts.append("alpha") }
        return parts.joined(separator: ", ")
    }
}
