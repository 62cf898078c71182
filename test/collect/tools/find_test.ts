import assert from "node:assert/strict";
import { findTool, toolCandidates, toolsDir } from "../../../src/collect/tools/find.ts";

Deno.test("toolsDir() follows KVLAB_TOOLS_DIR, then XDG_CACHE_HOME, then HOME", () => {
  assert.equal(toolsDir({ HOME: "/h", XDG_CACHE_HOME: "/x", KVLAB_TOOLS_DIR: "/k" }), "/k");
  assert.equal(toolsDir({ HOME: "/h", XDG_CACHE_HOME: "/x" }), "/x/kvlab/tools");
  assert.equal(toolsDir({ HOME: "/h", KVLAB_TOOLS_DIR: "" }), "/h/.cache/kvlab/tools");
  assert.equal(toolsDir({ PATH: "/bin" }), null);
});

Deno.test("toolCandidates() lists PATH first, then the cache, newest version first", async (t) => {
  await t.step("order and skipped folders", () => {
    assert.deepEqual(
      toolCandidates("memtier_benchmark", { PATH: "/a::/b", KVLAB_TOOLS_DIR: "/t" }, [
        "memtier_benchmark-2.3.0",
        "memtier_benchmark-2.10.0",
        ".build-memtier_benchmark-2.4.0.abc",
      ]),
      [
        "/a/memtier_benchmark",
        "/b/memtier_benchmark",
        "/t/memtier_benchmark-2.10.0/memtier_benchmark",
        "/t/memtier_benchmark-2.3.0/memtier_benchmark",
      ],
    );
  });
  await t.step("no PATH, no home: nothing", () => {
    assert.deepEqual(toolCandidates("x", {}, ["x-1"]), []);
  });
  await t.step("a name with a slash is refused", () => {
    assert.throws(() => toolCandidates("../x", {}, []), /invalid tool name/);
    assert.throws(() => toolCandidates("", {}, []), TypeError);
  });
});

Deno.test("findTool() probes the file system", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-tools-" });
  try {
    const bin = `${dir}/bin`;
    const cache = `${dir}/cache`;
    Deno.mkdirSync(bin);
    Deno.mkdirSync(`${cache}/valkey-8.0.1`, { recursive: true });
    Deno.mkdirSync(`${cache}/.build-valkey-9.0.0.x`, { recursive: true });
    Deno.writeTextFileSync(`${cache}/valkey-8.0.1/valkey-server`, "#!/bin/sh\n", { mode: 0o755 });
    Deno.writeTextFileSync(`${cache}/.build-valkey-9.0.0.x/valkey-server`, "#!/bin/sh\n", {
      mode: 0o755,
    });
    Deno.writeTextFileSync(`${bin}/valkey-cli`, "not executable\n", { mode: 0o644 });
    const env = { PATH: bin, KVLAB_TOOLS_DIR: cache };
    await t.step("in the cache, not in a build in progress", () => {
      assert.equal(findTool("valkey-server", { env }), `${cache}/valkey-8.0.1/valkey-server`);
    });
    await t.step("a file without an execute bit is not a tool", () => {
      assert.equal(findTool("valkey-cli", { env }), null);
    });
    await t.step("PATH wins over the cache", () => {
      Deno.writeTextFileSync(`${bin}/valkey-server`, "#!/bin/sh\n", { mode: 0o755 });
      assert.equal(findTool("valkey-server", { env }), `${bin}/valkey-server`);
    });
    await t.step("a missing cache folder", () => {
      assert.equal(findTool("valkey-server", { env: { KVLAB_TOOLS_DIR: `${dir}/none` } }), null);
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

const LIVE: [string, string][] = [
  ["memtier_benchmark", "2.3.0"],
  ["valkey-server", "8.0.1"],
  ["valkey-cli", "8.0.1"],
  ["valkey-benchmark", "8.0.1"],
];

Deno.test("findTool() finds the tools .ci/install builds, and they run", async (t) => {
  for (const [name, version] of LIVE) {
    await t.step(name, async () => {
      const path = findTool(name);
      if (path === null) {
        const why =
          `${name} is neither on PATH nor in the kvlab tools cache (.ci/install builds it)`;
        if (Deno.env.get("CI") === "true") assert.fail(why);
        // deno-lint-ignore no-console
        console.log(`skipped: ${why}`);
        return;
      }
      const out = await new Deno.Command(path, { args: ["--version"], stdout: "piped" }).output();
      assert.ok(out.success);
      assert.match(
        new TextDecoder().decode(out.stdout),
        new RegExp(version.replaceAll(".", "\\.")),
      );
    });
  }
});
