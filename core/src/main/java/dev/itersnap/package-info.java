/**
 * The entry point: {@link dev.itersnap.IterativeSnapshot}. Settings, results, events and errors are in
 * {@link dev.itersnap.core}; the dialect SPI is {@link dev.itersnap.spi}.
 */
package dev.itersnap;
