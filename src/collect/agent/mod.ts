/**
 * Several client hosts (issue 35): the control protocol between `kvlab run` and `kvlab agent`
 * (checked messages on Redis streams), clock offsets and start skew, and the exact merge of the
 * hosts' steps.
 *
 * @module
 */

export * from "./protocol.ts";
export * from "./clock.ts";
export * from "./merge.ts";
