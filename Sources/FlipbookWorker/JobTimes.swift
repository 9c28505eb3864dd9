/// How long this worker's jobs take: what sizes its claims (`pace`) and what tells whether held jobs
/// would wait too long for a thread (`wait(for:threads:)`).
///
/// Both are averages that move a tenth of the way to each new job's seconds. They used to be one decaying
/// maximum, which read a single 60 ms probe of a 50 MB video among 0.7 ms ones as "every held job takes
/// 60 ms": the worker gave back a hundred held jobs and claimed them again a few at a time, once per large
/// file (2,000 probe jobs with one such file in 50: 170 claims instead of 30, three times the PostgreSQL CPU
/// a job). An average moves by a tenth of an outlier, and a change of workload (short probe jobs, then
/// seconds-long videos) still shows at the first job of the new kind, because the expectation is kept per
/// recipe.
struct JobTimes: Sendable {
    /// Seconds of a recent job of any recipe; nil before the first.
    private(set) var typical: Double?
    private var byRecipe: [String: Double] = [:]
    private var latestRecipe: String?

    /// How far each new job moves the averages.
    static let weight = 0.1

    mutating func record(recipe: String, seconds: Double) {
        typical = Self.moved(typical, toward: seconds)
        byRecipe[recipe] = Self.moved(byRecipe[recipe], toward: seconds)
        latestRecipe = recipe
    }

    /// Seconds to size the hold by: the recent average, or that of the latest job's recipe if it is longer.
    /// After short jobs of one recipe, the first long job of another shrinks the hold at once (the overall
    /// average would move only a tenth of the way), so a worker that gives held jobs back for idle workers
    /// does not claim them again itself before those workers can. Nil before the first job.
    var pace: Double? {
        guard let typical else { return nil }
        return max(typical, latestRecipe.flatMap { byRecipe[$0] } ?? typical)
    }

    /// Seconds a job of `recipe` is expected to take: its recipe's average, else that of any recipe (0 before
    /// the first job).
    func expected(recipe: String) -> Double {
        byRecipe[recipe] ?? typical ?? 0
    }

    /// Seconds until `threads` threads have run `jobs`, each expected to take `expected(recipe:)`.
    func wait(for jobs: ArraySlice<Job>, threads: Int) -> Double {
        jobs.reduce(0) { $0 + expected(recipe: $1.recipe) } / Double(threads)
    }

    /// How many of `waiting` to mark started in one statement (`JobQueue.markStarted`): the first, plus those
    /// after it expected to start within `window` seconds, given the jobs on threads (recipe and seconds
    /// they have run) and `threads` threads. Only jobs of recipes whose average is known count, on threads as
    /// in the queue: a job of a recipe not seen yet (or one running past its average) may take any time, and a
    /// job marked ahead of it would have its attempt counted if the worker died meanwhile without ever having
    /// started it. A worker of millisecond jobs then marks a claim's worth at a time; one of slow jobs, one.
    func startBatch(waiting: ArraySlice<Job>, onThreads: [(recipe: String, elapsed: Double)], threads: Int,
                    window: Double = 0.05) -> Int {
        guard let first = waiting.first else { return 0 }
        var budget = window * Double(threads)
        for running in onThreads {
            guard let average = byRecipe[running.recipe], running.elapsed <= average * 2 else { return 1 }
            budget -= max(0, average - running.elapsed)
        }
        guard let firstAverage = byRecipe[first.recipe] else { return 1 }
        budget -= firstAverage
        var count = 1
        for job in waiting.dropFirst() {
            guard let average = byRecipe[job.recipe], budget - average >= 0 else { break }
            budget -= average
            count += 1
        }
        return count
    }

    private static func moved(_ average: Double?, toward seconds: Double) -> Double {
        guard let average else { return seconds }
        return average + (seconds - average) * weight
    }
}
