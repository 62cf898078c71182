/**
 * Reads a `memtier_benchmark …` command line typed in a transcript: the settings its rows need
 * (with memtier's defaults for flags not given) and the server it ran against. Pure.
 *
 * @module
 */

import type { Transport } from "../format.ts";
import type { MemtierSettings } from "./rows.ts";
import { redactUrl } from "../../../text/redact.ts";

/** memtier_benchmark 2.x's defaults for the settings a row needs. */
export const MEMTIER_DEFAULTS: Required<MemtierSettings> = {
  threads: 4,
  connectionsPerThread: 50,
  pipeline: 1,
  dataSizeBytes: 32,
  keyMinimum: 0,
  keyMaximum: 10_000_000,
  rateLimitPerConnection: null,
  requestCount: true,
};

/** What a memtier command line says. */
export interface MemtierCommandFacts {
  /** Settings, memtier's defaults where a flag is absent. */
  settings: Required<MemtierSettings>;
  /** `host:port` or `unix:path`, credentials redacted. */
  target: string;
  transport: Transport;
}

/** Long and short names of the flags read, by setting. */
const FLAGS: Record<string, string> = {
  "-s": "server",
  "--server": "server",
  "-p": "port",
  "--port": "port",
  "-S": "socket",
  "--unix-socket": "socket",
  "-t": "threads",
  "--threads": "threads",
  "-c": "clients",
  "--clients": "clients",
  "-d": "data",
  "--data-size": "data",
  "--pipeline": "pipeline",
  "--key-minimum": "min",
  "--key-maximum": "max",
  "--rate-limiting": "rate",
  "--test-time": "time",
  "-u": "uri",
  "--uri": "uri",
};

/**
 * Reads memtier_benchmark's arguments (`-t 2`, `-t2`, `--threads=2`, `--threads 2`).
 *
 * @param args The arguments after the program.
 * @returns Settings with memtier's defaults, and the target.
 *
 * @example
 * ```ts
 * import { memtierCommandFacts } from "./flags.ts";
 * import assert from "node:assert/strict";
 * const f = memtierCommandFacts(["-s", "db", "-p", "7000", "-t2", "--clients=10", "--rate-limiting", "5"]);
 * assert.equal(f.target, "db:7000");
 * assert.deepEqual(f.settings, {
 *   threads: 2, connectionsPerThread: 10, pipeline: 1, dataSizeBytes: 32,
 *   keyMinimum: 0, keyMaximum: 10000000, rateLimitPerConnection: 5, requestCount: true,
 * });
 * ```
 */
export function memtierCommandFacts(args: readonly string[]): MemtierCommandFacts {
  const v: Record<string, string> = {};
  let tls = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--tls") tls = true;
    const eq = a.indexOf("=");
    const name = a.startsWith("--") && eq > 0 ? a.slice(0, eq) : a;
    if (FLAGS[name]) {
      if (name !== a) v[FLAGS[name]] = a.slice(eq + 1);
      else if (i + 1 < args.length) v[FLAGS[name]] = args[++i];
    } else if (/^-[stcdpS]./.test(a) && FLAGS[a.slice(0, 2)]) {
      v[FLAGS[a.slice(0, 2)]] = a.slice(2);
    }
  }
  const num = (k: string, d: number | null): number | null => {
    const n = v[k] === undefined ? NaN : Number(v[k]);
    return Number.isFinite(n) ? n : d;
  };
  const d = MEMTIER_DEFAULTS;
  const settings = {
    threads: num("threads", d.threads),
    connectionsPerThread: num("clients", d.connectionsPerThread),
    pipeline: num("pipeline", d.pipeline),
    dataSizeBytes: num("data", d.dataSizeBytes),
    keyMinimum: num("min", d.keyMinimum),
    keyMaximum: num("max", d.keyMaximum),
    rateLimitPerConnection: num("rate", null) || null,
    // memtier runs a count of requests unless given a test time
    requestCount: v.time === undefined,
  };
  if (v.socket !== undefined) return { settings, target: `unix:${v.socket}`, transport: "unix" };
  const target = v.uri !== undefined
    ? redactUrl(v.uri)
    : redactUrl(`${v.server ?? "localhost"}:${v.port ?? "6379"}`);
  const transport = tls || /^rediss:/.test(v.uri ?? "") ? "tls" : "tcp";
  return { settings, target, transport };
}
