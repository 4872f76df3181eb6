package io.flexiq.spring;

import io.flexiq.AesGcmPayloadCodec;
import io.flexiq.PayloadCodec;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code flexiq.*} properties. Without {@code flexiq.url}, the client connects to the
 * database of {@code spring.datasource.*}.
 */
@ConfigurationProperties("flexiq")
public class FlexiQProperties {
    /** Whether to auto-configure FlexiQ at all. */
    private boolean enabled = true;
    /**
     * The database, as postgres://user:password@host:port/database?sslmode=...; by default the one
     * of spring.datasource.url, username and password.
     */
    private String url;
    /**
     * A postgres:// URL that reaches PostgreSQL without a pooler in transaction mode, for
     * FlexiQ's wake-ups and maintenance election; needed only when the url goes through one.
     */
    private String directUrl;
    /** The PostgreSQL schema holding FlexiQ's tables. */
    private String schema = "flexiq";
    /** The most connections FlexiQ's own pool opens (besides the application's DataSource). */
    private int poolSize = 10;
    /** How long opening one connection may take. */
    private Duration connectTimeout = Duration.ofSeconds(5);
    /** How long a call waits for a connection of a busy pool. */
    private Duration acquireTimeout = Duration.ofSeconds(30);
    /** Whether to apply missing migrations of FlexiQ's schema when the application starts. */
    private boolean migrate = true;
    /**
     * How long an explicit idempotency key stays bound to its job after the job is accepted, when
     * an enqueue sets none; FlexiQ's default (24 hours) when unset.
     */
    private Duration keyRetention;
    /**
     * Whether the JobQueue bean enqueues on the connection of the Spring-managed transaction in
     * progress (so that the job commits or rolls back with it). That DataSource must reach the
     * database holding FlexiQ's schema.
     */
    private boolean joinTransactions = true;
    /**
     * Queues to pause as the application starts, so that none of their jobs runs until an
     * operator resumes them (a deploy that must wait for a downstream, say). The pause is kept
     * in the database: it holds for every process until resumed, and each start with this
     * property set pauses the queues again.
     */
    private List<String> pausedQueues = List.of();
    private final Worker worker = new Worker();
    private final Metrics metrics = new Metrics();
    private final Maintenance maintenance = new Maintenance();
    private final Dashboard dashboard = new Dashboard();
    private final Tracing tracing = new Tracing();
    private final Encryption encryption = new Encryption();

    /** Whether to auto-configure FlexiQ at all (default true). */
    public boolean isEnabled() {
        return enabled;
    }

    /** Sets whether to auto-configure FlexiQ at all. */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** The database's postgres:// URL, or null to use spring.datasource.*. */
    public String getUrl() {
        return url;
    }

    /** Sets the database's postgres:// URL. */
    public void setUrl(String url) {
        this.url = url;
    }

    /** The direct postgres:// URL for wake-ups and the maintenance election, or null for none. */
    public String getDirectUrl() {
        return directUrl;
    }

    /** Sets the direct postgres:// URL for wake-ups and the maintenance election. */
    public void setDirectUrl(String directUrl) {
        this.directUrl = directUrl;
    }

    /** The PostgreSQL schema holding FlexiQ's tables (default flexiq). */
    public String getSchema() {
        return schema;
    }

    /** Sets the PostgreSQL schema holding FlexiQ's tables. */
    public void setSchema(String schema) {
        this.schema = schema;
    }

    /** The most connections FlexiQ's pool opens (default 10). */
    public int getPoolSize() {
        return poolSize;
    }

    /** Sets the most connections FlexiQ's pool opens. */
    public void setPoolSize(int poolSize) {
        this.poolSize = poolSize;
    }

    /** How long opening one connection may take (default 5 s). */
    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    /** Sets how long opening one connection may take. */
    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    /** How long a call waits for a connection of a busy pool (default 30 s). */
    public Duration getAcquireTimeout() {
        return acquireTimeout;
    }

    /** Sets how long a call waits for a connection of a busy pool. */
    public void setAcquireTimeout(Duration acquireTimeout) {
        this.acquireTimeout = acquireTimeout;
    }

    /** Whether to migrate FlexiQ's schema at startup (default true). */
    public boolean isMigrate() {
        return migrate;
    }

    /** Sets whether to migrate FlexiQ's schema at startup. */
    public void setMigrate(boolean migrate) {
        this.migrate = migrate;
    }

    /** The queues paused as the application starts (default: none). */
    public List<String> getPausedQueues() {
        return pausedQueues;
    }

    /** Sets the queues paused as the application starts. */
    public void setPausedQueues(List<String> pausedQueues) {
        this.pausedQueues = pausedQueues == null ? List.of() : List.copyOf(pausedQueues);
    }

    /** The default retention of explicit keys, or null for FlexiQ's (24 hours). */
    public Duration getKeyRetention() {
        return keyRetention;
    }

    /** Sets the default retention of explicit keys. */
    public void setKeyRetention(Duration keyRetention) {
        this.keyRetention = keyRetention;
    }

    /** Whether enqueues join the Spring-managed transaction in progress (default true). */
    public boolean isJoinTransactions() {
        return joinTransactions;
    }

    /** Sets whether enqueues join the Spring-managed transaction in progress. */
    public void setJoinTransactions(boolean joinTransactions) {
        this.joinTransactions = joinTransactions;
    }

    /** The worker's settings. */
    public Worker getWorker() {
        return worker;
    }

    /** The metrics' settings. */
    public Metrics getMetrics() {
        return metrics;
    }

    /** The maintenance settings. */
    public Maintenance getMaintenance() {
        return maintenance;
    }

    /**
     * The {@code flexiq.maintenance.*} properties: releasing expired keys, rescuing expired leases
     * and deleting finished jobs, run by one elected client per schema among those with a worker.
     */
    public static class Maintenance {
        /** Whether this application takes part in its schema's maintenance while it runs a worker. */
        private boolean enabled = true;
        /** The time between two passes, and between two tries for the lock while another client holds it. */
        private Duration interval = Duration.ofSeconds(5);
        /** How long completed jobs are kept after they finished. */
        private Duration completedRetention = Duration.ofHours(24);
        /** How long cancelled jobs are kept after they were cancelled. */
        private Duration cancelledRetention = Duration.ofHours(24);
        /** How long dead jobs are kept after they were dead-lettered. */
        private Duration deadRetention = Duration.ofDays(7);
        /** The most jobs of each final state one delete statement removes. */
        private int batchSize = 1000;

        /** Whether to take part in maintenance (default true). */
        public boolean isEnabled() {
            return enabled;
        }

        /** Sets whether to take part in maintenance. */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** The time between two passes (default 5 s). */
        public Duration getInterval() {
            return interval;
        }

        /** Sets the time between two passes. */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        /** How long completed jobs are kept (default 24 h). */
        public Duration getCompletedRetention() {
            return completedRetention;
        }

        /** Sets how long completed jobs are kept. */
        public void setCompletedRetention(Duration completedRetention) {
            this.completedRetention = completedRetention;
        }

        /** How long cancelled jobs are kept (default 24 h). */
        public Duration getCancelledRetention() {
            return cancelledRetention;
        }

        /** Sets how long cancelled jobs are kept. */
        public void setCancelledRetention(Duration cancelledRetention) {
            this.cancelledRetention = cancelledRetention;
        }

        /** How long dead jobs are kept (default 7 days). */
        public Duration getDeadRetention() {
            return deadRetention;
        }

        /** Sets how long dead jobs are kept. */
        public void setDeadRetention(Duration deadRetention) {
            this.deadRetention = deadRetention;
        }

        /** The most jobs of each final state one delete statement removes (default 1000). */
        public int getBatchSize() {
            return batchSize;
        }

        /** Sets the most jobs of each final state one delete statement removes. */
        public void setBatchSize(int batchSize) {
            this.batchSize = batchSize;
        }
    }

    /** The {@code flexiq.metrics.*} properties: FlexiQ's Micrometer meters. */
    public static class Metrics {
        /** How often the gauge of jobs by queue and state is read from PostgreSQL (never per scrape). */
        private Duration refresh = Duration.ofSeconds(30);

        /** How often the gauge of jobs is read (default 30 s). */
        public Duration getRefresh() {
            return refresh;
        }

        /** Sets how often the gauge of jobs is read. */
        public void setRefresh(Duration refresh) {
            this.refresh = refresh;
        }
    }

    /** The {@code flexiq.worker.*} properties: the worker running the application's handler beans. */
    public static class Worker {
        /** Whether to run the handler beans in a worker (none runs without handler beans anyway). */
        private boolean enabled = true;
        /** The queues to take jobs from. */
        private List<String> queues = List.of("default");
        /** How many jobs run at once. */
        private int concurrency = 10;
        /** How long a claimed job stays this worker's without a word from it; extended while the handler runs. */
        private Duration lease = Duration.ofSeconds(30);
        /** How often an idle worker looks for due jobs without being woken. */
        private Duration pollInterval = Duration.ofSeconds(1);
        /**
         * How long running handlers may finish when the application stops; those still running
         * then are interrupted and their jobs given back to the queue, the attempt not counted.
         */
        private Duration shutdownTimeout = Duration.ofSeconds(10);

        /** Whether to run the handler beans (default true). */
        public boolean isEnabled() {
            return enabled;
        }

        /** Sets whether to run the handler beans. */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** The queues to take jobs from (default: default). */
        public List<String> getQueues() {
            return queues;
        }

        /** Sets the queues to take jobs from. */
        public void setQueues(List<String> queues) {
            this.queues = queues;
        }

        /** How many jobs run at once (default 10). */
        public int getConcurrency() {
            return concurrency;
        }

        /** Sets how many jobs run at once. */
        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        /** The lease of a claimed job (default 30 s). */
        public Duration getLease() {
            return lease;
        }

        /** Sets the lease of a claimed job. */
        public void setLease(Duration lease) {
            this.lease = lease;
        }

        /** How often an idle worker polls (default 1 s). */
        public Duration getPollInterval() {
            return pollInterval;
        }

        /** Sets how often an idle worker polls. */
        public void setPollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
        }

        /** How long running handlers may finish at shutdown (default 10 s). */
        public Duration getShutdownTimeout() {
            return shutdownTimeout;
        }

        /** Sets how long running handlers may finish at shutdown. */
        public void setShutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
        }
    }

    /** The dashboard's settings. */
    public Dashboard getDashboard() {
        return dashboard;
    }

    /** Tracing's settings. */
    public Tracing getTracing() {
        return tracing;
    }

    /**
     * The {@code flexiq.tracing.*} properties: OpenTelemetry spans of enqueues and attempts, when
     * the application has OpenTelemetry's API and an {@code OpenTelemetry} bean.
     */
    public static class Tracing {
        /** Whether to trace enqueues and attempts (when the application has an OpenTelemetry bean). */
        private boolean enabled = true;

        /** Whether to trace enqueues and attempts (default true). */
        public boolean isEnabled() {
            return enabled;
        }

        /** Sets whether to trace enqueues and attempts. */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * The {@code flexiq.dashboard.*} properties: the web dashboard, mounted when the application
     * is a servlet web application with io.flexiq:flexiq-dashboard on its classpath.
     */
    public static class Dashboard {
        /** Whether to mount the dashboard (when flexiq-dashboard is on the classpath of a servlet web application). */
        private boolean enabled = true;
        /** The path the dashboard is served under. */
        private String path = "/flexiq";

        /** Whether to mount the dashboard (default true). */
        public boolean isEnabled() {
            return enabled;
        }

        /** Sets whether to mount the dashboard. */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** The path the dashboard is served under (default /flexiq). */
        public String getPath() {
            return path;
        }

        /** Sets the path the dashboard is served under: "/" and one or more segments, no trailing "/". */
        public void setPath(String path) {
            this.path = path;
        }
    }

    /** The encryption settings. */
    public Encryption getEncryption() {
        return encryption;
    }

    /**
     * The {@code flexiq.encryption.*} properties: payloads encrypted at rest with AES-256-GCM
     * ({@link AesGcmPayloadCodec}) under the application's keys, unless the application declares
     * a {@link PayloadCodec} bean of its own. Without keys, payloads are stored as serialized.
     */
    public static class Encryption {
        /**
         * The keys that decrypt payloads, by key id (1 to 32 characters of A-Z, a-z, 0-9, '.', '_'
         * and '-'; in brackets when it holds '_' or capitals, as flexiq.encryption.keys.[Key_1]): the
         * base64 text of 32 random bytes each, as `openssl rand -base64 32` prints. Keep a key
         * while jobs encrypted under it remain.
         */
        private Map<String, String> keys = new LinkedHashMap<>();
        /** The id of the key that encrypts; optional when flexiq.encryption.keys holds a single key. */
        private String encryptWith;
        /**
         * The base64 text of at least 32 random bytes that key the payload fingerprints
         * (HMAC-SHA256), so that a reader of the table cannot confirm a guessed payload; plain
         * SHA-256 when unset. Keep it across key rotations.
         */
        private String fingerprintKey;

        /** The keys that decrypt, by id, as base64 text (default none). */
        public Map<String, String> getKeys() {
            return keys;
        }

        /** Sets the keys that decrypt, by id, as base64 text. */
        public void setKeys(Map<String, String> keys) {
            this.keys = keys;
        }

        /** The id of the key that encrypts, or null for the single key. */
        public String getEncryptWith() {
            return encryptWith;
        }

        /** Sets the id of the key that encrypts. */
        public void setEncryptWith(String encryptWith) {
            this.encryptWith = encryptWith;
        }

        /** The fingerprint key as base64 text, or null for plain SHA-256. */
        public String getFingerprintKey() {
            return fingerprintKey;
        }

        /** Sets the fingerprint key as base64 text. */
        public void setFingerprintKey(String fingerprintKey) {
            this.fingerprintKey = fingerprintKey;
        }

        /**
         * The codec these properties describe; empty without keys. Fails at startup on a key that
         * is not the base64 of 32 bytes, an invalid id, or an encrypt-with naming no key, with a
         * message naming the property (never its value).
         */
        Optional<PayloadCodec> codec() {
            if (keys == null || keys.isEmpty()) {
                if (hasText(encryptWith) || hasText(fingerprintKey)) {
                    throw new IllegalStateException("flexiq.encryption." + (hasText(encryptWith) ? "encrypt-with" : "fingerprint-key")
                            + " is set but flexiq.encryption.keys holds no key: add flexiq.encryption.keys.<id>=<base64 of 32 bytes>");
                }
                return Optional.empty();
            }
            AesGcmPayloadCodec.Builder builder = AesGcmPayloadCodec.builder();
            keys.forEach((id, base64) -> {
                String property = "flexiq.encryption.keys." + id;
                if (!hasText(base64)) {
                    throw new IllegalStateException(property + " is empty: set it to the base64 of 32 random bytes "
                            + "(`openssl rand -base64 32`)");
                }
                try {
                    // The message alone, as the root of the startup failure: it names the
                    // property, and the codec's own messages never hold key material.
                    builder.keyBase64(id, base64);
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException(property + ": " + e.getMessage());
                }
            });
            if (hasText(encryptWith)) {
                String id = encryptWith.trim();
                if (!keys.containsKey(id)) {
                    throw new IllegalStateException("flexiq.encryption.encrypt-with is '" + id + "', which is not among "
                            + "flexiq.encryption.keys (" + String.join(", ", keys.keySet()) + "): add flexiq.encryption.keys."
                            + id + " or choose one of those");
                }
                builder.encryptWith(id);
            } else if (keys.size() > 1) {
                throw new IllegalStateException("flexiq.encryption.keys holds several keys (" + String.join(", ", keys.keySet())
                        + "): set flexiq.encryption.encrypt-with to the one that encrypts");
            }
            if (hasText(fingerprintKey)) {
                try {
                    builder.fingerprintKeyBase64(fingerprintKey);
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("flexiq.encryption.fingerprint-key: " + e.getMessage());
                }
            }
            return Optional.of(builder.build());
        }

        private static boolean hasText(String text) {
            return text != null && !text.isBlank();
        }
    }
}
