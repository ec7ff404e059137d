package dev.itersnap.cli;

/** A model file that cannot be read or holds something that is not a setting; the command exits with code 2. */
final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ConfigException(String message) {
        super(message);
    }

    ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
