/**
 * Rendering and saving charts: `toSvg` (Vega, headless), `toPng` (resvg, with the system's
 * fonts, CJK included), `saveChart(spec, path)` choosing the format from the extension, and
 * `display(spec)` for Jupyter (a MIME bundle of the Vega-Lite spec plus a PNG of it).
 *
 * @module
 */

import { Resvg } from "@resvg/resvg-js";
import * as vega from "vega";
import { textWidth } from "./_text_width.ts";
import { jupyter } from "./_jupyter.ts";
import * as vl from "vega-lite";
import type { VegaLiteSpec } from "./chart.ts";
import { terminalText } from "../text/safe.ts";

/**
 * Renders a Vega-Lite spec to SVG text.
 *
 * @example
 * ```ts
 * import { toSvg } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const svg = await toSvg({ data: { values: [{ a: 1 }] }, mark: "point", encoding: { x: { field: "a", type: "quantitative" } } });
 * assert.match(svg, /^<svg /);
 * ```
 */
export async function toSvg(spec: VegaLiteSpec): Promise<string> {
  // Library code never prints: Vega-Lite's and Vega's warnings are kept, not logged.
  // Vega tags inline data rows; work on a copy so the caller's spec stays as it was.
  const compiled =
    vl.compile(structuredClone(spec) as never, { logger: quietLogger() as never }).spec;
  // the theme font's widths, not Vega's 0.8 em guess (blank bands, legend labels cut short)
  // (exported by vega at run time; its typings leave it out)
  (vega as unknown as { textMetrics: { width: typeof textWidth } }).textMetrics.width = textWidth;
  const view = new vega.View(vega.parse(compiled), {
    renderer: "none",
    logger: quietLogger() as never,
  });
  try {
    // a label holding control characters (not allowed in XML) is shown, as on a terminal
    return terminalText(await view.toSVG());
  } finally {
    view.finalize();
  }
}

/** A Vega logger that keeps messages instead of printing them. */
function quietLogger() {
  const messages: string[] = [];
  let lvl = 0;
  const keep = (...a: unknown[]) => {
    messages.push(a.map(String).join(" "));
    return logger;
  };
  const logger = {
    messages,
    level(l?: number) {
      if (l === undefined) return lvl;
      lvl = l;
      return logger;
    },
    error: (...a: unknown[]) => {
      throw new Error(a.map(String).join(" "));
    },
    warn: keep,
    info: keep,
    debug: keep,
  };
  return logger;
}

/** Options of {@link toPng}. */
export interface PngOptions {
  /**
   * Pixels per SVG pixel (2 makes crisp images on high-density screens).
   * @default {2}
   */
  scale?: number;
}

/** The pixel size of an SVG (its width and height attributes). */
export function svgSize(svg: string): { width: number; height: number } {
  const w = /<svg[^>]*\swidth="([\d.]+)"/.exec(svg);
  const h = /<svg[^>]*\sheight="([\d.]+)"/.exec(svg);
  if (!w || !h) throw new TypeError("invalid SVG: no width/height on the root element");
  return { width: Number(w[1]), height: Number(h[1]) };
}

/**
 * Renders a spec (or SVG text) to PNG bytes.
 *
 * @example
 * ```ts
 * import { toPng } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const png = await toPng('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="5"></svg>', { scale: 3 });
 * assert.deepEqual([...png.subarray(1, 4)], [80, 78, 71]); // "PNG"
 * assert.equal(new DataView(png.buffer, png.byteOffset).getUint32(16), 30); // IHDR width
 * ```
 */
export async function toPng(
  spec: VegaLiteSpec | string,
  options: PngOptions = {},
): Promise<Uint8Array> {
  const svg = typeof spec === "string" ? spec : await toSvg(spec);
  const { width } = svgSize(svg);
  const r = new Resvg(svg, {
    fitTo: { mode: "width", value: Math.round(width * (options.scale ?? 2)) },
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
    background: "white",
  });
  return new Uint8Array(r.render().asPng());
}

/** Formats {@link saveChart} writes, by extension. */
export type ChartFormat = "svg" | "png" | "html" | "vl.json";

/**
 * The format of a chart path from its extension.
 *
 * @throws {TypeError} `invalid chart format: …` for any other extension.
 *
 * @example
 * ```ts
 * import { chartFormat } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(chartFormat("out/fig.vl.json"), "vl.json");
 * assert.equal(chartFormat("fig.PNG"), "png");
 * assert.throws(() => chartFormat("fig.jpg"), /invalid chart format: fig\.jpg/);
 * ```
 */
export function chartFormat(path: string): ChartFormat {
  const p = path.toLowerCase();
  if (p.endsWith(".vl.json")) return "vl.json";
  const ext = p.slice(p.lastIndexOf(".") + 1);
  switch (ext) {
    case "svg":
    case "png":
    case "html":
      return ext;
    default:
      throw new TypeError(`invalid chart format: ${path} (expected .svg, .png, .html or .vl.json)`);
  }
}

/** A standalone HTML page showing the spec with vega-embed (loaded from a CDN by the viewer). */
export function toHtml(spec: VegaLiteSpec, svgFallback?: string): string {
  const json = JSON.stringify(spec).replace(/</g, "\\u003c");
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${
    String((spec.title as { text?: string })?.text ?? spec.title ?? "kvlab chart").replace(
      /</g,
      "&lt;",
    )
  }</title>
<script src="https://cdn.jsdelivr.net/npm/vega@6"></script>
<script src="https://cdn.jsdelivr.net/npm/vega-lite@6"></script>
<script src="https://cdn.jsdelivr.net/npm/vega-embed@7"></script>
</head><body>
<div id="chart">${svgFallback ?? ""}</div>
<script>if (window.vegaEmbed) vegaEmbed("#chart", ${json}, { actions: true });</script>
</body></html>
`;
}

/** Options of {@link saveChart}. */
export interface SaveChartOptions {
  /**
   * Which missing folders to create: `all` of them (for programs that choose their own paths,
   * like `saveFigure`), or only the file's own folder when its `parent` exists (for a path a
   * person typed, like `kvlab plot -o`: a mistyped path is refused rather than grown into a
   * tree).
   * @default {"all"}
   */
  folders?: "all" | "parent";
}

/**
 * Saves a chart: `.svg`, `.png` (2× scale), `.html` (interactive, with the SVG inline as a
 * fallback) or `.vl.json` (the spec). Missing folders are created as `options.folders` says.
 * The file is written to a temporary name and renamed, so a failed render leaves nothing
 * half-written. A path under `/proc`, `/sys` or `/dev`, or one kvlab may not write, is refused
 * with the path and what to do.
 *
 * @param spec The chart.
 * @param path Where to write it; the extension picks the format.
 * @param options Which missing folders to create.
 * @throws {TypeError} For any other extension, for a folder whose parent is missing (with
 * `folders: "parent"`), and for a path that cannot be written.
 *
 * @example
 * ```ts
 * import { saveChart } from "./export.ts";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * const spec = { mark: "point", data: { values: [] } };
 * await saveChart(spec, `${dir}/out/fig.vl.json`, { folders: "parent" });
 * assert.ok(Deno.statSync(`${dir}/out/fig.vl.json`).isFile);
 * await assert.rejects(
 *   saveChart(spec, `${dir}/no/such/fig.svg`, { folders: "parent" }),
 *   /folder .*\/no does not exist/,
 * );
 * await saveChart(spec, `${dir}/a/b/fig.vl.json`);
 * assert.ok(Deno.statSync(`${dir}/a/b/fig.vl.json`).isFile);
 * ```
 */
export async function saveChart(
  spec: VegaLiteSpec,
  path: string,
  options: SaveChartOptions = {},
): Promise<void> {
  const format = chartFormat(path);
  await chartFolder(path, options.folders ?? "all");
  let bytes: Uint8Array;
  switch (format) {
    case "svg":
      bytes = new TextEncoder().encode(await toSvg(spec));
      break;
    case "png":
      bytes = await toPng(spec);
      break;
    case "html":
      bytes = new TextEncoder().encode(toHtml(spec, await toSvg(spec)));
      break;
    case "vl.json":
      bytes = new TextEncoder().encode(JSON.stringify(spec, null, 2) + "\n");
      break;
  }
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    await Deno.writeFile(tmp, bytes);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw cannotWrite(path, e);
  }
}

/** Makes a chart's folder (all missing ones, or only when its parent exists). */
async function chartFolder(path: string, folders: "all" | "parent"): Promise<void> {
  const cut = path.lastIndexOf("/");
  const dir = cut > 0 ? path.slice(0, cut) : cut === 0 ? "/" : ".";
  if (/^\/(proc|sys|dev)(\/|$)/.test(dir)) {
    throw new TypeError(
      `cannot write ${path}: ${dir} is a system folder, not for files; choose another path`,
    );
  }
  try {
    await Deno.mkdir(dir, { recursive: folders === "all" });
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return;
    if (e instanceof Deno.errors.NotFound) {
      const parent = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) || "/" : ".";
      throw new TypeError(
        `cannot write ${path}: folder ${parent} does not exist (create it first, or choose ` +
          `another path)`,
      );
    }
    throw cannotWrite(path, e);
  }
}

/** A write that failed, said with the path and what to do (never "--allow-all"). */
function cannotWrite(path: string, e: unknown): unknown {
  if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
    return new TypeError(`cannot write ${path}: permission denied; choose another path`);
  }
  if (e instanceof Error && /No space left on device|os error 28\b/.test(e.message)) {
    return new TypeError(
      `cannot write ${path}: the disk is full; free some space, or choose ` +
        `another path`,
    );
  }
  return e;
}

/** The MIME bundle Jupyter frontends render: Vega-Lite (v5 renderer) plus SVG and text. */
export async function mimeBundle(spec: VegaLiteSpec): Promise<Record<string, unknown>> {
  const svg = await toSvg(spec);
  // JupyterLab and VS Code render Vega-Lite through their v5 renderers: declare v5.
  const v5 = { ...spec, $schema: "https://vega.github.io/schema/vega-lite/v5.json" };
  return {
    "application/vnd.vegalite.v5+json": v5,
    "image/svg+xml": svg,
    "text/plain": `<kvlab chart: ${
      String((spec.title as { text?: string })?.text ?? spec.title ?? "untitled")
    }>`,
  };
}

/** What a notebook shows for a chart: its display bundle and the bundle's metadata. */
export interface ChartDisplay {
  /** `application/vnd.vegalite.v5+json`, `image/png` (base64) and `text/plain`. */
  data: Record<string, unknown>;
  /** The PNG's size in CSS pixels (it is rendered at 2× for sharp screens). */
  metadata: Record<string, unknown>;
}

/**
 * The display of a chart in a notebook: the Vega-Lite spec (JupyterLab and VS Code draw it)
 * and a PNG of it (what every other frontend shows, nbconvert's HTML and GitHub included).
 * No SVG: nbconvert sanitizes inline SVG down to its text, which left blank charts in HTML.
 *
 * @example
 * ```ts
 * import { chartDisplay } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const spec = { width: 40, height: 20, data: { values: [{ a: 1 }] }, mark: "bar", encoding: { x: { field: "a", type: "quantitative" } } };
 * const { data, metadata } = await chartDisplay(spec);
 * assert.deepEqual(Object.keys(data).sort(), ["application/vnd.vegalite.v5+json", "image/png", "text/plain"]);
 * assert.equal(atob(data["image/png"] as string).slice(1, 4), "PNG");
 * assert.ok((metadata["image/png"] as { width: number }).width > 40);
 * ```
 */
export async function chartDisplay(spec: VegaLiteSpec): Promise<ChartDisplay> {
  const { "image/svg+xml": svg, ...rest } = await mimeBundle(spec);
  const png = await toPng(svg as string, { scale: 2 });
  let binary = "";
  for (let i = 0; i < png.length; i += 0x8000) {
    binary += String.fromCharCode(...png.subarray(i, i + 0x8000));
  }
  return {
    data: { ...rest, "image/png": btoa(binary) },
    metadata: { "image/png": svgSize(svg as string) },
  };
}

/**
 * Shows a chart inline under the Deno Jupyter kernel (feature-detected: `Deno.jupyter` only
 * exists there): the bundle of {@link chartDisplay}, the Vega-Lite spec and a PNG. Outside
 * Jupyter it shows nothing. It returns nothing, so `await display(spec)` as a cell's last line
 * shows the figure once, without an `Out[n]` echo of the bundle; {@link chartDisplay} gives the
 * bundle for inspection.
 *
 * @example
 * ```ts
 * import { display } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const spec = { data: { values: [{ a: 1 }] }, mark: "bar", encoding: { x: { field: "a", type: "quantitative" } } };
 * assert.equal(await display(spec), undefined);
 * ```
 */
export async function display(spec: VegaLiteSpec): Promise<void> {
  const kernel = jupyter();
  if (!kernel) return;
  const { data, metadata } = await chartDisplay(spec);
  await kernel.broadcast("display_data", { data, metadata, transient: {} });
}
