/**
 * Markdown injection through a backslash (issue 30): a label `\[click me\](https://evil.example/)`
 * became a live link in `compare --format md`, `summary.md` and `changes` Markdown (kvlab escaped
 * `[` but not the `\` before it, so `\\[` is a backslash and a live bracket), and `x\|y` split a
 * table cell. Every command that writes Markdown is run through the real CLI on hostile labels,
 * versions and titles, and its output is rendered as GFM (marked): no link or image but the page's
 * own figures, every table row as many cells as its header, and the hostile text shown as given.
 */

import assert from "node:assert/strict";
import { marked } from "marked";
import { kvlab } from "./_cli.ts";
import { withServers } from "../_support/servers.ts";
import { withTempDir } from "../_support/temp.ts";
import { TESTDATA } from "../_support/testdata.ts";
import { nightFolder, nightlyHistory, writeNightlyHistory } from "../_support/history.ts";

const CORPUS_FILES = [
  "redis-benchmark_7.0.15_redis-7.0.15_quiet.txt",
  "valkey-benchmark_8.0.1_valkey-8.0.1_quiet.txt",
].map((f) => `${TESTDATA}corpus/${f}`);

const LINK = "\\[click me\\](https://evil.example/)";
const PIPE = "x\\|y";
const AUTO = "www.evil.example mail@evil.example";
const IMAGE = "\\!\\[x\\](https://evil.example/i.png)";

/** The page rendered as GitHub does (GFM: tables, autolinks). */
function render(md: string): string {
  return marked.parse(md, { gfm: true, async: false });
}

/** Links and images of rendered Markdown that are not the summary page's own figures. */
function liveLinks(html: string): string[] {
  return [...html.matchAll(/<(a|img)\b[^>]*\b(?:href|src)="([^"]*)"/g)]
    .map((m) => `${m[1]} ${m[2]}`).filter((s) => !/^(a|img) figures\/[\w.-]+$/.test(s));
}

/** Tables whose rows do not all have as many cells as their header. */
function brokenRows(html: string): string[] {
  const out: string[] = [];
  for (const table of html.split("<table>").slice(1)) {
    const head = (table.split("</thead>")[0].match(/<th\b/g) ?? []).length;
    for (const row of (table.split("</thead>")[1] ?? "").split("</tr>").slice(0, -1)) {
      const cells = (row.match(/<td\b/g) ?? []).length;
      if (cells !== head) out.push(`${head} headers, ${cells} cells: ${row.replace(/\s+/g, " ")}`);
    }
  }
  return out;
}

/** Checks one command's Markdown: inert, tables whole, the hostile texts shown as given. */
function checkMarkdown(what: string, md: string, shown: string[]): void {
  const html = render(md);
  assert.deepEqual(liveLinks(html), [], `${what}: live links\n${md}`);
  assert.deepEqual(brokenRows(html), [], `${what}: split cells\n${md}`);
  for (const s of shown) assert.ok(html.includes(s), `${what} shows ${s}\n${html}`);
}

Deno.test("hostile: Markdown output renders dataset text as text (compare, delta, summary, table)", async () => {
  await withTempDir("kvlab-hostile-md-", async (dir) => {
    const data = `${dir}/data`;
    const arms = [[LINK, AUTO], [PIPE, IMAGE]];
    for (const [i, [label, version]] of arms.entries()) {
      const r = await kvlab([
        "ingest",
        CORPUS_FILES[i],
        "--data",
        data,
        "--label",
        label,
        "--server-version",
        version,
      ]);
      assert.equal(r.code, 0, r.printed);
    }
    const delta = ["delta", "--dimension", "label", "--from", LINK, "--to", PIPE];
    for (const cmd of [["compare"], delta, ["table", "runs"], ["table", "results"]]) {
      const r = await kvlab([...cmd, "--data", data, "--format", "md"]);
      assert.equal(r.code, 0, r.printed);
      // compare names the candidate arm in its rows (the baseline, LINK, on stderr); delta's
      // rows are tests
      const shown = { compare: [PIPE], runs: [LINK, PIPE, AUTO, IMAGE] }[cmd[1] ?? cmd[0]] ?? [];
      checkMarkdown(cmd.join(" "), r.stdout, shown);
    }
    const s = await kvlab(["summary", data, "-o", `${dir}/summary`, "--title", LINK]);
    assert.equal(s.code, 0, s.printed);
    const page = Deno.readTextFileSync(`${dir}/summary/summary.md`);
    checkMarkdown("summary.md", page, [LINK, PIPE, AUTO]);
    // the other arm as the baseline, named in the page's prose
    const none = await kvlab([
      "summary",
      data,
      "-o",
      `${dir}/summary-b`,
      "--baseline",
      PIPE,
      "--title",
      PIPE,
    ]);
    assert.equal(none.code, 0, none.printed);
    checkMarkdown("summary.md (baseline)", Deno.readTextFileSync(`${dir}/summary-b/summary.md`), [
      PIPE,
    ]);
  });
});

Deno.test("hostile: Markdown output renders dataset text as text (changes, history summary)", async () => {
  await withTempDir("kvlab-hostile-md-", async (dir) => {
    // 40 nights, one history (no arms); SET 10 % slower from night 20, when a (hostile) tag changes
    const history = nightlyHistory(3, { nights: 40, shifts: 0 });
    const set = history.find((h) => h.title === "SET")!;
    set.opsPerSec = set.opsPerSec.map((v, i) => (i < 20 ? v : v * 0.9));
    writeNightlyHistory(`${dir}/nightly`, history);
    for (const half of [0, 1]) {
      Deno.mkdirSync(`${dir}/half-${half}`);
      for (let i = half * 20; i < half * 20 + 20; i++) {
        Deno.renameSync(
          `${dir}/nightly/${nightFolder(i)}`,
          `${dir}/half-${half}/${nightFolder(i)}`,
        );
      }
      const r = await kvlab([
        "ingest",
        `${dir}/half-${half}`,
        "--data",
        `${dir}/data`,
        "--tag",
        `build=${half === 0 ? LINK : PIPE}`,
      ]);
      assert.equal(r.code, 0, r.printed);
    }
    const c = await kvlab(["changes", "--data", `${dir}/data`, "--format", "md"]);
    assert.equal(c.code, 0, c.printed);
    assert.match(c.stdout, /^\| SET \|/m);
    checkMarkdown("changes", c.stdout, [`tag:build ${LINK} vs ${PIPE}`]);
    const s = await kvlab(["summary", `${dir}/data`, "-o", `${dir}/summary`, "--title", LINK]);
    assert.equal(s.code, 0, s.printed);
    const page = Deno.readTextFileSync(`${dir}/summary/summary.md`);
    assert.match(page, /## What changed/);
    assert.doesNotMatch(page, /^## Throughput/m, "a history's page, not a comparison");
    checkMarkdown("history summary.md", page, [`<h1>${LINK}</h1>`, `tag:build ${LINK} vs ${PIPE}`]);
  });
});

Deno.test("hostile: kvlab sweep's Markdown renders a label as text", async () => {
  await withServers([{}], async ([server]) => {
    await withTempDir("kvlab-hostile-md-", async (dir) => {
      const r = await kvlab([
        "load",
        "--url",
        server.url,
        "--rate",
        "200",
        "--connections",
        "1",
        "--duration",
        "1",
        "--data",
        dir,
        "--label",
        LINK,
      ]);
      assert.equal(r.code, 0, r.printed);
      const s = await kvlab(["sweep", "--data", dir, "--format", "md"]);
      assert.equal(s.code, 0, s.printed);
      checkMarkdown("sweep", s.stdout, [LINK]);
    });
  });
});
