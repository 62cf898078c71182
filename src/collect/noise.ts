/**
 * How quiet the machine was during a run: two snapshots of `/proc/stat`, `/proc/loadavg`, the
 * measured processes' `/proc/<pid>/stat` and the cpufreq governor/turbo files, taken before and
 * after, give other processes' share of the CPUs, steal, iowait, the load before and after, the
 * governor and turbo ("unknown" when unreadable), and whether the client and the server may
 * share CPUs. The parsers and {@link noiseFacts} are pure (text in, numbers out);
 * {@link readNoiseSnapshot} is the one function that reads files.
 *
 * @module
 */

import { parseCpuList } from "../system/cpu_list.ts";
import { readSystemFiles } from "../system/proc.ts";

/** The aggregate `cpu` line of `/proc/stat`, in clock ticks (USER_HZ). */
export interface CpuTimes {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

/** `/proc/stat` as {@link parseProcStat} reads it. */
export interface ProcStat {
  /** The aggregate `cpu` line. */
  total: CpuTimes;
  /** Number of `cpuN` lines (online CPUs). */
  cpus: number;
}

/** A line of `/proc/...` that kvlab cannot read. */
export class ProcParseError extends SyntaxError {
  /** @param file The file. @param line 1-based line. @param text The offending text. */
  constructor(readonly file: string, readonly line: number, readonly text: string) {
    super(`${file}:${line}: cannot read ${JSON.stringify(text.slice(0, 80))}`);
    this.name = "ProcParseError";
  }
}

/**
 * Reads `/proc/stat`: the aggregate `cpu` line (user, nice, system, idle, iowait, irq, softirq,
 * steal; guest time is already inside user) and the number of `cpuN` lines.
 *
 * @param text The file's contents.
 * @returns The CPU times.
 * @throws {ProcParseError} When there is no readable `cpu` line.
 *
 * @example
 * ```ts
 * import { parseProcStat } from "./noise.ts";
 * import assert from "node:assert/strict";
 * const s = parseProcStat("cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 50 0 25 400 5 0 2 18 0 0\ncpu1 50 0 25 400 5 0 3 17 0 0\nctxt 1\n");
 * assert.equal(s.cpus, 2);
 * assert.deepEqual(s.total, { user: 100, nice: 0, system: 50, idle: 800, iowait: 10, irq: 0, softirq: 5, steal: 35 });
 * ```
 */
export function parseProcStat(text: string): ProcStat {
  const lines = text.split("\n");
  let total: CpuTimes | null = null;
  let cpus = 0;
  lines.forEach((line, i) => {
    if (/^cpu\d+\s/.test(line)) cpus++;
    if (!/^cpu\s/.test(line)) return;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    if (v.length < 4 || v.some((x) => !Number.isFinite(x))) {
      throw new ProcParseError("/proc/stat", i + 1, line);
    }
    const at = (k: number) => v[k] ?? 0;
    total = {
      user: at(0),
      nice: at(1),
      system: at(2),
      idle: at(3),
      iowait: at(4),
      irq: at(5),
      softirq: at(6),
      steal: at(7),
    };
  });
  if (total === null) throw new ProcParseError("/proc/stat", 1, lines[0] ?? "");
  return { total, cpus: Math.max(cpus, 1) };
}

/** `/proc/loadavg`. */
export interface LoadAvg {
  load1: number;
  load5: number;
  load15: number;
}

/**
 * Reads `/proc/loadavg`.
 *
 * @param text The file's contents (`0.52 0.58 0.59 1/467 12345`).
 * @returns The 1, 5 and 15 minute load averages.
 * @throws {ProcParseError} For anything else.
 *
 * @example
 * ```ts
 * import { parseLoadAvg } from "./noise.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseLoadAvg("7.27 7.48 4.65 7/173 13505\n"), { load1: 7.27, load5: 7.48, load15: 4.65 });
 * ```
 */
export function parseLoadAvg(text: string): LoadAvg {
  const m = /^\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)/.exec(text);
  if (!m) throw new ProcParseError("/proc/loadavg", 1, text.split("\n")[0]);
  return { load1: Number(m[1]), load5: Number(m[2]), load15: Number(m[3]) };
}

/**
 * CPU time of one process from `/proc/<pid>/stat`: utime + stime, plus cutime + cstime (its
 * children it has waited for: a tool kvlab ran and reaped, a server's fork), in clock ticks. The command name may hold spaces and parentheses: fields are read after the last
 * `)`.
 *
 * @param text The file's contents.
 * @param file Its path, for the error.
 * @returns Clock ticks.
 * @throws {ProcParseError} When the fields are not there.
 *
 * @example
 * ```ts
 * import { parsePidCpuTicks } from "./noise.ts";
 * import assert from "node:assert/strict";
 * const stat = "42 (redis (x)) S 1 42 42 0 -1 4194560 100 0 0 0 300 45 7 3 20 0 4 0 99 0 0";
 * assert.equal(parsePidCpuTicks(stat), 355);
 * ```
 */
export function parsePidCpuTicks(text: string, file = "/proc/<pid>/stat"): number {
  const rest = text.slice(text.lastIndexOf(")") + 1).trim().split(/\s+/);
  // after the name: state(3) ppid … utime is field 14, stime 15 (1-based, name = field 2)
  // cutime 16, cstime 17
  const ticks = [11, 12, 13, 14].map((i) => Number(rest[i]));
  if (!ticks.every(Number.isFinite)) throw new ProcParseError(file, 1, text.split("\n")[0]);
  return ticks.reduce((a, b) => a + b, 0);
}

/**
 * The CPUs a process may run on, from the `Cpus_allowed_list:` line of `/proc/<pid>/status`
 * (`0-3,8`), or null when the line is missing.
 *
 * @example
 * ```ts
 * import { parseCpusAllowed } from "./noise.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseCpusAllowed("Name:\tx\nCpus_allowed_list:\t0-2,5\n"), [0, 1, 2, 5]);
 * assert.equal(parseCpusAllowed("Name:\tx\n"), null);
 * ```
 */
export function parseCpusAllowed(status: string): number[] | null {
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  if (!m) return null;
  try {
    return parseCpuList(m[1]);
  } catch {
    return null; // not a list the kernel writes: unknown
  }
}

/**
 * The cpufreq governor of CPU 0 and whether turbo is on, from the text of
 * `/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor`, `…/intel_pstate/no_turbo` (1: off)
 * and `…/cpufreq/boost` (1: on); each null when unreadable (containers, VMs), giving "unknown".
 *
 * @example
 * ```ts
 * import { cpuFrequencyFacts } from "./noise.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(cpuFrequencyFacts({ governor: "powersave\n", noTurbo: "0\n" }), { governor: "powersave", turbo: "on" });
 * assert.deepEqual(cpuFrequencyFacts({}), { governor: "unknown", turbo: "unknown" });
 * ```
 */
export function cpuFrequencyFacts(
  files: { governor?: string | null; noTurbo?: string | null; boost?: string | null },
): { governor: string; turbo: "on" | "off" | "unknown" } {
  const governor = files.governor?.trim() || "unknown";
  const noTurbo = files.noTurbo?.trim();
  const boost = files.boost?.trim();
  const turbo = noTurbo === "1"
    ? "off"
    : noTurbo === "0"
    ? "on"
    : boost === "1"
    ? "on"
    : boost === "0"
    ? "off"
    : "unknown";
  return { governor, turbo };
}

/** The texts of one moment, as {@link readNoiseSnapshot} reads them (null: unreadable). */
export interface NoiseSnapshot {
  /** `/proc/stat`. */
  stat: string;
  /** `/proc/loadavg`. */
  loadavg: string;
  /** `/proc/<pid>/stat` of each measured process (the tool, the server), by pid. */
  pids: Record<number, string | null>;
  /** `scaling_governor` of CPU 0. */
  governor?: string | null;
  /** `intel_pstate/no_turbo`. */
  noTurbo?: string | null;
  /** `cpufreq/boost`. */
  boost?: string | null;
}

/** How quiet the machine was between two snapshots. */
export interface NoiseFacts {
  /** Online CPUs. */
  cpus: number;
  /** Busy CPU time of every process but the measured ones, % of all CPUs' time. */
  otherCpuPct: number;
  /** CPU time the measured processes used, % of all CPUs' time (null when none was given). */
  ownCpuPct: number | null;
  /** Time the hypervisor gave to others, % of all CPUs' time. */
  stealPct: number;
  /** Idle time waiting for I/O, % of all CPUs' time. */
  iowaitPct: number;
  load1Before: number;
  load1After: number;
  /** The governor, or "unknown". */
  cpuGovernor: string;
  cpuTurbo: "on" | "off" | "unknown";
}

/**
 * What happened on the machine between two snapshots. Other processes' share is the busy time
 * of `/proc/stat` (user, nice, system, irq, softirq) less the measured processes' own
 * (utime + stime of the pids present in both snapshots), over all CPUs' time.
 *
 * @param before The snapshot before the run.
 * @param after The snapshot after.
 * @returns The facts.
 * @throws {ProcParseError} For a snapshot kvlab cannot read.
 *
 * @example
 * ```ts
 * import { noiseFacts } from "./noise.ts";
 * import assert from "node:assert/strict";
 * const pid = "1 (x) R 0 0 0 0 0 0 0 0 0 0 UT ST 0 0";
 * const before = { stat: "cpu  0 0 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n", loadavg: "0.10 0 0 1/1 1", pids: { 1: pid.replace("UT", "0").replace("ST", "0") } };
 * // 200 ticks on 2 CPUs: 100 busy, of which 60 are the measured process; 10 steal
 * const after = { stat: "cpu  90 0 10 90 0 0 0 10\ncpu0 0\ncpu1 0\n", loadavg: "1.50 0 0 1/1 1", pids: { 1: pid.replace("UT", "50").replace("ST", "10") } };
 * const f = noiseFacts(before, after);
 * assert.deepEqual([f.otherCpuPct, f.ownCpuPct, f.stealPct, f.load1After, f.cpuGovernor], [20, 30, 5, 1.5, "unknown"]);
 * ```
 */
export function noiseFacts(before: NoiseSnapshot, after: NoiseSnapshot): NoiseFacts {
  const a = parseProcStat(before.stat), b = parseProcStat(after.stat);
  const d = (k: keyof CpuTimes) => Math.max(0, b.total[k] - a.total[k]);
  const busy = d("user") + d("nice") + d("system") + d("irq") + d("softirq");
  const all = busy + d("idle") + d("iowait") + d("steal");
  let own: number | null = null;
  for (const [pid, text] of Object.entries(after.pids)) {
    const was = before.pids[Number(pid)];
    if (!text || !was) continue;
    own = (own ?? 0) + Math.max(0, parsePidCpuTicks(text) - parsePidCpuTicks(was));
  }
  const pct = (x: number) => (all > 0 ? (x / all) * 100 : 0);
  const freq = cpuFrequencyFacts(after);
  return {
    cpus: b.cpus,
    otherCpuPct: pct(Math.max(0, busy - (own ?? 0))),
    ownCpuPct: own === null ? null : pct(own),
    stealPct: pct(d("steal")),
    iowaitPct: pct(d("iowait")),
    load1Before: parseLoadAvg(before.loadavg).load1,
    load1After: parseLoadAvg(after.loadavg).load1,
    cpuGovernor: freq.governor,
    cpuTurbo: freq.turbo,
  };
}

/** Limits of {@link disturbance}. */
export interface DisturbanceOptions {
  /** Other processes' CPU share above this (% of all CPUs) disturbs a run. @default {10} */
  maxOtherCpuPct?: number;
  /** Steal above this (%) disturbs a run. @default {2} */
  maxStealPct?: number;
  /** iowait above this (%) disturbs a run. @default {5} */
  maxIowaitPct?: number;
}

/**
 * Why a run was disturbed, or null when it was quiet: other processes' CPU, steal, iowait
 * above their limits, or a 1-minute load above the number of CPUs after the run.
 *
 * @example
 * ```ts
 * import { disturbance } from "./noise.ts";
 * import assert from "node:assert/strict";
 * const quiet = { cpus: 2, otherCpuPct: 1, ownCpuPct: 60, stealPct: 0, iowaitPct: 0, load1Before: 0.5, load1After: 1.2, cpuGovernor: "unknown", cpuTurbo: "unknown" as const };
 * assert.equal(disturbance(quiet), null);
 * assert.equal(disturbance({ ...quiet, otherCpuPct: 48.6 }), "other processes used 49 % of the CPUs");
 * ```
 */
export function disturbance(f: NoiseFacts, options: DisturbanceOptions = {}): string | null {
  const why: string[] = [];
  if (f.otherCpuPct > (options.maxOtherCpuPct ?? 10)) {
    why.push(`other processes used ${Math.round(f.otherCpuPct)} % of the CPUs`);
  }
  if (f.stealPct > (options.maxStealPct ?? 2)) why.push(`steal ${f.stealPct.toFixed(1)} %`);
  if (f.iowaitPct > (options.maxIowaitPct ?? 5)) why.push(`iowait ${f.iowaitPct.toFixed(1)} %`);
  if (f.load1After > f.cpus) why.push(`load ${f.load1After} on ${f.cpus} CPUs`);
  return why.length ? why.join("; ") : null;
}

/**
 * Whether two processes may run on a common CPU (their `Cpus_allowed_list` overlap), or null
 * when either status is missing. Unpinned processes always may.
 *
 * @example
 * ```ts
 * import { shareCpus } from "./noise.ts";
 * import assert from "node:assert/strict";
 * assert.equal(shareCpus("Cpus_allowed_list:\t0\n", "Cpus_allowed_list:\t1\n"), false);
 * assert.equal(shareCpus("Cpus_allowed_list:\t0-1\n", "Cpus_allowed_list:\t1\n"), true);
 * assert.equal(shareCpus(null, "Cpus_allowed_list:\t1\n"), null);
 * ```
 */
export function shareCpus(client: string | null, server: string | null): boolean | null {
  const a = client ? parseCpusAllowed(client) : null;
  const b = server ? parseCpusAllowed(server) : null;
  if (!a || !b) return null;
  return a.some((c) => b.includes(c));
}

/**
 * Reads a {@link NoiseSnapshot} now: `/proc/stat`, `/proc/loadavg`, each pid's
 * `/proc/<pid>/stat` (null for a process that is gone) and the cpufreq files (null when
 * unreadable). The only function of this module that touches files.
 *
 * @param pids The measured processes (the tool, the server).
 * @returns The snapshot.
 * @throws {Deno.errors.NotFound} Without `/proc` (not Linux).
 */
export function readNoiseSnapshot(pids: readonly number[] = []): NoiseSnapshot {
  const cpu = "/sys/devices/system/cpu";
  const files = {
    stat: "/proc/stat",
    loadavg: "/proc/loadavg",
    governor: `${cpu}/cpu0/cpufreq/scaling_governor`,
    noTurbo: `${cpu}/intel_pstate/no_turbo`,
    boost: `${cpu}/cpufreq/boost`,
  };
  const read = readSystemFiles([...Object.values(files), ...pids.map((p) => `/proc/${p}/stat`)]);
  const stat = read[files.stat], loadavg = read[files.loadavg];
  if (stat === null || loadavg === null) {
    throw new Deno.errors.NotFound("no /proc/stat or /proc/loadavg (not Linux?)");
  }
  return {
    stat,
    loadavg,
    pids: Object.fromEntries(pids.map((p) => [p, read[`/proc/${p}/stat`]])),
    governor: read[files.governor],
    noTurbo: read[files.noTurbo],
    boost: read[files.boost],
  };
}

/** The noise columns of a `runs` row (schema 1.4); all null when the run was not measured. */
export interface NoiseRunColumns {
  noise_other_cpu_pct: number | null;
  noise_own_cpu_pct: number | null;
  noise_steal_pct: number | null;
  noise_iowait_pct: number | null;
  load1_before: number | null;
  load1_after: number | null;
  cpu_governor: string | null;
  cpu_turbo: string | null;
  client_server_share_cpus: boolean | null;
  noise_disturbance: string | null;
}

/** What a collector knows besides the two snapshots. */
export interface NoiseRunFacts {
  /** CPU seconds of a server on this machine over the run (INFO), counted as measured. */
  serverCpuS?: number | null;
  /** Whether the client and the server may share CPUs (see {@link shareCpus}). */
  shareCpus?: boolean | null;
}

/** Clock ticks per second of `/proc` times (USER_HZ, 100 on every Linux kvlab runs on). */
export const USER_HZ = 100;

/**
 * The `runs` noise columns of one run: {@link noiseFacts} of the snapshots taken just before and
 * after it, with a local server's CPU (from INFO) counted as measured, not as another process's,
 * and {@link disturbance}'s reason.
 *
 * @param before The snapshot before the run, or null when none could be taken.
 * @param after The snapshot after, or null.
 * @param facts The server's CPU and CPU sharing.
 * @returns The columns (all null without both snapshots).
 *
 * @example
 * ```ts
 * import { noiseRunColumns } from "./noise.ts";
 * import assert from "node:assert/strict";
 * const before = { stat: "cpu  0 0 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n", loadavg: "0.1 0 0 1/1 1", pids: {} };
 * // 2 CPUs for 1 s (200 ticks): 120 busy, of which a local server used 0.6 s (60 ticks)
 * const after = { stat: "cpu  100 0 20 80 0 0 0 0\ncpu0 0\ncpu1 0\n", loadavg: "0.9 0 0 1/1 1", pids: {} };
 * const c = noiseRunColumns(before, after, { serverCpuS: 0.6 });
 * assert.deepEqual([c.noise_other_cpu_pct, c.noise_own_cpu_pct], [30, 30]);
 * assert.equal(c.noise_disturbance, "other processes used 30 % of the CPUs");
 * assert.equal(noiseRunColumns(null, after, {}).noise_other_cpu_pct, null);
 * ```
 */
export function noiseRunColumns(
  before: NoiseSnapshot | null,
  after: NoiseSnapshot | null,
  facts: NoiseRunFacts,
): NoiseRunColumns {
  if (!before || !after) {
    return {
      noise_other_cpu_pct: null,
      noise_own_cpu_pct: null,
      noise_steal_pct: null,
      noise_iowait_pct: null,
      load1_before: null,
      load1_after: null,
      cpu_governor: null,
      cpu_turbo: null,
      client_server_share_cpus: facts.shareCpus ?? null,
      noise_disturbance: null,
    };
  }
  const f = noiseFacts(before, after);
  const a = parseProcStat(before.stat).total, b = parseProcStat(after.stat).total;
  const all = (Object.keys(b) as (keyof CpuTimes)[])
    .reduce((sum, k) => sum + Math.max(0, b[k] - a[k]), 0);
  const serverPct = all > 0 ? Math.max(0, (facts.serverCpuS ?? 0) * USER_HZ / all * 100) : 0;
  const counted = Math.min(serverPct, f.otherCpuPct);
  const adjusted = { ...f, otherCpuPct: f.otherCpuPct - counted };
  const own = f.ownCpuPct === null && counted === 0 ? null : (f.ownCpuPct ?? 0) + counted;
  return {
    noise_other_cpu_pct: adjusted.otherCpuPct,
    noise_own_cpu_pct: own,
    noise_steal_pct: f.stealPct,
    noise_iowait_pct: f.iowaitPct,
    load1_before: f.load1Before,
    load1_after: f.load1After,
    cpu_governor: f.cpuGovernor,
    cpu_turbo: f.cpuTurbo,
    client_server_share_cpus: facts.shareCpus ?? null,
    noise_disturbance: disturbance(adjusted),
  };
}
