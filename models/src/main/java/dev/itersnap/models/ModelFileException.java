package dev.itersnap.models;

import dev.itersnap.core.ErrorCode;
import dev.itersnap.core.ItersnapException;

/**
 * A model file or project file that cannot be read, or holds something that is not a setting (an unknown key, a value
 * of the wrong shape, an environment variable that is not set); its {@link #code()} is
 * {@link ErrorCode#INVALID_SETTING}. The message names the file and, where it can, the key, the line or the variable.
 * A value the settings reject ({@code strategy: foo}) is the builder's {@link ItersnapException}, with the same code.
 */
public final class ModelFileException extends ItersnapException {
    private static final long serialVersionUID = 1L;

    ModelFileException(String message) {
        super(ErrorCode.INVALID_SETTING, message);
    }

    ModelFileException(String message, Throwable cause) {
        super(ErrorCode.INVALID_SETTING, message, cause);
    }
}
