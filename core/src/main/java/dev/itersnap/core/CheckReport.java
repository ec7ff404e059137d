package dev.itersnap.core;

import java.util.List;

/** The result of a pre-flight check of a model on a database: every check, in the order they ran. Immutable. */
public record CheckReport(String model, List<Check> checks) {
    /** Copies the list. */
    public CheckReport {
        checks = List.copyOf(checks);
    }

    /** True when every check passed. */
    public boolean passed() {
        return checks.stream().allMatch(Check::passed);
    }

    /** The checks that failed. */
    public List<Check> failures() {
        return checks.stream().filter(c -> !c.passed()).toList();
    }
}
