package io.flexiq.spring;

import io.flexiq.FlexiQ;
import io.flexiq.dashboard.CsrfField;
import io.flexiq.dashboard.DashboardAuthenticator;
import io.flexiq.dashboard.DashboardServlet;
import io.flexiq.dashboard.PayloadRedactor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.web.csrf.CsrfToken;

/**
 * Mounts the FlexiQ dashboard in a servlet web application that has io.flexiq:flexiq-dashboard
 * on its classpath, under {@code flexiq.dashboard.path} (default {@code /flexiq}); off with
 * {@code flexiq.dashboard.enabled=false}. Who may use it:
 * <ul>
 *   <li>with Spring Security, the application's security: the dashboard serves only
 *       authenticated requests and relies on Spring Security's CSRF protection, which must stay on
 *       for its path;
 *   <li>without it, the application's {@link DashboardAuthenticator} bean; without one the
 *       application does not start.
 * </ul>
 * The application's {@link PayloadRedactor} bean, if any, redacts payloads.
 */
@AutoConfiguration(after = FlexiQAutoConfiguration.class)
@ConditionalOnClass({DashboardServlet.class, ServletRegistrationBean.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBooleanProperty(name = "flexiq.dashboard.enabled", matchIfMissing = true)
@ConditionalOnBean(FlexiQ.class)
public final class FlexiQDashboardConfiguration {
    private static final String SPRING_SECURITY_CSRF = "org.springframework.security.web.csrf.CsrfToken";

    /** Created by Spring. */
    public FlexiQDashboardConfiguration() {}

    /** Behind Spring Security: its authentication and its CSRF tokens. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = SPRING_SECURITY_CSRF)
    static class SpringSecurityDashboard {
        @Bean
        @ConditionalOnMissingBean(name = "flexiqDashboard")
        ServletRegistrationBean<DashboardServlet> flexiqDashboard(FlexiQ flexiq, FlexiQProperties properties,
                ObjectProvider<PayloadRedactor> redactor) {
            DashboardServlet.Builder servlet = DashboardServlet.builder(flexiq).containerSecurity(request -> {
                CsrfToken token = (CsrfToken) request.getAttribute(CsrfToken.class.getName());
                return token == null ? null : new CsrfField(token.getParameterName(), token.getToken());
            });
            return registration(servlet, properties, redactor);
        }
    }

    /** Without Spring Security: the application's authenticator and the dashboard's own CSRF tokens. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass(SPRING_SECURITY_CSRF)
    static class OwnSecurityDashboard {
        @Bean
        @ConditionalOnMissingBean(name = "flexiqDashboard")
        ServletRegistrationBean<DashboardServlet> flexiqDashboard(FlexiQ flexiq, FlexiQProperties properties,
                ObjectProvider<DashboardAuthenticator> authenticator, ObjectProvider<PayloadRedactor> redactor) {
            DashboardAuthenticator chosen = authenticator.getIfUnique();
            if (chosen == null) {
                throw new FlexiQConfigurationException("the FlexiQ dashboard is on the classpath but nothing secures it",
                        "Define one DashboardAuthenticator bean (DashboardAuthenticator.basic(user, password), say), "
                        + "add Spring Security, or set flexiq.dashboard.enabled=false", null, null);
            }
            return registration(DashboardServlet.builder(flexiq).authenticator(chosen), properties, redactor);
        }
    }

    private static ServletRegistrationBean<DashboardServlet> registration(DashboardServlet.Builder servlet,
            FlexiQProperties properties, ObjectProvider<PayloadRedactor> redactor) {
        PayloadRedactor chosen = redactor.getIfUnique();
        if (chosen != null) {
            servlet.redactor(chosen);
        }
        String path = properties.getDashboard().getPath();
        if (path == null || !path.matches("(/[A-Za-z0-9._~-]+)+")) {
            throw new FlexiQConfigurationException("flexiq.dashboard.path=" + path + " is refused: it must be \"/\" "
                    + "followed by path segments of letters, digits, '.', '_', '~' or '-', without a trailing \"/\"",
                    "Set flexiq.dashboard.path to such a path (/ops/jobs, say), or remove it to get "
                    + PropertyCheck.defaultOf("flexiq.dashboard.path"), "flexiq.dashboard.path", null);
        }
        ServletRegistrationBean<DashboardServlet> registration = new ServletRegistrationBean<>(servlet.build(),
                path + "/*");
        registration.setName("flexiqDashboard");
        return registration;
    }
}
