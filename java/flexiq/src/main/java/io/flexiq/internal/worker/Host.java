package io.flexiq.internal.worker;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** This machine, as a worker's registration names it. */
final class Host {
    /**
     * The host name: the environment's (HOSTNAME on Linux shells and containers, COMPUTERNAME on
     * Windows) when set, which costs no name lookup, else the one the JDK resolves once.
     */
    static final String NAME = name();

    private Host() {}

    private static String name() {
        for (String variable : new String[] {"HOSTNAME", "COMPUTERNAME"}) {
            String value = System.getenv(variable);
            if (value != null && !value.isBlank()) {
                return value.strip();
            }
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "unknown";
        }
    }
}
