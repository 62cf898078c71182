/**
 * Servers that lie to `kvlab load` (issue 30): one that never answers a GET, answers half a
 * reply, announces a 2 GiB bulk and stops, floods `+OK` instead of answering, sends negative
 * lengths other than nil's `-1`, or answers every request with an error. Each step, on both
 * engines (and in Workers), is stored failed, exits 1, and its reason names the server and what
 * it did (it was stored `complete`, exit 0, "0/s … no reply; 4 errors" or "200/s sustained").
 */

import assert from "node:assert/strict";
import { Dataset } from "../../src/store/dataset.ts";
import { kvlabStep } from "./_cli.ts";
import { hostileServer } from "./_resp_server.ts";

/** Each lie: what the server answers a GET with, and what the reason must say. */
const LIES: [string, string, RegExp][] = [
  ["never answers a GET", "", /requests? never answered \(S: no reply by the end of the step/],
  [
    "answers half a reply",
    "$10\r\nabc",
    /never answered \(S: a reply cut short: a bulk string of 10 bytes, 3 received/,
  ],
  [
    "announces a $2147483647 bulk",
    "$2147483647\r\nabc",
    /never answered \(S: a reply cut short: a bulk string of 2147483647 bytes, 3 received/,
  ],
  [
    "floods +OK and never answers a GET",
    "+OK\r\n+OK\r\n+OK\r\n",
    /connections lost \(S: RespProtocolError: a simple string \(\+\) in reply to GET/,
  ],
  ["sends $-5", "$-5\r\n", /connections lost \(S: RespProtocolError: .*found "\$-5"/],
  ["sends *-7", "*-7\r\n", /connections lost \(S: RespProtocolError: .*found "\*-7"/],
  [
    "sends $-2147483648",
    "$-2147483648\r\n",
    /connections lost \(S: RespProtocolError: .*found "\$-2147483648"/,
  ],
  [
    "answers every GET with an error",
    "-ERR not today\r\n",
    /every reply was an error \(S: ERR not today/,
  ],
];

/** The engines and thread counts each lie is told to. */
const RUNS: { engine: string; threads: number }[] = [
  { engine: "ffi", threads: 1 },
  { engine: "deno", threads: 1 },
];

Deno.test("hostile: a server that lies to kvlab load fails the step, naming what it did", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-lies-" });
  const cases = [
    ...LIES.flatMap((lie) => RUNS.map((run) => ({ lie, run }))),
    // in Workers too (engine deno runs on the main thread with one)
    { lie: LIES[0], run: { engine: "deno", threads: 2 } },
    { lie: LIES[3], run: { engine: "ffi", threads: 2 } },
  ];
  for (const [i, { lie: [name, answer, reason], run }] of cases.entries()) {
    await t.step(`${name}, engine ${run.engine}, ${run.threads} thread(s)`, async () => {
      const server = hostileServer({
        reply: (w) => ["GET", "SET"].includes(w[0].toUpperCase()) ? answer : undefined,
      });
      try {
        const url = `redis://127.0.0.1:${server.port}`;
        const data = `${dir}/d${i}`;
        const o = { rate: 200, connections: 4, duration: 0.5, ...run };
        const r = await kvlabStep("load", url, data, o);
        const said = new RegExp(reason.source.replace("S", url.replaceAll(".", "\\.")));
        assert.equal(r.code, 1, r.printed);
        assert.match(r.stderr, said);
        assert.doesNotMatch(r.printed, /sustained/);
        const runs = Dataset.open(data).runFacts(["status", "error"]);
        assert.deepEqual(runs.map((x) => x.status), ["failed"], r.printed);
        assert.match(String(runs[0].error), said);
      } finally {
        server.close();
      }
    });
  }
  Deno.removeSync(dir, { recursive: true });
});
