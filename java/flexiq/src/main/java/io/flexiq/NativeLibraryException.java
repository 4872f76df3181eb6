package io.flexiq;

/**
 * FlexiQ's native library could not be loaded. The message names the platform and every place
 * that was tried; the failure is kept and reported again on every later call.
 */
public class NativeLibraryException extends FlexiQException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message and the last loading failure, if any. */
    public NativeLibraryException(String message, Throwable cause) {
        super(message, cause);
    }
}
