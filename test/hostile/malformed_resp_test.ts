/**
 * A server answering with malformed RESP (issue 21): the error names the server, the command
 * and what it sent (escaped), never ioredis' "Stream isn't writeable and enableOfflineQueue
 * options is false" nor its "Please report this".
 */

import assert from "node:assert/strict";
import { hostileServer } from "./_resp_server.ts";
import { kvlab } from "./_cli.ts";

/** Each case: the name, which command gets the bad reply, the command line, the message. */
const CASES: [string, (words: string[]) => boolean, string[], RegExp][] = [
  [
    "kvlab load: INFO everything answered with garbage",
    (w) => w[0]?.toUpperCase() === "INFO" && w.length > 1,
    ["load", "--rate", "50", "--connections", "2", "--duration", "1"],
    /redis:\/\/127\.0\.0\.1:\d+ sent malformed RESP in reply to INFO everything: got "\?" as reply type byte, in "\?what \\x1b\[31mis this\\r\\n"/,
  ],
  [
    "kvlab load: the connection's first INFO answered with garbage",
    (w) => w[0]?.toUpperCase() === "INFO",
    ["load", "--rate", "50", "--connections", "2", "--duration", "1"],
    /redis:\/\/127\.0\.0\.1:\d+ sent malformed RESP in reply to INFO: got "\?"/,
  ],
  [
    "kvlab pubsub: INFO everything answered with garbage",
    (w) => w[0]?.toUpperCase() === "INFO" && w.length > 1,
    ["pubsub", "--rate", "50", "--publishers", "1", "--subscribers", "1", "--duration", "1"],
    /redis:\/\/127\.0\.0\.1:\d+ sent malformed RESP in reply to INFO everything/,
  ],
  [
    "kvlab load: GETs answered with garbage",
    (w) => w[0]?.toUpperCase() === "GET",
    ["load", "--rate", "50", "--connections", "2", "--duration", "1"],
    /2 of 2 connections lost \(redis:\/\/127\.0\.0\.1:\d+: RespProtocolError: .*found byte 63 "\?"/,
  ],
];

Deno.test("hostile: malformed RESP is an error naming the server and what it sent", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-resp-" });
  for (const [i, [name, bad, args, message]] of CASES.entries()) {
    await t.step(name, async () => {
      const server = hostileServer({
        reply: (w) => (bad(w) ? "?what \x1b[31mis this\r\n" : undefined),
      });
      try {
        const r = await kvlab([
          args[0],
          "--url",
          `redis://127.0.0.1:${server.port}`,
          "--data",
          `${dir}/d${i}`,
          ...args.slice(1),
        ]);
        assert.equal(r.code, 1, r.printed);
        assert.match(r.printed, message);
        assert.doesNotMatch(r.printed, /Stream isn't writeable|Please report this/);
        assert.ok(!r.printed.includes("\x1b"), "no raw escape printed");
      } finally {
        server.close();
      }
    });
  }
  Deno.removeSync(dir, { recursive: true });
});
