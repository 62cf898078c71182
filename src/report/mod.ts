/**
 * `deno task report`: the bundled notebooks executed headless with Jupyter and the Deno kernel.
 *
 * @module
 */

export * from "./report.ts";
