package io.flexiq;

/**
 * Gives the password for each new connection a {@link FlexiQ} client opens, for credentials
 * that expire or rotate: an IAM authentication token, a secret store's current version. Set
 * with {@link FlexiQ.Builder#passwordSupplier}; its answer takes the place of the URL's password.
 *
 * <p>It is asked on the thread that opens the connection, while a call waits for it: return a
 * cached value and refresh it ahead of its expiry rather than fetching on every call. What it
 * throws fails that connection as unavailable (the call may be retried), with the exception's
 * message in the error.
 */
@FunctionalInterface
public interface PasswordSupplier {
    /** The password to connect with now; never null. */
    String password() throws Exception;
}
