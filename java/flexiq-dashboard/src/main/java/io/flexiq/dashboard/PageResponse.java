package io.flexiq.dashboard;

import java.nio.charset.StandardCharsets;

/**
 * What the pages answer, for the server in use to write.
 *
 * @param status the HTTP status
 * @param body UTF-8 HTML or text
 * @param contentType the body's type
 * @param location where a redirect points, or null
 */
record PageResponse(int status, String body, String contentType, String location) {
    static PageResponse html(int status, String html) {
        return new PageResponse(status, html, "text/html; charset=utf-8", null);
    }

    static PageResponse text(int status, String text) {
        return new PageResponse(status, text, "text/plain; charset=utf-8", null);
    }

    /** 303 See Other: the browser follows with a GET, so reloading the page repeats no action. */
    static PageResponse seeOther(String location) {
        return new PageResponse(303, "", "text/plain; charset=utf-8", location);
    }

    byte[] bytes() {
        return body.getBytes(StandardCharsets.UTF_8);
    }
}
