/**
 * The flag grammar of redis-benchmark / valkey-benchmark: the flags that change what a result
 * means (clients, payload, pipeline, …) read from a command line ({@link parseBenchmarkArgs}) and
 * written into one ({@link benchmarkArgv}), as redis-benchmark 7.x and valkey-benchmark 8.x
 * define them.
 *
 * @module
 */

import type { Transport } from "../format.ts";

/**
 * The flags of a redis-benchmark / valkey-benchmark command line: what
 * {@link parseBenchmarkArgs} reads from one, and what {@link benchmarkArgv} builds one from.
 * Fields are `undefined` when the flag is absent; {@link BENCHMARK_DEFAULTS} gives the tool's
 * defaults.
 */
export interface BenchmarkArgs {
  /** `-h` */
  host?: string;
  /** `-p` */
  port?: number;
  /** `-s` */
  socket?: string;
  /** `--user` (ACL user). */
  user?: string;
  /**
   * `-a`: for building an argv only. The parser never keeps it, and stored commands show `***`
   * (see `redactArgv`).
   */
  password?: string;
  /** `--dbnum` */
  db?: number;
  /** `-c` */
  clients?: number;
  /** `-n` */
  requests?: number;
  /** `-d` */
  dataSizeBytes?: number;
  /** `-P` */
  pipeline?: number;
  /** `--threads` */
  threads?: number;
  /** `-r` */
  keyspace?: number;
  /** Test names given with `-t`, lower-cased as written. */
  tests?: string[];
  /** `-q` */
  quiet: boolean;
  /** `--csv` */
  csv: boolean;
  /** `-l` */
  loop: boolean;
  /** `-k 1` / `-k 0` */
  keepAlive?: boolean;
  /** `--tls`, `--rdma`, `-s` (unix) or plain TCP. */
  transport: Transport;
  /** `--rps` (valkey-benchmark 8.1+): requested requests per second. */
  requestedOpsPerSec?: number;
  /** A custom command given after the options (`redis-benchmark … SET k v`). */
  customCommand?: string[];
  /** Options kvlab did not recognize, kept for the record (and passed on as they are). */
  unknown: string[];
}

/** The defaults redis-benchmark and valkey-benchmark use when a flag is absent. */
export const BENCHMARK_DEFAULTS = {
  clients: 50,
  requests: 100000,
  dataSizeBytes: 3,
  pipeline: 1,
  threads: 1,
} as const;

type NumberField = {
  [K in keyof BenchmarkArgs]-?: NonNullable<BenchmarkArgs[K]> extends number ? K : never;
}[keyof BenchmarkArgs];

// The flags that set one number, in the order benchmarkArgv writes them (after the connection).
const RUN_NUMBER_FLAGS: readonly (readonly [string, NumberField])[] = [
  ["-c", "clients"],
  ["-n", "requests"],
  ["-d", "dataSizeBytes"],
  ["-P", "pipeline"],
  ["--threads", "threads"],
  ["-r", "keyspace"],
  ["--rps", "requestedOpsPerSec"],
];
const NUMBER_FLAGS = new Map<string, NumberField>([
  ["-p", "port"],
  ["--dbnum", "db"],
  ...RUN_NUMBER_FLAGS,
]);

// Options that take a value, and those that do not, as redis-benchmark 7.x / valkey-benchmark 8.x
// define them.
const WITH_VALUE = new Set([
  "-h",
  "-p",
  "-s",
  "-a",
  "--user",
  "-u",
  "-c",
  "-n",
  "-d",
  "--dbnum",
  "--threads",
  "-k",
  "-r",
  "-P",
  "-t",
  "--precision",
  "--sni",
  "--cacert",
  "--cacertdir",
  "--cert",
  "--key",
  "--tls-ciphers",
  "--tls-ciphersuites",
  "--rps",
  "--seed",
  "--num-functions",
  "--num-keys-in-fcall",
  "--warmup",
  "--duration",
  "-x",
]);

/**
 * Reads the arguments of a redis-benchmark / valkey-benchmark command line.
 *
 * @param args The words after the program name.
 * @returns What the flags say; see {@link BenchmarkArgs}.
 * @throws {TypeError} When a flag that takes a number is given something else.
 *
 * @example
 * ```ts
 * import { parseBenchmarkArgs } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const a = parseBenchmarkArgs(["-c", "30", "-d", "512", "--threads", "8", "-t", "ping,set", "--rdma"]);
 * assert.equal(a.clients, 30);
 * assert.equal(a.dataSizeBytes, 512);
 * assert.equal(a.threads, 8);
 * assert.deepEqual(a.tests, ["ping", "set"]);
 * assert.equal(a.transport, "rdma");
 * assert.equal(parseBenchmarkArgs(["-a", "secret"]).password, undefined);
 * ```
 */
export function parseBenchmarkArgs(args: readonly string[]): BenchmarkArgs {
  const out: BenchmarkArgs = {
    quiet: false,
    csv: false,
    loop: false,
    transport: "tcp",
    unknown: [],
  };
  let tls = false;
  let rdma = false;
  let i = 0;
  for (; i < args.length; i++) {
    let a = args[i];
    let value: string | undefined;
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    if (eq > 0) {
      value = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    if (!a.startsWith("-") || a === "-") break; // the custom command starts here
    if (a === "--") {
      i++;
      break;
    }
    if (WITH_VALUE.has(a) && value === undefined) value = args[++i];
    const num = (): number => {
      const n = Number(value);
      if (value === undefined || value === "" || !Number.isFinite(n)) {
        throw new TypeError(`invalid value for ${a}: expected a number, got ${String(value)}`);
      }
      return n;
    };
    const field = NUMBER_FLAGS.get(a);
    if (field) {
      out[field] = num();
      continue;
    }
    switch (a) {
      case "-h":
        out.host = value;
        break;
      case "-s":
        out.socket = value;
        break;
      case "--user":
        out.user = value;
        break;
      case "-k":
        out.keepAlive = num() !== 0;
        break;
      case "-t":
        out.tests = (value ?? "").split(",").map((t) => t.trim().toLowerCase()).filter(Boolean);
        break;
      case "-q":
        out.quiet = true;
        break;
      case "--csv":
        out.csv = true;
        break;
      case "-l":
        out.loop = true;
        break;
      case "--tls":
        tls = true;
        break;
      case "--rdma":
        rdma = true;
        break;
      case "-u": {
        // -u <uri>: redis[s]://[user[:pass]@]host[:port][/db] or unix:// paths
        const uri = value ?? "";
        if (uri.startsWith("rediss://") || uri.startsWith("valkeys://")) tls = true;
        const m = /^[a-z]+:\/\/(?:[^@/]*@)?([^:/]+)(?::(\d+))?/.exec(uri);
        if (m) {
          out.host = m[1];
          if (m[2]) out.port = Number(m[2]);
        }
        break;
      }
      default:
        if (!WITH_VALUE.has(a)) {
          if (!KNOWN_SWITCHES.has(a)) out.unknown.push(args[i]);
        }
    }
  }
  if (i < args.length) out.customCommand = args.slice(i);
  out.transport = rdma ? "rdma" : tls ? "tls" : out.socket ? "unix" : "tcp";
  return out;
}

const KNOWN_SWITCHES = new Set([
  "-e",
  "-I",
  "-3",
  "--cluster",
  "--enable-tracking",
  "--insecure",
  "--help",
  "--version",
  "-v",
  "--mptcp",
  "--sequential",
]);

/**
 * The argv of a redis-benchmark / valkey-benchmark run: the one place flags become words. The
 * password, if any, is in the argv (the tool needs it) but never in what is stored: see
 * `redactArgv`. {@link parseBenchmarkArgs} reads the argv back to the same flags (less the
 * password).
 *
 * @param program `redis-benchmark`, `valkey-benchmark` or a path to one.
 * @param args The flags.
 * @returns The program followed by its arguments.
 *
 * @example
 * ```ts
 * import { benchmarkArgv, type BenchmarkArgs, parseBenchmarkArgs } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const args: BenchmarkArgs = {
 *   host: "127.0.0.1", port: 6380, clients: 50, requests: 1000, tests: ["set", "get"],
 *   quiet: true, csv: false, loop: false, transport: "tls", unknown: [],
 * };
 * const argv = benchmarkArgv("valkey-benchmark", args);
 * assert.deepEqual(argv, [
 *   "valkey-benchmark", "-h", "127.0.0.1", "-p", "6380", "--tls", "-c", "50", "-n", "1000",
 *   "-t", "set,get", "-q",
 * ]);
 * assert.deepEqual(parseBenchmarkArgs(argv.slice(1)), args);
 * ```
 */
export function benchmarkArgv(program: string, args: BenchmarkArgs): string[] {
  const argv = [program];
  if (args.socket !== undefined) argv.push("-s", args.socket);
  else {
    if (args.host !== undefined) argv.push("-h", args.host);
    if (args.port !== undefined) argv.push("-p", String(args.port));
  }
  if (args.user) argv.push("--user", args.user);
  if (args.password) argv.push("-a", args.password);
  if (args.db) argv.push("--dbnum", String(args.db));
  if (args.transport === "tls") argv.push("--tls");
  for (const [flag, field] of RUN_NUMBER_FLAGS) {
    const v = args[field];
    if (v !== undefined) argv.push(flag, String(v));
  }
  if (args.keepAlive !== undefined) argv.push("-k", args.keepAlive ? "1" : "0");
  if (args.tests?.length) argv.push("-t", args.tests.join(","));
  if (args.quiet) argv.push("-q");
  if (args.csv) argv.push("--csv");
  if (args.loop) argv.push("-l");
  if (args.transport === "rdma") argv.push("--rdma");
  argv.push(...args.unknown, ...(args.customCommand ?? []));
  return argv;
}
