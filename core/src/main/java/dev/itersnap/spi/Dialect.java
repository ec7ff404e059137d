package dev.itersnap.spi;

/** Placeholder; replaced by the real SPI. */
public interface Dialect {
    String name();

    boolean handlesUrl(String jdbcUrl);

    boolean handlesProduct(String productName);
}
