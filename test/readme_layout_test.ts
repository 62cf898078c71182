// README's "Layout" block names every room and root file of src/ and of the repository, and
// nothing that is not there: the fenced `text` block under "## Layout" is read as a tree (a line's
// first word is a path; indented two spaces per level under the folder above it; lines indented
// further describe the entry above) and compared with the files.
import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

/** One path the Layout block names. */
interface LayoutEntry {
  /** Repository-relative, folders ending in `/` (`src/collect/memtier/`). */
  path: string;
  /** Its indentation in the block (0 for a full path, 2 per level under a folder). */
  indent: number;
  /** Its line in README.md (1-based). */
  line: number;
}

/** Lines indented this much or more continue the description of the entry above them. */
const CONTINUATION_INDENT = 10;

/** A path as the block writes it (`src/`, `src/cli.ts`, `  kinds/`, `.ci/`, `kvlab`). */
const PATH = /^\.?[\w-]+(?:[./][\w.-]+)*\/?$/;

/**
 * The paths named by the fenced `text` block of a README's "## Layout" section.
 *
 * @throws {Error} When there is no such block, or a line is neither an entry nor a continuation.
 */
function layoutEntries(readme: string): LayoutEntry[] {
  const lines = readme.split("\n");
  const heading = lines.indexOf("## Layout");
  if (heading < 0) throw new Error("README.md has no `## Layout` section");
  const end = lines.findIndex((l, i) => i > heading && l.startsWith("## "));
  const open = lines.findIndex((l, i) => i > heading && l === "```text");
  if (open < 0 || (end >= 0 && open > end)) {
    throw new Error("README.md's `## Layout` section has no ```text block");
  }
  const entries: LayoutEntry[] = [];
  for (let i = open + 1; i < lines.length && lines[i] !== "```"; i++) {
    const l = lines[i];
    const indent = l.length - l.trimStart().length;
    if (l.trim() === "" || indent >= CONTINUATION_INDENT) continue;
    const token = l.trim().split(/\s+/)[0];
    if (!PATH.test(token) || indent % 2 !== 0) {
      throw new Error(
        `README.md:${i + 1}: a Layout line starts with a path (\`src/x/\`, or \`  x/\` two ` +
          `spaces under its folder) or is indented ${CONTINUATION_INDENT}+ spaces: ${l}`,
      );
    }
    let path = token;
    if (indent > 0) {
      const parent = entries.findLast((e) => e.indent === indent - 2);
      if (!parent?.path.endsWith("/")) {
        throw new Error(`README.md:${i + 1}: ${token} is indented under no folder`);
      }
      path = parent.path + token;
    }
    entries.push({ path, indent, line: i + 1 });
  }
  return entries;
}

/**
 * The paths `.gitignore` names from the root (`/data/studies/` → `data/studies/`) or anywhere
 * (`node_modules/`): generated, so never required and allowed to be absent.
 */
function generated(gitignore: string): { anchored: Set<string>; anywhere: Set<string> } {
  const lines = gitignore.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  return {
    anchored: new Set(lines.filter((l) => l.startsWith("/")).map((l) => l.slice(1))),
    anywhere: new Set(lines.filter((l) => !l.startsWith("/") && !l.includes("*"))),
  };
}

/**
 * What the block must name: every file and folder of the repository's root but `.git` and what
 * `.gitignore` names, every folder under src/ (any depth) and every file directly in src/.
 */
function tree(root: string): string[] {
  const ignored = generated(Deno.readTextFileSync(join(root, ".gitignore")));
  const skip = (path: string) =>
    path === ".git" || path === ".git/" || ignored.anchored.has(path) || ignored.anywhere.has(path);
  const out: string[] = [];
  for (const e of Deno.readDirSync(root)) {
    const path = e.isDirectory ? `${e.name}/` : e.name;
    if (!skip(path)) out.push(path);
  }
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) {
        out.push(relative(root, p) + "/");
        walk(p);
      } else if (dir === join(root, "src")) out.push(relative(root, p));
    }
  };
  walk(join(root, "src"));
  return out.sort();
}

/**
 * The differences between the block and the tree, each saying what to change in the block.
 *
 * @param entries The block's paths ({@link layoutEntries}).
 * @param tree What it must name ({@link srcTree}).
 * @param exists Whether a repository-relative path exists.
 */
function layoutDifferences(
  entries: LayoutEntry[],
  tree: string[],
  exists: (path: string) => boolean,
): string[] {
  const named = new Set(entries.map((e) => e.path));
  const out: string[] = [];
  for (const path of tree.filter((p) => !named.has(p))) {
    const name = path.replace(/\/$/, "").split("/").pop()! + (path.endsWith("/") ? "/" : "");
    const parent = path.slice(0, path.length - name.length);
    const above = entries.find((e) => e.path === parent);
    const how = parent === "src/" || parent === ""
      ? `a line \`${path}  <what it holds>\``
      : above
      ? `a line \`${" ".repeat(above.indent + 2)}${name}  <what it holds>\` under ` +
        `\`${parent}\` (README.md:${above.line})`
      : `a line for it under \`${parent}\` (itself missing)`;
    out.push(`add ${path}: ${how}`);
  }
  for (const e of entries.filter((e) => !exists(e.path))) {
    out.push(`remove ${e.path} (README.md:${e.line}): it is not in the tree`);
  }
  return out;
}

/** Whether a path of the block is there, or generated (named by `.gitignore`: may be absent). */
const existsIn = (root: string) => {
  const ignored = generated(Deno.readTextFileSync(join(root, ".gitignore")));
  return (path: string) => {
    if (ignored.anchored.has(path)) return true;
    try {
      Deno.statSync(join(root, path));
      return true;
    } catch {
      return false;
    }
  };
};

Deno.test("README's Layout block names every room and root file, and only those", async (t) => {
  await t.step("the check reads nesting and says what to add and remove", () => {
    const readme = [
      "# x",
      "## Layout",
      "",
      "```text",
      "src/a.ts      the a",
      "src/gone.ts   was here",
      "src/room/     a room, described",
      "              over two lines",
      "  sub/          its sub-room",
      "test/         tests",
      "```",
      "## Next",
    ].join("\n");
    const entries = layoutEntries(readme);
    assert.deepEqual(entries.map((e) => e.path), [
      "src/a.ts",
      "src/gone.ts",
      "src/room/",
      "src/room/sub/",
      "test/",
    ]);
    const files = ["kvlab", "src/a.ts", "src/b.ts", "src/room/", "src/room/sub/", "src/room/new/"];
    const there = new Set([...files, "test/"]);
    assert.deepEqual(layoutDifferences(entries, files, (p) => there.has(p)), [
      "add kvlab: a line `kvlab  <what it holds>`",
      "add src/b.ts: a line `src/b.ts  <what it holds>`",
      "add src/room/new/: a line `  new/  <what it holds>` under `src/room/` (README.md:7)",
      "remove src/gone.ts (README.md:6): it is not in the tree",
    ]);
    assert.deepEqual(generated("node_modules/\n/data/studies/\n*-changed.svg\n"), {
      anchored: new Set(["data/studies/"]),
      anywhere: new Set(["node_modules/"]),
    });
    assert.throws(
      () => layoutEntries("## Layout\n```text\nsrc/x/   a\n   odd/  b\n```\n"),
      /README\.md:4: a Layout line starts with a path/,
    );
    assert.throws(
      () => layoutEntries("## Layout\n\nno block\n## Next\n```text\n```"),
      /no ```text/,
    );
  });

  await t.step("README.md and the tree agree", () => {
    const entries = layoutEntries(Deno.readTextFileSync(join(ROOT, "README.md")));
    const differences = layoutDifferences(entries, tree(ROOT), existsIn(ROOT));
    if (differences.length > 0) {
      assert.fail(
        "README.md's Layout block (the ```text block under ## Layout) and the tree differ:\n" +
          differences.map((d) => `  ${d}`).join("\n"),
      );
    }
  });
});
