/**
 * Facts about the machine a benchmark tool runs on: CPU model and count, memory, kernel, OS,
 * Deno version, and the tool's own `--version`.
 *
 * @module
 */

import type { ProcessRunner } from "./process.ts";

/** Host facts stored with every collected run. */
export interface HostFacts {
  hostname: string;
  cpuModel: string | null;
  cpuCount: number;
  memoryBytes: number | null;
  kernel: string;
  os: string | null;
  denoVersion: string;
}

function readText(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/** Reads the host facts (Linux /proc and /etc/os-release where present). */
export function hostFacts(): HostFacts {
  const cpuinfo = readText("/proc/cpuinfo");
  const model = cpuinfo ? /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? null : null;
  const osRelease = readText("/etc/os-release");
  const os = osRelease ? /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(osRelease)?.[1] ?? null : null;
  let memoryBytes: number | null = null;
  try {
    memoryBytes = Deno.systemMemoryInfo().total;
  } catch { /* not permitted */ }
  return {
    hostname: Deno.hostname(),
    cpuModel: model,
    cpuCount: navigator.hardwareConcurrency,
    memoryBytes,
    kernel: Deno.osRelease(),
    os,
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
