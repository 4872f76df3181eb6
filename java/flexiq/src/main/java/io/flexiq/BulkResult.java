package io.flexiq;

/**
 * What a bulk action did (see {@link FlexiQ#cancelAll}, {@link FlexiQ#purgeAll},
 * {@link FlexiQ#redriveAll}).
 *
 * @param selected jobs the filter selected, batch by batch
 * @param changed jobs cancelled, deleted or redriven; fewer than selected when jobs moved on
 *     meanwhile, or, for a redrive, when this redrive key had redriven them already or another
 *     active job holds their key
 * @param batches the statements it ran, each its own short transaction
 */
public record BulkResult(long selected, long changed, long batches) {}
