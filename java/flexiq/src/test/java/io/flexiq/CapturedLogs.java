package io.flexiq;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.slf4j.LoggerFactory;

/** FlexiQ's log lines from INFO up, through Logback, while open; for the tests of every package. */
public final class CapturedLogs implements AutoCloseable {
    private final Logger logger = (Logger) LoggerFactory.getLogger("io.flexiq");
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Level before = logger.getLevel();

    public CapturedLogs() {
        appender.start();
        logger.addAppender(appender);
        logger.setLevel(Level.INFO);
    }

    /** The lines logged so far at {@code level} whose message contains {@code text}. */
    public List<ILoggingEvent> at(Level level, String text) {
        return matching(e -> e.getLevel() == level && e.getFormattedMessage().contains(text));
    }

    public List<ILoggingEvent> matching(Predicate<ILoggingEvent> p) {
        // Logback appends under the appender's own lock (AppenderBase.doAppend is synchronized).
        synchronized (appender) {
            return appender.list.stream().filter(p).collect(Collectors.toList());
        }
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        logger.setLevel(before);
    }
}
