/**
 * redis-benchmark / valkey-benchmark as a {@link Tool}: found on PATH or in the tools cache, its
 * argv from one {@link BenchmarkCall}, its output read by the `redis-benchmark` format, each call
 * one stored run ({@link runRedisBenchmark}).
 *
 * @module
 */

import { argvToCommand } from "../collector.ts";
import { redisBenchmarkFormat } from "../formats/redis_benchmark/format.ts";
import { redactArgv } from "../../text/redact.ts";
import { prepareExternal, runUnrecorded, type Tool } from "../tools/tool.ts";
import { type BenchmarkCall, redisBenchmarkArgv, runRedisBenchmark } from "./run.ts";

/**
 * redis-benchmark and valkey-benchmark.
 *
 * @example
 * ```ts
 * import { parseServerUrl, redisBenchmarkTool } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const call = { tool: "valkey-benchmark", target: parseServerUrl("redis://:pw@h:1"), tests: ["get"] };
 * assert.equal(redisBenchmarkTool.command(call), "valkey-benchmark -h h -p 1 -a *** -t get");
 * assert.deepEqual(redisBenchmarkTool.formats, ["redis-benchmark"]);
 * ```
 */
export const redisBenchmarkTool: Tool<BenchmarkCall> = {
  name: "redis-benchmark",
  programs: redisBenchmarkFormat.programs ?? [],
  external: true,
  formats: [redisBenchmarkFormat.name],
  prepare: (program, runner) => prepareExternal(program, { runner }),
  argv: redisBenchmarkArgv,
  command: (call) => argvToCommand(redactArgv(redisBenchmarkArgv(call))),
  run: (call, ctx) =>
    runRedisBenchmark({
      data: ctx.data,
      runner: ctx.runner,
      params: call,
      label: ctx.label,
      tags: ctx.tags,
      plan: ctx.plan,
      watch: ctx.watch,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      after: ctx.after,
      notRun: ctx.notRun,
      onProgress: ctx.onProgress,
      toolVersion: ctx.toolVersion,
      host: ctx.host,
      now: ctx.now,
    }),
  unrecorded: (call, ctx) => runUnrecorded(redisBenchmarkArgv(call), ctx),
};
