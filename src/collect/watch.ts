/**
 * What is watched beside a collected run, and how it changes the run (the contract; the watch of
 * a server's container is `docker/watch.ts`): rows and raw output added, facts as `runs`
 * columns, a warning counted, and a failure (a container killed for lack of memory) that makes
 * the run failed.
 *
 * @module
 */

import type { RawFile, RunTables } from "../store/writer.ts";
import type { RunFields } from "./_rows.ts";

/** The parts of a stored run (`StoredRun` of `./collector.ts`) that a watch changes. */
export interface WatchableRun {
  status: "complete" | "incomplete" | "failed";
  reason: string | null;
  columns: { warning_count?: number; [column: string]: unknown };
  tables: RunTables;
  raw?: RawFile[];
  manifest?: Record<string, unknown>;
}

/** Something sampled beside a run, as it measures (the server's container). */
export interface RunWatch {
  /** Starts watching, as the run starts. Never throws: what it could not do is a warning. */
  start(): Promise<RunWatching>;
}

/** A watch under way. */
export interface RunWatching {
  /**
   * Stops watching and says what it saw.
   *
   * @param runId The run's id (its rows carry it).
   * @param failed Whether the measurement did not complete, and not because it was stopped (a
   * server may have just died: look again before saying it runs).
   */
  stop(runId: string, failed: boolean): Promise<Watched>;
}

/** What a watch saw over a run. */
export interface Watched {
  /** Its rows (`container_stats`). */
  tables: RunTables;
  /** Its raw output, byte for byte (`docker-stats.jsonl`). */
  raw: RawFile[];
  /** Its `runs` columns (the container's facts). */
  columns: WatchColumns;
  /** Why the run failed because of what it watched (a container killed for lack of memory). */
  failure: string | null;
  /** What it could not watch (a warning of the run). */
  warning: string | null;
  /** Facts for the run's manifest (a replica's lag), beside its own. */
  manifest?: Record<string, unknown>;
}

/** The `runs` columns a watch fills. */
export type WatchColumns = Partial<
  Pick<
    RunFields,
    | "container_name"
    | "container_image"
    | "container_memory_limit_bytes"
    | "container_cpus"
    | "container_oom_killed"
  >
>;

/**
 * A stored run with what its watch saw: its rows and raw output added, a warning counted, and a
 * failure (a container killed for lack of memory) making the run failed, with that reason first.
 *
 * @example
 * ```ts
 * import { withWatched } from "./watch.ts";
 * import assert from "node:assert/strict";
 * const run = { status: "incomplete" as "complete" | "incomplete" | "failed",
 *   reason: "Connection is closed." as string | null, columns: { warning_count: 0 }, tables: {} };
 * const w = { tables: { container_stats: [] }, raw: [], columns: { container_oom_killed: true },
 *   failure: "container c was killed for lack of memory (OOM)", warning: null };
 * const s = withWatched(run, w);
 * assert.equal(s.status, "failed");
 * assert.equal(s.reason, "container c was killed for lack of memory (OOM); Connection is closed.");
 * const fine = withWatched({ ...run, status: "complete", reason: null }, { ...w, failure: null, warning: "x" });
 * assert.deepEqual([fine.status, fine.columns.warning_count], ["complete", 1]);
 * ```
 */
export function withWatched<S extends WatchableRun>(s: S, w: Watched): S {
  return {
    ...s,
    status: w.failure ? "failed" : s.status,
    reason: w.failure ? [w.failure, s.reason].filter((x) => x).join("; ") : s.reason,
    columns: {
      ...s.columns,
      warning_count: (s.columns.warning_count ?? 0) + (w.warning ? 1 : 0),
    },
    tables: { ...s.tables, ...w.tables },
    raw: [...(s.raw ?? []), ...w.raw],
    manifest: {
      ...s.manifest,
      ...w.manifest,
      ...(w.warning ? { watch_warning: w.warning } : {}),
    },
  };
}
