package io.flexiq.dashboard;

import java.util.List;
import java.util.Map;

/**
 * A request that reached the pages: authenticated and, for a POST, its CSRF token checked.
 *
 * @param method GET, HEAD or POST
 * @param path the path below the dashboard's mount point, starting with "/"
 * @param params the query parameters of a GET, the form fields of a POST
 * @param operator who is signed in
 * @param csrf the field the page's forms carry
 * @param base the mount point's path, "" at the root, for links
 */
record PageRequest(String method, String path, Map<String, List<String>> params, String operator, CsrfField csrf,
        String base) {
    PageRequest {
        params = Map.copyOf(params);
    }

    /** The parameter's first value, or null. */
    String param(String name) {
        List<String> values = params.get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    boolean isPost() {
        return method.equals("POST");
    }

    /** A link to a path below the mount point. */
    String link(String subPath) {
        return base + subPath;
    }
}
