/**
 * A test kit for your own itersnap models: {@link dev.itersnap.testing.SnapshotTestKit} creates the raw source table
 * on in-memory H2 (or any data source), loads {@link dev.itersnap.testing.Batch batches} and runs the model;
 * {@link dev.itersnap.testing.ItersnapAssertions} asserts on the history and the error log as business rules; and
 * {@link dev.itersnap.testing.SnapshotTestKit#assertOrderIndependent(java.util.List)} proves in one line that the
 * model's history does not depend on the order, grouping, repetition or interruption of its batches.
 */
package dev.itersnap.testing;
