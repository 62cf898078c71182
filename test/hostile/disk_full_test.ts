/**
 * A full disk during `kvlab load`, `kvlab pubsub` and a plan's kvlab-engine step (issue 21):
 * one error naming the dataset's path, never polars' `parquet: … Invalid thrift: transport
 * error` nor the bare `No space left on device (os error 28)`. Mounts a 1 MiB tmpfs (root on
 * Linux; skipped elsewhere, failed on CI).
 */

import assert from "node:assert/strict";
import { withServers } from "../_support/servers.ts";
import { kvlab, kvlabStep, writeSweepPlan } from "./_cli.ts";
import { canMount, fill, mountTmpfs, umount } from "../_support/tmpfs.ts";

Deno.test({
  name: "hostile: a full disk during a live step says so once, naming the dataset's path",
  ignore: !canMount(),
  fn: async (t) => {
    await withServers([{}], async ([server]) => {
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-full-" });
      const mnt = `${dir}/mnt`;
      mountTmpfs(mnt);
      const url = `redis://127.0.0.1:${server.port}`;
      const said = (printed: string, data: string) => {
        assert.equal((printed.match(/no space left/gi) ?? []).length, 1, printed);
        assert.match(
          printed,
          new RegExp(
            `^error: no space left on the disk of ${data}/\\S+: free some space there`,
            "m",
          ),
        );
        assert.doesNotMatch(printed, /os error 28|thrift|\n\s+at /);
      };
      try {
        // 0 KiB: the run's writer cannot start; 12 KiB: the Parquet files do not fit
        for (const freeKiB of [0, 12]) {
          await t.step(`kvlab load, ${freeKiB} KiB free`, async () => {
            fill(mnt, freeKiB);
            const o = { rate: 50, connections: 2, duration: 1 };
            const r = await kvlabStep("load", url, `${mnt}/d`, o);
            assert.equal(r.code, 1, r.printed);
            said(r.printed, `${mnt}/d`);
          });
          await t.step(`kvlab pubsub, ${freeKiB} KiB free`, async () => {
            fill(mnt, freeKiB);
            const o = { rate: 50, publishers: 1, subscribers: 1, duration: 1, grace: 0 };
            const r = await kvlabStep("pubsub", url, `${mnt}/p`, o);
            assert.equal(r.code, 1, r.printed);
            said(r.printed, `${mnt}/p`);
          });
        }
        await t.step("a latency-sweep plan (engine kvlab), 12 KiB free", async () => {
          const plan = writeSweepPlan(dir, url, { name: "full", clients: 2, rate: 50 });
          fill(mnt, 12);
          const r = await kvlab(["run", plan, "--data", `${mnt}/s`]);
          assert.equal(r.code, 1, r.printed);
          said(r.printed, `${mnt}/s`);
        });
      } finally {
        umount(mnt);
        Deno.removeSync(dir, { recursive: true });
      }
    });
  },
});

Deno.test({
  name: "hostile: a full disk during kvlab ingest says so once, naming the dataset",
  ignore: !canMount(),
  fn: async (t) => {
    const ROOT = new URL("../../", import.meta.url).pathname;
    const files = [
      "test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt",
      "test/testdata/real/memtier-2.3.0_valkey-8.0.1_t2c5-pipeline4-requests2000.json",
    ].map((f) => ROOT + f);
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-full-ingest-" });
    const mnt = `${dir}/mnt`;
    mountTmpfs(mnt);
    try {
      // 0 KiB: the batch cannot start; 12 KiB: a run's files do not fit; 100 KiB: the Parquet
      // files of the batch do not ("No space left on device (os error 28)" with no path, and
      // "parquet: File out of specification: underlying IO error: …", once per file)
      for (const freeKiB of [0, 12, 100]) {
        await t.step(`${freeKiB} KiB free`, async () => {
          fill(mnt, freeKiB);
          const r = await kvlab(["ingest", ...files, "--data", `${mnt}/d`]);
          assert.equal(r.code, 1, r.printed);
          assert.equal((r.printed.match(/no space left/gi) ?? []).length, 1, r.printed);
          assert.match(
            r.stderr,
            new RegExp(`no space left on the disk of ${mnt}/d\\S*: free some`),
          );
          assert.doesNotMatch(r.printed, /os error 28|thrift|parquet|\n\s+at /);
        });
      }
    } finally {
      umount(mnt);
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
