//===----------------------------------------------------------------------===//
// The run's last line: were the targets met, and when some were not, who is
// to blame. A noisy machine or a debug build makes a miss say nothing about
// the library; a miss on a quiet machine in a release build is a regression
// (to be confirmed by a full run when it came from a --quick one).
// Pure functions of the target checks and the run's conditions, so each
// wording and the exit status of `--check` are tested directly.
//===----------------------------------------------------------------------===//

/// What besides the library can make a run miss its targets.
struct RunConditions: Sendable {
    /// How busy the rest of the machine was over the whole run; noisy by the
    /// rule of the report's "noisy run" warning (``MachineLoad/isNoisy``).
    var load: MachineLoad
    /// A debug build: per-call costs are inflated.
    var debugBuild: Bool
    /// A --quick run: few samples, so a tail figure near its limit may miss by chance.
    var quick: Bool
    /// The scenarios that ran on a noisy machine although the whole run did
    /// not, each with its load: named in the verdict of a quiet run that missed.
    var noisyScenarios: [String] = []
}

enum Verdict {
    /// The one-line verdict on `checks` (a skipped check, `pass == nil`, is
    /// counted apart and neither meets nor misses).
    static func line(_ checks: [TargetCheck], _ conditions: RunConditions) -> String {
        let evaluated = checks.filter { $0.pass != nil }.count
        let missed = checks.filter { $0.pass == false }.count
        let skipped = checks.count - evaluated
        let notEvaluated = skipped > 0 ? " (\(skipped) not evaluated)" : ""
        guard evaluated > 0 else {
            return checks.isEmpty ? "verdict: no targets in the scenarios that ran"
                : "verdict: none of the \(skipped) targets evaluated (not measured)"
        }
        let noisy = conditions.load.isNoisy
        let machine = "\(noisy ? "a noisy" : "a quiet") machine (\(conditions.load.summary))"
        guard missed > 0 else {
            let targets = evaluated == 1 ? "the 1 target" : "all \(evaluated) targets"
            return "verdict: \(targets) met\(notEvaluated)" + (noisy ? ", even on \(machine)" : "")
        }
        let counted = "\(missed) of \(evaluated) target\(evaluated == 1 ? "" : "s") missed\(notEvaluated)"
        switch (noisy, conditions.debugBuild) {
        case (false, false) where conditions.quick:
            return "verdict: \(counted) on \(machine) in a release build, but a --quick run (few samples): "
                + "rerun without --quick to confirm a regression in the library"
        case (false, false) where !conditions.noisyScenarios.isEmpty:
            return "verdict: \(counted) on \(machine) in a release build, but noisy during "
                + conditions.noisyScenarios.joined(separator: ", ")
                + ": a regression in the library unless a miss is in those scenarios (rerun them to tell)"
        case (false, false):
            return "verdict: \(counted) on \(machine) in a release build: a regression in the library"
        case (true, false):
            return "verdict: \(counted) on \(machine): rerun on a quiet machine before blaming the library"
        case (false, true):
            return "verdict: \(counted) in a debug build (per-call costs inflated): "
                + "rerun with -c release before blaming the library"
        case (true, true):
            return "verdict: \(counted) in a debug build on \(machine): "
                + "rerun with -c release on a quiet machine before blaming the library"
        }
    }

    /// The exit status of a run that wrote its full report: 1 when `check` is
    /// set and a target was missed (on a noisy machine and in a debug build
    /// too: a target is a target, and the verdict line says what to make of
    /// it), else 0. A skipped target is not a miss.
    static func exitStatus(_ checks: [TargetCheck], check: Bool) -> Int32 {
        check && checks.contains { $0.pass == false } ? 1 : 0
    }
}
