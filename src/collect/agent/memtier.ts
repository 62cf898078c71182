/**
 * memtier_benchmark on agents (issue 35): an agent's share of a fixed-rate memtier step (its
 * connections of the step's, each held to the step's `--rate-limiting`, so the rate splits with
 * them), run with its JSON and HDR interval logs and posted back as those files' text; and the
 * coordinator's side: each agent's files read by the same parsers as one memtier run (memtier's
 * printed totals checked against its series, as for one host), and the agents' rows merged into
 * one run: rates and counts summed, latency percentiles read from the exact sum of their
 * HdrHistograms (never an average of percentiles).
 *
 * @module
 */

import { parseHdrFileName, parseHdrIntervalLog } from "../formats/memtier/hdr.ts";
import { memtierPercentileMs, mergeMemtierHistograms } from "../formats/memtier/hdr.ts";
import { parseMemtierJson } from "../formats/memtier/json/parse.ts";
import { parseMemtierProgress } from "../formats/memtier/progress.ts";
import { parseMemtierReport } from "../formats/memtier/report.ts";
import { type MemtierHdrLog, type MemtierRows, memtierRows } from "../formats/memtier/rows.ts";
import { memtierArgv } from "../memtier/run.ts";
import { memtierStepCall } from "../memtier/tool.ts";
import type { ProcessRunner } from "../process.ts";
import type { FixedRateStep } from "../tools/tool.ts";
import type { HdrHistogramsRow, ResultsRow } from "../../schema.ts";
import { ParseError } from "../../errors.ts";
import { redactRawText, redactSecret } from "../../text/redact.ts";

/** An agent's part of a memtier step: memtier's `-t`, `-c` and `--rate-limiting`. */
export interface MemtierShare {
  threads: number;
  /** Connections per thread. */
  clients: number;
  /** threads × clients: the agent's connections of the step's. */
  connections: number;
  /** Requests per second per connection (the step's, the same on every agent). */
  rateLimitPerConnection: number;
  /** rateLimitPerConnection × connections. */
  requestedOpsPerSec: number;
}

/**
 * An agent's share of a memtier step: of the step's threads × clients connections, those `i`
 * with `i % of === index`, as `-t` (the largest divisor of that count not above the step's
 * threads) × `-c`; each connection at the step's per-connection rate, so the agents' rates add
 * up to the step's.
 *
 * @param step The whole step.
 * @param share This agent's index among `of` agents.
 * @returns Its memtier settings.
 * @throws {RangeError} When there are fewer connections than agents.
 *
 * @example
 * ```ts
 * import { memtierShare } from "./memtier.ts";
 * import assert from "node:assert/strict";
 * const step = { requestedOpsPerSec: 12_000, threads: 2, clients: 6 };
 * const shares = [0, 1, 2].map((index) => memtierShare(step, { index, of: 3 }));
 * assert.deepEqual(shares.map((s) => [s.threads, s.clients, s.requestedOpsPerSec]),
 *   [[2, 2, 4000], [2, 2, 4000], [2, 2, 4000]]);
 * const odd = [0, 1].map((index) => memtierShare({ ...step, clients: 5 }, { index, of: 2 }));
 * assert.deepEqual(odd.map((s) => [s.threads, s.clients, s.connections]), [[1, 5, 5], [1, 5, 5]]);
 * assert.throws(() => memtierShare({ ...step, threads: 1, clients: 2 }, { index: 0, of: 3 }),
 *   /2 connections for 3 agents/);
 * ```
 */
export function memtierShare(
  step: Pick<FixedRateStep, "requestedOpsPerSec" | "threads" | "clients">,
  share: { index: number; of: number },
): MemtierShare {
  const total = step.threads * step.clients;
  if (total < share.of) {
    throw new RangeError(`${total} connections for ${share.of} agents: at least one each`);
  }
  const connections = Math.floor(total / share.of) + (share.index < total % share.of ? 1 : 0);
  let threads = Math.min(step.threads, connections);
  while (connections % threads !== 0) threads--;
  const rate = Math.round(step.requestedOpsPerSec / total);
  return {
    threads,
    clients: connections / threads,
    connections,
    rateLimitPerConnection: rate,
    requestedOpsPerSec: rate * connections,
  };
}

/** The most bytes of one file an agent posts (the JSON of a long step is cut, and says so). */
const FILE_MAX_BYTES = 4 << 20;

/** What an agent posts for its memtier share (the result's `step`). */
export interface MemtierAgentStep {
  engine: "memtier";
  share: MemtierShare;
  exitCode: number | null;
  interrupted: boolean;
  timedOut: boolean;
  /** memtier's files by name (`stdout.txt`, `stderr.txt`, `memtier.json`, `hdr_….hgrm`). */
  files: Record<string, string>;
  /** Files cut at {@link FILE_MAX_BYTES}. */
  cut: string[];
}

/**
 * Runs an agent's share of a memtier step from `startAtMs` (this host's clock) and reads back
 * what memtier wrote (secrets redacted). Never throws for a tool that fails: its exit code and
 * files say so.
 *
 * @param o The step, the share, the program, when to start, the runner, limit and signal.
 * @returns The posted step and when memtier was started (this host's clock, epoch ms).
 */
export async function runMemtierShare(o: {
  step: FixedRateStep;
  share: MemtierShare;
  program: string;
  startAtMs: number;
  runner: ProcessRunner;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<{ step: MemtierAgentStep; startedAtMs: number | null }> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-agent-memtier-" });
  try {
    const call = {
      ...memtierStepCall(o.step, o.program),
      threads: o.share.threads,
      clients: o.share.clients,
      rateLimit: o.share.rateLimitPerConnection,
    };
    const argv = memtierArgv(call, { json: `${dir}/memtier.json`, hdrPrefix: `${dir}/hdr` });
    await waitUntil(o.startAtMs, o.signal);
    if (o.signal.aborted) {
      return {
        step: {
          engine: "memtier",
          share: o.share,
          exitCode: null,
          interrupted: true,
          timedOut: false,
          files: {},
          cut: [],
        },
        startedAtMs: null,
      };
    }
    const startedAtMs = Date.now();
    const r = await o.runner.run({
      argv,
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      stdoutPath: `${dir}/stdout.txt`,
      stderrPath: `${dir}/stderr.txt`,
    });
    const files: Record<string, string> = {};
    const cut: string[] = [];
    for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name.localeCompare(b.name))) {
      const hdr = parseHdrFileName(e.name);
      const wanted = e.name === "stdout.txt" || e.name === "stderr.txt" ||
        e.name === "memtier.json" || (hdr?.prefix === "hdr" && e.name.endsWith(".hgrm"));
      if (!e.isFile || !wanted) continue;
      let bytes = Deno.readFileSync(`${dir}/${e.name}`);
      if (bytes.length > FILE_MAX_BYTES) {
        bytes = bytes.subarray(0, FILE_MAX_BYTES);
        cut.push(e.name);
      }
      files[e.name] = redactSecret(
        redactRawText(new TextDecoder().decode(bytes)),
        o.step.target.password ?? "",
      );
    }
    return {
      step: {
        engine: "memtier",
        share: o.share,
        exitCode: r.code,
        interrupted: r.interrupted,
        timedOut: r.timedOut,
        files,
        cut,
      },
      startedAtMs,
    };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

function waitUntil(atMs: number, signal: AbortSignal): Promise<void> {
  const ms = atMs - Date.now();
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** An agent's memtier step, read: its rows (as one memtier run's) and what it came to. */
export interface MemtierAgentRun {
  step: MemtierAgentStep;
  rows: MemtierRows;
  /** Its TOTALS rate, or null. */
  opsPerSec: number | null;
  /** Why it is not a complete measurement (null when it is). */
  problem: string | null;
}

/**
 * Reads an agent's posted memtier step with the parsers of one memtier run.
 *
 * @param o The `step` of an agent's result.
 * @param runId The merged run.
 * @returns Its rows and state.
 * @throws {TypeError} For a step that is not a memtier step.
 */
export function readMemtierAgentStep(o: Record<string, unknown>, runId: string): MemtierAgentRun {
  const files = o.files;
  const share = o.share as Record<string, unknown> | undefined;
  if (o.engine !== "memtier" || typeof files !== "object" || files === null || !share) {
    throw new TypeError("step: expected a memtier step (engine, share, files)");
  }
  for (const k of ["threads", "clients", "connections", "rateLimitPerConnection"]) {
    if (typeof share[k] !== "number" || !Number.isInteger(share[k]) || (share[k] as number) < 1) {
      throw new TypeError(`step.share.${k}: expected a whole number ≥ 1`);
    }
  }
  const text = (name: string): string | null => {
    const v = (files as Record<string, unknown>)[name];
    return typeof v === "string" ? v : null;
  };
  const step = o as unknown as MemtierAgentStep;
  const attempt = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch (e) {
      if (e instanceof ParseError) return undefined;
      throw e;
    }
  };
  const jsonText = text("memtier.json");
  const json = jsonText === null
    ? undefined
    : attempt(() => parseMemtierJson(jsonText, { file: "memtier.json" }));
  const report = attempt(() => parseMemtierReport(text("stdout.txt") ?? "", { file: "stdout" }));
  const stderr = parseMemtierProgress(text("stderr.txt") ?? "");
  const hdr: MemtierHdrLog[] = Object.keys(files).filter((n) => n.endsWith(".hgrm")).sort()
    .flatMap((file) => {
      const name = parseHdrFileName(file);
      const log = name ? attempt(() => parseHdrIntervalLog(text(file) ?? "", { file })) : undefined;
      return name && log ? [{ file, name, log }] : [];
    });
  const rows = memtierRows({
    json,
    jsonFile: "memtier.json",
    report,
    stderr,
    hdr,
    settings: {
      threads: share.threads as number,
      connectionsPerThread: share.clients as number,
      rateLimitPerConnection: share.rateLimitPerConnection as number,
      requestCount: false,
    },
  }, runId);
  const totals = rows.results.findLast((r) => r.test === "TOTALS" && r.complete);
  const errText = stderr.other.map((l) => l.text.trim()).filter(Boolean).slice(0, 3).join("; ");
  const problem = step.interrupted
    ? "memtier interrupted"
    : step.timedOut
    ? "memtier timed out"
    : step.exitCode !== 0
    ? `memtier exited with ${step.exitCode}${errText ? `: ${errText}` : ""}`
    : !rows.complete || !totals
    ? rows.reason ?? "no complete TOTALS"
    : null;
  return { step, rows, opsPerSec: totals?.ops_per_sec ?? null, problem };
}

/**
 * One run from several agents' memtier rows: per test (TOTALS, GET, SET), the rates, counts,
 * hits, misses and throughput summed, the latency percentiles read from the sum of the agents'
 * HdrHistograms of that test (the union of their samples), the mean weighted by requests;
 * per-second rate statistics left out (the agents' seconds are their own). The merged
 * histograms are stored as derived `hdr_histograms` rows.
 *
 * @param parts The agents' rows (complete ones).
 * @param runId The merged run.
 * @returns The merged `results` and `hdr_histograms` rows, and warnings.
 *
 * @example
 * ```ts
 * import { mergeMemtierAgents } from "./memtier.ts";
 * import assert from "node:assert/strict";
 * const empty = "HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=";
 * const row = (ops: number) => ({ run_id: "x", test: "TOTALS", complete: true, ops_per_sec: ops,
 *   requests: ops * 2, threads: 1, clients: 2, avg_latency_ms: 1, requested_ops_per_sec: ops });
 * const hdr = { run_id: "x", test: "TOTALS", source: "hgrm", compressed: empty, total_count: 0 };
 * const m = mergeMemtierAgents([
 *   { results: [row(100)], hdr_histograms: [hdr] },
 *   { results: [row(300)], hdr_histograms: [hdr] },
 * ] as never, "r1");
 * assert.equal(m.results[0].ops_per_sec, 400);
 * assert.equal(m.results[0].clients, 4);
 * assert.equal(m.results[0].p99_latency_ms, null); // empty histograms: no percentile
 * ```
 */
export function mergeMemtierAgents(
  parts: readonly Pick<MemtierRows, "results" | "hdr_histograms">[],
  runId: string,
): { results: ResultsRow[]; hdr_histograms: HdrHistogramsRow[]; warnings: string[] } {
  const warnings: string[] = [];
  const results: ResultsRow[] = [];
  const histograms: HdrHistogramsRow[] = [];
  const tests = [...new Set(parts.flatMap((p) => p.results.map((r) => r.test)))];
  tests.forEach((test) => {
    const rows = parts.map((p) =>
      p.results.findLast((r) => r.test === test && r.complete && r.aggregate == null)
    );
    if (rows.some((r) => r === undefined)) {
      warnings.push(`${test}: not every agent has it; left out`);
      return;
    }
    const of = rows as ResultsRow[];
    const sum = (k: keyof ResultsRow) =>
      of.every((r) => typeof r[k] === "number")
        ? of.reduce((n, r) => n + (r[k] as number), 0)
        : null;
    const requests = sum("requests");
    const avg = requests && requests > 0 && of.every((r) => typeof r.avg_latency_ms === "number")
      ? of.reduce((n, r) => n + (r.avg_latency_ms as number) * (r.requests as number), 0) /
        requests
      : null;
    // each agent's histogram of this test: the sum of its `--hdr-file-prefix` interval log
    // (every request, µs, 3 digits), else its JSON block's
    const each = parts.map((p) => {
      const own = p.hdr_histograms.filter((h) => h.test === test && h.aggregate == null);
      const log = own.filter((h) => h.source === "hgrm");
      return (log.length > 0 ? log : own.filter((h) => h.source === "json").slice(-1))
        .map((h) => h.compressed);
    });
    const merged = each.every((h) => h.length > 0) ? mergeMemtierHistograms(each.flat()) : null;
    if (!merged) warnings.push(`${test}: an agent has no histogram; no merged percentiles`);
    const pct = (p: number) => merged ? memtierPercentileMs(merged.histogram, p) : null;
    const testIndex = results.length;
    const mins = of.map((r) => r.min_latency_ms).filter((x): x is number => typeof x === "number");
    results.push({
      ...of[0],
      run_id: runId,
      test_index: testIndex,
      threads: sum("threads"),
      clients: sum("clients"),
      requests,
      duration_s: Math.min(...of.map((r) => Number(r.duration_s ?? Infinity))),
      ops_per_sec: sum("ops_per_sec"),
      hits_per_sec: sum("hits_per_sec"),
      misses_per_sec: sum("misses_per_sec"),
      throughput_kb_per_sec: sum("throughput_kb_per_sec"),
      requested_ops_per_sec: sum("requested_ops_per_sec"),
      error_count: sum("error_count"),
      avg_latency_ms: avg,
      min_latency_ms: mins.length === of.length ? Math.min(...mins) : null,
      p50_latency_ms: pct(50),
      p95_latency_ms: pct(95),
      p99_latency_ms: pct(99),
      p999_latency_ms: pct(99.9),
      max_latency_ms: merged && merged.histogram.totalCount > 0
        ? merged.histogram.maxValue / 1000
        : null,
      rate_avg_ops_per_sec: null,
      rate_min_ops_per_sec: null,
      rate_p50_ops_per_sec: null,
      rate_p95_ops_per_sec: null,
      rate_p99_ops_per_sec: null,
      rate_max_ops_per_sec: null,
      tool_duration_s: Math.max(...of.map((r) => Number(r.tool_duration_s ?? 0))) || null,
    });
    if (merged) {
      const h = merged.histogram;
      histograms.push({
        run_id: runId,
        test_index: testIndex,
        test,
        run_index: of[0].run_index ?? null,
        aggregate: null,
        source: "hgrm",
        source_file: null,
        start_time: null,
        end_time: null,
        lowest_discernible_value_us: h.lowestDiscernibleValue,
        highest_trackable_value_us: h.highestTrackableValue,
        significant_digits: h.numberOfSignificantValueDigits,
        total_count: h.totalCount,
        max_value_us: h.totalCount > 0 ? h.maxValue : null,
        compressed: merged.compressed,
        derived: true,
        latency_basis: null,
        source_line: 0,
      });
    }
  });
  return { results, hdr_histograms: histograms, warnings };
}
