// The layout rules of README's "Layout" section, read from the code's own imports: rooms of at
// most 20 files, `_` files private to their folder, analyze never reaching collect, the plan-kind
// contract free of tool modules, and files of a readable size.
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const SRC = join(ROOT, "src");

function walk(dir: string, out: string[] = []): string[] {
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) walk(p, out);
    else out.push(p);
  }
  return out;
}

const FILES = walk(SRC).filter((f) => f.endsWith(".ts")).sort();

/** Relative imports of a file (static, `export … from`, dynamic, Workers), resolved. */
function imports(file: string): string[] {
  const text = Deno.readTextFileSync(file)
    // examples in JSDoc are not imports of the module
    .replace(/\/\*\*[\s\S]*?\*\//g, "");
  const out: string[] = [];
  const re =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)["'](\.{1,2}\/[^"']+\.ts)["']/g;
  for (const m of text.matchAll(re)) out.push(normalize(join(dirname(file), m[1])));
  return out;
}

const GRAPH = new Map(FILES.map((f) => [f, imports(f)]));

Deno.test("no folder under src/ but src/cli/ holds more than 20 files", () => {
  const counts = new Map<string, number>();
  for (const f of walk(SRC)) counts.set(dirname(f), (counts.get(dirname(f)) ?? 0) + 1);
  const over = [...counts].filter(([d, n]) => n > 20 && relative(SRC, d) !== "cli");
  assert.deepEqual(over, []);
});

Deno.test("every folder under src/ has a mod.ts face", () => {
  const dirs = new Set(FILES.map((f) => dirname(f)));
  const faceless = [...dirs].filter((d) => !FILES.includes(join(d, "mod.ts")))
    // the CLI is a program, not a library: src/cli.ts declares its commands
    .filter((d) => relative(SRC, d) !== "cli" && d !== SRC)
    // the chart builders' face is analyze/chart.ts (their one public entry)
    .filter((d) => relative(SRC, d) !== "analyze/charts");
  assert.deepEqual(faceless.map((d) => relative(ROOT, d)), []);
});

Deno.test("a _ file is imported only from its own folder and the folders below it", () => {
  const bad: string[] = [];
  for (const [file, deps] of GRAPH) {
    for (const dep of deps) {
      const name = dep.split("/").pop()!;
      if (!name.startsWith("_")) continue;
      const room = dirname(dep);
      // its folder, the folders below, and the folder's face when it is a sibling file
      // (src/cli.ts is the face of src/cli/)
      if (file.startsWith(room + "/") || file === room + ".ts") continue;
      bad.push(`${relative(ROOT, file)} → ${relative(ROOT, dep)}`);
    }
  }
  assert.deepEqual(bad, []);
});

/** The chains of imports by which files under `from` reach files under `to` (src-relative). */
function reaches(from: string, to: readonly string[]): string[] {
  const start = join(SRC, from) + "/";
  const targets = to.map((t) => join(SRC, t) + "/");
  const bad: string[] = [];
  for (const first of FILES.filter((f) => f.startsWith(start))) {
    const seen = new Map<string, string>([[first, ""]]);
    const queue = [first];
    while (queue.length > 0) {
      const f = queue.shift()!;
      for (const d of GRAPH.get(f) ?? []) {
        if (seen.has(d)) continue;
        seen.set(d, f);
        if (targets.some((t) => d.startsWith(t))) {
          const chain = [d];
          for (let p = f; p !== ""; p = seen.get(p)!) chain.unshift(p);
          bad.push(chain.map((x) => relative(SRC, x)).join(" → "));
        } else queue.push(d);
      }
    }
  }
  return bad;
}

Deno.test("no module under src/analyze reaches src/collect through any chain of imports", () => {
  assert.deepEqual(reaches("analyze", ["collect"]), []);
});

Deno.test("layers: neutral rooms and the store reach no room above them", () => {
  // text/ and system/ are below everything; store/ is below collect/ and analyze/; no library
  // room reaches the CLI
  assert.deepEqual(reaches("text", ["system", "store", "collect", "analyze", "cli"]), []);
  assert.deepEqual(reaches("system", ["text", "store", "collect", "analyze", "cli"]), []);
  assert.deepEqual(reaches("store", ["collect", "analyze", "cli"]), []);
  assert.deepEqual(reaches("collect", ["analyze", "cli"]), []);
});

Deno.test("the plan-kind contract imports no tool module", () => {
  const contract = join(SRC, "collect/plan/kind.ts");
  const tools = GRAPH.get(contract)!.filter((d) =>
    /\/(redis_benchmark|memtier|loadgen|pubsub|memory)\//.test(relative(SRC, d))
  );
  assert.deepEqual(tools, []);
});

Deno.test("no source file is over 460 lines", () => {
  const long = FILES.map((f) => [relative(ROOT, f), Deno.readTextFileSync(f).split("\n").length])
    .filter(([, n]) => (n as number) > 460);
  assert.deepEqual(long, []);
});

Deno.test("the import graph has no cycle between files", () => {
  const state = new Map<string, 1 | 2>();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]) => {
    state.set(f, 1);
    for (const d of GRAPH.get(f) ?? []) {
      if (state.get(d) === 1) cycles.push([...path, f, d].map((x) => relative(SRC, x)).join(" → "));
      else if (!state.has(d)) visit(d, [...path, f]);
    }
    state.set(f, 2);
  };
  for (const f of FILES) if (!state.has(f)) visit(f, []);
  assert.deepEqual(cycles, []);
});
