/**
 * A compaction killed with `kill -9` (issue 21) leaves its half-made batch under `tmp/<id>/`;
 * the next compaction, and the next ingest, sweep it. The kill is injected at the worst points:
 * the merged batch fully written under `tmp/`, not yet renamed into `batches/`; and (issue 30)
 * the merged batch renamed into `batches/`, the batches it replaces not yet removed, which left
 * them and `tmp/compact.lock` through the next ingests.
 */

import assert from "node:assert/strict";
import { ingestPaths } from "../../src/collect/mod.ts";
import { compactDataset } from "../../src/store/compact.ts";
import { loadTable } from "../../src/analyze/mod.ts";

const CORPUS = new URL("../testdata/corpus/", import.meta.url).pathname;
const COMPACT = new URL("../../src/store/compact.ts", import.meta.url).href;

/**
 * Runs a compaction in a child process that kills itself (SIGKILL) at its first rename out of
 * tmp/ (`before-rename`: the merged batch is written, not in place), or at its first rename of a
 * replaced batch out of batches/ (`after-rename`: the merged batch is in place, the batches it
 * replaces are not yet removed).
 */
async function killedCompaction(
  data: string,
  at: "before-rename" | "after-rename" = "before-rename",
): Promise<void> {
  const script = `
    const rename = Deno.renameSync;
    Deno.renameSync = (from, to) => {
      const tmp = ${JSON.stringify(data + "/tmp/")};
      const batches = ${JSON.stringify(data + "/batches/")};
      const kill = ${JSON.stringify(at)} === "before-rename"
        ? String(from).startsWith(tmp) && !String(to).startsWith(tmp)
        : String(from).startsWith(batches) && String(to).startsWith(tmp);
      if (kill) Deno.kill(Deno.pid, "SIGKILL");
      return rename(from, to);
    };
    const { compactDataset } = await import(${JSON.stringify(COMPACT)});
    compactDataset(${JSON.stringify(data)});
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(out.signal, "SIGKILL", new TextDecoder().decode(out.stderr));
}

/** The leftovers under tmp/ (the compaction lock is not one). */
function leftovers(data: string): string[] {
  try {
    return [...Deno.readDirSync(`${data}/tmp`)].map((e) => e.name)
      .filter((n) => n !== "compact.lock").sort();
  } catch {
    return [];
  }
}

async function twoBatches(data: string): Promise<void> {
  for (
    const f of [
      "redis-benchmark_7.0.15_redis-7.0.15_quiet.txt",
      "valkey-benchmark_8.0.1_valkey-8.0.1_quiet.txt",
    ]
  ) {
    const [r] = await ingestPaths([CORPUS + f], { data });
    assert.equal(r.status, "ingested", r.error?.message);
  }
}

Deno.test("a compaction killed mid-way leaves tmp/<id> that later writers sweep", async (t) => {
  await t.step("the next compaction sweeps it", async () => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-compact-kill-" });
    await twoBatches(data);
    await killedCompaction(data);
    assert.ok(leftovers(data).length > 0, "the killed compaction left its batch under tmp/");
    compactDataset(data);
    assert.deepEqual(leftovers(data), []);
    assert.equal(loadTable(data, "runs").height, 2);
    Deno.removeSync(data, { recursive: true });
  });
  await t.step("the next ingest sweeps it", async () => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-compact-kill-" });
    await twoBatches(data);
    await killedCompaction(data);
    assert.ok(leftovers(data).length > 0);
    await ingestPaths([CORPUS + "redis-benchmark_7.0.15_redis-7.0.15_full.txt"], { data });
    assert.deepEqual(leftovers(data), []);
    assert.equal(loadTable(data, "runs").height, 3);
    Deno.removeSync(data, { recursive: true });
  });
});

Deno.test("a compaction killed between its rename and removing what it merged: the next ingest finishes it", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-compact-kill-" });
  try {
    await twoBatches(data);
    const before = [...Deno.readDirSync(`${data}/batches`)].map((e) => e.name).sort();
    await killedCompaction(data, "after-rename");
    const batches = () => [...Deno.readDirSync(`${data}/batches`)].map((e) => e.name).sort();
    const merged = batches().filter((b) => !before.includes(b));
    assert.equal(merged.length, 1, "the merged batch is in place");
    assert.deepEqual(batches(), [...before, ...merged].sort(), "the replaced batches are left");
    assert.ok(Deno.statSync(`${data}/tmp/compact.lock`).isFile, "and the compaction's lock");
    assert.equal(loadTable(data, "runs").height, 2, "readers count no run twice meanwhile");
    await ingestPaths([CORPUS + "redis-benchmark_7.0.15_redis-7.0.15_full.txt"], { data });
    const after = batches();
    assert.equal(after.length, 2, `the merged batch and the new one: ${after.join(", ")}`);
    assert.ok(after.includes(merged[0]) && !before.some((b) => after.includes(b)));
    assert.throws(() => Deno.statSync(`${data}/tmp/compact.lock`), Deno.errors.NotFound);
    assert.deepEqual(leftovers(data), []);
    assert.equal(loadTable(data, "runs").height, 3);
  } finally {
    Deno.removeSync(data, { recursive: true });
  }
});
