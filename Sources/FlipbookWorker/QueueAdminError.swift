/// Why `QueueAdmin` refused.
public enum QueueAdminError: Error, CustomStringConvertible {
    /// The database lacks the schema, or has an older one; the text names the migration command.
    case schema(String)
    /// An argument it cannot use.
    case invalid(String)

    public var description: String {
        switch self {
        case .schema(let text), .invalid(let text): text
        }
    }
}
