package io.flexiq.dashboard;

import java.net.InetAddress;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/** What a {@link DashboardAuthenticator} sees of a request: its headers and where it comes from. */
public final class AuthenticationRequest {
    private final Function<String, String> headers;
    private final InetAddress remoteAddress;

    AuthenticationRequest(Function<String, String> headers, InetAddress remoteAddress) {
        this.headers = Objects.requireNonNull(headers, "headers");
        this.remoteAddress = Objects.requireNonNull(remoteAddress, "remoteAddress");
    }

    /** The first value of a request header, its name in any case. */
    public Optional<String> header(String name) {
        return Optional.ofNullable(headers.apply(name.toLowerCase(Locale.ROOT)));
    }

    /** The address the connection comes from (a proxy's, behind one). */
    public InetAddress remoteAddress() {
        return remoteAddress;
    }
}
