package io.flexiq.dashboard;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * CSRF protection where no framework provides it: each browser gets a random session cookie
 * (HttpOnly, SameSite=Strict), and every form carries an HMAC of that cookie under a secret of
 * this dashboard instance. A POST counts only when its token matches its own cookie, which another
 * site can neither read nor set.
 */
final class SessionCsrf {
    static final String COOKIE = "flexiq_dashboard";
    static final String FIELD = "csrf";

    private static final Base64.Encoder BASE64 = Base64.getUrlEncoder().withoutPadding();

    private final SecureRandom random = new SecureRandom();
    private final SecretKeySpec secret;

    SessionCsrf() {
        byte[] key = new byte[32];
        random.nextBytes(key);
        secret = new SecretKeySpec(key, "HmacSHA256");
    }

    String newSession() {
        byte[] id = new byte[32];
        random.nextBytes(id);
        return BASE64.encodeToString(id);
    }

    CsrfField field(String session) {
        return new CsrfField(FIELD, token(session));
    }

    boolean valid(String session, String token) {
        return token != null && MessageDigest.isEqual(token(session).getBytes(StandardCharsets.US_ASCII),
                token.getBytes(StandardCharsets.UTF_8));
    }

    /** The Set-Cookie value for a new session, valid for the browser's session only. */
    static String cookie(String session, String path, boolean secure) {
        return COOKIE + "=" + session + "; Path=" + (path.isEmpty() ? "/" : path) + "; HttpOnly; SameSite=Strict"
                + (secure ? "; Secure" : "");
    }

    /** The session named in a Cookie header, if any. */
    static Optional<String> session(String cookieHeader) {
        if (cookieHeader == null) {
            return Optional.empty();
        }
        for (String pair : cookieHeader.split(";")) {
            String trimmed = pair.trim();
            if (trimmed.startsWith(COOKIE + "=")) {
                String value = trimmed.substring(COOKIE.length() + 1);
                if (!value.isEmpty()) {
                    return Optional.of(value);
                }
            }
        }
        return Optional.empty();
    }

    private String token(String session) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(secret);
            return BASE64.encodeToString(mac.doFinal(session.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM lacks HmacSHA256, which every Java platform must have", e);
        }
    }
}
