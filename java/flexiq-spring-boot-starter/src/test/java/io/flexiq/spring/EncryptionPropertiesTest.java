package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.AesGcmPayloadCodec;
import io.flexiq.FlexiQ;
import io.flexiq.PayloadCodec;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.FlexiQPostgresInitializer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code flexiq.encryption.*}: the properties as Spring binds them, the codec they make, and the
 * startup failing on a bad key with a message naming the property, never its value.
 */
@ExtendWith(FlexiQExtension.class)
class EncryptionPropertiesTest {
    private static final String K1 = base64(1, 32);
    private static final String K2 = base64(2, 32);
    private static final byte[] PAYLOAD = "{\"card\":\"4111\"}".getBytes(StandardCharsets.UTF_8);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new FlexiQPostgresInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FlexiQAutoConfiguration.class,
                    FlexiQBoot4Configuration.class));

    /** Without a database: the codec is made before any connection is tried. */
    private final ApplicationContextRunner bare = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FlexiQAutoConfiguration.class));

    private static String base64(int seed, int length) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) seed);
        bytes[0] = (byte) length;
        return Base64.getEncoder().encodeToString(bytes);
    }

    private static FlexiQProperties.Encryption bind(String... properties) {
        Map<String, String> source = new LinkedHashMap<>();
        for (String property : properties) {
            int eq = property.indexOf('=');
            source.put(property.substring(0, eq), property.substring(eq + 1));
        }
        return new Binder(new MapConfigurationPropertySource(source))
                .bindOrCreate("flexiq", FlexiQProperties.class).getEncryption();
    }

    private static AesGcmPayloadCodec codec(String... properties) {
        Optional<PayloadCodec> codec = bind(properties).codec();
        assertTrue(codec.isPresent());
        return assertInstanceOf(AesGcmPayloadCodec.class, codec.get());
    }

    private static String failure(String... properties) {
        FlexiQProperties.Encryption encryption = bind(properties);
        return assertThrows(IllegalStateException.class, encryption::codec).getMessage();
    }

    @Test
    void noKeysNoCodec() {
        assertEquals(Optional.empty(), bind().codec());
        assertEquals(Optional.empty(), new FlexiQProperties().getEncryption().codec());
    }

    @Test
    void aSingleKeyEncryptsAndRoundTrips() {
        AesGcmPayloadCodec codec = codec("flexiq.encryption.keys.k1=" + K1);
        assertEquals("k1", codec.encryptsWith());
        assertArrayEquals(PAYLOAD, codec.decode("charge", codec.encode("charge", PAYLOAD)));
        AesGcmPayloadCodec direct = AesGcmPayloadCodec.builder().keyBase64("k1", K1).build();
        assertArrayEquals(PAYLOAD, direct.decode("charge", codec.encode("charge", PAYLOAD)));
    }

    @Test
    void rotatesWithEncryptWith() {
        byte[] underK1 = codec("flexiq.encryption.keys.k1=" + K1).encode("charge", PAYLOAD);
        AesGcmPayloadCodec codec = codec("flexiq.encryption.keys.k1=" + K1, "flexiq.encryption.keys.k2=" + K2,
                "flexiq.encryption.encrypt-with=k2");
        assertEquals("k2", codec.encryptsWith());
        assertEquals(Set.of("k1", "k2"), codec.keyIds());
        assertArrayEquals(PAYLOAD, codec.decode("charge", underK1));
        assertArrayEquals(PAYLOAD, codec.decode("charge", codec.encode("charge", PAYLOAD)));
    }

    @Test
    void keyIdsWithCapitalsOrUnderscoresKeepThemInBrackets() {
        AesGcmPayloadCodec codec = codec("flexiq.encryption.keys.[Key_2026.1]=" + K1,
                "flexiq.encryption.keys.k-2=" + K2, "flexiq.encryption.encrypt-with=Key_2026.1");
        assertEquals(Set.of("Key_2026.1", "k-2"), codec.keyIds());
        assertEquals("Key_2026.1", codec.encryptsWith());
    }

    @Test
    void aFingerprintKeyKeysTheFingerprint() throws Exception {
        byte[] sha256 = MessageDigest.getInstance("SHA-256").digest(PAYLOAD);
        assertArrayEquals(sha256, codec("flexiq.encryption.keys.k1=" + K1).fingerprint(PAYLOAD));
        String fingerprintKey = "flexiq.encryption.fingerprint-key=" + base64(9, 48);
        byte[] keyed = codec("flexiq.encryption.keys.k1=" + K1, fingerprintKey).fingerprint(PAYLOAD);
        assertFalse(Arrays.equals(sha256, keyed));
        assertArrayEquals(keyed, codec("flexiq.encryption.keys.k2=" + K2, fingerprintKey).fingerprint(PAYLOAD));
    }

    @Test
    void badKeysFailNamingThePropertyNotTheValue() {
        String notBase64 = failure("flexiq.encryption.keys.k1=s3cr3t!!");
        assertTrue(notBase64.contains("flexiq.encryption.keys.k1") && notBase64.contains("not base64"), notBase64);
        assertFalse(notBase64.contains("s3cr3t"), notBase64);

        String sixteen = base64(1, 16);
        String tooShort = failure("flexiq.encryption.keys.k1=" + sixteen);
        assertTrue(tooShort.contains("flexiq.encryption.keys.k1") && tooShort.contains("16 bytes long"), tooShort);
        assertFalse(tooShort.contains(sixteen), tooShort);

        String empty = failure("flexiq.encryption.keys.k1=");
        assertTrue(empty.contains("flexiq.encryption.keys.k1 is empty"), empty);

        String badId = failure("flexiq.encryption.keys.[k 1]=" + K1);
        assertTrue(badId.contains("flexiq.encryption.keys.k 1") && badId.contains("key id"), badId);

        String fingerprint = failure("flexiq.encryption.keys.k1=" + K1, "flexiq.encryption.fingerprint-key=" + base64(9, 16));
        assertTrue(fingerprint.contains("flexiq.encryption.fingerprint-key") && fingerprint.contains("at least 32"), fingerprint);
    }

    @Test
    void theEncryptingKeyMustBeChosenAmongTheKeys() {
        String unknown = failure("flexiq.encryption.keys.k1=" + K1, "flexiq.encryption.encrypt-with=k2");
        assertTrue(unknown.contains("flexiq.encryption.encrypt-with is 'k2'") && unknown.contains("(k1)"), unknown);
        String several = failure("flexiq.encryption.keys.k1=" + K1, "flexiq.encryption.keys.k2=" + K2);
        assertTrue(several.contains("set flexiq.encryption.encrypt-with"), several);
        String withoutKeys = failure("flexiq.encryption.encrypt-with=k1");
        assertTrue(withoutKeys.contains("flexiq.encryption.keys holds no key"), withoutKeys);
        String fingerprintOnly = failure("flexiq.encryption.fingerprint-key=" + base64(9, 32));
        assertTrue(fingerprintOnly.contains("flexiq.encryption.fingerprint-key is set"), fingerprintOnly);
    }

    @Test
    void aBadKeyFailsTheStartBeforeAnyConnection() {
        bare.withPropertyValues("flexiq.encryption.keys.k1=" + base64(1, 24)).run(context -> {
            Throwable t = context.getStartupFailure();
            assertNotNull(t);
            while (t.getCause() != null) {
                t = t.getCause();
            }
            assertTrue(t.getMessage().contains("flexiq.encryption.keys.k1") && t.getMessage().contains("24 bytes long"),
                    t.getMessage());
        });
    }

    @Test
    void keysInThePropertiesMakeAClient() {
        runner.withPropertyValues("flexiq.encryption.keys.k1=" + K1, "flexiq.encryption.keys.k2=" + K2,
                "flexiq.encryption.encrypt-with=k2").run(context -> {
                    assertNull(context.getStartupFailure());
                    assertNotNull(context.getBean(FlexiQ.class));
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnCodec {
        @Bean
        PayloadCodec ownCodec() {
            return AesGcmPayloadCodec.builder().keyBase64("own", K1).build();
        }
    }

    @Test
    void theApplicationsCodecBeanWinsOverTheProperties() {
        // Properties that would fail the start are never read.
        runner.withUserConfiguration(OwnCodec.class).withPropertyValues("flexiq.encryption.keys.k1=short")
                .run(context -> {
                    assertNull(context.getStartupFailure());
                    assertNotNull(context.getBean(FlexiQ.class));
                });
    }
}
