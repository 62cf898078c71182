/**
 * What `kvlab pubsub` prints of a step against a cluster: each master's share, and kvlab's notes.
 *
 * @module
 */

import type { PubSubShard } from "../collect/pubsub/mod.ts";
import { terminalText } from "../text/safe.ts";

const count = (n: number, what: string) => `${n.toLocaleString("en")} ${what}${n === 1 ? "" : "s"}`;

/**
 * One line per master (its channels, subscriber connections, the messages kvlab published
 * through it and what its commandstats counted), then the notes; "" for one server. Node
 * addresses come from the server: printed as untrusted text.
 *
 * @param shards The result's `shards`.
 * @param notes The step's notes.
 * @returns The lines.
 *
 * @example
 * ```ts
 * import { shardLines } from "./_pubsub_shards.ts";
 * import assert from "node:assert/strict";
 * assert.equal(shardLines(undefined, []), "");
 * assert.equal(
 *   shardLines([{ node: "127.0.0.1:7000", channels: 1, subscriberConnections: 3, published: 1200,
 *     serverCalls: 1200 }], ["cluster mode detected"]),
 *   "shard 127.0.0.1:7000: 1 channel, 3 subscriber connections, 1,200 messages published " +
 *     "(commandstats: 1,200)\nnote: cluster mode detected\n",
 * );
 * ```
 */
export function shardLines(
  shards: readonly PubSubShard[] | undefined,
  notes: readonly string[],
): string {
  const lines = (shards ?? []).map((s) => {
    const calls = s.serverCalls === undefined || s.serverCalls === null
      ? "not read"
      : s.serverCalls.toLocaleString("en");
    return `shard ${terminalText(s.node)}: ${count(s.channels, "channel")}, ` +
      `${count(s.subscriberConnections, "subscriber connection")}, ` +
      `${count(s.published, "message")} published (commandstats: ${calls})`;
  });
  lines.push(...notes.map((n) => `note: ${terminalText(n)}`));
  return lines.map((l) => l + "\n").join("");
}
