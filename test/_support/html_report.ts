/**
 * Test support: checks the HTML pages of a report in headless Chromium against the executed
 * notebooks they were made from: every chart drawn (an image with marks), every table once, no
 * returned values. Without Chromium the check is skipped with one line, except under
 * `CI=true`, where a missing browser is a failure.
 *
 * @module
 */

import assert from "node:assert/strict";
import { findChromium, pageMarks } from "./browser.ts";
import { shown } from "./notebooks.ts";

/**
 * Checks `<out>/html/<name>.html` for each name against `<out>/notebooks/<name>.ipynb`.
 *
 * @param out The report's output folder.
 * @param names The notebooks (without .ipynb).
 * @throws {AssertionError} For a page whose charts or tables do not show.
 */
export async function checkHtmlReport(out: string, names: string[]): Promise<void> {
  const chromium = findChromium();
  if (!chromium) {
    if (Deno.env.get("CI") === "true") {
      throw new Error("chromium is required under CI=true (.ci/install test installs it)");
    }
    // deno-lint-ignore no-console -- one line saying what was skipped and why
    console.log(
      "skipped: HTML charts not checked, chromium is not installed (apt-get install chromium)",
    );
    return;
  }
  for (const name of names) {
    const items = shown(`${out}/notebooks/${name}.ipynb`);
    const charts = items.filter((x) => x === "<chart>").length;
    const tables = items.filter((x) => x !== "<chart>" && x !== "<note>").length;
    const marks = await pageMarks(chromium, `${out}/html/${name}.html`);
    assert.equal(marks.images.length, charts, `${name}: one image per chart`);
    for (const [i, img] of marks.images.entries()) {
      // drawn marks: a chart's bars, lines and text cover far more than 1 % of its pixels
      assert.ok(
        img.width > 200 && img.height > 150,
        `${name}: chart ${i + 1} is ${img.width}×${img.height}`,
      );
      assert.ok(
        img.ink > 0.01,
        `${name}: chart ${i + 1} is blank (${(img.ink * 100).toFixed(2)} % ink)`,
      );
    }
    for (const svg of marks.svgs) assert.ok(svg.paths > 0, `${name}: an <svg> without paths`);
    assert.equal(marks.tables, tables, `${name}: each table once`);
    assert.equal(marks.executeResults, 0, `${name}: cells returned values`);
  }
}
