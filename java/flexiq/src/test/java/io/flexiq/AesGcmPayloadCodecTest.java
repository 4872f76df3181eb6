package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The AES-256-GCM codec on its own, without a database. */
class AesGcmPayloadCodecTest {
    private static final byte[] K1 = key(1);
    private static final byte[] K2 = key(2);
    private static final byte[] PAYLOAD = "{\"orderId\":42,\"card\":\"4111-1111-1111-1111\"}".getBytes(StandardCharsets.UTF_8);

    private static byte[] key(int seed) {
        byte[] key = new byte[32];
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) (seed * 31 + i * 7);
        }
        return key;
    }

    private static AesGcmPayloadCodec only(String id, byte[] key) {
        return AesGcmPayloadCodec.builder().key(id, key).build();
    }

    @Test
    void roundTrips() {
        AesGcmPayloadCodec codec = only("k1", K1);
        assertEquals("aes-256-gcm", codec.id());
        assertEquals("k1", codec.encryptsWith());
        assertArrayEquals(PAYLOAD, codec.decode("charge", codec.encode("charge", PAYLOAD)));
        assertArrayEquals(new byte[0], codec.decode("charge", codec.encode("charge", new byte[0])));
        assertArrayEquals(PAYLOAD, codec.decode("chargé ✓", codec.encode("chargé ✓", PAYLOAD)));
    }

    @Test
    void storesTheDocumentedFormat() {
        byte[] stored = only("k1", K1).encode("charge", PAYLOAD);
        assertEquals(1, stored[0]);
        assertEquals(2, stored[1]);
        assertEquals("k1", new String(stored, 2, 2, StandardCharsets.US_ASCII));
        assertEquals(4 + 12 + PAYLOAD.length + 16, stored.length);
    }

    @Test
    void twoEncodesOfOnePayloadDiffer() {
        AesGcmPayloadCodec codec = only("k1", K1);
        byte[] first = codec.encode("charge", PAYLOAD);
        byte[] second = codec.encode("charge", PAYLOAD);
        assertFalse(Arrays.equals(first, second));
        assertFalse(Arrays.equals(Arrays.copyOfRange(first, 4, 16), Arrays.copyOfRange(second, 4, 16)), "the nonce repeats");
    }

    @Test
    void theStoredBytesDoNotContainThePlaintext() {
        byte[] stored = only("k1", K1).encode("charge", PAYLOAD);
        String text = new String(stored, StandardCharsets.ISO_8859_1);
        assertFalse(text.contains("4111"), text);
        assertFalse(text.contains("orderId"), text);
    }

    @Test
    void aPayloadMovedToAnotherTaskFailsToDecode() {
        AesGcmPayloadCodec codec = only("k1", K1);
        byte[] stored = codec.encode("charge", PAYLOAD);
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class, () -> codec.decode("refund", stored));
        assertTrue(e.getMessage().contains("does not authenticate under key 'k1' for task 'refund'"), e.getMessage());
        assertTrue(e.getMessage().contains("stored for another task"), e.getMessage());
    }

    @Test
    void alteringAnyOneByteFailsNamingTheKey() {
        AesGcmPayloadCodec codec = only("k1", K1);
        byte[] stored = codec.encode("charge", PAYLOAD);
        for (int i = 0; i < stored.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] altered = stored.clone();
                altered[i] ^= (byte) (1 << bit);
                String where = "byte " + i + ", bit " + bit;
                PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                        () -> codec.decode("charge", altered), where);
                // The header's bytes (version, id length, id) fail on what they became; the rest
                // fails to authenticate under the key the header names.
                if (i >= 4) {
                    assertTrue(e.getMessage().contains("does not authenticate under key 'k1' for task 'charge'"),
                            where + ": " + e.getMessage());
                }
            }
        }
        byte[] version = stored.clone();
        version[0] = 2;
        assertMessage(codec, version, "format version 2");
        byte[] renamed = stored.clone();
        renamed[3] = '2';
        assertMessage(codec, renamed, "encrypted under key 'k2', which this codec does not hold");
        // Relabelled under an id the codec holds, with the same key: the header is authenticated.
        AesGcmPayloadCodec twoIds = AesGcmPayloadCodec.builder().key("k1", K1).key("k2", K1).encryptWith("k1").build();
        assertMessage(twoIds, renamed, "does not authenticate under key 'k2'");
    }

    @Test
    void truncatedOrForeignBytesFailSayingSo() {
        AesGcmPayloadCodec codec = only("k1", K1);
        byte[] stored = codec.encode("charge", PAYLOAD);
        assertMessage(codec, new byte[0], "truncated (0 bytes)");
        assertMessage(codec, new byte[] {1}, "truncated (1 bytes)");
        assertMessage(codec, Arrays.copyOf(stored, 4 + 12 + 15), "truncated");
        assertMessage(codec, Arrays.copyOf(stored, stored.length - 1), "does not authenticate under key 'k1'");
        assertMessage(codec, new byte[] {1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28}, "truncated");
        assertMessage(codec, "{\"orderId\":42}".getBytes(StandardCharsets.UTF_8), "format version 123");
    }

    @Test
    void rotatesKeys() {
        AesGcmPayloadCodec old = only("k1", K1);
        byte[] underK1 = old.encode("charge", PAYLOAD);
        AesGcmPayloadCodec rotated = AesGcmPayloadCodec.builder().key("k1", K1).key("k2", K2).encryptWith("k2").build();
        byte[] underK2 = rotated.encode("charge", PAYLOAD);
        assertEquals("k2", new String(underK2, 2, 2, StandardCharsets.US_ASCII));
        assertArrayEquals(PAYLOAD, rotated.decode("charge", underK1));
        assertArrayEquals(PAYLOAD, rotated.decode("charge", underK2));

        AesGcmPayloadCodec onlyK2 = only("k2", K2);
        assertArrayEquals(PAYLOAD, onlyK2.decode("charge", underK2));
        assertMessage(onlyK2, underK1, "encrypted under key 'k1', which this codec does not hold");
        assertMessage(onlyK2, underK1, "add it with key(\"k1\", …)");
    }

    @Test
    void anotherKeyUnderTheSameIdFailsToAuthenticate() {
        byte[] stored = only("k1", K1).encode("charge", PAYLOAD);
        assertMessage(only("k1", K2), stored, "a different key under that id");
    }

    @Test
    void fingerprintsAgreeAcrossKeysAndInstances() throws Exception {
        AesGcmPayloadCodec a = only("k1", K1);
        AesGcmPayloadCodec b = AesGcmPayloadCodec.builder().key("k1", K1).key("k2", K2).encryptWith("k2").build();
        byte[] sha256 = MessageDigest.getInstance("SHA-256").digest(PAYLOAD);
        assertArrayEquals(sha256, a.fingerprint(PAYLOAD));
        assertArrayEquals(sha256, b.fingerprint(PAYLOAD));

        byte[] fingerprintKey = key(9);
        AesGcmPayloadCodec keyedA = AesGcmPayloadCodec.builder().key("k1", K1).fingerprintKey(fingerprintKey).build();
        AesGcmPayloadCodec keyedB = AesGcmPayloadCodec.builder().key("k2", K2)
                .fingerprintKeyBase64(Base64.getEncoder().encodeToString(fingerprintKey)).build();
        byte[] hmac = keyedA.fingerprint(PAYLOAD);
        assertEquals(32, hmac.length);
        assertArrayEquals(hmac, keyedB.fingerprint(PAYLOAD));
        assertFalse(Arrays.equals(sha256, hmac));
        assertFalse(Arrays.equals(hmac, keyedA.fingerprint("other".getBytes(StandardCharsets.UTF_8))));
        AesGcmPayloadCodec otherKey = AesGcmPayloadCodec.builder().key("k1", K1).fingerprintKey(key(10)).build();
        assertFalse(Arrays.equals(hmac, otherKey.fingerprint(PAYLOAD)));
        // RFC 4231-style check that it is HMAC-SHA256 and nothing else.
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(fingerprintKey, "HmacSHA256"));
        assertArrayEquals(mac.doFinal(PAYLOAD), hmac);
    }

    @Test
    void keysAreCopied() {
        byte[] key = K1.clone();
        AesGcmPayloadCodec codec = only("k1", key);
        byte[] stored = codec.encode("charge", PAYLOAD);
        Arrays.fill(key, (byte) 0);
        assertArrayEquals(PAYLOAD, codec.decode("charge", stored));
        assertArrayEquals(PAYLOAD, codec.decode("charge", codec.encode("charge", PAYLOAD)));
    }

    @Test
    void acceptsSecretKeysAndBase64() {
        byte[] stored = only("k1", K1).encode("charge", PAYLOAD);
        AesGcmPayloadCodec fromSecretKey = AesGcmPayloadCodec.builder().key("k1", new SecretKeySpec(K1, "AES")).build();
        assertArrayEquals(PAYLOAD, fromSecretKey.decode("charge", stored));
        AesGcmPayloadCodec fromBase64 = AesGcmPayloadCodec.builder()
                .keyBase64("k1", " " + Base64.getEncoder().encodeToString(K1) + "\n").build();
        assertArrayEquals(PAYLOAD, fromBase64.decode("charge", stored));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 16, 24, 31, 33, 64})
    void refusesKeysOfAnotherLength(int length) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> AesGcmPayloadCodec.builder().key("k1", new byte[length]));
        assertTrue(e.getMessage().contains("key 'k1' is " + length + " bytes long"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> AesGcmPayloadCodec.builder().keyBase64("k1", Base64.getEncoder().encodeToString(new byte[length])));
        assertThrows(IllegalArgumentException.class,
                () -> AesGcmPayloadCodec.builder().key("k1", new SecretKeySpec(new byte[Math.max(1, length)], "AES")));
    }

    @Test
    void refusesOtherKeysAndBadBase64WithoutQuotingThem() {
        IllegalArgumentException hmac = assertThrows(IllegalArgumentException.class,
                () -> AesGcmPayloadCodec.builder().key("k1", new SecretKeySpec(K1, "HmacSHA256")));
        assertTrue(hmac.getMessage().contains("not AES"), hmac.getMessage());
        IllegalArgumentException base64 = assertThrows(IllegalArgumentException.class,
                () -> AesGcmPayloadCodec.builder().keyBase64("k1", "s3cr3t-not-base64!"));
        assertTrue(base64.getMessage().contains("key 'k1' is not base64"), base64.getMessage());
        assertFalse(base64.getMessage().contains("s3cr3t"), base64.getMessage());
        assertEquals(null, base64.getCause());
        IllegalArgumentException shortFingerprint = assertThrows(IllegalArgumentException.class,
                () -> AesGcmPayloadCodec.builder().fingerprintKey(new byte[31]));
        assertTrue(shortFingerprint.getMessage().contains("at least 32"), shortFingerprint.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "k 1", "k/1", "clé", "k1:", "012345678901234567890123456789012"})
    void refusesInvalidKeyIds(String id) {
        assertThrows(IllegalArgumentException.class, () -> AesGcmPayloadCodec.builder().key(id, K1));
        assertThrows(IllegalArgumentException.class, () -> AesGcmPayloadCodec.builder().encryptWith(id));
    }

    @Test
    void acceptsTheWholeKeyIdAlphabet() {
        String id = "Key_2026-01.a9";
        String longest = "01234567890123456789012345678901";
        AesGcmPayloadCodec codec = AesGcmPayloadCodec.builder().key(id, K1).key(longest, K2).encryptWith(longest).build();
        assertArrayEquals(PAYLOAD, codec.decode("charge", codec.encode("charge", PAYLOAD)));
        assertEquals(Set.of(id, longest), codec.keyIds());
    }

    @Test
    void refusesAnEncryptingKeyItDoesNotHold() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> AesGcmPayloadCodec.builder().key("k1", K1).encryptWith("k2").build());
        assertTrue(e.getMessage().contains("encryptWith(\"k2\")"), e.getMessage());
        IllegalStateException several = assertThrows(IllegalStateException.class,
                () -> AesGcmPayloadCodec.builder().key("k1", K1).key("k2", K2).build());
        assertTrue(several.getMessage().contains("encryptWith"), several.getMessage());
        assertThrows(IllegalStateException.class, () -> AesGcmPayloadCodec.builder().build());
        assertThrows(IllegalArgumentException.class, () -> AesGcmPayloadCodec.builder().key("k1", K1).key("k1", K2));
    }

    @Test
    void toStringNamesKeysWithoutTheirBytes() {
        AesGcmPayloadCodec codec = AesGcmPayloadCodec.builder().key("k1", K1).key("k2", K2).encryptWith("k2")
                .fingerprintKey(key(9)).build();
        String text = codec.toString();
        assertTrue(text.startsWith("AesGcmPayloadCodec[aes-256-gcm, encrypts with k2, decrypts k1, k2"), text);
        for (byte[] secret : List.of(K1, K2, key(9))) {
            assertFalse(text.contains(HexFormat.of().formatHex(secret)), text);
            assertFalse(text.contains(Base64.getEncoder().encodeToString(secret)), text);
            assertFalse(text.contains(Arrays.toString(secret)), text);
        }
    }

    @Test
    void encodesAndDecodesOnSeveralThreadsAtOnce() throws Exception {
        AesGcmPayloadCodec codec = AesGcmPayloadCodec.builder().key("k1", K1).key("k2", K2).encryptWith("k2").build();
        byte[] underK1 = only("k1", K1).encode("task-0", payload(0));
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                Callable<Integer> work = () -> {
                    int checked = 0;
                    for (int i = 0; i < 500; i++) {
                        String task = "task-" + thread;
                        byte[] payload = payload(thread * 1000 + i);
                        assertArrayEquals(payload, codec.decode(task, codec.encode(task, payload)));
                        assertArrayEquals(payload(0), codec.decode("task-0", underK1));
                        checked++;
                    }
                    return checked;
                };
                results.add(threads.submit(work));
            }
            for (Future<Integer> result : results) {
                assertEquals(500, result.get(60, TimeUnit.SECONDS));
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private static byte[] payload(int n) {
        return ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static void assertMessage(AesGcmPayloadCodec codec, byte[] stored, String expected) {
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class, () -> codec.decode("charge", stored));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
