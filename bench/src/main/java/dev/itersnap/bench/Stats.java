package dev.itersnap.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Timings of the measured (post warm-up) repetitions of one thing, in milliseconds. */
final class Stats {
    private final List<Double> millis = new ArrayList<>();

    void add(long nanos) {
        millis.add(nanos / 1e6);
    }

    boolean isEmpty() {
        return millis.isEmpty();
    }

    int count() {
        return millis.size();
    }

    double median() {
        List<Double> s = sorted();
        int n = s.size();
        if (n == 0) {
            return Double.NaN;
        }
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    double min() {
        return sorted().get(0);
    }

    double max() {
        List<Double> s = sorted();
        return s.get(s.size() - 1);
    }

    /** (max - min) / median, in percent: the spread of the repetitions. */
    double spreadPct() {
        return millis.isEmpty() ? Double.NaN : 100 * (max() - min()) / median();
    }

    /** "median ms (min–max, ±spread%)". */
    String describe() {
        if (millis.isEmpty()) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%s (%s–%s, n=%d)", fmt(median()), fmt(min()), fmt(max()), count());
    }

    static String fmt(double ms) {
        if (Double.isNaN(ms)) {
            return "n/a";
        }
        return ms >= 100 ? String.format(Locale.ROOT, "%.0f", ms) : String.format(Locale.ROOT, "%.1f", ms);
    }

    static String ratio(Stats a, Stats b) {
        if (a == null || b == null || a.isEmpty() || b.isEmpty()) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%.2fx", a.median() / b.median());
    }

    /** Counts of the measured repetitions: the value when they agree, else "median (min–max)". */
    static String counts(List<Long> values) {
        if (values.isEmpty()) {
            return "n/a";
        }
        List<Long> s = new ArrayList<>(values);
        Collections.sort(s);
        long min = s.get(0);
        long max = s.get(s.size() - 1);
        if (min == max) {
            return String.format(Locale.ROOT, "%,d", min);
        }
        int n = s.size();
        double median = n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2.0;
        return String.format(Locale.ROOT, "%,.0f (%,d–%,d)", median, min, max);
    }

    private List<Double> sorted() {
        List<Double> s = new ArrayList<>(millis);
        Collections.sort(s);
        return s;
    }
}
