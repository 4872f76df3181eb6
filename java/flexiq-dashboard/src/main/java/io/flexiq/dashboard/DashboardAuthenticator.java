package io.flexiq.dashboard;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;

/**
 * Decides who may use the dashboard. The dashboard has no default: it refuses to start without
 * one, so that no deployment exposes job data by omission. Requests it refuses get 401.
 */
@FunctionalInterface
public interface DashboardAuthenticator {
    /**
     * The operator making this request (shown in the page header), or empty to refuse it.
     */
    Optional<String> authenticate(AuthenticationRequest request);

    /**
     * The {@code WWW-Authenticate} header sent with a refusal, if this scheme has one; a browser
     * shows its login prompt for {@code Basic}.
     */
    default Optional<String> challenge() {
        return Optional.empty();
    }

    /**
     * HTTP Basic authentication against one operator's credentials, compared in constant time.
     * Basic sends the password with every request: put TLS in front of a dashboard bound to any
     * address other than loopback.
     */
    static DashboardAuthenticator basic(String username, String password) {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        if (username.isEmpty() || username.indexOf(':') >= 0 || password.isEmpty()) {
            throw new IllegalArgumentException("Basic credentials need a non-empty username without ':' "
                    + "and a non-empty password");
        }
        byte[] expected = sha256(username + ":" + password);
        return new DashboardAuthenticator() {
            @Override
            public Optional<String> authenticate(AuthenticationRequest request) {
                Optional<String> header = request.header("Authorization");
                if (header.isEmpty() || !header.get().regionMatches(true, 0, "Basic ", 0, 6)) {
                    return Optional.empty();
                }
                String supplied;
                try {
                    supplied = new String(Base64.getDecoder().decode(header.get().substring(6).trim()),
                            StandardCharsets.UTF_8);
                } catch (IllegalArgumentException notBase64) {
                    return Optional.empty();
                }
                // Digests first: MessageDigest.isEqual takes the same time for any two of them.
                return MessageDigest.isEqual(expected, sha256(supplied)) ? Optional.of(username) : Optional.empty();
            }

            @Override
            public Optional<String> challenge() {
                return Optional.of("Basic realm=\"FlexiQ\", charset=\"UTF-8\"");
            }
        };
    }

    /**
     * Lets in every request that comes from this machine, without credentials: for local
     * development, or where an SSH tunnel is the only way in. Requests from any other address are
     * refused, wherever the dashboard is bound.
     */
    static DashboardAuthenticator permitAllOnLoopback() {
        return request -> request.remoteAddress().isLoopbackAddress() ? Optional.of("local") : Optional.empty();
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM lacks SHA-256, which every Java platform must have", e);
        }
    }
}
