/**
 * Facts about the machine a benchmark tool runs on: CPU model and count, memory, kernel, OS,
 * Deno version, and the tool's own `--version`.
 *
 * @module
 */

import os from "node:os";
import type { ProcessRunner } from "./process.ts";

/** Host facts stored with every collected run. */
export interface HostFacts {
  /** The machine's name. */
  hostname: string;
  /** CPU model, e.g. `AMD EPYC 7B13`; null when it cannot be read. */
  cpuModel: string | null;
  /** Logical CPUs. */
  cpuCount: number;
  /** Total memory; null when it cannot be read. */
  memoryBytes: number | null;
  /** Kernel release. */
  kernel: string;
  /** Operating system (`PRETTY_NAME` of `/etc/os-release`). */
  os: string | null;
  /** Deno version kvlab runs on. */
  denoVersion: string;
}

function readText(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/**
 * The CPU model and logical CPU count. `node:os` `cpus()` needs only `--allow-sys` (the
 * permission kvlab's tasks grant); `/proc/cpuinfo`, which Deno lets only `--allow-all` read, is
 * the fallback for a model `cpus()` leaves empty.
 */
function cpuFacts(): { cpuModel: string | null; cpuCount: number } {
  let cpus: { model: string }[] = [];
  try {
    cpus = os.cpus();
  } catch { /* not permitted */ }
  let model = cpus.map((c) => c.model.trim()).find((m) => m !== "") ?? null;
  if (model === null) {
    const cpuinfo = readText("/proc/cpuinfo");
    model = cpuinfo ? /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? null : null;
  }
  return { cpuModel: model, cpuCount: cpus.length || navigator.hardwareConcurrency };
}

/**
 * Reads the host facts: CPU model and count, memory, kernel, OS (`/etc/os-release`), Deno
 * version. Works under `--allow-read --allow-sys`; a fact that cannot be read is null.
 *
 * @returns The facts.
 *
 * @example
 * ```ts
 * import { hostFacts } from "./host.ts";
 * import assert from "node:assert/strict";
 * const h = hostFacts();
 * assert.ok(h.cpuCount >= 1);
 * assert.equal(h.denoVersion, Deno.version.deno);
 * ```
 */
export function hostFacts(): HostFacts {
  const osRelease = readText("/etc/os-release");
  const osName = osRelease ? /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(osRelease)?.[1] ?? null : null;
  let memoryBytes: number | null = null;
  try {
    memoryBytes = Deno.systemMemoryInfo().total;
  } catch { /* not permitted */ }
  return {
    hostname: Deno.hostname(),
    ...cpuFacts(),
    memoryBytes,
    kernel: Deno.osRelease(),
    os: osName,
    denoVersion: Deno.version.deno,
  };
}

/**
 * Runs `TOOL --version` and returns the version it prints (`redis-benchmark 7.0.15` →
 * `7.0.15`; `valkey-benchmark 8.0.1` → `8.0.1`), or null when it prints none.
 */
export async function toolVersion(runner: ProcessRunner, tool: string): Promise<string | null> {
  try {
    const r = await runner.run({ argv: [tool, "--version"], timeoutMs: 10_000, capture: true });
    const text = new TextDecoder().decode(r.stdout ?? new Uint8Array()) + " " +
      new TextDecoder().decode(r.stderr ?? new Uint8Array());
    return /(?:v=|\s|^)(\d+\.\d+\.\d+)\b/.exec(text)?.[1] ?? null;
  } catch {
    return null;
  }
}
