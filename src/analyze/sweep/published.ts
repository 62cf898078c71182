/**
 * Seed 000's published tables as the dataset holds them. `deno task data` stores the post's cells
 * (`data/raw/fixed-rate-latency/published-tables.md`) in `data/studies/fixed-rate-latency/`: one
 * run per table × arm (`output_format = published`), one `results` row per step that was run;
 * the analysis reads that dataset, never the Markdown. {@link publishedSteps} gives the steps of
 * its published runs as {@link sweepTable} gives any sweep (`-` cells as `skipped`), with each
 * arm's server and io-threads. Also re-exports the pub/sub delivery-latency chart.
 *
 * @module
 */

import pl from "nodejs-polars";
import type { DatasetRef } from "../../store/dataset.ts";
import { loadResults } from "../load.ts";
import { sweepTable } from "./sweep.ts";

export { deliveryLatencyChart, type DeliveryLatencyChartOptions } from "../charts/pubsub.ts";

/** Options of {@link publishedSteps}. */
export interface PublishedStepsOptions {
  /**
   * Only the tables of this test: `GET` (the request tables) or `PUBSUB_ONE_TO_ONE` (the
   * delivery table). @default {every test}
   */
  test?: string;
  /** Only the tables at this many connections (publishers, for a delivery table). @default {any} */
  clients?: number;
}

/**
 * The published tables of a dataset (seed 000's, as ingest stored them): one row per table ×
 * arm × rate, in the tables' order, arms as published, rates ascending.
 *
 * @param data The dataset (`studyData("fixed-rate-latency")` for the bundled one).
 * @param options One test or one connection count.
 * @returns {@link sweepTable}'s columns (the arm column is `label`: the arm in English, e.g.
 * `Redis io-threads 8`; a `-` cell is `skipped`, an `NS (258k)` cell `NS` with its achieved rate)
 * and, per arm, `server` and `server_io_threads` (null when the printed name does not say).
 * @throws {RangeError} When the dataset holds no published run, or none of that test and
 * connection count (the message names the tables it holds).
 *
 * @example
 * ```ts
 * import { publishedSteps, studyData } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const steps = publishedSteps(studyData("fixed-rate-latency"), { test: "PUBSUB_ONE_TO_ONE" });
 * assert.equal(steps.height, 18); // 3 rates × 6 arms
 * const redis8 = steps.toRecords().find(
 *   (r) => r.label === "Redis io-threads 8" && r.requested_ops_per_sec === 21000)!;
 * assert.deepEqual(
 *   [redis8.server, redis8.server_io_threads, redis8.p50_latency_ms, redis8.p99_latency_ms],
 *   ["redis", 8, 0.11, 0.62],
 * );
 * assert.throws(() => publishedSteps(studyData("fixed-rate-latency"), { clients: 7 }), RangeError);
 * ```
 */
export function publishedSteps(
  data: DatasetRef,
  options: PublishedStepsOptions = {},
): pl.DataFrame {
  const results = loadResults(data);
  const published = results.height === 0
    ? results
    : results.filter(pl.col("output_format").eq(pl.lit("published")));
  if (published.height === 0) {
    throw new RangeError(
      "no published tables in the dataset (deno task data stores seed 000's in " +
        "data/studies/fixed-rate-latency)",
    );
  }
  const table = sweepTable({ results: published }, { by: "label" });
  let chosen = table;
  if (options.test !== undefined) chosen = chosen.filter(pl.col("test").eq(pl.lit(options.test)));
  if (options.clients !== undefined) {
    chosen = chosen.filter(pl.col("clients").eq(pl.lit(options.clients)));
  }
  if (chosen.height === 0) {
    const tables = [...new Set(table.toRecords().map((r) => `${r.test} at ${r.clients}`))];
    throw new RangeError(
      `no published table of ${options.test ?? "any test"} at ${
        options.clients ?? "any number of"
      } connections (the dataset holds ${tables.join(", ")})`,
    );
  }
  const arms = published.select("label", "server", "server_io_threads").unique({
    subset: ["label"],
    keep: "first",
    maintainOrder: true,
  });
  return chosen.join(arms, { on: "label", how: "left" });
}
