package io.flexiq.spring;

import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.env.Environment;

/**
 * Why the client has no database when {@code flexiq.url} is unset and Spring Boot gave no JDBC
 * connection details to read one from: the application's own {@code DataSource} bean, which
 * FlexiQ cannot read a URL and password from; a {@code spring.datasource.url} that no Spring Boot
 * JDBC auto-configuration of this generation took up; or nothing set at all.
 */
final class MissingDatabase {
    private static final String POSTGRES_URL = "postgres://user:password@host:port/database";

    private MissingDatabase() {}

    /** The failure for this application: what it has that FlexiQ cannot use, and what to set. */
    static FlexiQConfigurationException explain(Environment environment, ObjectProvider<DataSource> dataSources) {
        DataSource own = dataSources.getIfUnique();
        if (own != null) {
            return new FlexiQConfigurationException("the application's DataSource bean (" + own.getClass().getName()
                    + ") is its own, not one Spring Boot made from spring.datasource.*, and FlexiQ cannot read the"
                    + " database, user and password from a DataSource",
                    "Set flexiq.url to that database as " + POSTGRES_URL + " (FlexiQ keeps a pool of its own),"
                            + " or let Spring Boot make the DataSource from spring.datasource.url, username and password",
                    null, null);
        }
        if (environment.containsProperty("spring.datasource.url")) {
            return new FlexiQConfigurationException("spring.datasource.url is set, but Spring Boot made no DataSource"
                    + " from it: its JDBC auto-configuration is not on the class path (or is excluded)",
                    "Add spring-boot-starter-jdbc to the application, or set flexiq.url to " + POSTGRES_URL,
                    "spring.datasource.url", null);
        }
        return none();
    }

    /** No database named anywhere. */
    static FlexiQConfigurationException none() {
        return new FlexiQConfigurationException("no database to connect FlexiQ to",
                "Set flexiq.url (" + POSTGRES_URL + ") or spring.datasource.url (jdbc:postgresql://host:port/database)",
                null, null);
    }
}
