package io.flexiq.dashboard;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flexiq.FlexiQ;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The dashboard served on a port of its own by the JDK's HTTP server, for services without a web
 * framework:
 *
 * <pre>{@code
 * Dashboard dashboard = Dashboard.builder(flexiq)
 *         .authenticator(DashboardAuthenticator.basic("ops", System.getenv("DASHBOARD_PASSWORD")))
 *         .start();   // http://127.0.0.1:8000/
 * }</pre>
 *
 * It listens on the loopback address unless told otherwise, and does not start without an
 * {@link DashboardAuthenticator}. Closing it stops the server; the FlexiQ client stays open.
 */
public final class Dashboard implements AutoCloseable {
    /** The port used unless the builder names another. */
    public static final int DEFAULT_PORT = 8000;

    private static final System.Logger LOG = System.getLogger(Dashboard.class.getName());

    private final HttpServer server;
    private final ExecutorService executor;
    private final Gate gate;

    private Dashboard(Builder builder) throws IOException {
        this.gate = new Gate(new Pages(builder.flexiq, builder.redactor), builder.authenticator);
        this.server = HttpServer.create(new InetSocketAddress(builder.bindAddress, builder.port), 0);
        AtomicInteger threads = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(4, task -> {
            Thread thread = new Thread(task, "flexiq-dashboard-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.createContext("/", this::exchange);
        server.start();
    }

    /** A builder for a dashboard over this client. */
    public static Builder builder(FlexiQ flexiq) {
        return new Builder(flexiq);
    }

    /** The address and port the dashboard listens on (the port chosen, when asked for port 0). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** The dashboard's root page, {@code http://address:port/}. */
    public URI uri() {
        InetSocketAddress address = address();
        String host = address.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort() + "/");
    }

    /** Stops the server at once; requests in progress are cut off. */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    private void exchange(HttpExchange exchange) throws IOException {
        try (exchange) {
            Html.SECURITY_HEADERS.forEach(exchange.getResponseHeaders()::set);
            send(exchange, gate.respond(new Gate.Exchange() {
                @Override
                public String method() {
                    return exchange.getRequestMethod();
                }

                @Override
                public String path() {
                    return exchange.getRequestURI().getPath();
                }

                @Override
                public String base() {
                    return "";
                }

                @Override
                public boolean secure() {
                    return false;
                }

                @Override
                public String header(String name) {
                    return exchange.getRequestHeaders().getFirst(name);
                }

                @Override
                public InetAddress remoteAddress() {
                    return exchange.getRemoteAddress().getAddress();
                }

                @Override
                public Map<String, List<String>> params() throws IOException {
                    if (!exchange.getRequestMethod().equals("POST")) {
                        return Forms.parse(exchange.getRequestURI().getRawQuery());
                    }
                    byte[] body = exchange.getRequestBody().readNBytes(Forms.MAX_BODY + 1);
                    return body.length > Forms.MAX_BODY ? null : Forms.parse(new String(body, StandardCharsets.UTF_8));
                }

                @Override
                public void addHeader(String name, String value) {
                    exchange.getResponseHeaders().add(name, value);
                }
            }));
        } catch (IOException | UncheckedIOException e) {
            LOG.log(System.Logger.Level.DEBUG, "a dashboard request broke off: {0}", e.getMessage());
        }
    }

    private static void send(HttpExchange exchange, PageResponse response) throws IOException {
        Headers out = exchange.getResponseHeaders();
        out.set("Content-Type", response.contentType());
        if (response.location() != null) {
            out.set("Location", response.location());
        }
        byte[] body = response.bytes();
        exchange.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream stream = exchange.getResponseBody()) {
                stream.write(body);
            }
        }
    }

    /** Settings of a standalone dashboard; {@link #authenticator} is required. */
    public static final class Builder {
        private final FlexiQ flexiq;
        private int port = DEFAULT_PORT;
        private InetAddress bindAddress = InetAddress.getLoopbackAddress();
        private DashboardAuthenticator authenticator;
        private PayloadRedactor redactor = PayloadRedactor.showUnencrypted();

        private Builder(FlexiQ flexiq) {
            this.flexiq = Objects.requireNonNull(flexiq, "flexiq");
        }

        /** The port to listen on (default {@value Dashboard#DEFAULT_PORT}; 0 picks a free one). */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0..65535, got " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * The address to listen on; loopback by default, so only this machine reaches the
         * dashboard. Binding another address exposes it to that network: use TLS in front of it.
         */
        public Builder bindAddress(InetAddress bindAddress) {
            this.bindAddress = Objects.requireNonNull(bindAddress, "bindAddress");
            return this;
        }

        /** Who may use the dashboard (required: there is no default). */
        public Builder authenticator(DashboardAuthenticator authenticator) {
            this.authenticator = Objects.requireNonNull(authenticator, "authenticator");
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
         * Starts the server.
         *
         * @throws IllegalStateException without an authenticator
         * @throws UncheckedIOException if the address cannot be bound (the port is taken, say)
         */
        public Dashboard start() {
            if (authenticator == null) {
                throw new IllegalStateException("the FlexiQ dashboard needs an authenticator: set one with "
                        + "authenticator(DashboardAuthenticator.basic(user, password)), or "
                        + "DashboardAuthenticator.permitAllOnLoopback() for local development only");
            }
            try {
                return new Dashboard(this);
            } catch (IOException e) {
                throw new UncheckedIOException("the FlexiQ dashboard cannot listen on " + bindAddress.getHostAddress()
                        + ":" + port + " (" + e.getMessage() + "); choose another port", e);
            }
        }
    }
}
