/**
 * A reusable model lock for databases without one of their own: a lease row in the metadata schema, taken by a MERGE,
 * renewed by a heartbeat thread, fenced before every write ({@link dev.itersnap.spi.lease.LeaseLock}). The Databricks
 * dialect's lock; any dialect may use it from its {@link dev.itersnap.spi.Dialect#lock}.
 */
package dev.itersnap.spi.lease;
