package io.flexiq.dashboard;

import java.time.Instant;
import java.util.Locale;

/**
 * A chart of two counts per minute, completed (green) and dead-lettered (red), as inline SVG:
 * no script, and no style of its own beyond SVG's presentation attributes, which the pages'
 * Content-Security-Policy allows.
 */
final class Chart {
    private static final int WIDTH = 720;
    private static final int HEIGHT = 140;
    /** Room for the axis labels: left, bottom. */
    private static final int LEFT = 48;
    private static final int BOTTOM = 18;
    private static final String COMPLETED = "#2e7d32";
    private static final String DEAD = "#c62828";

    private Chart() {}

    /**
     * The chart of these counts, a slot per minute from {@code first} to {@code last}, both
     * series scaled to the larger one's largest count.
     */
    static String svg(long[] completed, long[] dead, Instant first, Instant last, String title) {
        long max = 1;
        long completedTotal = 0;
        long deadTotal = 0;
        for (int i = 0; i < completed.length; i++) {
            max = Math.max(max, Math.max(completed[i], dead[i]));
            completedTotal += completed[i];
            deadTotal += dead[i];
        }
        String summary = completedTotal + " completed, " + deadTotal + " dead";
        int plotHeight = HEIGHT - BOTTOM;
        StringBuilder out = new StringBuilder(256 + completed.length * 24)
                .append("<svg class=\"chart\" width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT)
                .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
                .append("\" role=\"img\" aria-label=\"").append(Html.esc(title + ": " + summary)).append("\"><title>")
                .append(Html.esc(title + ": " + summary)).append("</title>")
                .append(line(LEFT, 0, LEFT, plotHeight)).append(line(LEFT, plotHeight, WIDTH, plotHeight))
                .append(label(LEFT - 4, 10, "end", Long.toString(max)))
                .append(label(LEFT - 4, plotHeight, "end", "0"))
                .append(label(LEFT, HEIGHT - 4, "start", Html.time(first)))
                .append(label(WIDTH, HEIGHT - 4, "end", Html.time(last)))
                .append(series(completed, max, plotHeight, COMPLETED))
                .append(series(dead, max, plotHeight, DEAD))
                .append("</svg><p class=\"muted\"><span class=\"completed\">completed</span> ")
                .append(completedTotal).append(", <span class=\"dead\">dead</span> ").append(deadTotal)
                .append("; the largest minute ").append(max).append("</p>");
        return out.toString();
    }

    private static String series(long[] counts, long max, int plotHeight, String colour) {
        StringBuilder points = new StringBuilder();
        double step = counts.length == 1 ? 0 : (double) (WIDTH - LEFT) / (counts.length - 1);
        for (int i = 0; i < counts.length; i++) {
            double x = LEFT + i * step;
            double y = plotHeight - (double) counts[i] * (plotHeight - 2) / max;
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        return "<polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\" points=\""
                + points.toString().trim() + "\"/>";
    }

    private static String line(int x1, int y1, int x2, int y2) {
        return "<line x1=\"" + x1 + "\" y1=\"" + y1 + "\" x2=\"" + x2 + "\" y2=\"" + y2 + "\" stroke=\"#99a\"/>";
    }

    private static String label(int x, int y, String anchor, String text) {
        return "<text x=\"" + x + "\" y=\"" + y + "\" text-anchor=\"" + anchor
                + "\" font-size=\"10\" fill=\"#556\">" + Html.esc(text) + "</text>";
    }
}
