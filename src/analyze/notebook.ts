/**
 * Helpers for notebooks under the Deno Jupyter kernel: a study's parameters (dataset, arms,
 * labels) from one cell or the environment, its environment and run counts, tables (a Markdown
 * table for people plus plain text) and charts (a Vega-Lite bundle plus a PNG) shown inline,
 * figures saved under `out/figures/<notebook>/`. The `show…` helpers return nothing, so a
 * cell that ends with one shows its output once (no `Out[n]` echo); outside Jupyter they
 * show nothing, so the same code runs in scripts and tests.
 *
 * @module
 */

import type pl from "nodejs-polars";
import type { VegaLiteSpec } from "./chart.ts";
import { armColumn, cellCounts, environmentSummary, fewRunsWarning } from "./environment.ts";
import { display, saveChart } from "./export.ts";
import { jupyter } from "./_jupyter.ts";
import { loadTable } from "./load.ts";
import { formatForPeople } from "./present.ts";

/** Shows Markdown (with the same text as plain text) under Jupyter. */
async function showMarkdown(md: string): Promise<void> {
  await jupyter()?.display({ "text/markdown": md, "text/plain": md }, { raw: true });
}

/**
 * Shows a DataFrame as a table for people (numbers rounded by unit, units in headers).
 *
 * @param df The table.
 * @param caption Shown in bold above the table.
 *
 * @example
 * ```ts
 * import { showChart, showNote, showTable } from "@kvlab/kvlab/analyze";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * // outside Jupyter the helpers show nothing and return nothing: the same code runs in scripts
 * assert.equal(await showTable(pl.DataFrame({ ops_per_sec: [1] }), "t"), undefined);
 * assert.equal(await showNote("n"), undefined);
 * assert.equal(await showChart({ mark: "bar", data: { values: [] } }), undefined);
 * ```
 */
export async function showTable(df: pl.DataFrame, caption?: string): Promise<void> {
  await showMarkdown((caption ? `**${caption}**\n\n` : "") + formatForPeople(df, "md"));
}

/**
 * Shows a note for people (a warning, a finding) as a Markdown block quote.
 *
 * @param text The note; Markdown.
 */
export async function showNote(text: string): Promise<void> {
  await showMarkdown(`> ${text.replace(/\n/g, "\n> ")}`);
}

/** Options of {@link showChart}. */
export interface ShowChartOptions {
  /**
   * Also save the chart as `<notebook>/<name>` (SVG and PNG, see {@link saveFigure}):
   * `"valkey-vs-redis/ratio"`.
   */
  save?: string;
}

/**
 * Shows a chart inline (a Vega-Lite bundle with a PNG of it) and, when asked, saves it.
 *
 * @param spec The chart.
 * @param options Where to save it.
 * @throws {TypeError} For a `save` that is not `<notebook>/<name>`.
 */
export async function showChart(spec: VegaLiteSpec, options: ShowChartOptions = {}): Promise<void> {
  await display(spec);
  if (options.save === undefined) return;
  const m = /^([^/]+)\/([^/]+)$/.exec(options.save);
  if (!m) throw new TypeError(`invalid save: ${options.save} (expected <notebook>/<name>)`);
  await saveFigure(spec, m[1], m[2]);
}

/**
 * Saves a chart as SVG and PNG under `<repo>/out/figures/<notebook>/<name>.{svg,png}` (or
 * under `KVLAB_FIGURES`/<notebook> when that variable is set).
 *
 * @returns The paths written.
 */
export async function saveFigure(
  spec: VegaLiteSpec,
  notebook: string,
  name: string,
): Promise<string[]> {
  const root = Deno.env.get("KVLAB_FIGURES") ??
    new URL("../../out/figures", import.meta.url).pathname;
  const paths = [`${root}/${notebook}/${name}.svg`, `${root}/${notebook}/${name}.png`];
  for (const p of paths) await saveChart(spec, p);
  return paths;
}

/**
 * The dataset a notebook reads: `KVLAB_DATA` when set (point a notebook at your own dataset),
 * else the bundled study under `<repo>/data/studies/<study>` (built by `deno task data`).
 */
export function studyData(study: string): string {
  return Deno.env.get("KVLAB_DATA") ??
    new URL(`../../data/studies/${study}`, import.meta.url).pathname;
}

/** What a study notebook compares: the defaults of its parameters cell. */
export interface StudyDefaults {
  /** The bundled study (`data/studies/<study>`). */
  study: string;
  /** The column whose values are the arms. */
  by: string;
  baseline: string;
  candidate: string;
  /** Names for people, by arm (`{ redis: "Redis 6.0.16" }`); an arm without one shows as is. */
  labels?: Record<string, string>;
}

/** A study's parameters, resolved (see {@link studyParams}). */
export interface StudyParams {
  data: string;
  by: string;
  baseline: string;
  candidate: string;
  labels: Record<string, string>;
  /** Whether `data` is a dataset of the user's (`KVLAB_DATA`) rather than the bundled study. */
  own: boolean;
}

/**
 * A study notebook's parameters: the defaults of its parameters cell, overridden by the
 * environment. `KVLAB_DATA` points it at another dataset; `KVLAB_BY`, `KVLAB_BASELINE`,
 * `KVLAB_CANDIDATE` name the arms and `KVLAB_LABELS` (`redis=Redis 7.2,valkey=Valkey 8.0`)
 * their names for people. On another dataset, arms that are not set are found in it: the
 * default column when it splits the runs, else the first of `label`, `server`,
 * `server_version`, `transport` that does; the default arms when present, else the first two.
 *
 * @param defaults The notebook's own study and arms.
 * @param env The environment variables. @default {Deno.env.toObject()}
 * @returns The dataset, arms and labels to use.
 * @throws {RangeError} When the dataset has no two arms.
 *
 * @example
 * ```ts
 * import { studyParams } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const d = { study: "rdma-vs-tcp", by: "transport", baseline: "tcp", candidate: "rdma" };
 * const p = studyParams(d, { KVLAB_LABELS: "tcp=TCP, rdma=RDMA" });
 * assert.equal(p.own, false);
 * assert.deepEqual([p.by, p.baseline, p.candidate, p.labels.rdma], ["transport", "tcp", "rdma", "RDMA"]);
 * const valkey = new URL("../../data/studies/valkey-vs-redis", import.meta.url).pathname;
 * // transport does not split that dataset: the arms are found in it
 * const q = studyParams(d, { KVLAB_DATA: valkey, KVLAB_BASELINE: "valkey" });
 * assert.deepEqual([q.own, q.by, q.baseline, q.candidate], [true, "label", "valkey", "redis"]);
 * ```
 */
export function studyParams(
  defaults: StudyDefaults,
  env: Record<string, string | undefined> = Deno.env.toObject(),
): StudyParams {
  const own = !!env.KVLAB_DATA;
  const data = env.KVLAB_DATA ||
    new URL(`../../data/studies/${defaults.study}`, import.meta.url).pathname;
  const labels = Object.fromEntries(
    (env.KVLAB_LABELS ?? "").split(",").map((kv) => kv.split("=").map((s) => s.trim()))
      .filter((kv) => kv.length === 2 && kv[0] !== ""),
  );
  if (!own) {
    return {
      data,
      own,
      by: env.KVLAB_BY || defaults.by,
      baseline: env.KVLAB_BASELINE || defaults.baseline,
      candidate: env.KVLAB_CANDIDATE || defaults.candidate,
      labels: { ...defaults.labels, ...labels },
    };
  }
  const { by, arms } = armColumn(
    loadTable(data, "runs").sort("run_id"),
    env.KVLAB_BY || defaults.by,
  );
  const pick = (given: string | undefined, fallback: string, not?: string) =>
    given ||
    (arms.includes(fallback) && fallback !== not ? fallback : arms.find((a) => a !== not)!);
  const baseline = pick(env.KVLAB_BASELINE, defaults.baseline);
  const candidate = pick(env.KVLAB_CANDIDATE, defaults.candidate, baseline);
  return { data, own, by, baseline, candidate, labels };
}

/** The name of an arm for people: its label when one is set, else the arm itself. */
export function armLabel(params: Pick<StudyParams, "labels">, arm: string): string {
  return params.labels[arm] ?? arm;
}

/**
 * Shows what a study ran on, per arm (see {@link environmentSummary}): servers and versions,
 * tools and versions, host CPU, cores, memory and OS, and the server config that differs
 * between the arms.
 *
 * @param dataDir The dataset.
 * @param by The column whose values are the arms.
 */
export async function showEnvironment(dataDir: string, by: string): Promise<void> {
  const env = environmentSummary(dataDir, by);
  await showTable(env.table, `environment, by ${by}`);
  if (env.config.height > 0) {
    await showTable(env.config, "server config that differs between the arms");
  }
  const notes: string[] = [];
  for (const [arm, keys] of Object.entries(env.configOnlyIn)) {
    notes.push(
      `${keys.length} config keys only in ${arm}: ${keys.slice(0, 6).join(", ")}${
        keys.length > 6 ? ", …" : ""
      }`,
    );
  }
  if (env.configMissing.length > 0) {
    notes.push(
      `no server config recorded for ${env.configMissing.join(", ")} (ingested outputs or ` +
        `CONFIG GET refused): config differences cannot be checked there`,
    );
  } else if (env.config.height === 0 && notes.length === 0) {
    notes.push("the server config is the same for every arm");
  }
  if (notes.length > 0) await showNote(notes.join("\n\n"));
}

/**
 * Shows how many runs each cell of a comparison holds (see {@link cellCounts}), as one line
 * when every cell holds the same, and a plain warning when any holds fewer than 4.
 *
 * @param results Results joined with their runs.
 * @param by The column whose values are the arms.
 */
export async function showCellCounts(results: pl.DataFrame, by: string): Promise<void> {
  const counts = cellCounts(results, by);
  const ns = counts.columns.filter((c) => c.endsWith(" n"));
  const all = new Set(counts.select(...ns).toRecords().flatMap((r) => Object.values(r)));
  if (all.size === 1) {
    await showNote(`n = ${[...all][0]} run(s) per arm in each of the ${counts.height} cells`);
  } else {
    await showTable(counts, "runs per cell (n)");
  }
  const warning = fewRunsWarning(counts);
  if (warning) await showNote(`**${warning}**`);
}
