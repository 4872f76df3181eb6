package io.flexiq.demo;

import java.util.Locale;
import java.util.Optional;

/**
 * What the demo says of the URL in {@code FLEXIQ_DATABASE_URL} before it connects: where it
 * points, or why FlexiQ would refuse it. What it shows never includes a user, a password or a
 * query (which may hold one).
 */
final class DatabaseUrl {
    /** What FlexiQ takes, for the refusals. */
    static final String FORM = "postgres://user:password@host:port/database";

    private DatabaseUrl() {}

    /** The header line for {@code url}: where it points, or what was refused and why. */
    static String header(String url) {
        return refusal(url).orElseGet(() -> "using the database in FLEXIQ_DATABASE_URL (" + where(url) + ")");
    }

    /** Why FlexiQ would refuse {@code url} (it takes {@code postgres://} and {@code postgresql://} URLs only), if it would. */
    static Optional<String> refusal(String url) {
        int separator = url.indexOf("://");
        String lower = url.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:")) {
            String rest = lower.startsWith("jdbc:postgresql://") ? location(url.substring("jdbc:postgresql://".length())) : null;
            return Optional.of("FLEXIQ_DATABASE_URL is refused: it holds a JDBC URL (" + shown(url) + "), and FlexiQ "
                    + "takes libpq's form, " + FORM
                    + (rest == null ? "" : " (here postgres://user:password@" + rest + ")"));
        }
        if (separator < 0) {
            return Optional.of("FLEXIQ_DATABASE_URL is refused: it is not a URL (its value is not shown: it may hold a "
                    + "password); FlexiQ takes " + FORM);
        }
        // As FlexiQ reads it: these two schemes, in lower case.
        String scheme = url.substring(0, separator);
        if (!scheme.equals("postgres") && !scheme.equals("postgresql")) {
            return Optional.of("FLEXIQ_DATABASE_URL is refused: its scheme " + scheme
                    + ":// is not PostgreSQL's (" + shown(url) + "); FlexiQ takes " + FORM);
        }
        return Optional.empty();
    }

    /**
     * Host (or hosts), port and database of a {@code postgres://} URL: {@code db:5432/app},
     * {@code db-a,db-b/app}, {@code default host/app} for a URL that names no host.
     */
    static String where(String url) {
        String rest = location(url.substring(url.indexOf("://") + 3));
        return rest.isEmpty() || rest.startsWith("/") ? "default host" + rest : rest;
    }

    /** The hosts and path after {@code scheme://}, without user, password and query. */
    private static String location(String afterScheme) {
        int query = afterScheme.indexOf('?');
        String location = query < 0 ? afterScheme : afterScheme.substring(0, query);
        int slash = location.indexOf('/');
        String authority = slash < 0 ? location : location.substring(0, slash);
        // A password may hold '@' unencoded: the hosts follow the last one.
        int at = authority.lastIndexOf('@');
        return location.substring(at + 1);
    }

    /** A refused URL as the header shows it: scheme, hosts and path. */
    private static String shown(String url) {
        int separator = url.indexOf("://");
        if (separator < 0) {
            int query = url.indexOf('?');
            return query < 0 ? url : url.substring(0, query);
        }
        return url.substring(0, separator + 3) + location(url.substring(separator + 3));
    }
}
