/**
 * The public model: a model's settings ({@link dev.itersnap.core.ModelSettings}), run results, events, the
 * listener and the one exception type. Depends on nothing else of itersnap.
 */
package dev.itersnap.core;
