// The `docker stats` stream as docker 28.2.2 prints it to a pipe (a real capture of two
// containers, then SIGTERM): frames every 500 ms behind cursor codes, each printed twice, the
// other container's lines among ours, and a last frame of `--` once it is stopped.
import assert from "node:assert/strict";
import {
  containerStatsRows,
  parseDockerStats,
  StatsStreamFilter,
} from "../../../src/collect/mod.ts";
import { TESTDATA } from "../../_support/testdata.ts";

const STREAM = Deno.readTextFileSync(
  `${TESTDATA}docker-client_28.2.2_engine-20.10.24_stats-stream-two-containers.txt`,
);
const MiB = 2 ** 20;

Deno.test("StatsStreamFilter keeps one sample a second of one container", async (t) => {
  // the frames as they arrived, 500 ms apart (each frame starts with ESC [ J)
  const frames = STREAM.split("\x1b[J");
  await t.step("the capture is what the module says docker prints", () => {
    assert.equal(frames.length, 6);
    assert.ok(frames.every((f) => f === "" || f.startsWith("\x1b[H")));
    assert.match(frames.at(-2)!, /"MemUsage":"-- \/ --","Name":"mem-redis"/);
  });
  await t.step("one line a second of mem-redis, the rest dropped", () => {
    const f = new StatsStreamFilter("mem-redis");
    frames.slice(0, -2).forEach((frame, i) => f.push(frame, 500 * i));
    assert.deepEqual(f.samples.map((s) => s.atMs), [0, 1000]);
    assert.ok(f.samples.every((s) => JSON.parse(s.text).Name === "mem-redis"));
    const rows = containerStatsRows("r1", f.samples);
    assert.deepEqual(rows.map((r) => [r.elapsed_s, r.memory_limit_bytes, r.pids]), [
      [0, 64 * MiB, 5],
      [1, 64 * MiB, 5],
    ]);
    assert.ok(rows.every((r) => (r.memory_bytes as number) > 3 * MiB));
    // its first reading is kept: docker had an earlier one (not a first 0.00 %)
    assert.deepEqual(rows.map((r) => r.cpu_pct), [0.16, 0.16]);
  });
  await t.step("nothing once closed: the last frame of `--` is not a sample", () => {
    const f = new StatsStreamFilter("mem-redis");
    frames.slice(0, -2).forEach((frame, i) => f.push(frame, 500 * i));
    f.close();
    f.push(frames.at(-2)!, 3000);
    assert.equal(f.samples.length, 2);
    const open = new StatsStreamFilter("mem-redis");
    frames.forEach((frame, i) => open.push(frame, 500 * i));
    assert.equal(containerStatsRows("r1", open.samples).at(-1)!.memory_bytes, null);
  });
  await t.step("parseDockerStats() reads the stream's lines through the cursor codes", () => {
    const rows = parseDockerStats(STREAM);
    assert.equal(new Set(rows.map((r) => r.name)).size, 2);
    const other = rows.filter((r) => r.name === "other" && r.memLimitBytes !== null);
    assert.ok(other.length === 8 && other.every((r) => r.memLimitBytes! > 64 * MiB));
  });
});
