package io.flexiq.test;

import java.net.URI;
import java.net.URISyntaxException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/** A database as JDBC reaches it, made from the {@code postgres://} URL FlexiQ takes. */
final class JdbcTarget {
    private final String url;
    private final Properties credentials;

    private JdbcTarget(String url, Properties credentials) {
        this.url = url;
        this.credentials = credentials;
    }

    /**
     * Converts {@code postgres://user:password@host:port/database?options}: user and password go
     * apart (decoded), the options (such as {@code sslmode}) along as they are.
     *
     * @throws IllegalArgumentException for a URL of another form, naming where it came from
     */
    static JdbcTarget of(String postgresUrl, String origin) {
        URI uri;
        try {
            uri = new URI(postgresUrl);
        } catch (URISyntaxException e) {
            // The reason and place only: the URL itself may hold a password.
            throw new IllegalArgumentException(origin + " is not a URL: " + e.getReason() + " at index " + e.getIndex());
        }
        if (!("postgres".equals(uri.getScheme()) || "postgresql".equals(uri.getScheme())) || uri.getHost() == null) {
            throw new IllegalArgumentException(origin + " must look like postgres://user:password@host:port/database");
        }
        Properties credentials = new Properties();
        String userInfo = uri.getUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            credentials.setProperty("user", colon < 0 ? userInfo : userInfo.substring(0, colon));
            if (colon >= 0) {
                credentials.setProperty("password", userInfo.substring(colon + 1));
            }
        }
        String jdbc = "jdbc:postgresql://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort())
                + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        return new JdbcTarget(jdbc, credentials);
    }

    /** Opens a connection; the caller closes it. */
    Connection connect() throws SQLException {
        return DriverManager.getConnection(url, credentials);
    }

    /** The JDBC URL, without the credentials. */
    String url() {
        return url;
    }

    /** The user and password taken from the URL, as JDBC connection properties. */
    Properties credentials() {
        return credentials;
    }
}
