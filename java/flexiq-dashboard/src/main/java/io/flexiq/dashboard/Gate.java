package io.flexiq.dashboard;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What stands between a request and the pages where the dashboard secures itself (standalone,
 * or a servlet without Spring Security): the authenticator, then for a POST the CSRF token of
 * the browser's session.
 */
final class Gate {
    /** A request as a server hands it over, and the response headers it will send. */
    interface Exchange {
        String method();

        /** The path below the mount point, starting with "/". */
        String path();

        /** The mount point's path, "" at the root. */
        String base();

        boolean secure();

        String header(String name);

        InetAddress remoteAddress();

        /** Query parameters, and for a POST the form's fields; null when the body is too large. */
        Map<String, List<String>> params() throws IOException;

        void addHeader(String name, String value);
    }

    private final Pages pages;
    private final DashboardAuthenticator authenticator;
    private final SessionCsrf csrf = new SessionCsrf();

    Gate(Pages pages, DashboardAuthenticator authenticator) {
        this.pages = pages;
        this.authenticator = authenticator;
    }

    PageResponse respond(Exchange exchange) throws IOException {
        String method = exchange.method();
        if (!method.equals("GET") && !method.equals("POST")) {
            return Pages.notAllowed();
        }
        Optional<String> operator = authenticator.authenticate(
                new AuthenticationRequest(exchange::header, exchange.remoteAddress()));
        if (operator.isEmpty()) {
            authenticator.challenge().ifPresent(value -> exchange.addHeader("WWW-Authenticate", value));
            return PageResponse.text(401, "Sign in to see the FlexiQ dashboard.");
        }
        Optional<String> session = SessionCsrf.session(exchange.header("Cookie"));
        Map<String, List<String>> params = exchange.params();
        if (params == null) {
            return PageResponse.text(413, "The form is larger than the dashboard's forms can be.");
        }
        if (method.equals("POST")) {
            List<String> token = params.get(SessionCsrf.FIELD);
            if (session.isEmpty() || token == null || !csrf.valid(session.get(), token.get(0))) {
                return PageResponse.text(403, "Refused: the form's CSRF token does not match this browser's "
                        + "session. Reload the page and submit the form again.");
            }
        }
        String sessionId = session.orElseGet(() -> {
            String created = csrf.newSession();
            exchange.addHeader("Set-Cookie", SessionCsrf.cookie(created, exchange.base(), exchange.secure()));
            return created;
        });
        return pages.handle(new PageRequest(method, exchange.path(), params, operator.get(), csrf.field(sessionId),
                exchange.base()));
    }
}
