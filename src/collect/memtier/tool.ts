/**
 * memtier_benchmark as a {@link Tool}: found on PATH or in the tools cache, its argv from one
 * {@link MemtierCall}, its files read by the memtier formats, each call one stored run
 * ({@link runMemtier}); and how it runs a latency sweep's fixed-rate steps (closed loop, each
 * connection held to `--rate-limiting`, a whole number per second).
 *
 * @module
 */

import { argvToCommand } from "../collector.ts";
import { memtierFiles } from "../formats/memtier/format.ts";
import { LIMITS } from "../limits.ts";
import { redactArgv } from "../../text/redact.ts";
import { findTool } from "../tools/find.ts";
import { type FixedRateStep, prepareExternal, runUnrecorded, type Tool } from "../tools/tool.ts";
import { memtierArgv, type MemtierCall, type MemtierRun, runMemtier } from "./run.ts";

/** The raw file names a stored run keeps memtier's files under, as its command shows them. */
const RECORDED_FILES = { json: "memtier.json", hdrPrefix: "hdr" };

/**
 * The memtier call of a fixed-rate step: the step's workload at its rate (per connection, rounded
 * to a whole number as `--rate-limiting` takes it), over keys 1 … `keys`.
 *
 * @param step The step.
 * @param program memtier_benchmark, or a path to it.
 * @returns The call.
 *
 * @example
 * ```ts
 * import { memtierArgv, memtierStepCall, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const call = memtierStepCall({
 *   target: parseServerUrl("redis://h:1"), requestedOpsPerSec: 9984, threads: 4, clients: 12,
 *   durationS: 5, warmupS: 0, ratio: "0:1", dataSizeBytes: 256, keys: 100000, pipeline: 1,
 *   arrivals: "uniform",
 * }, "memtier_benchmark");
 * assert.equal(
 *   memtierArgv(call).join(" "),
 *   "memtier_benchmark -s h -p 1 --protocol=redis -t 4 -c 12 --ratio=0:1 -d 256 --key-pattern=R:R " +
 *     "--key-minimum=1 --key-maximum=100000 --pipeline=1 --test-time=5 --rate-limiting=208 " +
 *     "--print-percentiles=50,99,99.9",
 * );
 * ```
 */
export function memtierStepCall(step: FixedRateStep, program: string): MemtierCall {
  return {
    tool: program,
    target: step.target,
    threads: step.threads,
    clients: step.clients,
    ratio: step.ratio,
    dataSizeBytes: step.dataSizeBytes,
    keyPattern: "R:R",
    keyMinimum: 1, // memtier refuses 0
    keyMaximum: step.keys,
    pipeline: step.pipeline,
    testTimeS: step.durationS,
    rateLimit: Math.round(step.requestedOpsPerSec / (step.threads * step.clients)),
    printPercentiles: [50, 99, 99.9],
  };
}

/**
 * memtier_benchmark.
 *
 * @example
 * ```ts
 * import { memtierTool, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const call = { target: parseServerUrl("redis://h:1"), threads: 1, testTimeS: 5 };
 * assert.equal(
 *   memtierTool.command(call),
 *   "memtier_benchmark -s h -p 1 --protocol=redis -t 1 --test-time=5 " +
 *     "--json-out-file=memtier.json --hdr-file-prefix=hdr",
 * );
 * assert.equal(memtierTool.command(call, false), "memtier_benchmark -s h -p 1 --protocol=redis -t 1 --test-time=5");
 * assert.equal(memtierTool.fixedRate!.rate(1000, 48), 1008);
 * ```
 */
export const memtierTool: Tool<MemtierCall, MemtierRun> = {
  name: "memtier_benchmark",
  programs: ["memtier_benchmark"],
  external: true,
  formats: memtierFiles.formats,
  prepare: (program, runner) =>
    prepareExternal(program, { runner, locate: (n) => findTool(n) ?? n }),
  argv: (call) => memtierArgv(call),
  command: (call, recorded = true) =>
    argvToCommand(redactArgv(memtierArgv(call, recorded ? RECORDED_FILES : {}))),
  run: (call, ctx) =>
    runMemtier(call, {
      data: ctx.data,
      runner: ctx.runner,
      label: ctx.label,
      tags: ctx.tags,
      plan: ctx.plan,
      watch: ctx.watch,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      after: ctx.after,
      notRun: ctx.notRun,
      toolVersion: ctx.toolVersion,
      host: ctx.host,
      now: ctx.now,
      onProgress: ctx.onProgress &&
        ((p) =>
          ctx.onProgress!({
            kind: "progress",
            test: (call.runCount ?? 1) > 1 ? `run ${p.runIndex}` : "memtier",
            opsPerSec: p.opsPerSec,
            overallOpsPerSec: p.avgOpsPerSec,
            percent: p.percent,
          })),
    }),
  unrecorded: (call, ctx) => runUnrecorded(memtierArgv(call), ctx),
  fixedRate: {
    engine: "memtier",
    program: "memtier_benchmark",
    call: memtierStepCall,
    warmup: (step, program) =>
      step.warmupS > 0
        ? {
          ...memtierStepCall(step, program),
          testTimeS: Math.max(1, Math.ceil(step.warmupS)),
          hideHistogram: true,
        }
        : null,
    // (its failures are left to the step, which reports them)
    preload: (step, ctx) =>
      runUnrecorded(
        memtierArgv({
          ...memtierStepCall(step, ctx.program),
          ratio: "1:0",
          keyPattern: "P:P",
          pipeline: 16,
          testTimeS: undefined,
          rateLimit: undefined,
          requests: "allkeys",
          printPercentiles: undefined,
          hideHistogram: true,
        }),
        ctx,
      ).then(() => null),
    // --rate-limiting is a whole number per connection: the total is that rate × connections
    rate: (total, connections) => Math.max(1, Math.round(total / connections)) * connections,
    limit: LIMITS.toolRate,
    wholeNumbers: true,
    poisson: false,
  },
};
