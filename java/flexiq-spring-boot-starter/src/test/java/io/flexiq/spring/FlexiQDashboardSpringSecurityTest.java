package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.JobState;
import io.flexiq.Task;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.FlexiQPostgresInitializer;
import java.net.CookieManager;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.servlet.context.AnnotationConfigServletWebServerApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/** The mounted dashboard in a real Tomcat behind Spring Security: its authentication and its CSRF tokens. */
@ExtendWith(FlexiQExtension.class)
class FlexiQDashboardSpringSecurityTest {
    private static final Task<String> NOTE = Task.of("note", String.class);
    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"");

    /** An application's security: HTTP Basic, one operator. */
    @Configuration(proxyBeanMethods = false)
    @EnableWebSecurity
    static class Security {
        @Bean
        TomcatServletWebServerFactory tomcat() {
            TomcatServletWebServerFactory tomcat = new TomcatServletWebServerFactory(0);
            tomcat.setAddress(InetAddress.getLoopbackAddress());
            return tomcat;
        }

        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
                    .httpBasic(Customizer.withDefaults())
                    .build();
        }

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(User.withUsername("ops").password("{noop}pw").roles("OPS").build());
        }
    }

    @Test
    void servesOperatorsAndAcceptsOnlyPostsWithSpringSecuritysToken() {
        new WebApplicationContextRunner(AnnotationConfigServletWebServerApplicationContext::new)
                .withInitializer(new FlexiQPostgresInitializer())
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        FlexiQAutoConfiguration.class, FlexiQBoot4Configuration.class, FlexiQDashboardConfiguration.class))
                .withUserConfiguration(Security.class)
                .withPropertyValues("flexiq.worker.enabled=false")
                .run(context -> {
                    int port = ((WebServerApplicationContext) context.getSourceApplicationContext()).getWebServer().getPort();
                    URI root = URI.create("http://127.0.0.1:" + port + "/flexiq/");
                    FlexiQ flexiq = context.getBean(FlexiQ.class);
                    String id = flexiq.enqueue(NOTE, "hello", EnqueueOptions.builder().queue("spring").build());
                    HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();

                    assertEquals(401, send(http, HttpRequest.newBuilder(root)).statusCode());

                    HttpResponse<String> page = send(http, signedIn(root));
                    assertEquals(200, page.statusCode(), page.body());
                    assertTrue(page.body().contains("<h1>Queues</h1>") && page.body().contains("ops"), page.body());
                    Matcher token = CSRF.matcher(page.body());
                    assertTrue(token.find(), "the forms carry Spring Security's token: " + page.body());

                    URI cancel = root.resolve("jobs/" + id + "/cancel");
                    assertEquals(403, send(http, signedIn(cancel).POST(form(""))).statusCode(), "no token");
                    assertEquals(JobState.AVAILABLE, flexiq.getJob(id).orElseThrow().state());

                    HttpResponse<String> cancelled = send(http, signedIn(cancel).POST(form("_csrf="
                            + java.net.URLEncoder.encode(token.group(1), StandardCharsets.UTF_8))));
                    assertEquals(303, cancelled.statusCode(), cancelled.body());
                    assertEquals("/flexiq/jobs/" + id + "?notice=cancelled",
                            cancelled.headers().firstValue("Location").orElseThrow());
                    assertEquals(JobState.CANCELLED, flexiq.getJob(id).orElseThrow().state());
                });
    }

    private static HttpRequest.Builder signedIn(URI uri) {
        return HttpRequest.newBuilder(uri).header("Authorization",
                "Basic " + Base64.getEncoder().encodeToString("ops:pw".getBytes(StandardCharsets.UTF_8)));
    }

    private static HttpRequest.BodyPublisher form(String body) {
        return HttpRequest.BodyPublishers.ofString(body);
    }

    private static HttpResponse<String> send(HttpClient http, HttpRequest.Builder request) throws Exception {
        HttpRequest built = request.build();
        if (built.method().equals("POST")) {
            built = HttpRequest.newBuilder(built, (name, value) -> true)
                    .header("Content-Type", "application/x-www-form-urlencoded").build();
        }
        return http.send(built, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
