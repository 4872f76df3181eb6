package io.flexiq.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.Map;
import java.util.Set;

/**
 * A directory that only the current user can write to, and the files in it. Every check reads
 * attributes without following links, so a link planted by someone else is refused, never
 * followed. Since nobody else can add, replace or rename entries here (nor, thanks to the checked
 * parent, swap the directory itself), a file checked here stays what it was when it is loaded.
 *
 * <p>Where the file system has no POSIX owners and permissions (Windows), ownership cannot be
 * checked: links and special files are still refused, and the caller's content check remains.
 */
final class PrivateDirectory {
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final int GROUP_OR_OTHER_WRITE = 0022;
    private static final int STICKY = 01000;

    private final Path path;
    /** The current user, who owns the directory; null where the file system has no POSIX owners. */
    private final UserPrincipal owner;
    /** Whether the directory and what is written into it are removed when the JVM exits. */
    private final boolean temporary;

    private PrivateDirectory(Path path, UserPrincipal owner, boolean temporary) {
        this.path = path;
        this.owner = owner;
        this.temporary = temporary;
    }

    /** The name of the current user's directory: {@code flexiq-<user name>}. */
    static String sharedName() {
        return "flexiq-" + System.getProperty("user.name", "").replaceAll("[^A-Za-z0-9._-]", "_");
    }

    /**
     * The current user's directory {@link #sharedName()} in {@code parent} (a real path), kept
     * across JVMs: created owner-only when missing, checked when present.
     */
    static PrivateDirectory shared(Path parent) throws IOException {
        Path dir = parent.resolve(sharedName());
        UserPrincipal me = null;
        if (isPosix(parent)) {
            me = currentUser(parent);
            checkParent(parent, me);
        }
        try {
            Files.createDirectory(dir, ownerOnly(parent));
        } catch (FileAlreadyExistsException e) {
            // Perhaps made by someone else: checked below like one made now.
        }
        return checked(dir, me, false);
    }

    /** A new owner-only directory in {@code parent} (a real path), removed when the JVM exits. */
    static PrivateDirectory fresh(Path parent) throws IOException {
        Path dir = Files.createTempDirectory(parent, "flexiq-", ownerOnly(parent));
        // Registered before the files in it, so that they are removed first.
        dir.toFile().deleteOnExit();
        try {
            UserPrincipal me = null;
            if (isPosix(parent)) {
                // Whoever owns what this JVM just made is the current user, even without an account entry.
                me = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS);
                checkParent(parent, me);
            }
            return checked(dir, me, true);
        } catch (IOException e) {
            Files.deleteIfExists(dir);
            throw e;
        }
    }

    /** Where the directory is. */
    Path path() {
        return path;
    }

    /**
     * Writes {@code bytes} to a new file beside {@code name}, then renames it over {@code name}:
     * no process ever sees a half-written file under that name.
     */
    void write(String name, byte[] bytes) throws IOException {
        Path partial = Files.createTempFile(path, ".partial-", "-" + name);
        try {
            Files.write(partial, bytes);
            Path target = path.resolve(name);
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
            if (temporary) {
                target.toFile().deleteOnExit();
            }
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /**
     * Opens {@code name} for reading if it is a regular file (not a link) that only the current
     * user can write.
     */
    InputStream open(String name) throws IOException {
        Path file = path.resolve(name);
        BasicFileAttributes attributes = attributes(file);
        if (attributes.isSymbolicLink() || attributes.isOther() || !attributes.isRegularFile()) {
            throw new IOException(file + " is " + kind(attributes) + ", not a regular file");
        }
        checkOwned(file, attributes, owner);
        return Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS);
    }

    private static PrivateDirectory checked(Path dir, UserPrincipal me, boolean temporary) throws IOException {
        BasicFileAttributes attributes = me == null
                ? Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                : Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (attributes.isSymbolicLink() || attributes.isOther() || !attributes.isDirectory()) {
            throw new IOException(dir + " is " + kind(attributes) + ", not a plain directory");
        }
        checkOwned(dir, attributes, me);
        return new PrivateDirectory(dir, me, temporary);
    }

    private BasicFileAttributes attributes(Path file) throws IOException {
        return owner == null
                ? Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                : Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    }

    private static String kind(BasicFileAttributes attributes) {
        if (attributes.isSymbolicLink()) {
            return "a symbolic link";
        }
        if (attributes.isOther()) {
            return "a link or special file"; // Windows junctions, devices, sockets, pipes
        }
        return attributes.isDirectory() ? "a directory" : "a regular file";
    }

    private static void checkOwned(Path path, BasicFileAttributes attributes, UserPrincipal me) throws IOException {
        if (me == null) {
            return;
        }
        PosixFileAttributes posix = (PosixFileAttributes) attributes;
        if (!posix.owner().equals(me)) {
            throw new IOException(path + " belongs to " + posix.owner().getName() + ", not to " + me.getName());
        }
        Set<PosixFilePermission> permissions = posix.permissions();
        if (permissions.contains(PosixFilePermission.GROUP_WRITE) || permissions.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IOException(path + " is writable by group or others ("
                    + PosixFilePermissions.toString(permissions) + ")");
        }
    }

    /**
     * Refuses a parent in which someone other than the current user and root could rename entries,
     * and so swap a checked directory for theirs between the check and the load.
     */
    private static void checkParent(Path parent, UserPrincipal me) throws IOException {
        if (!parent.getFileSystem().supportedFileAttributeViews().contains("unix")) {
            return; // Without the "unix" view the sticky bit cannot be read; the directory checks remain.
        }
        Map<String, Object> unix = Files.readAttributes(parent, "unix:uid,mode");
        UserPrincipal parentOwner = Files.getOwner(parent);
        if ((Integer) unix.get("uid") != 0 && !parentOwner.equals(me)) {
            throw new IOException(parent + " belongs to " + parentOwner.getName()
                    + ", who could swap the directories in it; choose another -D" + NativeLibraryLoader.TEMP_DIR_PROPERTY);
        }
        int mode = (Integer) unix.get("mode");
        if ((mode & GROUP_OR_OTHER_WRITE) != 0 && (mode & STICKY) == 0) {
            throw new IOException(parent + " is writable by group or others without the sticky bit (mode "
                    + Integer.toOctalString(mode & 07777) + "), so they could swap the directories in it; choose another -D"
                    + NativeLibraryLoader.TEMP_DIR_PROPERTY);
        }
    }

    private static UserPrincipal currentUser(Path onFileSystem) throws IOException {
        String name = System.getProperty("user.name", "");
        try {
            return onFileSystem.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(name);
        } catch (UserPrincipalNotFoundException e) {
            throw new IOException("the current user '" + name + "' has no account entry to check owners against", e);
        }
    }

    private static FileAttribute<?>[] ownerOnly(Path onFileSystem) {
        return isPosix(onFileSystem) ? new FileAttribute<?>[] {OWNER_ONLY} : new FileAttribute<?>[0];
    }

    private static boolean isPosix(Path onFileSystem) {
        return onFileSystem.getFileSystem().supportedFileAttributeViews().contains("posix");
    }
}
