/**
 * Commands that have nothing to show for a dataset end with exit 1 and name the command that
 * does show it: `plot ratio`, `plot throughput` and `plot latency` on fixed-rate steps point to
 * `kvlab sweep` and `kvlab compare` (which compares steps rate by rate), `kvlab sweep` on data
 * without steps to `kvlab compare`. Private to `src/cli/`.
 *
 * @module
 */

import { Dataset, type DatasetRef } from "../store/dataset.ts";
import type pl from "nodejs-polars";
import { fixedRateOnly } from "../analyze/sweep/sweep.ts";
import { leftOutAttempts } from "../analyze/attempts.ts";
import type { Output } from "./_exit.ts";

/**
 * What a view says when its load left out superseded attempts of plan cells (see
 * `analyze/attempts.ts`): one line on stderr, once per command.
 *
 * @param out Where to print.
 * @returns The `onLeftOut` to give the loads.
 */
export function attemptsNote(out: Output): (runIds: string[]) => void {
  let said = false;
  return (ids) => {
    const line = leftOutAttempts(ids);
    if (said || line === null) return;
    said = true;
    out.printErr(`${line}\n`);
  };
}

/** A command with nothing to show for the data it was given (exit 1). */
export class NothingToShowError extends Error {
  /** @param message What the data holds and the command that shows it. */
  constructor(message: string) {
    super(message);
    this.name = "NothingToShowError";
  }
}

/**
 * Refuses fixed-rate steps, which `kvlab sweep` shows.
 *
 * @param command The command, as typed (`kvlab compare`, `kvlab plot ratio`).
 * @param data The dataset directory.
 * @param results Its results ({@link fixedRateOnly} decides).
 * @throws {NothingToShowError} When every result is a fixed-rate step.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { notForSweeps } from "./_shows.ts";
 * import assert from "node:assert/strict";
 * const steps = pl.DataFrame({ requested_ops_per_sec: [1000] });
 * assert.throws(() => notForSweeps("kvlab compare", "ds", steps), /kvlab sweep --data ds/);
 * notForSweeps("kvlab compare", "ds", pl.DataFrame({ requested_ops_per_sec: [null] }));
 * ```
 */
export function notForSweeps(command: string, data: DatasetRef, results: pl.DataFrame): void {
  if (!fixedRateOnly(results)) return;
  throw new NothingToShowError(
    `${command} has nothing to show: every result in ${
      Dataset.of(data).dir
    } is a fixed-rate step (a requested ` +
      `rate, the rate achieved and the latency at it); \`kvlab sweep --data ${
        Dataset.of(data).dir
      }\` prints ` +
      `them, \`kvlab compare --data ${Dataset.of(data).dir}\` compares the arms rate by rate ` +
      `and \`kvlab plot sweep --data ${Dataset.of(data).dir} -o FIG.svg\` draws them`,
  );
}

/**
 * Refuses data without fixed-rate steps, which `kvlab compare` shows.
 *
 * @param command The command, as typed (`kvlab sweep`, `kvlab plot sweep`).
 * @param data The dataset directory.
 * @param steps The number of steps found.
 * @throws {NothingToShowError} When there are none.
 */
export function onlyForSweeps(command: string, data: DatasetRef, steps: number): void {
  if (steps > 0) return;
  throw new NothingToShowError(
    `${command} has nothing to show: ${
      Dataset.of(data).dir
    } holds no fixed-rate step (a complete results row ` +
      `with requested_ops_per_sec, from a latency-sweep or pubsub plan, kvlab load or a ` +
      `rate-limited memtier run); \`kvlab compare --data ${
        Dataset.of(data).dir
      }\` compares its arms and ` +
      `\`kvlab table results --data ${Dataset.of(data).dir}\` lists them`,
  );
}

/**
 * Refuses an empty figure.
 *
 * @param command The command, as typed.
 * @param data The dataset directory.
 * @param needed What the figure needed and did not find (`what`), and the dataset's results
 * (to point fixed-rate steps at `kvlab sweep`).
 * @throws {NothingToShowError} Always.
 */
export function nothingToDraw(
  command: string,
  data: DatasetRef,
  needed: { what: string; results: pl.DataFrame },
): never {
  const { what, results } = needed;
  notForSweeps(command, data, results);
  throw new NothingToShowError(
    `${command} has nothing to show: ${Dataset.of(data).dir} holds no ${what}; ` +
      `\`kvlab table results --data ${Dataset.of(data).dir}\` lists what it holds`,
  );
}
