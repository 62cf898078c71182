/**
 * Helpers for notebooks under the Deno Jupyter kernel: tables and charts shown inline (a
 * Markdown table for people plus plain text; a Vega-Lite bundle plus an SVG fallback), and
 * figures saved under `out/figures/<notebook>/`. Outside Jupyter they return what they would
 * show, so the same code runs in scripts and tests.
 *
 * @module
 */

import type pl from "nodejs-polars";
import type { VegaLiteSpec } from "./chart.ts";
import { display, saveChart } from "./export.ts";
import { formatForPeople } from "./present.ts";

type Jupyter = { display(bundle: unknown, options: { raw: boolean }): Promise<void> | void };

function jupyter(): Jupyter | undefined {
  return (Deno as unknown as { jupyter?: Jupyter }).jupyter;
}

/**
 * Shows a DataFrame as a table for people (numbers rounded by unit, units in headers).
 *
 * @returns The Markdown shown.
 */
export async function showTable(df: pl.DataFrame, caption?: string): Promise<string> {
  const md = (caption ? `**${caption}**\n\n` : "") + formatForPeople(df, "md");
  await jupyter()?.display({ "text/markdown": md, "text/plain": md }, { raw: true });
  return md;
}

/** Shows a chart inline (Vega-Lite bundle with an SVG fallback). */
export async function showChart(spec: VegaLiteSpec): Promise<void> {
  await display(spec);
}

/**
 * Saves a chart as SVG and PNG under `<repo>/out/figures/<notebook>/<name>.{svg,png}` (or
 * under `KVLAB_FIGURES`/<notebook> when that variable is set) and returns the paths.
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
