package io.flexiq.dashboard;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Query strings and url-encoded form bodies, as the JDK's HTTP server hands them over raw. */
final class Forms {
    /** The largest form body read: the dashboard's forms hold a token, a scope and a key. */
    static final int MAX_BODY = 64 * 1024;

    private Forms() {}

    static Map<String, List<String>> parse(String encoded) {
        Map<String, List<String>> params = new LinkedHashMap<>();
        if (encoded == null || encoded.isEmpty()) {
            return params;
        }
        for (String pair : encoded.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = decode(equals < 0 ? pair : pair.substring(0, equals));
            String value = equals < 0 ? "" : decode(pair.substring(equals + 1));
            params.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
        }
        return params;
    }

    private static String decode(String text) {
        try {
            return URLDecoder.decode(text, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException malformed) {
            return "";
        }
    }
}
