// `await display(spec)` as a notebook cell's last line, executed in Jupyter with the Deno kernel:
// the cell shows the figure once (the display bundle the README describes) and no `Out[n]`
// echo of the bundle (issue 31: display returned its 12–14 kB bundle, which the kernel printed
// as the cell's value, in colour).
import assert from "node:assert/strict";
import { runReport } from "../src/report/report.ts";
import type { Cell } from "./_support/notebooks.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** A notebook of code cells (the Deno kernel's metadata), as Jupyter saves one. */
function notebook(cells: string[]): string {
  return JSON.stringify({
    cells: cells.map((source) => ({
      cell_type: "code",
      execution_count: null,
      metadata: {},
      outputs: [],
      source: source.split(/(?<=\n)/),
    })),
    metadata: {
      kernelspec: { display_name: "Deno", language: "typescript", name: "deno" },
      language_info: { name: "typescript", file_extension: ".ts", mimetype: "text/x.typescript" },
    },
    nbformat: 4,
    nbformat_minor: 5,
  });
}

Deno.test("await display(spec) as a cell's last line shows the figure and echoes nothing", async () => {
  // under the repository (out/ is ignored by git), so the kernel finds deno.json's imports
  Deno.mkdirSync(`${ROOT}out`, { recursive: true });
  const dir = Deno.makeTempDirSync({ dir: `${ROOT}out`, prefix: "kvlab-display-" });
  Deno.mkdirSync(`${dir}/notebooks`);
  Deno.writeTextFileSync(
    `${dir}/notebooks/display.ipynb`,
    notebook([
      'import { display, showChart } from "@kvlab/kvlab/analyze";\n' +
      'const spec = { width: 300, height: 200, data: { values: [{ a: 1, b: 2 }, { a: 2, b: 3 }] }, mark: "bar", encoding: { x: { field: "a", type: "nominal" }, y: { field: "b", type: "quantitative" } } };',
      "await display(spec)",
      "await showChart(spec)",
    ]),
  );
  const [run] = await runReport({ notebooks: `${dir}/notebooks`, out: `${dir}/out` });
  assert.deepEqual(run.errors, []);
  const nb = JSON.parse(Deno.readTextFileSync(run.executed)) as { cells: Cell[] };
  for (const cell of nb.cells.slice(1)) {
    const outputs = cell.outputs ?? [];
    const what = cell.source.join("");
    // the figure, once: no execute_result (Out[n]), nothing printed
    assert.deepEqual(outputs.map((o) => o.output_type), ["display_data"], what);
    const shown = outputs[0].data ?? {};
    // what the README says display shows: the Vega-Lite bundle and a PNG of it, no SVG
    assert.deepEqual(Object.keys(shown).sort(), [
      "application/vnd.vegalite.v5+json",
      "image/png",
      "text/plain",
    ], what);
  }
  const readme = Deno.readTextFileSync(`${ROOT}README.md`).replace(/\s+/g, " ");
  const claim = /`display\(spec\)` shows a chart inline[^.]*\./.exec(readme)?.[0] ?? "";
  assert.match(claim, /Vega-Lite/);
  assert.match(claim, /PNG/);
  assert.doesNotMatch(claim, /SVG fallback|plus an SVG/);
  Deno.removeSync(dir, { recursive: true });
});
