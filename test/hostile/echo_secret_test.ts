/**
 * A server that echoes the password kvlab sent it (issue 30): answering AUTH like an unknown
 * command (`ERR unknown command 'auth', with args beginning with: '<password>'`), quoting it in
 * its error replies, or holding it in INFO. On every collection path (`load` on both engines
 * and in Workers, `pubsub` on both engines, `sample`, and plans of kind latency-sweep,
 * redis-benchmark, pubsub and memory), nothing printed and no byte stored (nor any table, read
 * back) holds it.
 */

import assert from "node:assert/strict";
import { TABLES } from "../../src/schema.ts";
import { loadTable } from "../../src/analyze/mod.ts";
import { allBytes, kvlab, leaked } from "./_cli.ts";
import { bulk, hostileServer } from "./_resp_server.ts";
import { missingOutsideCi } from "../_support/tools.ts";

const LONG = "Echo-Pw-7f3a1";
/** Too short to be replaced wherever it appears: redacted in the server's own echoes. */
const SHORT = "pw9";

/** How a server echoes the password (`pw`) back. */
type Echo = (pw: string) => (words: string[]) => string | undefined;

const unknownAuth = (w: string[]) =>
  `-ERR unknown command '${w[0]}', with args beginning with: '${w[1]}' \r\n`;

const ECHOES: Record<string, Echo> = {
  // the generator's and the pub/sub engine's own AUTH (sent as `AUTH`; ioredis sends `auth`)
  "its own AUTH answered as an unknown command": () => (w) =>
    w[0] === "AUTH" ? unknownAuth(w) : undefined,
  // ioredis' AUTH (the snapshots, `sample`, the memory fill)
  "ioredis' auth answered as an unknown command": () => (w) =>
    w[0] === "auth" ? unknownAuth(w) : undefined,
  // every request and publish answered with an error quoting it
  "error replies quoting it": (pw) => (w) =>
    ["GET", "SET", "PUBLISH"].includes(w[0].toUpperCase())
      ? `-ERR the password is ${pw}\r\n`
      : w[0].toUpperCase() === "SUBSCRIBE"
      ? w.slice(1).map((ch, i) => `*3\r\n${bulk("subscribe")}${bulk(ch)}:${i + 1}\r\n`).join("")
      : undefined,
  // INFO with it in a field and in the version
  "INFO holding it": (pw) => (w) =>
    w[0].toUpperCase() === "INFO"
      ? bulk(`# Server\r\nredis_version:7.0.15-${pw}\r\nechoed:${pw}\r\n`)
      : undefined,
};

/** A plan of one small cell of `kind` against `url`. */
function plan(kind: string, url: string): string {
  const server = `servers:\n  - { name: a, url: "${url}" }\nrepetitions: 1\ntimeout_s: 20\n`;
  switch (kind) {
    case "latency-sweep":
      return `name: echo\nkind: latency-sweep\n${server}` +
        "sweep: {engine: kvlab, threads: 1, clients: 2, rates: [100], step_s: 0.5, keys: 10}\n";
    case "redis-benchmark":
      return `name: echo\nkind: redis-benchmark\n${server}tests: [get]\nrequests: 100\n` +
        "matrix: { clients: [1] }\n";
    case "pubsub":
      return `name: echo\nkind: pubsub\n${server}pubsub: { modes: [one-to-one], publishers: 1, ` +
        "subscribers: 1, rates: [50], step_s: 0.5, grace_s: 0.2 }\n";
    default:
      return `name: echo\nkind: memory\n${server}memory: { key_counts: [10], value_size_bytes: 3 }\n`;
  }
}

/** Each path: its name, the echoes it is told, and its command line after `--url URL`. */
/** A short `kvlab pubsub` step with one engine. */
const pubsubArgs = (engine: string) => [
  ...["pubsub", "--engine", engine, "--rate", "50", "--publishers", "1", "--subscribers", "1"],
  ...["--duration", "0.5", "--grace", "0.2"],
];

const PATHS: [string, string[], string[]][] = [
  ["load, engine ffi", ["its own AUTH", "ioredis'", "error replies", "INFO"], [
    "load",
    "--engine",
    "ffi",
    "--rate",
    "100",
    "--connections",
    "2",
    "--duration",
    "0.5",
  ]],
  ["load, engine deno", ["its own AUTH", "error replies"], [
    "load",
    "--engine",
    "deno",
    "--rate",
    "100",
    "--connections",
    "2",
    "--duration",
    "0.5",
  ]],
  ["load, engine deno in Workers", ["its own AUTH"], [
    "load",
    "--engine",
    "deno",
    "--threads",
    "2",
    "--rate",
    "100",
    "--connections",
    "2",
    "--duration",
    "0.5",
  ]],
  ["pubsub, engine ffi", ["its own AUTH", "ioredis'", "error replies"], pubsubArgs("ffi")],
  ["pubsub, engine deno", ["its own AUTH", "error replies"], pubsubArgs("deno")],
  ["sample", ["ioredis'", "INFO"], ["sample", "--duration", "0.3", "--interval", "0.1"]],
  ["a latency-sweep plan", ["its own AUTH", "ioredis'"], ["run", "latency-sweep"]],
  ["a redis-benchmark plan", ["its own AUTH"], ["run", "redis-benchmark"]],
  ["a pubsub plan", ["its own AUTH"], ["run", "pubsub"]],
  ["a memory plan", ["ioredis'", "INFO"], ["run", "memory"]],
];

Deno.test("hostile: a password a server echoes back is never printed nor stored", async (t) => {
  const benchmark = !missingOutsideCi("redis-benchmark");
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-echo-" });
  let n = 0;
  for (const [path, echoes, args] of PATHS) {
    if (path.includes("redis-benchmark") && !benchmark) continue;
    for (const [echo, make] of Object.entries(ECHOES)) {
      if (!echoes.some((e) => echo.startsWith(e))) continue;
      // the short password where the server's own echo is what must be redacted
      const pws = echo.includes("unknown command") ? [LONG, SHORT] : [LONG];
      for (const pw of pws) {
        await t.step(`${path}: ${echo} (${pw.length} characters)`, async () => {
          const server = hostileServer({ reply: make(pw) });
          const data = `${dir}/d${n++}`;
          try {
            const url = `redis://:${pw}@127.0.0.1:${server.port}`;
            let argv: string[];
            if (args[0] === "run") {
              const file = `${data}.yaml`;
              Deno.writeTextFileSync(file, plan(args[1], url));
              argv = ["run", file, "--data", data];
            } else argv = [args[0], "--url", url, "--data", data, ...args.slice(1)];
            const r = await kvlab(argv);
            // it ran far enough for the echo to come back: a run was stored
            assert.ok(loadTable(data, "runs").height >= 1, r.printed);
            // the short one is a common word: only where it stood in an echo is it looked for
            const echoed = pw === SHORT ? `'${SHORT}'` : pw;
            assert.deepEqual(leaked(r.printed, [echoed]), [], `printed:\n${r.printed}`);
            const stored = allBytes(data);
            assert.deepEqual(leaked(stored.text, [echoed]), [], "a file under --data");
            const tables = Object.keys(TABLES).map((name) => {
              try {
                return JSON.stringify(loadTable(data, name as keyof typeof TABLES).toRecords());
              } catch {
                return ""; // a table the run has no file of
              }
            });
            assert.deepEqual(leaked(tables.join("\n"), [echoed]), [], "a table, read back");
          } finally {
            server.close();
          }
        });
      }
    }
  }
  Deno.removeSync(dir, { recursive: true });
});
