package io.flexiq.dashboard;

import io.flexiq.JobState;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** The HTML around every page, escaping, and the headers that keep the pages to themselves. */
final class Html {
    private static final String STYLE = String.join("\n",
            "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}",
            "header{background:#1d2330;color:#fff;padding:8px 16px;display:flex;flex-wrap:wrap;gap:12px;align-items:center}",
            "header a{color:#cfe0ff;text-decoration:none}header .brand{font-weight:600;color:#fff}",
            "header form{margin-left:auto;display:flex;gap:4px}header .who{color:#aab}",
            "main{padding:16px}h1{font-size:20px;margin:0 0 12px}",
            "table{border-collapse:collapse;background:#fff}th,td{border:1px solid #dde;padding:4px 8px;text-align:left;vertical-align:top}",
            "th{background:#eef0f4}td.n{text-align:right;font-variant-numeric:tabular-nums}",
            "dl{display:grid;grid-template-columns:max-content auto;gap:4px 16px;background:#fff;padding:12px;border:1px solid #dde}",
            "dt{font-weight:600}dd{margin:0}pre{background:#fff;border:1px solid #dde;padding:8px;white-space:pre-wrap;word-break:break-all}",
            ".notice{background:#e6f4ea;border:1px solid #9c9;padding:8px;margin-bottom:12px}",
            ".problem{background:#fdecea;border:1px solid #d99;padding:8px;margin-bottom:12px}",
            ".actions{display:flex;gap:16px;margin:12px 0}.actions form{display:flex;gap:4px}",
            "button{cursor:pointer}.dead{color:#a11}.muted{color:#778}svg.spark polyline{fill:none;stroke:#3a6fd8;stroke-width:1.5}.completed{color:#2e7d32}",
            "nav.pages{margin-top:12px}.filters{display:flex;gap:4px;margin-bottom:12px}",
            "td form{display:inline-block;margin-right:4px}h2{font-size:16px;margin:16px 0 8px}");
    /** Headers for every response, errors included. */
    static final Map<String, String> SECURITY_HEADERS = securityHeaders();

    private Html() {}

    private static Map<String, String> securityHeaders() {
        Map<String, String> headers = new LinkedHashMap<>();
        // No script at all, and only this exact style block (by its hash); forms post back here only.
        headers.put("Content-Security-Policy", "default-src 'none'; style-src '" + styleHash() + "'; "
                + "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
        headers.put("X-Frame-Options", "DENY");
        headers.put("X-Content-Type-Options", "nosniff");
        headers.put("Referrer-Policy", "no-referrer");
        headers.put("Cache-Control", "no-store");
        return Map.copyOf(headers);
    }

    static String esc(String text) {
        if (text == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /** Escapes a value for a URL's query string. */
    static String query(String value) {
        return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    static String time(Instant instant) {
        return instant == null ? "" : instant.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    static String state(JobState state) {
        return state.name().toLowerCase(Locale.ROOT);
    }

    /** A POST form of one button; {@code fields} is HTML already escaped. */
    static String form(PageRequest request, String action, String fields, String button) {
        return "<form method=\"post\" action=\"" + esc(request.link(action)) + "\">" + hidden(request) + fields
                + "<button type=\"submit\">" + esc(button) + "</button></form>";
    }

    /** A whole page; {@code body} and {@code banner} are HTML already escaped. */
    static String page(PageRequest request, String title, String banner, String body) {
        StringBuilder out = new StringBuilder(4096);
        out.append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                .append("<title>").append(esc(title)).append(" · FlexiQ</title><style>").append(STYLE)
                .append("</style></head><body><header><a class=\"brand\" href=\"").append(esc(request.link("/")))
                .append("\">FlexiQ</a><a href=\"").append(esc(request.link("/"))).append("\">Queues</a>");
        for (JobState state : JobState.values()) {
            out.append("<a href=\"").append(esc(request.link("/jobs?state=" + state(state)))).append("\">")
                    .append(state == JobState.DEAD ? "Dead letters" : capitalized(state)).append("</a>");
        }
        out.append("<a href=\"").append(esc(request.link("/workers"))).append("\">Workers</a>");
        out.append("<a href=\"").append(esc(request.link("/schedules"))).append("\">Schedules</a>");
        out.append("<a href=\"").append(esc(request.link("/charts"))).append("\">Charts</a>");
        // The key goes in a POST body, never in a URL that logs and history would keep.
        out.append("<form method=\"post\" action=\"").append(esc(request.link("/search"))).append("\">")
                .append(hidden(request))
                .append("<input name=\"scope\" placeholder=\"scope\" value=\"default\" size=\"10\" aria-label=\"Key scope\">")
                .append("<input name=\"key\" type=\"password\" placeholder=\"find by key\" autocomplete=\"off\" aria-label=\"Key\">")
                .append("<button type=\"submit\">Find</button></form><span class=\"who\">")
                .append(esc(request.operator())).append("</span></header><main>")
                .append(banner).append("<h1>").append(esc(title)).append("</h1>").append(body)
                .append("</main></body></html>");
        return out.toString();
    }

    static String capitalized(JobState state) {
        return capitalized(state(state));
    }

    static String capitalized(String name) {
        return Character.toUpperCase(name.charAt(0)) + name.substring(1);
    }

    private static String hidden(PageRequest request) {
        return "<input type=\"hidden\" name=\"" + esc(request.csrf().name()) + "\" value=\""
                + esc(request.csrf().token()) + "\">";
    }

    private static String styleHash() {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(STYLE.getBytes(StandardCharsets.UTF_8));
            return "sha256-" + Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM lacks SHA-256, which every Java platform must have", e);
        }
    }
}
