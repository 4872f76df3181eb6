package io.flexiq.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The demo's header line for the URL in FLEXIQ_DATABASE_URL. */
class DatabaseUrlTest {
    @Test
    void namesWhereAPostgresUrlPointsWithoutItsCredentials() {
        assertEquals("using the database in FLEXIQ_DATABASE_URL (db.internal:5433/shop)",
                DatabaseUrl.header("postgres://app:s3cret@db.internal:5433/shop?sslmode=require"));
        assertEquals("using the database in FLEXIQ_DATABASE_URL (db-a:5432,db-b:5432/shop)",
                DatabaseUrl.header("postgresql://app@db-a:5432,db-b:5432/shop?target_session_attrs=read-write"));
        assertEquals("using the database in FLEXIQ_DATABASE_URL (default host/shop)",
                DatabaseUrl.header("postgres:///shop?host=/var/run/postgresql"));
        assertEquals("using the database in FLEXIQ_DATABASE_URL (db:5432/shop)",
                DatabaseUrl.header("postgres://app:p@ss@db:5432/shop"));
    }

    @Test
    void saysWhyAJdbcUrlIsRefusedAndWhatToWriteInstead() {
        String header = DatabaseUrl.header("jdbc:postgresql://db.internal:5432/shop?user=app&password=s3cret");
        assertEquals("FLEXIQ_DATABASE_URL is refused: it holds a JDBC URL (jdbc:postgresql://db.internal:5432/shop), "
                + "and FlexiQ takes libpq's form, postgres://user:password@host:port/database "
                + "(here postgres://user:password@db.internal:5432/shop)", header);
        assertTrue(DatabaseUrl.refusal("jdbc:postgresql:shop").orElseThrow()
                .startsWith("FLEXIQ_DATABASE_URL is refused: it holds a JDBC URL (jdbc:postgresql:shop), "));
    }

    @Test
    void refusesOtherSchemesAndNonUrlsWithoutShowingSecrets() {
        assertEquals("FLEXIQ_DATABASE_URL is refused: its scheme mysql:// is not PostgreSQL's (mysql://db/shop); "
                + "FlexiQ takes postgres://user:password@host:port/database",
                DatabaseUrl.header("mysql://app:s3cret@db/shop"));
        // FlexiQ reads the scheme in lower case only.
        assertTrue(DatabaseUrl.refusal("POSTGRES://db/shop").isPresent());
        String keywords = DatabaseUrl.header("host=db dbname=shop password=s3cret");
        assertEquals("FLEXIQ_DATABASE_URL is refused: it is not a URL (its value is not shown: it may hold a "
                + "password); FlexiQ takes postgres://user:password@host:port/database", keywords);
        for (String url : new String[] {"jdbc:postgresql://db/shop?password=s3cret", "mysql://u:s3cret@db/shop",
                "host=db password=s3cret", "postgres://u:s3cret@db/shop?password=s3cret"}) {
            assertFalse(DatabaseUrl.header(url).contains("s3cret"), url);
        }
    }
}
