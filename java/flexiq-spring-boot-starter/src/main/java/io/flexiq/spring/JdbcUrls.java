package io.flexiq.spring;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Turns the application's PostgreSQL JDBC URL ({@code spring.datasource.url} with its user and
 * password) into the {@code postgres://} URL the FlexiQ client takes, reading it as the PostgreSQL
 * JDBC driver does: {@code jdbc:postgresql://host:port/database?params} (also
 * {@code jdbc:postgresql:database} and {@code jdbc:postgresql:/}, host {@code localhost}),
 * IPv6 hosts in brackets, percent-encoded values.
 *
 * <p>Carried over: {@code user} and {@code password} (from the URL, as the driver prefers them,
 * else from the given ones), {@code sslmode} ({@code ssl=true} or a bare {@code ssl} without
 * {@code sslmode} meaning {@code verify-full}, as in the driver), {@code sslrootcert},
 * {@code sslcert}, {@code sslkey} (PEM files: FlexiQ reads no PKCS-8 DER key),
 * {@code ApplicationName} (as {@code application_name}) and {@code options}. Several hosts are
 * carried over in their order, with libpq's {@code target_session_attrs}: {@code primary} for the
 * driver's {@code targetServerType} {@code primary}, {@code master} or {@code preferPrimary},
 * else {@code read-write} (FlexiQ writes, so it never takes a standby the way the driver's
 * default {@code any} may). Refused, since the client cannot honour them: a
 * {@code targetServerType} that asks for a standby, and the driver's own TLS hooks
 * ({@code sslfactory}, {@code sslpassword}, {@code sslpasswordcallback},
 * {@code sslhostnameverifier}). Other parameters tune the JDBC driver only and are left out.
 */
final class JdbcUrls {
    private static final String PREFIX = "jdbc:postgresql:";
    /** The driver's TLS hooks, which have no counterpart in FlexiQ's client. */
    private static final Set<String> REFUSED = Set.of("sslfactory", "sslfactoryarg", "sslpassword",
            "sslpasswordcallback", "sslhostnameverifier");
    /** What to do about any refusal here: the URL's problem is in the description. */
    private static final String ACTION = "Point spring.datasource.url at PostgreSQL as jdbc:postgresql://host:port/database"
            + " with settings FlexiQ can carry over, or set flexiq.url to a postgres://user:password@host:port/database"
            + " URL, which FlexiQ then uses instead";

    private JdbcUrls() {}

    /**
     * The {@code postgres://} URL of the database a JDBC URL names.
     *
     * @param jdbcUrl the JDBC URL ({@code spring.datasource.url})
     * @param username the user when the URL names none, or null
     * @param password the password when the URL gives none, or null
     * @throws FlexiQConfigurationException if the URL is not PostgreSQL's or cannot be carried
     *     over; it names the problem and what to set, never the password
     */
    static String toPostgresUrl(String jdbcUrl, String username, String password) {
        if (jdbcUrl == null || jdbcUrl.isBlank()) {
            throw MissingDatabase.none();
        }
        if (!jdbcUrl.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            throw refused("spring.datasource.url is not a PostgreSQL JDBC URL (it starts with " + scheme(jdbcUrl)
                    + "), and FlexiQ keeps its jobs in PostgreSQL", null);
        }
        String rest = jdbcUrl.substring(PREFIX.length());
        int question = rest.indexOf('?');
        String query = question < 0 ? "" : rest.substring(question + 1);
        String location = question < 0 ? rest : rest.substring(0, question);

        String hosts;
        String database;
        if (location.startsWith("//")) {
            String authority = location.substring(2);
            int slash = authority.indexOf('/');
            hosts = slash < 0 ? authority : authority.substring(0, slash);
            database = slash < 0 ? "" : authority.substring(slash + 1);
            if (hosts.isEmpty()) {
                hosts = "localhost";
            }
        } else {
            hosts = "localhost";
            database = location.startsWith("/") ? location.substring(1) : location;
        }
        List<String> hostList = new ArrayList<>();
        for (String entry : hosts.split(",", -1)) {
            hostList.add(host(entry));
        }
        Map<String, String> params = params(query);

        String user = params.getOrDefault("user", username);
        String pass = params.getOrDefault("password", password);
        StringBuilder url = new StringBuilder("postgres://");
        if ((user != null && !user.isEmpty()) || (pass != null && !pass.isEmpty())) {
            url.append(encode(user == null ? "" : user));
            if (pass != null && !pass.isEmpty()) {
                url.append(':').append(encode(pass));
            }
            url.append('@');
        }
        url.append(String.join(",", hostList)).append('/').append(encode(decode(database, "the database name")));

        Map<String, String> carried = new LinkedHashMap<>();
        String sslmode = params.get("sslmode");
        if (sslmode == null && params.containsKey("ssl")) {
            String ssl = params.get("ssl");
            if (ssl.isEmpty() || ssl.equalsIgnoreCase("true")) {
                sslmode = "verify-full";
            }
        }
        if (sslmode != null && !sslmode.isEmpty()) {
            carried.put("sslmode", sslmode);
        }
        for (String name : List.of("sslrootcert", "sslcert", "sslkey", "options")) {
            if (params.containsKey(name)) {
                carried.put(name, params.get(name));
            }
        }
        if (params.containsKey("ApplicationName")) {
            carried.put("application_name", params.get("ApplicationName"));
        }
        if (hostList.size() > 1) {
            carried.put("target_session_attrs", sessionAttrs(params.getOrDefault("targetServerType", "any")));
        }
        char separator = '?';
        for (Map.Entry<String, String> e : carried.entrySet()) {
            url.append(separator).append(e.getKey()).append('=').append(encode(e.getValue()));
            separator = '&';
        }
        return url.toString();
    }

    /** libpq's target_session_attrs for the driver's targetServerType, among several hosts. */
    private static String sessionAttrs(String targetServerType) {
        switch (targetServerType) {
            case "primary":
            case "master":
            case "preferPrimary":
                return "primary";
            case "any":
                return "read-write";
            default:
                throw refused("spring.datasource.url asks for targetServerType="
                        + targetServerType + ", a standby, where FlexiQ cannot write its jobs", null);
        }
    }

    /** One host with its port, IPv6 addresses kept in brackets. */
    private static String host(String entry) {
        String name;
        String port;
        if (entry.startsWith("[")) {
            int close = entry.indexOf(']');
            if (close < 0) {
                throw refused("spring.datasource.url has an IPv6 host without its closing bracket: "
                        + entry, null);
            }
            name = entry.substring(0, close + 1);
            String after = entry.substring(close + 1);
            if (!after.isEmpty() && !after.startsWith(":")) {
                throw refused("spring.datasource.url has text after the IPv6 host " + name
                        + " that is not a port: " + after, null);
            }
            port = after.isEmpty() ? "" : after.substring(1);
        } else {
            int colon = entry.lastIndexOf(':');
            name = colon < 0 ? entry : entry.substring(0, colon);
            port = colon < 0 ? "" : entry.substring(colon + 1);
            if (name.contains(":")) {
                throw refused("spring.datasource.url has an IPv6 host without brackets (" + entry
                        + "); write it as [" + name + "]:port", null);
            }
            if (name.isEmpty()) {
                name = "localhost";
            }
        }
        if (port.isEmpty()) {
            return name;
        }
        int number;
        try {
            number = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            number = -1;
        }
        if (number < 1 || number > 65535 || !port.chars().allMatch(Character::isDigit)) {
            throw refused("spring.datasource.url has a port that is not a number from 1 to 65535: "
                    + port, null);
        }
        return name + ":" + number;
    }

    private static Map<String, String> params(String query) {
        Map<String, String> params = new LinkedHashMap<>();
        if (query.isEmpty()) {
            return params;
        }
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1), "parameter " + name);
            if (REFUSED.contains(name.toLowerCase(Locale.ROOT))) {
                throw refused("spring.datasource.url sets " + name
                        + ", a hook of the JDBC driver's that FlexiQ's client has no counterpart for", null);
            }
            params.put(name, value);
        }
        return params;
    }

    private static String decode(String value, String what) {
        try {
            return URLDecoder.decode(value, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw refused("spring.datasource.url has a malformed %-escape in " + what, e);
        }
    }

    /** Percent-encodes everything but RFC 3986's unreserved characters. */
    private static String encode(String value) {
        StringBuilder out = new StringBuilder();
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    private static FlexiQConfigurationException refused(String problem, Throwable cause) {
        return new FlexiQConfigurationException(problem, ACTION, "spring.datasource.url", cause);
    }

    /** The URL's scheme part, for messages ({@code jdbc:h2:}); never the rest, which may hold a password. */
    private static String scheme(String url) {
        int first = url.indexOf(':');
        int second = first < 0 ? -1 : url.indexOf(':', first + 1);
        return second < 0 ? "something other than jdbc:" : url.substring(0, second + 1);
    }
}
