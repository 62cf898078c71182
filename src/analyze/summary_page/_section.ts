/**
 * What every section of the summary page is made of and given: a section is its Markdown lines
 * and its figures; each is built from the page's options with their defaults resolved. Also the
 * small helpers the sections share (prose from dataset text, file names for arms, frames without
 * empty columns). Private to `summary_page/`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import type { VegaLiteSpec } from "../chart.ts";
import { markdownText } from "../../text/safe.ts";

/** Options of {@link summaryPage}. */
export interface SummaryPageOptions {
  /** The page's title, e.g. the dataset's folder name. */
  title: string;
  /** The column whose values are the arms. */
  by: string;
  /** The arms, baseline included, in the order they were measured. */
  arms: readonly string[];
  /** The baseline arm. */
  baseline: string;
  /** The folder the figures go in, relative to the page. @default {"figures"} */
  figures?: string;
  /** The fewest runs per arm and cell a verdict needs (below: a warning). @default {4} */
  minRuns?: number;
}

/** One figure of a summary page: saved as `<figures>/<name>.svg` and `.png`. */
export interface SummaryFigure {
  /** The file name without extension (letters, digits, `.`, `_`, `-`). */
  name: string;
  /** The caption (the image's alt text). */
  caption: string;
  /** The chart. */
  spec: VegaLiteSpec;
}

/** One section of the page: its lines, then its figures (the page adds their image lines). */
export type Section = { lines: string[]; figures: SummaryFigure[] };

/** The page's options with their defaults resolved. */
export type Resolved = SummaryPageOptions & { figures: string; minRuns: number };

/** A dataset's text (arm, key, tool, title) as page prose shows it: inert (see `markdownText`). */
export const md = (s: unknown): string => markdownText(String(s));

/** A file name for an arm: characters outside `[A-Za-z0-9._-]` become `_`. */
export function fileSafe(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** A frame without the columns whose every value is null. */
export function dropEmpty(df: pl.DataFrame): pl.DataFrame {
  return df.select(...df.columns.filter((c) => df.getColumn(c).nullCount() < df.height));
}
