/**
 * The dialect SPI: what a database module implements ({@link dev.itersnap.spi.Dialect}, usually by extending
 * {@link dev.itersnap.spi.AbstractSqlDialect}) and the values it works with. Depends on {@link dev.itersnap.core}
 * only.
 */
package dev.itersnap.spi;
