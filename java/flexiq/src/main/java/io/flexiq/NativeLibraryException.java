package io.flexiq;

/**
 * FlexiQ's native library could not be loaded. The message names the platform (with the JVM's
 * {@code os.name} and {@code os.arch}) and every place that was tried, and, where the jar carries
 * no library for the platform, how to supply one built elsewhere; the failure is kept and
 * reported again on every later call.
 */
public class NativeLibraryException extends FlexiQException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message and the last loading failure, if any. */
    public NativeLibraryException(String message, Throwable cause) {
        super(message, cause);
    }
}
