/**
 * The plot registry: each plot kind names the data it needs and builds its Vega-Lite spec from
 * that data, so a caller (the `kvlab plot` command, a notebook) resolves a kind once. A new
 * kind is one builder in `chart.ts` and one entry in {@link PLOTS}.
 *
 * @module
 */

import { Dataset, type DatasetRef } from "../store/dataset.ts";
import pl from "nodejs-polars";
import {
  deltaChart,
  latencyChart,
  ratioChart,
  scalingChart,
  throughputChart,
  type VegaLiteSpec,
} from "./chart.ts";
import { hdrDistribution, hdrDistributionFrame } from "./histograms/distribution.ts";
import { rowKey } from "./histograms/rows.ts";
import { compare, delta, PARAMETER_COLUMNS } from "./compare/compare.ts";
import { changeHistory, defaultOrder } from "./changes/changes.ts";
import { changesChart } from "./charts/changes.ts";
import { comparisonKeys } from "./grouping.ts";
import { latencySteps } from "./latency.ts";
import { loadResults, loadTable } from "./load.ts";
import { crossovers, scalingBy } from "./scaling.ts";
import { sweepChart, sweepTable } from "./sweep/sweep.ts";
import { splitFixedRate } from "./sweep/compare.ts";
import type { SustainedRule } from "../fixed_rate.ts";

/** The kinds of plot in {@link PLOTS}. */
export type PlotKind =
  | "throughput"
  | "ratio"
  | "latency"
  | "scaling"
  | "delta"
  | "sweep"
  | "changes";

/**
 * The data a plot is built from: `results` is {@link loadResults}; `latency` is
 * {@link latencyDistributionBy} (`latency_distribution` with each test's arm and parameter
 * columns); `sweep` is `sweepTable`'s result (the rows `kvlab sweep` prints: the chart shows
 * the table's numbers and verdicts, never numbers of its own).
 */
export type PlotData = "results" | "latency" | "sweep";

/** Options of a plot; each kind reads the ones it needs. */
export interface PlotOptions {
  /** The column whose values are the arms. @default {"server"} */
  by?: string;
  /** The metric (throughput, ratio, scaling). @default {"ops_per_sec"} */
  metric?: string;
  /** The x of a scaling curve. @default {"clients"} */
  x?: string;
  /** The baseline arm: required by `ratio`; with `candidate`, marks scaling crossovers. */
  baseline?: string;
  /** The arm that may overtake the baseline (scaling crossovers). */
  candidate?: string;
  /** The dimension of a delta (required by `delta`). */
  dimension?: string;
  /** The value before, for a delta (required by `delta`). */
  from?: string;
  /** The value after, for a delta (required by `delta`). */
  to?: string;
  /** Columns that split a delta into groups of their own (`server`; see `DeltaOptions.per`). */
  per?: string[];
  /** The chart's title. */
  title?: string;
  /** The run column a history is ordered by (`changes`). @default {defaultOrder} */
  orderBy?: string;
  /** Only this test (`changes`). */
  test?: string;
  /** The sustained rule of a sweep's steps (`sweep`, as `kvlab sweep --sustained`). */
  sustained?: SustainedRule;
  /** Runs per window of the change points' first pass (`changes`). @default {50} */
  window?: number;
  /** The level of change points and outliers (`changes`). @default {0.001} */
  maxPValue?: number;
  /** The least change point kept, relative (`changes`). @default {0} */
  minChange?: number;
  /**
   * The grouping: `test` and the parameters that split groups. @default {comparisonKeys} (as
   * `compare` groups: `test` plus each parameter that varies within an arm)
   */
  keys?: string[];
}

/** One kind of plot: the data it needs and how it becomes a chart. */
export interface Plot {
  /** The data {@link plotData} loads for it. */
  needs: PlotData;
  /**
   * Builds the chart.
   *
   * @throws {TypeError} When an option the kind requires is missing.
   */
  build(frame: pl.DataFrame, options: PlotOptions): VegaLiteSpec;
}

type Resolved = PlotOptions & { by: string; metric: string; x: string };

function resolved(o: PlotOptions): Resolved {
  return { ...o, by: o.by ?? "server", metric: o.metric ?? "ops_per_sec", x: o.x ?? "clients" };
}

/**
 * Every plot kind, in the order the CLI lists them.
 *
 * @example
 * ```ts
 * import { PLOTS } from "@kvlab/kvlab/analyze";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * assert.deepEqual(Object.keys(PLOTS), [
 *   "throughput", "ratio", "latency", "scaling", "delta", "sweep", "changes",
 * ]);
 * assert.equal(PLOTS.latency.needs, "latency");
 * assert.equal(PLOTS.sweep.needs, "sweep"); // sweepTable's rows, as `kvlab sweep` prints them
 * assert.throws(() => PLOTS.ratio.build(pl.DataFrame({}), {}), /ratio needs --baseline/);
 * ```
 */
export const PLOTS: Readonly<Record<PlotKind, Plot>> = {
  throughput: {
    needs: "results",
    build: (all, options) => {
      const o = resolved(options);
      const results = notFixedRate(all);
      return throughputChart(results, { by: o.by, metric: o.metric, keys: o.keys, title: o.title });
    },
  },
  ratio: {
    needs: "results",
    build: (all, options) => {
      const o = resolved(options);
      if (!o.baseline) throw new TypeError("ratio needs --baseline");
      const cmp = compare(notFixedRate(all), {
        by: o.by,
        baseline: o.baseline,
        metric: o.metric,
        keys: o.keys,
      });
      return ratioChart(cmp, { by: o.by, title: o.title });
    },
  },
  latency: {
    needs: "latency",
    build: (all, options) => {
      const o = resolved(options);
      const dist = notFixedRate(all);
      const extra = (o.keys ?? comparisonKeys(dist, o.by).keys).filter((k) => k !== "test");
      const steps = latencySteps(dist, { by: [o.by, ...extra] });
      return latencyChart(steps, { by: o.by, keys: extra, title: o.title });
    },
  },
  scaling: {
    needs: "results",
    build: (all, options) => {
      const o = resolved(options);
      const results = notFixedRate(all);
      const axes = { x: o.x, by: o.by, metric: o.metric };
      const extra = (o.keys ?? comparisonKeys(results, o.by).keys)
        .filter((k) => k !== "test" && k !== o.x);
      const cross = o.baseline && o.candidate && extra.length === 0
        ? crossovers(results, { ...axes, baseline: o.baseline, candidate: o.candidate })
        : undefined;
      return scalingChart(scalingBy(results, axes, extra), {
        ...axes,
        crossovers: cross,
        title: o.title,
      });
    },
  },
  delta: {
    needs: "results",
    build: (results, options) => {
      const o = resolved(options);
      if (!o.dimension || o.from === undefined || o.to === undefined) {
        throw new TypeError("delta needs --dimension, --from and --to");
      }
      const d = delta(notFixedRate(results), {
        dimension: o.dimension,
        from: o.from,
        to: o.to,
        keys: o.keys,
        per: o.per,
      });
      return deltaChart(d, { title: o.title });
    },
  },
  sweep: {
    needs: "sweep",
    build: (table, o) => sweepChart(table, { by: o.by, title: o.title }),
  },
  changes: {
    needs: "results",
    build: (results, o) => {
      const orderBy = o.orderBy ?? defaultOrder(results);
      const metric = o.metric ?? "ops_per_sec";
      // one analysis, as `kvlab changes` makes it with the same options
      const { series } = changeHistory(results, {
        orderBy,
        metric,
        test: o.test,
        by: o.by,
        window: o.window,
        maxPValue: o.maxPValue,
        minChange: o.minChange,
      });
      return changesChart(series, { metric, orderBy, title: o.title });
    },
  },
};

/**
 * The rows of a frame that are not fixed-rate steps (a `requested_ops_per_sec` above 0), when it
 * holds other rows too: a dataset of a throughput plan and a fixed-rate plan draws its
 * throughput runs as bars and spectra, its steps in the sweep figure (`sweepTable`). A frame of
 * steps only (or of none) is kept as it is.
 *
 * @param frame Results (`loadResults`), or latency rows with their runs' parameters
 * (`latencyDistributionBy`).
 * @returns The rows that are no fixed-rate step, or the frame.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { notFixedRate } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const mixed = pl.DataFrame({ test: ["SET", "GET"], requested_ops_per_sec: [null, 1000] });
 * assert.deepEqual(notFixedRate(mixed).getColumn("test").toArray(), ["SET"]);
 * const steps = pl.DataFrame({ test: ["GET"], requested_ops_per_sec: [1000] });
 * assert.equal(notFixedRate(steps).height, 1);
 * ```
 */
export function notFixedRate(frame: pl.DataFrame): pl.DataFrame {
  const { others } = splitFixedRate(frame);
  return others.height === 0 ? frame : others;
}

/** The plot kinds, in the registry's order. */
export const PLOT_KINDS: readonly PlotKind[] = Object.keys(PLOTS) as PlotKind[];

/**
 * The plot kinds as a phrase: `throughput, ratio, latency, scaling, delta, sweep or changes`.
 *
 * @returns The phrase, for help texts and messages.
 *
 * @example
 * ```ts
 * import { plotKindList } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(plotKindList(), "throughput, ratio, latency, scaling, delta, sweep or changes");
 * ```
 */
export function plotKindList(): string {
  return `${PLOT_KINDS.slice(0, -1).join(", ")} or ${PLOT_KINDS[PLOT_KINDS.length - 1]}`;
}

/**
 * Resolves a plot kind by name.
 *
 * @param name A kind's name, e.g. from the command line.
 * @returns The kind.
 * @throws {TypeError} `invalid chart kind: …` for a name not in {@link PLOTS}.
 *
 * @example
 * ```ts
 * import { plotKind } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(plotKind("ratio"), "ratio");
 * assert.throws(() => plotKind("pie"), /^TypeError: invalid chart kind: pie \(expected throughput, ratio/);
 * assert.throws(() => plotKind("toString"), /invalid chart kind/);
 * ```
 */
export function plotKind(name: string): PlotKind {
  if (!Object.hasOwn(PLOTS, name)) {
    throw new TypeError(`invalid chart kind: ${name} (expected ${plotKindList()})`);
  }
  return name as PlotKind;
}

/** The tables a latency figure is drawn from, each read once (see {@link latencyFrames}). */
export interface LatencyFrames {
  /** Every result joined with its runs, finished or not (`loadResults`, `completeOnly: false`). */
  results: pl.DataFrame;
  /** The `latency_distribution` table. */
  distribution: pl.DataFrame;
  /** The `hdr_histograms` table. */
  hdr: pl.DataFrame;
}

/**
 * Reads the tables a latency figure is drawn from, each once (`runs` too: its schema check
 * uses the runs the results were joined with).
 *
 * @param data The dataset, or its directory.
 * @param runs The dataset's runs, when the caller loaded them already (not read again).
 * @returns The frames.
 * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged.
 *
 * @example
 * ```ts
 * import { latencyFrames, onlyComplete } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const f = latencyFrames(Deno.makeTempDirSync());
 * assert.deepEqual([f.results.height, f.distribution.height, f.hdr.height], [0, 0, 0]);
 * assert.equal(onlyComplete(f.results).height, 0); // the results a compare would use
 * ```
 */
export function latencyFrames(data: DatasetRef, runs?: pl.DataFrame): LatencyFrames {
  const ds = Dataset.of(data);
  const known = runs ?? loadTable(ds, "runs");
  return {
    results: loadResults(ds, { completeOnly: false, runs: known }),
    distribution: loadTable(ds, "latency_distribution", { runs: known }),
    hdr: loadTable(ds, "hdr_histograms", { runs: known }),
  };
}

/**
 * The `latency_distribution` rows of a dataset with each test's arm column and run parameters
 * (`clients`, `pipeline`, … as far as the results hold them) joined on, as
 * {@link latencySteps} takes them.
 *
 * @param source The dataset (or its directory), or its frames read already.
 * @param by The column that names the arms: `server`, `label`, …
 * @returns `latency_distribution`'s columns, `by` and the parameter columns.
 * @throws {DatasetError} When the directory is not a dataset.
 *
 * @example
 * ```ts
 * import { latencyDistributionBy } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = latencyDistributionBy(Deno.makeTempDirSync(), "label");
 * assert.equal(df.height, 0);
 * assert.ok(["latency_ms", "label", "clients"].every((c) => df.columns.includes(c)));
 * ```
 */
export function latencyDistributionBy(
  source: DatasetRef | LatencyFrames,
  by: string,
): pl.DataFrame {
  const frames = typeof source === "string" || source instanceof Dataset
    ? latencyFrames(source)
    : source;
  const all = frames.results;
  // memtier --run-count: the `average` block merges the runs; best and worst repeat one run
  const results = all.columns.includes("aggregate")
    ? all.filter(pl.col("aggregate").isNull().or(pl.col("aggregate").eq(pl.lit("average"))))
    : all;
  const params = PARAMETER_COLUMNS.filter((c) => c !== by && results.columns.includes(c));
  // ≤6.0 reports print percentages only: `requests` turns them into counts (latencySteps)
  const requests = results.columns.includes("requests") && !params.includes("requests" as never)
    ? ["requests"]
    : [];
  const tests = results.select("run_id", "test_index", by, ...params, ...requests);
  const dist = frames.distribution;
  // memtier prints percentiles without counts, kvlab's engines none: their histograms stand in
  const counted = new Set(
    (dist.filter(pl.col("count").isNotNull()).select("run_id", "test_index").toRecords() as {
      run_id: string;
      test_index: number;
    }[]).map((r) => rowKey(r.run_id, Number(r.test_index))),
  );
  const fromHdr = hdrDistributionFrame(hdrDistribution(results, frames.hdr, counted));
  const rows = fromHdr
    ? pl.concat([dist, fromHdr], { how: "diagonalRelaxed" } as never) as pl.DataFrame
    : dist;
  return rows.join(tests, { on: ["run_id", "test_index"] });
}

/**
 * Loads the data a plot needs.
 *
 * @param dataDir The dataset, or its directory.
 * @param needs What the plot needs.
 * @param options The plot's options (`by` picks the arm column of latency data and sweeps,
 * `sustained` the rule of a sweep's steps).
 * @returns The frame for the plot's `build`.
 * @throws {DatasetError} When the directory is not a dataset.
 */
export function plotData(
  dataDir: DatasetRef,
  needs: PlotData,
  options: PlotOptions = {},
): pl.DataFrame {
  switch (needs) {
    case "results":
      return loadResults(dataDir);
    case "latency":
      return latencyDistributionBy(dataDir, resolved(options).by);
    case "sweep":
      return sweepTable(dataDir, { by: options.by, sustained: options.sustained });
  }
}

/**
 * Builds a plot of a dataset: loads what the kind needs, then builds its spec. Nothing is
 * rendered or written (save it with `saveChart`).
 *
 * @param dataDir The dataset, or its directory.
 * @param kind The kind (see {@link plotKind}).
 * @param options The kind's options.
 * @returns A Vega-Lite spec.
 * @throws {TypeError} When an option the kind requires is missing.
 * @throws {DatasetError} When the directory is not a dataset.
 *
 * @example
 * ```ts
 * import { plotChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const empty = Deno.makeTempDirSync();
 * assert.throws(() => plotChart(empty, "delta", { dimension: "transport" }), /delta needs/);
 * ```
 */
export function plotChart(
  dataDir: DatasetRef,
  kind: PlotKind,
  options: PlotOptions = {},
): VegaLiteSpec {
  const plot = PLOTS[kind];
  return plot.build(plotData(dataDir, plot.needs, options), options);
}
