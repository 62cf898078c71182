/**
 * Change points over run histories: E-divisive means with a significance test, per series (a
 * test × the parameters that identify a cell × the arm), ordered by any run column or tag; the
 * rows `kvlab changes` prints and the "What changed" section of the summary page.
 *
 * @module
 */

export * from "./changes.ts";
export * from "./summary.ts";
export * from "./order.ts";
export * from "./outliers.ts";
export * from "./people.ts";
