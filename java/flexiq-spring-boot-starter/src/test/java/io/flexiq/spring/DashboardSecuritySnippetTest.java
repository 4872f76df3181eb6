package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.readme.ReadmeSnippets;
import io.flexiq.readme.ReadmeSnippets.Snippet;
import io.flexiq.test.FlexiQPostgresInitializer;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jackson.JacksonEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementContextAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration;
import org.springframework.boot.servlet.autoconfigure.actuate.web.ServletManagementContextAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.servlet.context.AnnotationConfigServletWebServerApplicationContext;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.actuate.endpoint.web.WebMvcHealthEndpointExtensionAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.error.ErrorMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The Spring Security snippet of docs/dashboard.md, compiled from the page as it stands, in a web
 * application with an API, Actuator and Boot's error page, which keeps a security chain of its
 * own: the snippet secures the dashboard's path and leaves the rest to the application's chain.
 */
class DashboardSecuritySnippetTest {
    /** The application's own endpoints. */
    @RestController
    static class Api {
        @PostMapping("/api/orders")
        String placeOrder() {
            return "accepted";
        }

        @GetMapping("/api/broken")
        String broken() {
            throw new IllegalStateException("a bug in the application");
        }
    }

    /**
     * The application's security, which knew nothing of FlexiQ: its API without CSRF tokens (its
     * clients are not browsers) for the role CLERK, health and the error page for anyone.
     */
    @Configuration(proxyBeanMethods = false)
    @EnableWebSecurity
    static class Application {
        @Bean
        Api api() {
            return new Api();
        }

        @Bean
        SecurityFilterChain applicationSecurity(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests
                            .requestMatchers("/actuator/health", "/error").permitAll()
                            .requestMatchers("/api/**").hasRole("CLERK")
                            .anyRequest().authenticated())
                    .csrf(csrf -> csrf.ignoringRequestMatchers("/api/**"))
                    .httpBasic(Customizer.withDefaults())
                    .build();
        }

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername("ops").password("{noop}ops-pw").roles("OPS").build(),
                    User.withUsername("clerk").password("{noop}clerk-pw").roles("CLERK").build());
        }
    }

    @Test
    void securesTheDashboardAndLeavesTheApplicationsEndpointsToItsOwnChain(@TempDir Path classes) throws Exception {
        List<Snippet> chains = ReadmeSnippets.fenced("java spring", 3).stream()
                .filter(s -> s.text().contains("SecurityFilterChain")).toList();
        assertEquals(1, chains.size(), "one Spring Security snippet in the docs: " + chains);
        ReadmeSnippets.assertCompile(chains, classes);
        try (URLClassLoader snippetLoader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                getClass().getClassLoader())) {
            Class<?> opsSecurity = snippetLoader.loadClass("OpsSecurity");
            new WebApplicationContextRunner(AnnotationConfigServletWebServerApplicationContext::new)
                    .withClassLoader(snippetLoader)
                    .withInitializer(new FlexiQPostgresInitializer())
                    .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                            FlexiQAutoConfiguration.class, FlexiQBoot4Configuration.class,
                            FlexiQDashboardConfiguration.class, TomcatServletWebServerAutoConfiguration.class, SecurityFilterAutoConfiguration.class,
                            JacksonAutoConfiguration.class,
                            HttpMessageConvertersAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
                            WebMvcAutoConfiguration.class, ErrorMvcAutoConfiguration.class,
                            EndpointAutoConfiguration.class, JacksonEndpointAutoConfiguration.class,
                            WebEndpointAutoConfiguration.class, WebMvcHealthEndpointExtensionAutoConfiguration.class,
                            HealthContributorAutoConfiguration.class, HealthContributorRegistryAutoConfiguration.class,
                            HealthEndpointAutoConfiguration.class, ManagementContextAutoConfiguration.class,
                            ServletManagementContextAutoConfiguration.class))
                    .withUserConfiguration(opsSecurity, Application.class)
                    .withPropertyValues("flexiq.worker.enabled=false", "server.port=0", "server.address=127.0.0.1")
                    .run(context -> {
                        assertNull(context.getStartupFailure(), "the application starts with the snippet beside "
                                + "its own chain");
                        int port = ((WebServerApplicationContext) context.getSourceApplicationContext())
                                .getWebServer().getPort();
                        URI root = URI.create("http://127.0.0.1:" + port + "/");
                        HttpClient http = HttpClient.newHttpClient();

                        // The dashboard: operators only.
                        assertEquals(401, send(http, get(root.resolve("flexiq/"))).statusCode());
                        assertEquals(403, send(http, as("clerk", get(root.resolve("flexiq/")))).statusCode());
                        HttpResponse<String> dashboard = send(http, as("ops", get(root.resolve("flexiq/"))));
                        assertEquals(200, dashboard.statusCode(), dashboard.body());
                        assertTrue(dashboard.body().contains("<h1>Queues</h1>"), dashboard.body());

                        // The application's API: its own rules, a POST without a CSRF token included.
                        HttpRequest.Builder order = HttpRequest.newBuilder(root.resolve("api/orders"))
                                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                                .header("Content-Type", "application/json");
                        HttpResponse<String> placed = send(http, as("clerk", order));
                        assertEquals(200, placed.statusCode(), placed.body());
                        assertEquals("accepted", placed.body());
                        assertEquals(401, send(http, order).statusCode(), "the application's chain still asks");
                        assertEquals(403, send(http, as("ops", order)).statusCode(), "the application's roles");

                        // Actuator and the error page: open, as the application says.
                        HttpResponse<String> health = send(http, get(root.resolve("actuator/health")));
                        assertEquals(200, health.statusCode(), health.body());
                        assertTrue(health.body().contains("\"status\":\"UP\""), health.body());
                        HttpResponse<String> error = send(http, as("clerk", get(root.resolve("api/broken"))));
                        assertEquals(500, error.statusCode(), error.body());
                        assertTrue(error.body().contains("\"path\":\"/api/broken\""),
                                "Boot's error page answers: " + error.body());
                    });
        }
    }

    private static HttpRequest.Builder get(URI uri) {
        return HttpRequest.newBuilder(uri);
    }

    private static HttpRequest.Builder as(String user, HttpRequest.Builder request) {
        String credentials = user + ":" + user + "-pw";
        return request.copy().header("Authorization",
                "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
    }

    private static HttpResponse<String> send(HttpClient http, HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
