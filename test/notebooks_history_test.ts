import assert from "node:assert/strict";
import { runReport } from "../src/report/report.ts";
import { BUNDLED_EVENTS, bundledHistory } from "./_support/history.ts";
import { checkHtmlReport } from "./_support/html_report.ts";
import { executeResults, notesOf, shown, tables } from "./_support/notebooks.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("the bundled history is what its generator writes", () => {
  for (const [path, text] of bundledHistory()) {
    assert.equal(Deno.readTextFileSync(`${ROOT}data/raw/history/${path}`), text, path);
  }
});

Deno.test("history.ipynb runs in Jupyter and finds the history's events", async () => {
  const out = Deno.makeTempDirSync({ prefix: "kvlab-report-history-" });
  const userData = Deno.env.get("KVLAB_DATA");
  Deno.env.delete("KVLAB_DATA");
  const runs = await runReport({ out, only: ["history"] }).finally(() => {
    if (userData !== undefined) Deno.env.set("KVLAB_DATA", userData);
  });
  assert.deepEqual(runs.map((r) => r.notebook), ["history.ipynb"]);
  assert.ok(runs.every((r) => r.errors.length === 0 && r.html !== null), String(runs[0].errors));
  const path = `${out}/notebooks/history.ipynb`;
  assert.deepEqual(shown(path), [
    "<note>",
    "change points of throughput",
    "<chart>",
    "on the same machine: the server or the code",
    "where the machine changed too",
    "<note>",
  ]);
  assert.deepEqual(executeResults(path), []);
  const e = BUNDLED_EVENTS;
  const rows = (caption: string) =>
    tables(path).get(caption)!.slice(2).map((r) => `${r[0]} ${r[1]}`);
  assert.deepEqual(rows("on the same machine: the server or the code"), [
    `LPUSH ${e.lpushCommit}`,
    `SADD ${e.saddCommit}`,
    `SET ${e.release}`,
  ]);
  assert.deepEqual(
    rows("where the machine changed too"),
    ["GET", "INCR", "LPUSH", "MSET", "SADD", "SET"].map((t) => `${t} ${e.hostChange}`),
  );
  const notes = notesOf(path).join("\n");
  assert.match(notes, /150 runs of 6 tests in order of `source_path`: 9 change points/);
  assert.match(notes, /ordered by tag:commit: 9 change points, at the same places/);
  await checkHtmlReport(out, ["history"]);
  Deno.removeSync(out, { recursive: true });
});
