/**
 * Loading a kvlab dataset into nodejs-polars, narrowly: the rows and columns asked for (run ids,
 * tests, labels, servers, a predicate, the columns) go on the dataset's lazy Parquet scan
 * (`Dataset.read`), so polars reads only those; results come joined with their runs. A command
 * reads each table once and hands the frames down: the `runs` it loaded, given to the next load,
 * spare that load its own read of `runs` for the schema check. Analysis code reads datasets only
 * through here (never through the parsers). A damaged file is named, never skipped. The runs of a
 * plan cell done again are left out but for the cell's latest complete attempt (`attempts.ts`),
 * here, so that every view counts the same runs.
 *
 * @module
 */

import pl from "nodejs-polars";
import { Dataset, type DatasetRef, type TableFilter } from "../store/dataset.ts";
import { DatasetError } from "../errors.ts";
import { SCHEMA_MAJOR, type TableName, tableSpec } from "../schema.ts";
import { ATTEMPT_COLUMNS, currentAttempts } from "./attempts.ts";

/**
 * The runs of a dataset, by id (finished runs only; `tmp/` is never read).
 *
 * @param data The dataset, or its directory.
 * @returns The run ids, sorted.
 * @throws {DatasetError} When the directory is not a dataset.
 */
export function listRuns(data: DatasetRef): string[] {
  const ids = Dataset.of(data).read("runs", { columns: ["run_id"] });
  return [...new Set(ids.getColumn("run_id").toArray() as string[])].sort();
}

/**
 * Scans one table of a dataset lazily, the filter on the scan. A dataset with no rows for the
 * table gives an empty frame with the table's columns.
 *
 * @param data The dataset, or its directory.
 * @param table Any table of the schema (`runs`, `results`, `time_series`, `hdr_histograms`, …).
 * @param filter Run ids, tests, a predicate, the columns wanted.
 * @returns The lazy frame; nothing is read until it is collected.
 * @throws {TypeError} For an unknown table or column.
 * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged.
 *
 * @example
 * ```ts
 * import { scanTable } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const scan = scanTable(Deno.makeTempDirSync(), "results", { tests: ["SET"], columns: ["ops_per_sec"] });
 * assert.deepEqual(scan.collectSync().columns, ["ops_per_sec"]);
 * ```
 */
export function scanTable(
  data: DatasetRef,
  table: TableName | string,
  filter: TableFilter = {},
): pl.LazyDataFrame {
  tableSpec(table);
  return Dataset.of(data).scan(table, filter);
}

/** Which runs a load counts: the superseded attempts of plan cells left out, or every run. */
export interface AttemptOptions {
  /**
   * Keep every run, also those of plan cells done again whose latest complete attempt supersedes
   * them (`kvlab table` shows them all).
   * @default {false: a cell counts its latest complete attempt (see `attempts.ts`)}
   */
  everyAttempt?: boolean;
  /** Told the ids of the runs left out as superseded attempts (only when there are some). */
  onLeftOut?: (runIds: string[]) => void;
}

/** Options of {@link loadTable}: which rows and columns, read in the scan. */
export interface LoadTableOptions extends TableFilter, AttemptOptions {
  /**
   * The runs this command loaded already (`loadTable(data, "runs")`, with `run_id` and
   * `schema_version`): their schema versions are checked in memory instead of reading `runs`
   * again, and the rows of runs not in it (superseded attempts it left out) are left out.
   * @default {the runs of the rows loaded, read for the check}
   */
  runs?: pl.DataFrame;
}

/** The columns {@link checkVersions} reads of `runs`. */
const VERSION_COLUMNS = ["run_id", "schema_version"];

/** The columns of `runs` a load reads for the version check and the attempts rule. */
function runColumns(o: AttemptOptions): string[] {
  return o.everyAttempt ? VERSION_COLUMNS : [...new Set([...VERSION_COLUMNS, ...ATTEMPT_COLUMNS])];
}

/** The runs without superseded attempts (unless every attempt is asked for), told. */
function attemptsOf(runs: pl.DataFrame, o: AttemptOptions): pl.DataFrame {
  if (o.everyAttempt) return runs;
  const { kept, leftOut } = currentAttempts(runs);
  if (leftOut.length > 0) o.onLeftOut?.(leftOut);
  return kept;
}

/** The rows of these runs (a semi join on `run_id`, the rows' order kept). */
function ofRuns(df: pl.DataFrame, runs: pl.DataFrame): pl.DataFrame {
  if (!df.columns.includes("run_id") || !runs.columns.includes("run_id")) return df;
  return df.join(runs.select("run_id"), { on: "run_id", how: "semi" });
}

/**
 * Loads one table into memory, narrowed in the scan, checking the runs' schema version.
 *
 * @param data The dataset, or its directory.
 * @param table Any table of the schema.
 * @param options The rows and columns wanted; the runs already loaded.
 * @returns The frame.
 * @throws {TypeError} For an unknown table or column.
 * @throws {DatasetError} When a run was written by a newer, incompatible kvlab, or a file is
 * damaged (the message names it).
 *
 * @example
 * ```ts
 * import { loadTable } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * assert.equal(loadTable(dir, "results").height, 0);
 * assert.ok(loadTable(dir, "results").columns.includes("ops_per_sec"));
 * const runs = loadTable(dir, "runs", { columns: ["label"] });
 * assert.deepEqual(runs.columns, ["label"]);
 * assert.equal(loadTable(dir, "memory", { runIds: ["r1"], runs }).height, 0);
 * ```
 */
export function loadTable(
  data: DatasetRef,
  table: TableName | string,
  options: LoadTableOptions = {},
): pl.DataFrame {
  const ds = Dataset.of(data);
  tableSpec(table);
  const { runs, everyAttempt, onLeftOut, ...filter } = options;
  const attempts = { everyAttempt, onLeftOut };
  const needed = runColumns(attempts);
  if (table === "runs") {
    const asked = filter.columns;
    const narrowed = asked !== undefined && !needed.every((c) => asked.includes(c));
    const columns = narrowed ? [...new Set([...asked, ...needed])] : asked;
    const df = ds.read("runs", { ...filter, columns });
    checkVersions(df);
    const kept = attemptsOf(df, attempts);
    return narrowed ? kept.select(...asked) : kept;
  }
  const df = ds.read(table, filter);
  if (df.height === 0) return df;
  const known = runs ?? ds.read("runs", { runIds: filter.runIds, columns: needed });
  checkVersions(known);
  const kept = attemptsOf(known, attempts);
  // runs given may have left superseded attempts out already: keep the rows of those given
  return runs !== undefined || kept.height < known.height ? ofRuns(df, kept) : df;
}

function checkVersions(runs: pl.DataFrame): void {
  if (runs.height === 0) return;
  if (!VERSION_COLUMNS.every((c) => runs.columns.includes(c))) {
    throw new TypeError("invalid runs: the frame needs run_id and schema_version");
  }
  const versions = runs.getColumn("schema_version").unique().toArray() as string[];
  for (const v of versions) {
    const major = Number(String(v).split(".")[0]);
    if (major !== SCHEMA_MAJOR) {
      const ids = runs.filter(pl.col("schema_version").eq(pl.lit(v))).getColumn("run_id").head(3)
        .toArray();
      throw new DatasetError(
        `runs ${ids.join(", ")} use schema ${v}; this kvlab reads schema ${SCHEMA_MAJOR}.x`,
      );
    }
  }
}

/** Options of {@link loadResults}: which results, read in the scan. */
export interface LoadResultsOptions extends AttemptOptions {
  /**
   * Keep only tests the tool finished (`complete`), so that cut tests never count as results.
   * @default {true}
   */
  completeOnly?: boolean;
  /** Only the results of these runs. @default {every run} */
  runIds?: readonly string[];
  /** Only these tests (`SET`, `GET`, …). @default {every test} */
  tests?: readonly string[];
  /** Only the results of runs with these labels. @default {every label} */
  labels?: readonly string[];
  /** Only the results of runs on these servers (`redis`, `valkey`, …). @default {every server} */
  servers?: readonly string[];
  /** Only the results for which this predicate on `results`' columns holds. @default {every one} */
  where?: pl.Expr;
  /**
   * Only these columns (of `results` or of `runs`), in this order.
   * @default {every column of results, then those of runs}
   */
  columns?: readonly string[];
  /**
   * The runs this command loaded already (`loadTable(data, "runs")`): joined on instead of
   * reading `runs` again (results of runs not in it are left out).
   * @default {read}
   */
  runs?: pl.DataFrame;
}

/** The columns of `results` and of `runs` to read for the joined columns asked for. */
function splitColumns(asked: readonly string[]): { results: string[]; runs: string[] } {
  const inResults = tableSpec("results").map((c) => c.name);
  const inRuns = tableSpec("runs").map((c) => c.name).filter((c) => !inResults.includes(c));
  const unknown = asked.filter((c) => !inResults.includes(c) && !inRuns.includes(c));
  if (unknown.length > 0) {
    throw new TypeError(
      `invalid column: ${unknown.join(", ")} (results and runs have: ${
        [...inResults, ...inRuns].join(", ")
      })`,
    );
  }
  return {
    results: [...new Set(["run_id", "test_index", ...asked.filter((c) => inResults.includes(c))])],
    runs: ["run_id", ...asked.filter((c) => inRuns.includes(c))],
  };
}

/** Predicates on `runs` from the labels and servers asked for (none: null). */
function runsWhere(options: LoadResultsOptions): pl.Expr | null {
  const keep: pl.Expr[] = [];
  if (options.labels) keep.push(pl.col("label").isIn([...options.labels]));
  if (options.servers) keep.push(pl.col("server").isIn([...options.servers]));
  if (options.runIds && options.runs) keep.push(pl.col("run_id").isIn([...options.runIds]));
  return keep.length === 0 ? null : keep.reduce((a, b) => a.and(b));
}

/**
 * Loads the results of a dataset joined with their runs (server, label, tool, transport, …):
 * one row per test per run. The runs, tests, labels, servers and columns asked for are read in
 * the scans, so one run's results out of a large dataset cost what that run holds.
 *
 * @param data The dataset, or its directory.
 * @param options Which results and columns; the runs already loaded.
 * @returns The results, by run id, then as the tool printed the tests.
 * @throws {TypeError} For a column of neither `results` nor `runs`.
 * @throws {DatasetError} When a run was written by a newer, incompatible kvlab, or a file is
 * damaged (the message names it).
 *
 * @example
 * ```ts
 * import { loadResults } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = loadResults(Deno.makeTempDirSync());
 * assert.equal(df.height, 0);
 * assert.ok(df.columns.includes("server") && df.columns.includes("ops_per_sec"));
 * const one = loadResults(Deno.makeTempDirSync(), {
 *   labels: ["after"], tests: ["SET"], columns: ["label", "ops_per_sec"],
 * });
 * assert.deepEqual(one.columns, ["label", "ops_per_sec"]);
 * ```
 */
export function loadResults(data: DatasetRef, options: LoadResultsOptions = {}): pl.DataFrame {
  const ds = Dataset.of(data);
  const split = options.columns ? splitColumns(options.columns) : undefined;
  const picked = runsWhere(options);
  let leftOut: string[] = [];
  const attempts: AttemptOptions = {
    everyAttempt: options.everyAttempt,
    onLeftOut: (ids) => {
      leftOut = ids;
      options.onLeftOut?.(ids);
    },
  };
  let runs: pl.DataFrame;
  if (options.runs) {
    checkVersions(options.runs);
    runs = attemptsOf(picked ? options.runs.filter(picked) : options.runs, attempts);
  } else {
    runs = loadTable(ds, "runs", {
      runIds: options.runIds,
      where: picked ?? undefined,
      columns: split?.runs,
      ...attempts,
    });
  }
  // runs picked by their own columns: their results are those of the runs kept
  const runIds = picked ? runs.getColumn("run_id").toArray() as string[] : options.runIds;
  const keep = [
    ...(options.completeOnly ?? true ? [COMPLETE] : []),
    ...(options.where ? [options.where] : []),
    ...(leftOut.length > 0 ? [pl.col("run_id").isIn(leftOut).not()] : []),
  ];
  const read = ds.read("results", {
    runIds,
    tests: options.tests,
    where: keep.length > 0 ? keep.reduce((a, b) => a.and(b)) : undefined,
    columns: split?.results,
  });
  // the runs given may have left superseded attempts out already: only their results
  const results = options.runs ? ofRuns(read, runs) : read;
  const joined = joinRuns(results, runs);
  return options.columns ? joined.select(...options.columns) : joined;
}

/** A finished test: what `loadResults` keeps by default. */
const COMPLETE = pl.col("complete");

/**
 * The results of tests the tool finished (`complete`), as {@link loadResults} keeps them by
 * default: for a command that loaded every result once and needs both.
 *
 * @param results Results with their `complete` column.
 * @returns The rows of finished tests, in their order.
 *
 * @example
 * ```ts
 * import { onlyComplete } from "@kvlab/kvlab/analyze";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "GET", "PING"], complete: [true, false, null] });
 * assert.deepEqual(onlyComplete(df).getColumn("test").toArray(), ["SET"]);
 * ```
 */
export function onlyComplete(results: pl.DataFrame): pl.DataFrame {
  return results.filter(COMPLETE);
}

/** Results joined with their runs, in a stable order: runs by id, tests as printed. */
function joinRuns(results: pl.DataFrame, runs: pl.DataFrame): pl.DataFrame {
  // Joining the results onto the runs sorted by id, keeping the order of both sides, moves
  // every row once; the plain join followed by a sort moves the whole wide frame twice (most
  // of the time of a large load).
  const columns = [...results.columns, ...runs.columns.filter((c) => !results.columns.includes(c))];
  if (runs.getColumn("run_id").nUnique() === runs.height) {
    const joined = runs.sort("run_id").join(results, {
      on: "run_id",
      how: "inner",
      maintainOrder: "left_right",
    } as never).select(...columns);
    if (joined.height === results.height && testsInOrder(joined)) return joined;
  }
  // results without their run, a run stored twice, or tests written out of order
  return results.join(runs, { on: "run_id", how: "left" }).sort(["run_id", "test_index"])
    .select(...columns);
}

/** Whether, within each run (rows of a run adjacent), test indexes rise, none missing. */
function testsInOrder(df: pl.DataFrame): boolean {
  if (df.height === 0) return true;
  const id = pl.col("run_id");
  const test = pl.col("test_index");
  const ok = df.select(
    id.neq(id.shift(1)).or(test.gtEq(test.shift(1))).fillNull(true).all()
      .and(test.isNull().any().not()).alias("ok"),
  );
  return ok.getColumn("ok").toArray()[0] === true;
}
