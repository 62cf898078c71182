import assert from "node:assert/strict";
import { toPng } from "../src/analyze/export.ts";
import { throughputChart } from "../src/analyze/chart.ts";
import pl from "nodejs-polars";
import { findChromium, pageMarks } from "./_support/browser.ts";
import { checkHtmlReport } from "./_support/html_report.ts";

const chromium = findChromium();
const skip = chromium === null && Deno.env.get("CI") !== "true";
if (skip) {
  // deno-lint-ignore no-console -- one line saying what was skipped and why
  console.log("skipped: HTML report checks, chromium is not installed (apt-get install chromium)");
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

Deno.test({
  name:
    "pageMarks() tells a drawn chart from a blank one, and checkHtmlReport() fails on blank charts",
  ignore: skip,
  async fn() {
    assert.ok(chromium, "chromium is required under CI=true");
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-html-" });
    const chart = await toPng(
      throughputChart(
        pl.DataFrame({ test: ["SET", "GET"], server: ["redis", "redis"], ops_per_sec: [1, 2] }),
      ),
    );
    const blank = await toPng(
      '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"></svg>',
      {
        scale: 1,
      },
    );
    Deno.mkdirSync(`${dir}/html`);
    Deno.mkdirSync(`${dir}/notebooks`);
    // what nbconvert 6.5 made of an SVG chart: the <svg> with its text, no paths
    const blankSvg = '<svg class="marks" width="400" height="300">SETGETtest</svg>';
    Deno.writeTextFileSync(
      `${dir}/html/page.html`,
      `<html><body><img src="data:image/png;base64,${b64(blank)}" width="400">` +
        `<img src="data:image/png;base64,${b64(chart)}" width="600">${blankSvg}` +
        `<table><tr><td>1</td></tr></table></body></html>`,
    );
    const marks = await pageMarks(chromium!, `${dir}/html/page.html`);
    assert.equal(marks.images.length, 2);
    assert.equal(marks.images[0].ink, 0);
    assert.ok(marks.images[1].ink > 0.01, `${marks.images[1].ink}`);
    assert.equal(marks.images[1].width, 600);
    assert.deepEqual(marks.svgs.map((s) => s.paths), [0]);
    assert.equal(marks.tables, 1);
    // a report page whose one chart is that blank SVG fails the check
    Deno.writeTextFileSync(
      `${dir}/notebooks/page.ipynb`,
      JSON.stringify({
        cells: [{
          cell_type: "code",
          outputs: [{
            output_type: "display_data",
            data: { "application/vnd.vegalite.v5+json": {}, "image/svg+xml": blankSvg },
          }],
        }],
      }),
    );
    Deno.writeTextFileSync(`${dir}/html/page.html`, `<html><body>${blankSvg}</body></html>`);
    await assert.rejects(checkHtmlReport(dir, ["page"]), /one image per chart/);
    Deno.removeSync(dir, { recursive: true });
  },
});
