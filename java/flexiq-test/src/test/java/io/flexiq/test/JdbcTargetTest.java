package io.flexiq.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The postgres:// URLs of FLEXIQ_TEST_DATABASE_URL as JDBC takes them. */
class JdbcTargetTest {
    @Test
    void credentialsGoApartDecodedAndOptionsGoAlong() {
        JdbcTarget target = JdbcTarget.of("postgres://app:p%40ss%3Aword@db.example:5433/shop?sslmode=require", "test");
        assertEquals("jdbc:postgresql://db.example:5433/shop?sslmode=require", target.url());
        Properties expected = new Properties();
        expected.setProperty("user", "app");
        expected.setProperty("password", "p@ss:word");
        assertEquals(expected, target.credentials());
    }

    @Test
    void aUrlWithoutUserPortOrDatabaseKeepsTheDriversDefaults() {
        JdbcTarget target = JdbcTarget.of("postgresql://db.example", "test");
        assertEquals("jdbc:postgresql://db.example/", target.url());
        assertTrue(target.credentials().isEmpty());
    }

    @Test
    void otherFormsAreRefusedNamingWhereTheyCameFromButNotThePassword() {
        for (String bad : new String[] {"jdbc:postgresql://db/shop", "db.example:5432", "postgres:///shop",
                "postgres://app:secret@db example/shop"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> JdbcTarget.of(bad, "FLEXIQ_TEST_DATABASE_URL"), bad);
            assertTrue(e.getMessage().startsWith("FLEXIQ_TEST_DATABASE_URL"), e.getMessage());
            assertFalse(e.getMessage().contains("secret"), "no password in: " + e.getMessage());
        }
    }
}
