import Flipbook
import Foundation

/// The recipes a process knows by name: the built-in `default` and `probe`, and any read from a JSON file
/// (which may replace them). The file's shape:
///
///     {"recipes": {"gallery": {"still":     [{"name": "thumb", "operation": "thumb", "size": 320, "fit": "inside", "format": "webp"}],
///                              "animation": [{"name": "video", "operation": "video"}],
///                              "video":     [{"name": "poster", "operation": "poster", "size": 480, "format": "jpeg", "quality": 85}],
///                              "placeholders": true, "truncated": "fail", "timeout": "10m"}}}
///
/// Every key but `name` and `operation` is optional (size: 320 for stills and posters, the source's size for
/// video; fit: inside; format: jpeg; quality: 80; placeholders: true; truncated: `fail` or `accept`; timeout:
/// seconds, or a number with `ms`, `s`, `m` or `h`, for `flipbook worker`; a kind left out makes nothing).
public struct RecipeBook: Sendable {
    /// Recipes by name.
    public private(set) var recipes: [String: Recipe]
    /// The recipe used when none is named: the file's `default`, else its only recipe, else the built-in.
    public private(set) var defaultName = "default"

    /// `default` and `probe`.
    public static let builtIn = RecipeBook(recipes: [Recipe.standard.name: .standard, Recipe.probe.name: .probe])

    init(recipes: [String: Recipe]) { self.recipes = recipes }

    /// The built-in recipes plus those in the JSON file at `path`. Throws `.invalidArgument` (`.io` if the
    /// file cannot be read) with the file's name and what is wrong.
    public static func load(path: String) throws -> RecipeBook {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FlipbookError(.io, "cannot read the recipe file \(path)")
        }
        do {
            return try parse(data)
        } catch let error as FlipbookError {
            throw FlipbookError(.invalidArgument, "\(path): \(error.message)")
        }
    }

    /// The built-in recipes plus those in `json`.
    public static func parse(_ json: Data) throws -> RecipeBook {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch let DecodingError.dataCorrupted(context) {
            throw FlipbookError(.invalidArgument, "not valid JSON: \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw FlipbookError(.invalidArgument, "\(path(context)) needs \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw FlipbookError(.invalidArgument, "\(path(context)): \(context.debugDescription)")
        }
        var book = builtIn
        for (name, entry) in file.recipes {
            let recipe = try entry.recipe(named: name)
            try recipe.validate()
            book.recipes[name] = recipe
        }
        if file.recipes["default"] == nil, file.recipes.count == 1 { book.defaultName = file.recipes.keys.first! }
        return book
    }

    /// The recipe called `name` (nil: the default). Throws `.invalidArgument` for a name it does not know.
    public func recipe(named name: String? = nil) throws -> Recipe {
        let wanted = name ?? defaultName
        guard let recipe = recipes[wanted] else {
            throw FlipbookError(.invalidArgument, "no recipe named \"\(wanted)\" (known: \(recipes.keys.sorted().joined(separator: ", ")))")
        }
        return recipe
    }

    private static func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        return keys.isEmpty ? "the file" : keys.joined(separator: ".")
    }

    private struct File: Decodable {
        var recipes: [String: Entry]
    }

    private struct Entry: Decodable {
        var still: [Item]?
        var animation: [Item]?
        var video: [Item]?
        var placeholders: Bool?
        var truncated: String?
        var timeout: Duration?

        func recipe(named name: String) throws -> Recipe {
            var recipe = Recipe(name: name, still: try (still ?? []).map { try $0.derivative() },
                                animation: try (animation ?? []).map { try $0.derivative() },
                                video: try (video ?? []).map { try $0.derivative() }, placeholders: placeholders ?? true)
            switch truncated ?? "fail" {
            case "fail": recipe.acceptTruncated = false
            case "accept": recipe.acceptTruncated = true
            default: throw FlipbookError(.invalidArgument, "recipe \(name): truncated is \"fail\" or \"accept\"")
            }
            recipe.timeoutSeconds = timeout?.seconds
            return recipe
        }
    }

    /// A recipe's `timeout`: a number of seconds, or a string such as "90s", "500ms", "10m" or "1h".
    private struct Duration: Decodable {
        var seconds: Double

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                seconds = number
                return
            }
            let text = try container.decode(String.self)
            guard let parsed = Self.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "timeout \"\(text)\" is not a duration such as 90s or 10m")
            }
            seconds = parsed
        }

        /// "500ms", "90s", "10m", "1h" or a bare number of seconds; nil otherwise.
        static func parse(_ text: String) -> Double? {
            let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
            for (suffix, scale) in units where text.hasSuffix(suffix) {
                if let value = Double(text.dropLast(suffix.count)) { return value * scale }
            }
            return Double(text)
        }
    }

    private struct Item: Decodable {
        var name: String
        var operation: String
        var size: Int?
        var fit: String?
        var format: String?
        var quality: Int?

        func derivative() throws -> Recipe.Derivative {
            guard let op = Recipe.Derivative.Operation(rawValue: operation) else {
                throw FlipbookError(.invalidArgument, "\(name): operation \"\(operation)\" is not one of "
                                    + Recipe.Derivative.Operation.allCases.map(\.rawValue).joined(separator: ", "))
            }
            guard let fit = Fit(rawValue: fit ?? "inside") else { throw FlipbookError(.invalidArgument, "\(name): fit is inside or cover") }
            guard let format = OutputFormat(fileExtension: format ?? "jpeg") else {
                throw FlipbookError(.invalidArgument, "\(name): format is jpeg, png or webp")
            }
            return Recipe.Derivative(name: name, operation: op, size: size, fit: fit, format: format, quality: quality ?? 80)
        }
    }
}
