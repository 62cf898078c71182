/**
 * What a study ran on, per arm: servers and their versions, the benchmark tools and theirs, the
 * host (CPU, cores, memory, OS), the server config that differs between arms, and how many
 * runs each cell of the comparison holds. Notebooks open with it; `kvlab summary` reuses it.
 * Everything is read from the dataset (the `runs` and `server_config` tables), so it works for
 * ingested outputs (which know less) as for collected runs.
 *
 * @module
 */

import { Dataset, type DatasetRef } from "../store/dataset.ts";
import { VERDICT_DEFAULTS } from "./compare/verdict.ts";
import { ARM_COLUMNS, armValues, measuredOrder } from "./arms.ts";

import pl from "nodejs-polars";
import { comparisonKeys } from "./grouping.ts";
import { loadTable } from "./load.ts";

/** Per-instance config keys that differ between any two servers and say nothing about them. */
const INSTANCE_KEYS = new Set([
  "port",
  "pidfile",
  "logfile",
  "dir",
  "unixsocket",
  "tls-port",
  "cluster-config-file",
  "syslog-ident",
]);

/** The environment of a dataset, per arm (see {@link environmentSummary}). */
export interface EnvironmentSummary {
  /** The column whose values are the arms. */
  by: string;
  /** The arms, in order of first run. */
  arms: string[];
  /**
   * One row per arm: `arm` (the value of `by`), `runs`, and as text `server`, `tool`, `cpu`, `cpus`, `memory`,
   * `os` (distinct values joined with ", "); a column no run knows is left out.
   */
  table: pl.DataFrame;
  /**
   * Config keys (CONFIG GET before each run) present for every arm whose values differ: `key`
   * and one column per arm. Empty when fewer than two arms recorded their config.
   */
  config: pl.DataFrame;
  /** Config keys only some arms have (e.g. a newer server's settings), by arm. */
  configOnlyIn: Record<string, string[]>;
  /** Arms without a recorded config (ingested outputs, managed services). */
  configMissing: string[];
}

/** The tables {@link environmentSummary} reads, when the caller read them already. */
export interface EnvironmentFrames {
  /** The `runs` table. */
  runs: pl.DataFrame;
  /** The `server_config` table. */
  serverConfig: pl.DataFrame;
}

/** Text of one arm's column: "a" + " " + "b" per run, distinct, joined. */
function joined(...cols: string[]): pl.Expr {
  const text = pl.concatString(cols.map((c) => pl.col(c).cast(pl.Utf8).fillNull(pl.lit(""))), " ")
    .str.strip();
  return text.filter(text.neq(pl.lit(""))).unique(true).str.concat(", ");
}

/**
 * Summarises the environment of a dataset per arm of `by`.
 *
 * @param source The dataset (or its directory), or its `runs` and `server_config` read already.
 * @param by The column whose values are the arms (`server`, `label`, `transport`, …).
 * @returns The arms, a table per arm and the config differences (see {@link EnvironmentSummary}).
 * @throws {TypeError} When `by` is not a column of the runs.
 *
 * @example
 * ```ts
 * import { environmentSummary } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const env = environmentSummary(new URL("../../data/studies/valkey-vs-redis", import.meta.url).pathname, "server");
 * assert.deepEqual(env.arms.sort(), ["redis", "valkey"]);
 * const redis = env.table.toRecords().find((r) => r.arm === "redis");
 * assert.deepEqual([redis?.server, redis?.tool], ["redis 6.0.16", "valkey-benchmark"]);
 * assert.deepEqual(env.configMissing.sort(), ["redis", "valkey"]); // ingested: no CONFIG GET
 * ```
 */
export function environmentSummary(
  source: DatasetRef | EnvironmentFrames,
  by: string,
): EnvironmentSummary {
  const frames = typeof source === "string" || source instanceof Dataset
    ? environmentFrames(source)
    : source;
  const runs = frames.runs.sort("run_id");
  if (!runs.columns.includes(by)) {
    throw new TypeError(`invalid column: ${by} (not a column of runs)`);
  }
  const withArm = runs.withColumns(
    pl.col(by).cast(pl.Utf8).fillNull(pl.lit("(none)")).alias("__arm"),
    pl.col("host_memory_bytes").cast(pl.Float64).div(2 ** 30).round(1).cast(pl.Utf8)
      .add(pl.lit(" GiB")).alias("__memory"),
  );
  const arms = [...new Set(withArm.getColumn("__arm").toArray() as string[])];
  const table = withArm.lazy().groupBy("__arm", true).agg(
    pl.len().alias("runs"),
    joined("server", "server_version").alias("server"),
    joined("tool", "tool_version").alias("tool"),
    joined("host_cpu_model").alias("cpu"),
    joined("host_cpu_count").alias("cpus"),
    joined("__memory").alias("memory"),
    joined("host_os", "host_kernel").alias("os"),
  ).collectSync().rename({ __arm: "arm" });
  const known = table.columns.filter((c) =>
    c === "arm" || c === "runs" ||
    (table.getColumn(c).toArray() as string[]).some((v) => v !== "")
  );
  return {
    by,
    arms,
    table: table.select(...known),
    ...configDifferences(frames.serverConfig, withArm.select("run_id", "__arm"), arms),
  };
}

/** Reads `runs` and `server_config`, each once. */
function environmentFrames(data: DatasetRef): EnvironmentFrames {
  const runs = loadTable(data, "runs");
  return { runs, serverConfig: loadTable(data, "server_config", { runs }) };
}

/** The config part of {@link EnvironmentSummary}, from CONFIG GET before each run. */
function configDifferences(
  serverConfig: pl.DataFrame,
  runArms: pl.DataFrame,
  arms: string[],
): Pick<EnvironmentSummary, "config" | "configOnlyIn" | "configMissing"> {
  const cfg = serverConfig
    .filter(pl.col("phase").eq(pl.lit("before")))
    .join(runArms, { on: "run_id" })
    .filter(pl.col("key").isIn([...INSTANCE_KEYS]).not());
  // per arm and key: the distinct values the arm's runs saw
  const values = cfg.lazy().groupBy(["__arm", "key"], true)
    .agg(pl.col("value").unique(true).str.concat(" / ").alias("value")).collectSync()
    .toRecords() as { __arm: string; key: string; value: string }[];
  const byArm = new Map<string, Map<string, string>>();
  for (const r of values) {
    if (!byArm.has(r.__arm)) byArm.set(r.__arm, new Map());
    byArm.get(r.__arm)!.set(r.key, r.value);
  }
  const recorded = arms.filter((a) => byArm.has(a));
  const configMissing = arms.filter((a) => !byArm.has(a));
  const configOnlyIn: Record<string, string[]> = {};
  const rows: Record<string, string>[] = [];
  if (recorded.length >= 2) {
    const keys = [...new Set(recorded.flatMap((a) => [...byArm.get(a)!.keys()]))].sort();
    for (const key of keys) {
      const vals = recorded.map((a) => byArm.get(a)!.get(key));
      if (vals.some((v) => v === undefined)) {
        recorded.forEach((a, i) => {
          if (vals[i] !== undefined) (configOnlyIn[a] ??= []).push(key);
        });
      } else if (new Set(vals).size > 1) {
        rows.push({ key, ...Object.fromEntries(recorded.map((a, i) => [a, vals[i]!])) });
      }
    }
  }
  const config = rows.length > 0
    ? pl.DataFrame(rows)
    : pl.DataFrame({ key: [] as string[] }, { schema: { key: pl.Utf8 } });
  return { config, configOnlyIn, configMissing };
}

/**
 * How many runs each cell of a comparison holds: one row per test (and per run parameter that
 * varies within an arm, as `compare` groups), one `<arm> n` column per arm, in compare's order
 * (tests as first measured, then each parameter ascending).
 *
 * @param results Results joined with their runs (`loadResults`).
 * @param by The column whose values are the arms.
 * @returns The counts; 0 where an arm has no run for the cell.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { cellCounts } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: ["SET", "SET", "SET", "GET"],
 *   server: ["redis", "redis", "valkey", "redis"],
 *   clients: [1, 1, 1, 1],
 * });
 * assert.deepEqual(cellCounts(df, "server").toRecords(), [
 *   { test: "SET", "redis n": 2, "valkey n": 1 },
 *   { test: "GET", "redis n": 1, "valkey n": 0 },
 * ]);
 * ```
 */
export function cellCounts(results: pl.DataFrame, by: string): pl.DataFrame {
  // the cells compare and the charts use: test × each parameter that varies within an arm
  const { keys } = comparisonKeys(results, by);
  const arms = [...new Set((results.getColumn(by).toArray() as unknown[]).map(String))];
  const counts = results.lazy()
    .withColumns(pl.col(by).cast(pl.Utf8).alias("__arm"))
    .groupBy(keys, true)
    .agg(...arms.map((a) => pl.col("__arm").eq(pl.lit(a)).sum().alias(`${a} n`)))
    .collectSync()
    .withColumns(...arms.map((a) => pl.col(`${a} n`).cast(pl.Int64)));
  // in compare's order: tests as first measured, then each parameter ascending
  const tests = [...new Set((results.getColumn("test").toArray() as unknown[]).map(String))];
  const rank = (counts.getColumn("test").toArray() as unknown[]).map((t) =>
    tests.indexOf(String(t))
  );
  return counts.withColumns(pl.Series("__test_rank", rank))
    .sort(["__test_rank", ...keys.filter((k) => k !== "test")], false, true)
    .drop("__test_rank");
}

/**
 * A plain warning when any cell of {@link cellCounts} holds fewer than `min` runs of an arm,
 * else null: with fewer runs per arm than the verdict rule needs (4), `compare` calls the cell
 * inconclusive.
 *
 * @param counts The output of {@link cellCounts}.
 * @param min The fewest runs per arm and cell that a verdict needs. @default {4}
 * @returns The warning, or null when every cell holds enough runs.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { cellCounts, fewRunsWarning } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "SET", "SET", "SET"], server: ["a", "a", "b", "b"] });
 * assert.match(fewRunsWarning(cellCounts(df, "server"))!, /^warning: 1 of 1 cells have fewer than 4 runs per arm \(2 to 2\)/);
 * assert.equal(fewRunsWarning(cellCounts(df, "server"), 2), null);
 * ```
 */
export function fewRunsWarning(
  counts: pl.DataFrame,
  min: number = VERDICT_DEFAULTS.minRuns,
): string | null {
  const ns = counts.columns.filter((c) => c.endsWith(" n"));
  if (ns.length === 0 || counts.height === 0) return null;
  const rows = counts.toRecords() as Record<string, number>[];
  const fewest = rows.map((r) => Math.min(...ns.map((c) => r[c])));
  const few = fewest.filter((n) => n < min).length;
  if (few === 0) return null;
  const all = rows.flatMap((r) => ns.map((c) => r[c]));
  if (Math.max(...all) <= 1) {
    return `warning: one run per arm in every cell (${rows.length} cells). There is no spread ` +
      `to compare the differences with: no interval, no verdict. Repeat the study (5 or more ` +
      `repetitions, interleaved) to tell.`;
  }
  return `warning: ${few} of ${rows.length} cells have fewer than ${min} runs per arm ` +
    `(${Math.min(...all)} to ${Math.max(...all)}). Their verdicts are "inconclusive": a rank ` +
    `test cannot tell a difference at 5 % from so few runs. Repeat the study with more ` +
    `repetitions (5 or more, interleaved) to tell.`;
}

/**
 * The column that splits runs into arms: `preferred` when it has two or more values, else the
 * first of {@link ARM_COLUMNS} that has.
 *
 * @param runs The `runs` table (or results joined with runs).
 * @param preferred The column to use when it splits the runs.
 * @returns The column and its values (the arms, in order of first appearance).
 * @throws {RangeError} When no column splits the runs into two or more arms.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { armColumn } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const runs = pl.DataFrame({ label: ["a", "b"], server: ["redis", "redis"], server_version: ["7", "7"], transport: ["tcp", "tcp"] });
 * assert.deepEqual(armColumn(runs, "server"), { by: "label", arms: ["a", "b"] });
 * assert.throws(() => armColumn(runs.head(1)), /no column splits the runs into arms/);
 * ```
 */
export function armColumn(
  runs: pl.DataFrame,
  preferred?: string,
): { by: string; arms: string[] } {
  const tried = [...new Set([preferred, ...ARM_COLUMNS].filter((c): c is string => !!c))];
  for (const by of tried) {
    const arms = armValues(runs, by);
    if (arms.length >= 2) return { by, arms: measuredOrder(runs, by, arms) };
  }
  throw new RangeError(
    `no column splits the runs into arms (tried ${tried.join(", ")}): a comparison needs two`,
  );
}
