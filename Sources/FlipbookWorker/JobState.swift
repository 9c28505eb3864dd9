/// The states of a job.
public enum JobState {
    /// Every state a row may have, in the order a page lists them.
    public static let all = ["available", "running", "done", "failed", "cancelled"]
}
