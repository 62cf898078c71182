/// <reference lib="deno.worker" />
/**
 * Worker entry of the open-loop generator: `{ type: "connect", options }` opens the shard's
 * connections and answers `ready`; `{ type: "run", startAtEpochMs }` runs it and answers
 * `done` with the encoded outcome; `{ type: "interrupt" }` ends its sending window now (Ctrl-C).
 * Failures answer `error`.
 *
 * @module
 */

import { connectShard, type Shard, type ShardOptions } from "./_shard.ts";
import { encodeOutcome } from "./_transfer.ts";

/** Messages the main thread sends. */
export type ToWorker =
  | { type: "connect"; options: ShardOptions }
  | { type: "run"; startAtEpochMs: number }
  | { type: "interrupt" };

let shard: Shard | undefined;

self.onmessage = async (e: MessageEvent<ToWorker>) => {
  try {
    const msg = e.data;
    if (msg.type === "interrupt") {
      shard?.interrupt();
    } else if (msg.type === "connect") {
      shard = await connectShard(msg.options);
      self.postMessage({ type: "ready" });
    } else if (msg.type === "run" && shard) {
      const outcome = await shard.run(msg.startAtEpochMs);
      self.postMessage({ type: "done", outcome: encodeOutcome(outcome) });
    }
  } catch (err) {
    shard?.close();
    self.postMessage({
      type: "error",
      message: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
  }
};
