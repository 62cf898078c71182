/**
 * Following a dataset's `runs` table while it grows: a plan runner checks, before each cell,
 * whether another runner stored that cell meanwhile. Each read scans only the Parquet files that
 * appeared since the last one, and never the batches of the runs this process stored itself
 * (it knows those from memory), so checking between its own runs reads nothing back.
 *
 * @module
 */

import { BATCHES, datasetFiles, scanFiles } from "./layout.ts";

/**
 * Reads the `runs` rows of a dataset that are new since the last read, but those of the runs
 * {@link RunsFollower.wrote} was told of (a live run is a batch of its own, named after it).
 * A compacted batch is new: its rows (earlier runs among them) are read again.
 *
 * @example
 * ```ts
 * import { Dataset } from "./dataset.ts";
 * import { RunsFollower } from "./runs_follower.ts";
 * import { datasetReads } from "./reads.ts";
 * import assert from "node:assert/strict";
 * const ds = Dataset.open(Deno.makeTempDirSync());
 * const runs = new RunsFollower(ds.dir, ["run_id"]);
 * assert.deepEqual(runs.read(), []);
 * const store = (id: string) =>
 *   ds.runWriter(id).commit({
 *     run: { run_id: id, tool: "t", server: "redis", transport: "tcp", tags: "{}",
 *       ingested_at: new Date(), status: "complete", output_format: "none", warning_count: 0 },
 *     tables: {},
 *     raw: [],
 *   });
 * store("20260101T000000Z-aa");
 * assert.deepEqual(runs.read(), [{ run_id: "20260101T000000Z-aa" }]);
 * assert.deepEqual(runs.read(), []); // nothing new
 * runs.wrote("20260101T000000Z-bb");
 * store("20260101T000000Z-bb");
 * const reads = datasetReads("runs");
 * assert.deepEqual(runs.read(), []); // its own run: not read back
 * assert.equal(datasetReads("runs"), reads);
 * ```
 */
export class RunsFollower {
  readonly #seen = new Set<string>();
  readonly #own = new Set<string>();

  /**
   * @param dataDir The dataset directory (a missing one has no runs yet).
   * @param columns Columns of `runs` to read.
   */
  constructor(readonly dataDir: string, readonly columns: readonly string[]) {}

  /**
   * Says that this process stores (or stored) a run: its batch is never read.
   *
   * @param runId The run.
   */
  wrote(runId: string): void {
    this.#own.add(`${this.dataDir}/${BATCHES}/${runId}`);
  }

  /**
   * The rows of the `runs` files not read before (runs told of by {@link wrote} left out), in
   * run id order.
   *
   * @returns One record per run, the follower's columns.
   * @throws {DatasetError} When a file of the dataset is damaged.
   */
  read(): Record<string, unknown>[] {
    try {
      Deno.statSync(this.dataDir);
    } catch {
      return [];
    }
    const fresh: string[] = [];
    for (const f of datasetFiles(this.dataDir).tables.get("runs") ?? []) {
      if (this.#seen.has(f)) continue;
      this.#seen.add(f);
      if (!this.#own.has(f.slice(0, f.lastIndexOf("/")))) fresh.push(f);
    }
    if (fresh.length === 0) return [];
    return scanFiles(this.dataDir, "runs", fresh).select(...this.columns).sort("run_id")
      .collectSync().toRecords();
  }
}
