/**
 * What the failover tests share: a test in its own TMPDIR (where kvlab makes its topology
 * folders) with a dataset folder, the pids and ports of the processes kvlab started (from its
 * start line), and the check that every one is gone and its port free afterwards.
 */

import assert from "node:assert/strict";
import { processState } from "../../../src/system/pids.ts";
import { withTempDir } from "../../_support/temp.ts";
import { missingOutsideCi } from "../../_support/tools.ts";

/** The nodes of kvlab's start line: `node 1 primary 127.0.0.1:PORT pid PID, …`. */
export function startedNodes(
  lines: string[],
): { name: string; role: string; port: number; pid: number }[] {
  const line = lines.find((l) => l.startsWith("started ")) ?? "";
  return [...line.matchAll(/(node \d+) (primary|replica) 127\.0\.0\.1:(\d+) pid (\d+)/g)].map((
    m,
  ) => ({ name: m[1], role: m[2], port: Number(m[3]), pid: Number(m[4]) }));
}

function portFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

/** Every process gone by its PID, every port free, and nothing left in the test's TMPDIR. */
export function nothingLeft(nodes: { pid: number; port: number }[], tmp: string): void {
  assert.ok(nodes.length > 0, "no node read from the start line");
  for (const n of nodes) {
    assert.equal(processState(n.pid).state, "gone", `pid ${n.pid} still runs`);
    assert.ok(portFree(n.port), `port ${n.port} still bound`);
  }
  assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), []);
}

/** Skipped only outside CI, where the Debian servers may be missing. */
export const ignore = missingOutsideCi("redis-server", "redis-cli");

/** A test with TMPDIR set to a fresh folder and a dataset folder of its own. */
export function failoverTest(
  name: string,
  fn: (tmp: string, data: string) => Promise<void>,
  skip: boolean = ignore,
) {
  Deno.test({
    name,
    ignore: skip,
    fn: () =>
      withTempDir(
        "kvlab-failover-data-",
        (data) =>
          withTempDir("kvlab-failover-tmp-", async (tmp) => {
            const before = Deno.env.get("TMPDIR");
            Deno.env.set("TMPDIR", tmp);
            try {
              await fn(tmp, data);
            } finally {
              if (before === undefined) Deno.env.delete("TMPDIR");
              else Deno.env.set("TMPDIR", before);
            }
          }),
      ),
  });
}
