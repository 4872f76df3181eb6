package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JdbcUrlsTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "jdbc:postgresql://db.internal:6432/orders            | postgres://db.internal:6432/orders",
        "jdbc:postgresql://db.internal/orders                 | postgres://db.internal/orders",
        "jdbc:postgresql://db.internal/                       | postgres://db.internal/",
        "jdbc:postgresql://db.internal                        | postgres://db.internal/",
        "jdbc:postgresql:orders                               | postgres://localhost/orders",
        "jdbc:postgresql:/                                    | postgres://localhost/",
        "jdbc:postgresql:///orders                            | postgres://localhost/orders",
        "jdbc:postgresql://[::1]:5740/accounting              | postgres://[::1]:5740/accounting",
        "jdbc:postgresql://[2001:db8::7]/accounting           | postgres://[2001:db8::7]/accounting",
        "JDBC:PostgreSQL://h/d                                | postgres://h/d",
        "jdbc:postgresql://h/my%20db                          | postgres://h/my%20db",
        "jdbc:postgresql://h/d?user=app&password=s3cret       | postgres://app:s3cret@h/d",
        "jdbc:postgresql://h/d?user=app%40corp&password=p%3A%2F%40%3F%23%26x | postgres://app%40corp:p%3A%2F%40%3F%23%26x@h/d",
        "jdbc:postgresql://h/d?sslmode=verify-full&sslrootcert=/etc/ca.pem | postgres://h/d?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        "jdbc:postgresql://h/d?sslmode=require&sslcert=/c.pem&sslkey=/k.pem | postgres://h/d?sslmode=require&sslcert=%2Fc.pem&sslkey=%2Fk.pem",
        "jdbc:postgresql://h/d?ssl=true                       | postgres://h/d?sslmode=verify-full",
        "jdbc:postgresql://h/d?ssl                            | postgres://h/d?sslmode=verify-full",
        "jdbc:postgresql://h/d?ssl=false                      | postgres://h/d",
        "jdbc:postgresql://h/d?ssl=true&sslmode=disable       | postgres://h/d?sslmode=disable",
        "jdbc:postgresql://h/d?ApplicationName=orders%20api   | postgres://h/d?application_name=orders%20api",
        "jdbc:postgresql://h/d?options=-c%20statement_timeout%3D5s | postgres://h/d?options=-c%20statement_timeout%3D5s",
        "jdbc:postgresql://h/d?prepareThreshold=0&reWriteBatchedInserts=true&currentSchema=app | postgres://h/d",
    })
    void convertsTheDriversForms(String jdbc, String expected) {
        assertEquals(expected, JdbcUrls.toPostgresUrl(jdbc, null, null));
    }

    @Test
    void usesTheGivenCredentialsWhenTheUrlHasNone() {
        assertEquals("postgres://app:pa%20ss%40w%C3%B6rd@h:5432/d",
                JdbcUrls.toPostgresUrl("jdbc:postgresql://h:5432/d", "app", "pa ss@wörd"));
        assertEquals("postgres://app@h/d", JdbcUrls.toPostgresUrl("jdbc:postgresql://h/d", "app", null));
        assertEquals("postgres://app@h/d", JdbcUrls.toPostgresUrl("jdbc:postgresql://h/d", "app", ""));
    }

    @Test
    void theUrlsCredentialsWinAsInTheDriver() {
        assertEquals("postgres://url-user:url-pass@h/d",
                JdbcUrls.toPostgresUrl("jdbc:postgresql://h/d?user=url-user&password=url-pass", "other", "secret"));
    }

    @Test
    void refusesAnotherDatabaseSayingWhatToSet() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JdbcUrls.toPostgresUrl("jdbc:mysql://h/d?password=secret", "app", "secret"));
        assertTrue(e.getMessage().contains("jdbc:mysql:"), e.getMessage());
        assertTrue(e.getMessage().contains("flexiq.url"), e.getMessage());
        assertTrue(e.getMessage().contains("spring.datasource.url"), e.getMessage());
        assertFalse(e.getMessage().contains("secret"), e.getMessage());
    }

    @Test
    void refusesAMissingUrl() {
        for (String url : new String[] {null, "", "  "}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> JdbcUrls.toPostgresUrl(url, null, null));
            assertTrue(e.getMessage().contains("flexiq.url"), e.getMessage());
        }
    }

    @Test
    void severalHostsAreCarriedOverAskingForThePrimary() {
        assertEquals("postgres://u@a:5432,[::1]:5433/d?target_session_attrs=primary",
                JdbcUrls.toPostgresUrl("jdbc:postgresql://a:5432,[::1]:5433/d?targetServerType=primary", "u", null));
        assertEquals("postgres://a,b/d?sslmode=require&target_session_attrs=read-write",
                JdbcUrls.toPostgresUrl("jdbc:postgresql://a,b/d?sslmode=require", null, null));
        assertEquals("postgres://a/d", JdbcUrls.toPostgresUrl("jdbc:postgresql://a/d?targetServerType=primary", null, null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JdbcUrls.toPostgresUrl("jdbc:postgresql://a,b/d?targetServerType=secondary", null, null));
        assertTrue(e.getMessage().contains("targetServerType=secondary, a standby"), e.getMessage());
        assertTrue(e.getMessage().contains("flexiq.url"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "jdbc:postgresql://h:abc/d         | port",
        "jdbc:postgresql://h:0/d           | port",
        "jdbc:postgresql://h:65536/d       | port",
        "jdbc:postgresql://h:+5/d          | port",
        "jdbc:postgresql://::1/d           | without brackets",
        "jdbc:postgresql://[::1/d          | closing bracket",
        "jdbc:postgresql://[::1]x/d        | not a port",
        "jdbc:postgresql://h/d?sslfactory=org.postgresql.ssl.NonValidatingFactory | sslfactory",
        "jdbc:postgresql://h/d?sslpassword=x | sslpassword",
        "jdbc:postgresql://h/d%zz          | %-escape",
        "jdbc:postgresql://h/d?password=%G1 | %-escape in parameter password",
    })
    void refusesWhatItCannotCarryOver(String jdbc, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JdbcUrls.toPostgresUrl(jdbc, null, null));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
