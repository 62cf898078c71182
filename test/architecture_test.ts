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
    // the CLI is a program, not a library: src/cli.ts is its face (the registry of its commands)
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

Deno.test("plan kinds start no tool themselves: they ask the registry of tools", () => {
  // a value import (not `import type`) of a module that runs a tool or engine, or of a tool
  // room's face (which re-exports its runner)
  const runs =
    /\/collect\/(redis_benchmark|memtier|loadgen|pubsub|memory)\/(run|step|sweep|open_loop|tool|mod)\.ts$/;
  const bad: string[] = [];
  for (const f of FILES.filter((f) => f.includes("/collect/plan/kinds/"))) {
    const text = Deno.readTextFileSync(f).replace(/\/\*\*[\s\S]*?\*\//g, "");
    for (
      const m of text.matchAll(/^import (?!type\b)[^;]*?from\s*["'](\.{1,2}\/[^"']+\.ts)["']/gm)
    ) {
      const dep = normalize(join(dirname(f), m[1]));
      if (runs.test(dep)) bad.push(`${relative(SRC, f)} → ${relative(SRC, dep)}`);
    }
  }
  assert.deepEqual(bad, []);
});

const LAYOUT = join(SRC, "store/layout.ts");

/** Whether a file imports `src/store/layout.ts`, in its code or its JSDoc examples. */
function importsLayout(file: string, text: string): boolean {
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'`]([^"'`]+\.ts)["'`]/g;
  return [...text.matchAll(re)].some(([, spec]) =>
    (spec.startsWith(".") && normalize(join(dirname(file), spec)) === LAYOUT) ||
    /(^|[/}])src\/store\/layout\.ts$/.test(spec)
  );
}

Deno.test("no file outside src/store/ imports store/layout.ts: it asks a Dataset", async (t) => {
  await t.step("the check finds an import, a dynamic one and one in an example", () => {
    const f = join(ROOT, "test/analyze/x_test.ts");
    assert.ok(importsLayout(f, `import { runRaw } from "../../src/store/layout.ts";`));
    assert.ok(importsLayout(f, ` * import { x } from "../../src/store/layout.ts";`));
    assert.ok(importsLayout(f, "await import(`${ROOT}src/store/layout.ts`)"));
    assert.ok(!importsLayout(f, `import { Dataset } from "../../src/store/dataset.ts";`));
    assert.ok(!importsLayout(f, `// store/layout.ts owns the paths`));
  });
  await t.step("under src/, test/ and bench/", () => {
    const files = ["src", "test", "bench"].flatMap((d) => walk(join(ROOT, d)))
      .filter((f) => f.endsWith(".ts") && !f.startsWith(join(SRC, "store") + "/"))
      .filter((f) => f !== new URL(import.meta.url).pathname); // this file's samples above
    const bad = files.filter((f) => importsLayout(f, Deno.readTextFileSync(f)));
    assert.deepEqual(bad.map((f) => relative(ROOT, f)), []);
  });
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

/**
 * Loops between the rooms of each folder: a room is a file or a sub-folder (all its files), and
 * room A → room B when a file of A imports a file of B. A loop means some room imports one that
 * stands above it (as `process.ts` did `tools/find.ts`, while `tools/` imports `process.ts`).
 */
function roomLoops(graph: Map<string, string[]>, root: string): string[] {
  const loops: string[] = [];
  const folders = new Set(
    [...graph.keys()].map((f) => dirname(f)).flatMap((d) => {
      const up: string[] = [];
      for (let x = d; x.startsWith(root); x = dirname(x)) up.push(x);
      return up;
    }),
  );
  for (const folder of folders) {
    const roomOf = (f: string) =>
      f.startsWith(folder + "/") ? relative(folder, f).split("/")[0] : null;
    const edges = new Map<string, Set<string>>();
    for (const [f, ds] of graph) {
      const a = roomOf(f);
      if (a === null) continue;
      for (const d of ds) {
        const b = roomOf(d);
        if (b !== null && b !== a) edges.set(a, (edges.get(a) ?? new Set()).add(b));
      }
    }
    const state = new Map<string, 1 | 2>();
    const visit = (r: string, path: string[]) => {
      state.set(r, 1);
      for (const n of edges.get(r) ?? []) {
        if (state.get(n) === 1) {
          loops.push(`${relative(root, folder) || "."}: ${[...path, r, n].join(" → ")}`);
        } else if (!state.has(n)) visit(n, [...path, r]);
      }
      state.set(r, 2);
    };
    for (const r of edges.keys()) if (!state.has(r)) visit(r, []);
  }
  return loops;
}

Deno.test("the rooms of every folder import each other one way (no loop between them)", async (t) => {
  await t.step("the check finds a loop through a sub-folder", () => {
    const g = new Map([
      ["/s/process.ts", ["/s/tools/find.ts"]],
      ["/s/tools/find.ts", []],
      ["/s/tools/tool.ts", ["/s/process.ts"]],
    ]);
    assert.deepEqual(roomLoops(g, "/s"), [".: process.ts → tools → process.ts"]);
  });
  await t.step("under src/", () => {
    assert.deepEqual(roomLoops(GRAPH, SRC), []);
  });
});

/** A function of the source (declaration, expression, arrow or method) as Deno's parser sees it. */
interface FunctionSite {
  /** `path:line` of its first line. */
  at: string;
  /** Its positional parameters (an options object or a rest parameter counts as one). */
  params: number;
  /** Its length in lines. */
  lines: number;
  /** The line before it. */
  before: string;
}

/**
 * The functions of a source text, found with Deno's own TypeScript parser (the AST that
 * `deno lint` plugins see), so comments, strings, types and nested functions are read as the
 * compiler reads them.
 */
function functionSites(file: string, text: string): FunctionSite[] {
  const lines = text.split("\n");
  // character offset → line number (1-based)
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const sites: FunctionSite[] = [];
  const visit = (node: Deno.lint.Node & { params: unknown[] }) => {
    const first = lineOf(node.range[0]);
    sites.push({
      at: `${relative(ROOT, file)}:${first}`,
      params: node.params.length,
      lines: lineOf(node.range[1]) - first + 1,
      before: lines[first - 2] ?? "",
    });
  };
  const plugin: Deno.lint.Plugin = {
    name: "architecture",
    rules: {
      functions: {
        create: () => ({
          FunctionDeclaration: visit,
          FunctionExpression: visit,
          ArrowFunctionExpression: visit,
        }),
      },
    },
  };
  Deno.lint.runPlugin(plugin, file, text);
  return sites;
}

/** `// … word …` or a `/* … *\/` or JSDoc line holding the word. */
const commentWith = (word: string) => new RegExp(`(//|/\\*|^\\s*\\*).*\\b${word}\\b`, "i");

/** Functions with more than three positional parameters and no "positional" comment above. */
function positionalOffenders(sites: FunctionSite[]): string[] {
  const marked = commentWith("positional");
  return sites.filter((s) => s.params > 3 && !marked.test(s.before))
    .map((s) => `${s.at} (${s.params} parameters)`);
}

/** Functions over 100 lines with no comment above that says "long" (and why). */
function longOffenders(sites: FunctionSite[]): string[] {
  const marked = commentWith("long");
  return sites.filter((s) => s.lines > 100 && !marked.test(s.before))
    .map((s) => `${s.at} (${s.lines} lines)`);
}

const SITES = FILES.flatMap((f) => functionSites(f, Deno.readTextFileSync(f)));

Deno.test("no function has more than three positional parameters without a comment why", async (t) => {
  await t.step("the check finds a fourth parameter, and accepts the comment", () => {
    const sites = functionSites(
      join(SRC, "x.ts"),
      [
        "const f = (a: number, b = 1, { c }: { c: number }, ...d: number[]) => a;",
        "class K {",
        "  m(a: string, b: string, c: string, d: string) {}",
        "  // positional: the per-row hot path",
        "  n(a: string, b: string, c: string, d: string) {}",
        "}",
        "export function g(a: number, o: { b: number; c: number; d: number }) {}",
      ].join("\n"),
    );
    assert.deepEqual(positionalOffenders(sites), [
      "src/x.ts:1 (4 parameters)",
      "src/x.ts:3 (4 parameters)",
    ]);
  });
  await t.step("under src/", () => {
    assert.deepEqual(positionalOffenders(SITES), []);
  });
});

Deno.test("no function is over 100 lines without a comment why", async (t) => {
  await t.step("the check counts a function's lines", () => {
    const body = Array.from({ length: 100 }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const sites = functionSites(
      join(SRC, "x.ts"),
      `function f() {\n${body}\n}\n// long: a table of cases\nfunction g() {\n${body}\n}\n`,
    );
    assert.deepEqual(longOffenders(sites), ["src/x.ts:1 (102 lines)"]);
  });
  await t.step("under src/", () => {
    assert.deepEqual(longOffenders(SITES), []);
  });
});
