/**
 * Hostile text on its way out (issue 21): labels, server names and versions (also a version a
 * hostile server reports in INFO) holding terminal escape sequences, HTML and spreadsheet
 * formulas. Through the real CLI: nothing printed holds a control character a terminal obeys,
 * `summary.md` holds no live HTML, and `kvlab table --format csv` no live formula.
 */

import assert from "node:assert/strict";
import { splitCsvLine } from "../../src/text/csv.ts";
import { kvlab } from "./_cli.ts";
import { hostileServer } from "./_resp_server.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const CORPUS = ROOT + "test/testdata/corpus/";

const SCRIPT_LABEL = "<script>alert(1)</script>\x1b]0;pwned\x07\x1b[2J";
const FORMULA_LABEL = "+cmd|' /C calc'!A0";
const IMG_VERSION = "7.0<img src=x onerror=alert(1)>\x1b[31m";
const FORMULA_SERVER = '=HYPERLINK("http://evil.example","x")';
const INFO_VERSION = "7.0.15\x1b]8;;http://evil.example\x07\x9b2J<b>x</b>";

// what a terminal obeys: C0 controls but tab and line feed, DEL, C1, bidi overrides
// deno-lint-ignore no-control-regex
const OBEYED = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

Deno.test("hostile: text from datasets and servers leaves kvlab inert", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-out-" });
  const data = `${dir}/data`;
  const server = hostileServer({
    info: `# Server\r\nredis_version:${INFO_VERSION}\r\n# Memory\r\nused_memory:1000\r\n`,
  });
  try {
    const a = await kvlab([
      "ingest",
      CORPUS + "redis-benchmark_7.0.15_redis-7.0.15_quiet.txt",
      "--data",
      data,
      "--label",
      SCRIPT_LABEL,
      "--server-version",
      IMG_VERSION,
      "--server",
      FORMULA_SERVER,
    ]);
    assert.equal(a.code, 0, a.printed);
    const b = await kvlab([
      "ingest",
      CORPUS + "valkey-benchmark_8.0.1_valkey-8.0.1_quiet.txt",
      "--data",
      data,
      "--label",
      FORMULA_LABEL,
      "--server",
      "@SUM(1+1)",
    ]);
    assert.equal(b.code, 0, b.printed);
    const s = await kvlab([
      "sample",
      "--url",
      `redis://127.0.0.1:${server.port}`,
      "--data",
      data,
      "--duration",
      "1",
      "--label",
      "-2+3+cmd|' /C calc'!A0",
    ]);
    assert.equal(s.code, 0, s.printed);

    await t.step("kvlab table prints no control character, in every format", async () => {
      for (const format of ["text", "md", "csv", "json"]) {
        for (const name of ["runs", "results"]) {
          const r = await kvlab(["table", name, "--data", data, "--format", format]);
          assert.equal(r.code, 0, r.printed);
          assert.doesNotMatch(r.printed, OBEYED, `${name} as ${format}`);
        }
      }
      // the hostile server's version is stored (as it said it) and shown, visibly escaped
      const runs = await kvlab(["table", "runs", "--data", data, "--format", "text"]);
      assert.match(runs.stdout, /7\.0\.15\\x1b\]8;;http:\/\/evil\.example\\x07\\x9b2J/);
    });
    await t.step("kvlab table --format md escapes HTML", async () => {
      const r = await kvlab(["table", "runs", "--data", data, "--format", "md"]);
      assert.doesNotMatch(r.stdout, /<script|<img|<b>/i);
      assert.match(r.stdout, /&lt;script&gt;/);
    });
    await t.step("kvlab table --format csv writes no live formula (OWASP)", async () => {
      for (const name of ["runs", "results"]) {
        const r = await kvlab(["table", name, "--data", data, "--format", "csv"]);
        const cells = r.stdout.trimEnd().split("\n").flatMap((l) => splitCsvLine(l) ?? [l]);
        const live = cells.filter((c) => /^[=+\-@\t\r]/.test(c) && !/^-?\d/.test(c));
        assert.deepEqual(live, [], name);
        assert.ok(cells.includes(`'${FORMULA_SERVER}`) || name === "results");
        assert.ok(cells.includes(`'${FORMULA_LABEL}`));
      }
    });
    await t.step(
      "kvlab summary: summary.md holds no live HTML, nothing printed obeyed",
      async () => {
        const r = await kvlab(["summary", data, "--by", "label", "-o", `${dir}/summary`]);
        assert.equal(r.code, 0, r.printed);
        assert.doesNotMatch(r.printed, OBEYED);
        const page = Deno.readTextFileSync(`${dir}/summary/summary.md`);
        assert.doesNotMatch(page, /<script|<img|<b>|onerror=alert\(1\)>/i);
        assert.doesNotMatch(page, OBEYED);
        assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
      },
    );
  } finally {
    server.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
