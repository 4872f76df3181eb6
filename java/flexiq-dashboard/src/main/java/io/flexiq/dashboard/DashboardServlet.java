package io.flexiq.dashboard;

import io.flexiq.FlexiQ;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.security.Principal;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The dashboard as a servlet, for mounting under a path of an existing web application (the
 * Spring Boot starter registers it under {@code flexiq.dashboard.path}). Map it to
 * {@code /path/*}. Either it secures itself with a {@link DashboardAuthenticator} and its own
 * CSRF tokens, or it leaves both to the container's security (Spring Security), which must
 * authenticate the requests and check the CSRF token of every POST.
 */
public final class DashboardServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    private final transient Pages pages;
    private final transient Gate gate;
    private final transient Function<HttpServletRequest, CsrfField> containerCsrf;

    private DashboardServlet(Builder builder) {
        this.pages = new Pages(builder.flexiq, builder.redactor);
        this.gate = builder.authenticator == null ? null : new Gate(pages, builder.authenticator);
        this.containerCsrf = builder.containerCsrf;
    }

    /** A builder for a servlet over this client. */
    public static Builder builder(FlexiQ flexiq) {
        return new Builder(flexiq);
    }

    /** Answers a page or an action. */
    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Html.SECURITY_HEADERS.forEach(response::setHeader);
        String base = request.getContextPath() + request.getServletPath();
        String path = request.getPathInfo() == null ? "/" : request.getPathInfo();
        send(response, gate != null ? gate.respond(exchange(request, response, base, path))
                : containerSecured(request, base, path));
    }

    /** The container authenticated the request, and checked its CSRF token if it is a POST. */
    private PageResponse containerSecured(HttpServletRequest request, String base, String path) {
        String method = request.getMethod();
        if (!method.equals("GET") && !method.equals("POST")) {
            return Pages.notAllowed();
        }
        Principal principal = request.getUserPrincipal();
        if (principal == null) {
            // The application's security lets anonymous requests through to this path: the
            // dashboard still refuses them.
            return PageResponse.text(401, "Sign in to see the FlexiQ dashboard.");
        }
        CsrfField csrf = containerCsrf.apply(request);
        if (csrf == null) {
            return PageResponse.text(500, "The FlexiQ dashboard is set to rely on the container's CSRF protection, "
                    + "but the request carries no CSRF token: turn CSRF protection on for the dashboard's path.");
        }
        return pages.handle(new PageRequest(method, path, parameters(request), principal.getName(), csrf, base));
    }

    private static Gate.Exchange exchange(HttpServletRequest request, HttpServletResponse response, String base,
            String path) {
        return new Gate.Exchange() {
            @Override
            public String method() {
                return request.getMethod();
            }

            @Override
            public String path() {
                return path;
            }

            @Override
            public String base() {
                return base;
            }

            @Override
            public boolean secure() {
                return request.isSecure();
            }

            @Override
            public String header(String name) {
                return request.getHeader(name);
            }

            @Override
            public InetAddress remoteAddress() {
                try {
                    return InetAddress.getByName(request.getRemoteAddr());
                } catch (java.net.UnknownHostException e) {
                    throw new IllegalStateException("the container reported an unparsable remote address", e);
                }
            }

            @Override
            public Map<String, List<String>> params() {
                if (request.getContentLengthLong() > Forms.MAX_BODY) {
                    return null;
                }
                return parameters(request);
            }

            @Override
            public void addHeader(String name, String value) {
                response.addHeader(name, value);
            }
        };
    }

    private static Map<String, List<String>> parameters(HttpServletRequest request) {
        Map<String, List<String>> params = new LinkedHashMap<>();
        request.getParameterMap().forEach((name, values) -> params.put(name, Arrays.asList(values)));
        return params;
    }

    private static void send(HttpServletResponse response, PageResponse page) throws IOException {
        response.setStatus(page.status());
        response.setContentType(page.contentType());
        if (page.location() != null) {
            response.setHeader("Location", page.location());
        }
        byte[] body = page.bytes();
        response.setContentLength(body.length);
        try (OutputStream out = response.getOutputStream()) {
            out.write(body);
        }
    }

    /** Settings of a dashboard servlet: an authenticator, or the container's security. */
    public static final class Builder {
        private final FlexiQ flexiq;
        private DashboardAuthenticator authenticator;
        private Function<HttpServletRequest, CsrfField> containerCsrf;
        private PayloadRedactor redactor = PayloadRedactor.showUnencrypted();

        private Builder(FlexiQ flexiq) {
            this.flexiq = Objects.requireNonNull(flexiq, "flexiq");
        }

        /** The servlet authenticates each request itself and guards POSTs with its own CSRF tokens. */
        public Builder authenticator(DashboardAuthenticator authenticator) {
            this.authenticator = Objects.requireNonNull(authenticator, "authenticator");
            return this;
        }

        /**
         * The container's security authenticates the requests (the servlet refuses any without a
         * {@link HttpServletRequest#getUserPrincipal() principal}) and checks the CSRF token of
         * every POST; {@code csrfField} gives the field that token travels in, for the forms.
         */
        public Builder containerSecurity(Function<HttpServletRequest, CsrfField> csrfField) {
            this.containerCsrf = Objects.requireNonNull(csrfField, "csrfField");
            return this;
        }

        /**
         * What the job page shows of payloads (default {@link PayloadRedactor#showUnencrypted()}:
         * payloads stored in clear, not those a payload codec encrypted).
         */
        public Builder redactor(PayloadRedactor redactor) {
            this.redactor = Objects.requireNonNull(redactor, "redactor");
            return this;
        }

        /**
         * The servlet.
         *
         * @throws IllegalStateException unless exactly one of an authenticator and the
         *     container's security is set
         */
        public DashboardServlet build() {
            if ((authenticator == null) == (containerCsrf == null)) {
                throw new IllegalStateException("the FlexiQ dashboard servlet needs exactly one of "
                        + "authenticator(...) and containerSecurity(...): it serves no request unauthenticated");
            }
            return new DashboardServlet(this);
        }
    }
}
