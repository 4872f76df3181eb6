package io.flexiq.dashboard;

import java.util.Objects;

/**
 * The hidden field every form of the dashboard carries against cross-site request forgery: the
 * parameter's name and the token expected in it.
 *
 * @param name the form parameter's name
 * @param token the token of the requester's session
 */
public record CsrfField(String name, String token) {
    /** Checks that both are given. */
    public CsrfField {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(token, "token");
    }
}
