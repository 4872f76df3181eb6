package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.dashboard.DashboardAuthenticator;
import io.flexiq.dashboard.DashboardServlet;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.FlexiQPostgresInitializer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.security.web.csrf.DefaultCsrfToken;

/** The dashboard's mount in a servlet web application, secured by Spring Security or by an authenticator bean. */
@ExtendWith(FlexiQExtension.class)
class FlexiQDashboardConfigurationTest {
    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withInitializer(new FlexiQPostgresInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FlexiQAutoConfiguration.class,
                    FlexiQBoot4Configuration.class, FlexiQDashboardConfiguration.class))
            .withPropertyValues("flexiq.worker.enabled=false");
    /** Spring Security out of sight. */
    private final WebApplicationContextRunner withoutSecurity = web.withClassLoader(new FilteredClassLoader(CsrfToken.class));

    @Test
    void withoutSpringSecurityTheAuthenticatorBeanGuardsThePages() {
        withoutSecurity.withBean(DashboardAuthenticator.class, () -> DashboardAuthenticator.basic("ops", "pw"))
                .withPropertyValues("flexiq.dashboard.path=/ops/jobs")
                .run(context -> {
                    ServletRegistrationBean<?> registration = context.getBean("flexiqDashboard", ServletRegistrationBean.class);
                    assertEquals(List.of("/ops/jobs/*"), List.copyOf(registration.getUrlMappings()));
                    DashboardServlet servlet = (DashboardServlet) registration.getServlet();

                    MockHttpServletResponse anonymous = call(servlet, get("/ops/jobs", "/"));
                    assertEquals(401, anonymous.getStatus());
                    assertEquals("DENY", anonymous.getHeader("X-Frame-Options"));

                    MockHttpServletRequest signedIn = get("/ops/jobs", "/");
                    signedIn.addHeader("Authorization", "Basic "
                            + Base64.getEncoder().encodeToString("ops:pw".getBytes(StandardCharsets.UTF_8)));
                    MockHttpServletResponse page = call(servlet, signedIn);
                    assertEquals(200, page.getStatus());
                    String html = page.getContentAsString();
                    assertTrue(html.contains("<h1>Queues</h1>"), html);
                    assertTrue(html.contains("href=\"/ops/jobs/jobs?state=dead\""), "links stay under the mount: " + html);
                    assertTrue(html.contains("name=\"csrf\""), "the dashboard's own token: " + html);
                    String cookie = page.getHeader("Set-Cookie");
                    assertTrue(cookie.contains("Path=/ops/jobs;") && cookie.contains("SameSite=Strict"), cookie);

                    MockHttpServletRequest forged = new MockHttpServletRequest("POST", "/ops/jobs/jobs/1/purge");
                    forged.setServletPath("/ops/jobs");
                    forged.setPathInfo("/jobs/1/purge");
                    forged.addHeader("Authorization", signedIn.getHeader("Authorization"));
                    assertEquals(403, call(servlet, forged).getStatus(), "a POST without the session's token");
                });
    }

    @Test
    void withoutSpringSecurityOrAnAuthenticatorTheApplicationDoesNotStart() {
        withoutSecurity.run(context -> {
            assertNotNull(context.getStartupFailure());
            String message = rootMessage(context.getStartupFailure());
            assertTrue(message.contains("DashboardAuthenticator") && message.contains("flexiq.dashboard.enabled=false"),
                    message);
        });
    }

    @Test
    void behindSpringSecurityThePagesNeedAPrincipalAndCarryItsCsrfToken() {
        web.run(context -> {
            DashboardServlet servlet = (DashboardServlet) context.getBean("flexiqDashboard", ServletRegistrationBean.class)
                    .getServlet();
            assertEquals(401, call(servlet, get("/flexiq", "/")).getStatus(), "anonymous requests that got through");

            MockHttpServletRequest request = get("/flexiq", null);
            request.setUserPrincipal(new TestingAuthenticationToken("alice", "n/a"));
            request.setAttribute(CsrfToken.class.getName(), new DefaultCsrfToken("X-CSRF-TOKEN", "_csrf", "t0k3n"));
            MockHttpServletResponse page = call(servlet, request);
            assertEquals(200, page.getStatus());
            String html = page.getContentAsString();
            assertTrue(html.contains("name=\"_csrf\" value=\"t0k3n\""), html);
            assertTrue(html.contains("alice"), html);
            assertFalse(html.contains("name=\"csrf\""), "no token of the dashboard's own");
        });
    }

    @Test
    void refusesAPathThatCannotBeMounted() {
        web.withPropertyValues("flexiq.dashboard.path=/flexiq/").run(context -> {
            assertNotNull(context.getStartupFailure());
            String message = rootMessage(context.getStartupFailure());
            assertTrue(message.contains("flexiq.dashboard.path") && message.contains("flexiq.dashboard.path=/flexiq/ is refused"), message);
        });
    }

    @Test
    void notMountedWhenTurnedOffOrOutsideAServletApplication() {
        web.withPropertyValues("flexiq.dashboard.enabled=false")
                .run(context -> assertFalse(context.containsBean("flexiqDashboard")));
        new ApplicationContextRunner()
                .withInitializer(new FlexiQPostgresInitializer())
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        FlexiQAutoConfiguration.class, FlexiQBoot4Configuration.class, FlexiQDashboardConfiguration.class))
                .run(context -> {
                    assertTrue(context.getStartupFailure() == null, String.valueOf(context.getStartupFailure()));
                    assertFalse(context.containsBean("flexiqDashboard"));
                });
    }

    private static MockHttpServletRequest get(String servletPath, String pathInfo) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET",
                servletPath + (pathInfo == null ? "" : pathInfo));
        request.setServletPath(servletPath);
        request.setPathInfo(pathInfo);
        return request;
    }

    private static MockHttpServletResponse call(DashboardServlet servlet, MockHttpServletRequest request)
            throws Exception {
        MockHttpServletResponse response = new MockHttpServletResponse();
        servlet.service(request, response);
        return response;
    }

    private static String rootMessage(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.getMessage();
    }
}
