/**
 * `kvlab delta`: the change along one dimension per test (throughput factor, latency change).
 *
 * @module
 */

import type { OptionValues } from "commander";
import { delta } from "../analyze/compare.ts";
import { type TableFormat, tableFormat } from "../analyze/format.ts";
import { loadResults } from "../analyze/load.ts";
import { formatForPeople } from "../analyze/present.ts";
import type { Output } from "./_exit.ts";

/** What `kvlab delta` measures. */
export interface DeltaCommandOptions {
  /** Dataset directory. */
  data: string;
  /** The column that changes: transport, server_io_threads, … */
  dimension: string;
  /** The value before. */
  from: string;
  /** The value after. */
  to: string;
  /** @default {"md"} */
  format: TableFormat;
}

/**
 * Reads `kvlab delta`'s options.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For an unknown format.
 *
 * @example
 * ```ts
 * import { deltaOptions } from "./delta.ts";
 * import assert from "node:assert/strict";
 * const o = deltaOptions({ data: "ds", dimension: "transport", from: "tcp", to: "rdma", format: "csv" });
 * assert.deepEqual([o.from, o.to, o.format], ["tcp", "rdma", "csv"]);
 * ```
 */
export function deltaOptions(raw: OptionValues): DeltaCommandOptions {
  return {
    data: String(raw.data),
    dimension: String(raw.dimension),
    from: String(raw.from),
    to: String(raw.to),
    format: tableFormat(raw.format),
  };
}

/**
 * Prints the delta table.
 *
 * @param o What to measure.
 * @param out Where to print.
 */
export function deltaCommand(o: DeltaCommandOptions, out: Output): void {
  const d = delta(loadResults(o.data), { dimension: o.dimension, from: o.from, to: o.to });
  out.print(formatForPeople(d, o.format));
}
