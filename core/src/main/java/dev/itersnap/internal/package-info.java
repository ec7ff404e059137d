/**
 * Internal: the engine and the metadata store. Not API: classes here may change or disappear in any release, public
 * or not; applications use {@link dev.itersnap.IterativeSnapshot}, dialects use {@link dev.itersnap.spi}.
 */
package dev.itersnap.internal;
