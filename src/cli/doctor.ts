/**
 * `kvlab doctor`: whether this machine is quiet enough to benchmark on, in the spirit of
 * `pyperf system show`: what it checked (CPUs, load, other processes' CPU over a short sample,
 * steal, iowait, CPU governor and turbo, the tools kvlab drives) and what it recommends. First, it
 * puts back on its CPUs a server a kvlab killed mid-plan left pinned (`collect/plan/pin.ts`).
 *
 * @module
 */

import { readSystemFiles } from "../system/proc.ts";
import type { Command, OptionValues } from "commander";
import {
  disturbance,
  type NoiseFacts,
  noiseFacts,
  parseCpusAllowed,
  readNoiseSnapshot,
} from "../collect/noise.ts";
import { findTool } from "../collect/tools/find.ts";
import { restoreLeftPins } from "../collect/plan/pin.ts";
import { DenoProcessRunner } from "../collect/process.ts";
import { type Output, readOptions } from "./_exit.ts";
import { seconds } from "./_options.ts";

/** What `kvlab doctor` samples. */
export interface DoctorCommandOptions {
  /** How long to watch the machine, seconds (0.1–60). @default {1} */
  sampleS: number;
}

/**
 * Reads `kvlab doctor`'s options.
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {TypeError} For a sample that is not 0.1–60 seconds.
 *
 * @example
 * ```ts
 * import { doctorOptions } from "./doctor.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(doctorOptions({ sampleS: "2" }), { sampleS: 2 });
 * assert.throws(() => doctorOptions({ sampleS: "0" }), /invalid --sample-s: 0 \(expected 0\.1 to 60 seconds\)/);
 * ```
 */
export function doctorOptions(raw: OptionValues): DoctorCommandOptions {
  const s = seconds("--sample-s", String(raw.sampleS ?? "1"));
  if (s < 0.1 || s > 60) {
    throw new TypeError(`invalid --sample-s: ${s} (expected 0.1 to 60 seconds)`);
  }
  return { sampleS: s };
}

/** The tools kvlab drives, looked up as kvlab finds them (PATH, then its tools cache). */
const TOOLS = [
  "redis-server",
  "redis-benchmark",
  "redis-cli",
  "valkey-server",
  "valkey-benchmark",
  "memtier_benchmark",
];

/** A value from a file, shown safely: word characters only. */
const safe = (s: string) => s.replace(/[^\w.+-]/g, "?").slice(0, 40);

/**
 * The report's lines from what was measured: what was checked, then recommendations and a
 * one-line verdict. Pure.
 *
 * @param f The machine's noise over the sample.
 * @param machine The sample's length (`sampleS`), each tool and where it was found (`tools`;
 * null: not found), and how many CPUs kvlab itself may run on (`allowedCpus`; null: unknown).
 * @returns The lines.
 *
 * @example
 * ```ts
 * import { doctorReport } from "./doctor.ts";
 * import assert from "node:assert/strict";
 * const f = { cpus: 2, otherCpuPct: 48, ownCpuPct: null, stealPct: 0, iowaitPct: 0, load1Before: 3, load1After: 3.1, cpuGovernor: "unknown", cpuTurbo: "unknown" as const };
 * const lines = doctorReport(f, {
 *   sampleS: 1,
 *   tools: { "redis-server": "/usr/bin/redis-server" },
 *   allowedCpus: null,
 * });
 * assert.ok(lines.includes("  other processes   48 % of the CPUs   busy"));
 * assert.equal(lines.at(-1), "verdict: not ready (2 problems: other processes used 48 % of the CPUs; load 3.1 on 2 CPUs)");
 * ```
 */
export function doctorReport(
  f: NoiseFacts,
  machine: { sampleS: number; tools: Record<string, string | null>; allowedCpus: number | null },
): string[] {
  const { sampleS, tools, allowedCpus } = machine;
  const pct = (x: number) => `${x < 10 ? x.toFixed(1) : Math.round(x)} %`;
  const flag = (bad: boolean) => (bad ? "   busy" : "   ok");
  const lines = [
    `kvlab doctor: is this machine quiet enough to benchmark on? (checked over ${sampleS} s)`,
    "",
    `  CPUs              ${f.cpus}`,
    `  load average      ${f.load1Before} before, ${f.load1After} after (1 min)${
      flag(f.load1After > f.cpus)
    }`,
    `  other processes   ${pct(f.otherCpuPct)} of the CPUs${flag(f.otherCpuPct > 10)}`,
    `  steal             ${pct(f.stealPct)}${flag(f.stealPct > 2)}`,
    `  iowait            ${pct(f.iowaitPct)}${flag(f.iowaitPct > 5)}`,
    `  CPU governor      ${safe(f.cpuGovernor)}${
      f.cpuGovernor === "unknown" ? "   (no cpufreq in /sys: a VM or a container?)" : ""
    }`,
    `  turbo boost       ${f.cpuTurbo}`,
    `  kvlab's CPUs      ${
      allowedCpus === null
        ? "unknown"
        : allowedCpus >= f.cpus
        ? `all ${f.cpus} (not pinned: client and server may share CPUs)`
        : `pinned to ${allowedCpus} of ${f.cpus}`
    }`,
    ...Object.entries(tools).map(([t, p]) => `  ${t.padEnd(18)}${p ?? "not found"}`),
    "",
  ];
  const advice: string[] = [];
  if (f.load1After > f.cpus || f.otherCpuPct > 10) {
    advice.push(
      "stop other jobs or wait until the machine is idle: other processes' CPU is measured " +
        "into every run",
    );
  }
  if (f.stealPct > 2) advice.push("steal time: a busy VM host; prefer dedicated hardware");
  if (f.cpuGovernor !== "unknown" && f.cpuGovernor !== "performance") {
    advice.push("set the CPU governor to performance (sudo cpupower frequency-set -g performance)");
  }
  if (f.cpuTurbo === "on") advice.push("disable turbo boost for stable clock speeds");
  advice.push(
    "pin the server and the client to separate CPUs, as Redis's own benchmark CI does: give " +
      'the plan cpus: { client: "1", server: "0" } (kvlab runs its tools under taskset -c 1, or ' +
      "pins itself, and pins a local server for the plan's duration)",
    "repeat each cell 5 or more times, interleaved (plan: repetitions: 5): compare needs 4 runs " +
      "per arm for any verdict",
  );
  lines.push("recommendations:", ...advice.map((a) => `  - ${a}`), "");
  const why = disturbance(f);
  const problems = why ? why.split("; ") : [];
  lines.push(
    problems.length
      ? `verdict: not ready (${problems.length} problem${problems.length > 1 ? "s" : ""}: ${why})`
      : "verdict: ready (quiet over the sample; a run's own numbers still need repetitions)",
  );
  return lines;
}

/**
 * Watches the machine for `sampleS` seconds and prints the report.
 *
 * @param o The sample's length.
 * @param out Where to print.
 * @throws {Deno.errors.NotFound} Without `/proc` (not Linux).
 */
export async function doctorCommand(o: DoctorCommandOptions, out: Output): Promise<void> {
  // processes a kvlab killed mid-plan left pinned (kill -9) go back on their CPUs first
  for (const line of await restoreLeftPins(new DenoProcessRunner())) out.print(`${line}\n`);
  const before = readNoiseSnapshot();
  await new Promise((r) => setTimeout(r, o.sampleS * 1000));
  const after = readNoiseSnapshot();
  const tools = Object.fromEntries(TOOLS.map((t) => [t, findTool(t)]));
  let allowed: number[] | null = null;
  try {
    allowed = parseCpusAllowed(
      readSystemFiles([`/proc/${Deno.pid}/status`])[`/proc/${Deno.pid}/status`] ?? "",
    );
  } catch {
    // not Linux: unknown
  }
  out.print(
    doctorReport(noiseFacts(before, after), {
      sampleS: o.sampleS,
      tools,
      allowedCpus: allowed?.length ?? null,
    }).join("\n") +
      "\n",
  );
}

/**
 * Declares `kvlab doctor`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link doctorCommand} does the work.
 */
export function declareDoctor(program: Command, out: Output): void {
  program.command("doctor")
    .description(
      "Check whether this machine is quiet enough to benchmark on (CPUs, load, other processes' " +
        "CPU, steal, iowait, CPU governor and turbo, the tools kvlab drives) and say what to " +
        "change; first put back a server a killed kvlab left pinned.",
    )
    .option("--sample-s <s>", "how long to watch the machine, seconds", "1")
    .action((opts) => doctorCommand(readOptions(() => doctorOptions(opts)), out));
}
