package io.flexiq.dashboard;

/** A small inline SVG line of counts per minute, drawn without script or styles of its own. */
final class Sparkline {
    private static final int WIDTH = 120;
    private static final int HEIGHT = 24;

    private Sparkline() {}

    /** The line of these counts, oldest first, scaled to the largest; titled with their total. */
    static String svg(long[] counts, String title) {
        long max = 1;
        long total = 0;
        for (long count : counts) {
            max = Math.max(max, count);
            total += count;
        }
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < counts.length; i++) {
            double x = counts.length == 1 ? WIDTH : (double) i * WIDTH / (counts.length - 1);
            double y = HEIGHT - 1 - (double) counts[i] * (HEIGHT - 2) / max;
            points.append(String.format(java.util.Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        return "<svg class=\"spark\" width=\"" + WIDTH + "\" height=\"" + HEIGHT + "\" viewBox=\"0 0 " + WIDTH + " "
                + HEIGHT + "\" role=\"img\" aria-label=\"" + Html.esc(title) + "\"><title>" + Html.esc(title) + ": "
                + total + "</title><polyline points=\"" + points.toString().trim() + "\"/></svg>";
    }
}
