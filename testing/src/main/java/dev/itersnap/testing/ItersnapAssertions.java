package dev.itersnap.testing;

/**
 * Entry point of the AssertJ assertions on what a model left behind. Import statically next to AssertJ's:
 *
 * <pre>{@code
 * import static dev.itersnap.testing.ItersnapAssertions.assertThat;
 * import static dev.itersnap.testing.Version.version;
 *
 * assertThat(kit.history())
 *         .hasCurrentVersion(2, "tier", "gold")
 *         .hasVersions(1,
 *                 version().validFrom("2024-03-01 09:00").changeType("update").changedAttributes("tier"),
 *                 version().validFrom("2024-03-02 10:00").validTo(null).with("tier", "silver"));
 * assertThat(kit.errorLog()).hasSetAside("duplicate_key", "customer_id", 7);
 * }</pre>
 */
public final class ItersnapAssertions {
    private ItersnapAssertions() {
    }

    /** Assertions on a history table. */
    public static HistoryAssert assertThat(History history) {
        return new HistoryAssert(history);
    }

    /** Assertions on the rows a model set aside. */
    public static ErrorLogAssert assertThat(ErrorLog errorLog) {
        return new ErrorLogAssert(errorLog);
    }
}
