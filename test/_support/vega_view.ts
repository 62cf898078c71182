/**
 * Test support: a chart rendered to a Vega view (headless), and the marks it drew with their
 * positions on the canvas, for figure tests that check what a reader sees (labels at bar ends,
 * axis labels apart, legends inside the canvas).
 *
 * @module
 */

import * as vega from "vega";
import * as vl from "vega-lite";
import { toSvg, type VegaLiteSpec } from "../../src/analyze/mod.ts";

/** A drawn item: its mark's role and name, its datum, and its bounds on the canvas. */
export interface Drawn {
  role: string;
  marktype: string;
  name: string;
  datum: Record<string, unknown>;
  text?: string;
  x1: number;
  x2: number;
  y1: number;
  y2: number;
  /** The item's own x, y (canvas), e.g. a text's anchor or a bar's top-left corner. */
  x: number;
  y: number;
  /** For rects: the far corner (x2, y2 as Vega set them), canvas coordinates. */
  width?: number;
  height?: number;
  /** 0 for an item laid out but not shown (an axis label dropped by `labelOverlap`). */
  opacity: number;
  /** How it is painted: fill and stroke colours, fill opacity (0: hollow), dashes, shape. */
  fill?: string;
  fillOpacity?: number;
  stroke?: string;
  strokeDash?: unknown;
  shape?: string;
  angle?: number;
}

/** Renders a Vega-Lite spec headless and returns every drawn item, and the canvas size. */
export async function drawn(
  spec: VegaLiteSpec,
): Promise<{ items: Drawn[]; width: number; height: number }> {
  await toSvg(spec); // installs the text metrics every rendering uses
  const compiled = vl.compile(structuredClone(spec) as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  await view.runAsync();
  const items: Drawn[] = [];
  // deno-lint-ignore no-explicit-any
  const walk = (mark: any, ox: number, oy: number) => {
    for (const item of mark.items ?? []) {
      const b = item.bounds;
      if (b && mark.marktype !== "group") {
        items.push({
          role: mark.role ?? "",
          marktype: mark.marktype,
          name: mark.name ?? "",
          datum: item.datum ?? {},
          // a text of several lines is an array of them
          text: typeof item.text === "string"
            ? item.text
            : Array.isArray(item.text)
            ? item.text.join("\n")
            : undefined,
          x1: b.x1 + ox,
          x2: b.x2 + ox,
          y1: b.y1 + oy,
          y2: b.y2 + oy,
          x: (item.x ?? 0) + ox,
          y: (item.y ?? 0) + oy,
          width: item.width,
          height: item.height,
          opacity: item.opacity ?? 1,
          fill: item.fill,
          fillOpacity: item.fillOpacity,
          stroke: item.stroke,
          strokeDash: item.strokeDash,
          shape: item.shape,
          angle: item.angle,
        });
      }
      if (mark.marktype === "group") {
        for (const child of item.items ?? []) walk(child, ox + (item.x ?? 0), oy + (item.y ?? 0));
      }
    }
  };
  // deno-lint-ignore no-explicit-any
  walk((view.scenegraph() as any).root, 0, 0);
  const size = { width: view.width(), height: view.height() };
  // the canvas as the SVG is sized (with padding and autosize)
  const svg = await view.toSVG();
  const m = /width="([\d.]+)" height="([\d.]+)"/.exec(svg);
  view.finalize();
  return {
    items,
    width: m ? Number(m[1]) : size.width,
    height: m ? Number(m[2]) : size.height,
  };
}

/** Whether two items' boxes overlap (by more than `slack` px each way). */
export function overlap(a: Drawn, b: Drawn, slack = 0): boolean {
  return a.x1 < b.x2 - slack && b.x1 < a.x2 - slack && a.y1 < b.y2 - slack &&
    b.y1 < a.y2 - slack;
}
