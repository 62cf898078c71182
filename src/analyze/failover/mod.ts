/**
 * Failover runs read back (issue 33): the report every view shows and the timeline chart.
 *
 * @module
 */

export * from "./report.ts";
export * from "./chart.ts";
