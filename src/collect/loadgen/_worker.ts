/// <reference lib="deno.worker" />
/**
 * Worker entry of the open-loop generator: `{ type: "connect", options, engine, stop }` opens
 * the shard's connections and answers `ready`; `{ type: "run", startAtEpochMs }` runs it and
 * answers `done` with the encoded outcome; `{ type: "close" }` closes a shard that will not
 * run and answers `closed`. Failures answer `error`.
 *
 * Engine `deno` (`_shard.ts`) ends its sending window on `{ type: "interrupt" }` (Ctrl-C).
 * Engine `ffi` (`_ffi_shard.ts`) blocks this Worker in its epoll loop, so it reads no message
 * while it runs: the main thread sets the shared `stop` flag instead (1 ends the window, 2
 * ends the run now).
 *
 * @module
 */

import { connectShard, type Shard } from "./_shard.ts";
import { encodeOutcome, type ToWorker } from "./_outcome.ts";
import { FfiShard } from "./_ffi_shard.ts";

let shard: Shard | undefined;
let ffi: FfiShard | undefined;

self.onmessage = async (e: MessageEvent<ToWorker>) => {
  try {
    const msg = e.data;
    if (msg.type === "interrupt") {
      shard?.interrupt();
    } else if (msg.type === "close") {
      // the run will not start (another shard failed): sockets opened by FFI die with the
      // process only, so they are closed here
      shard?.close();
      ffi?.close();
      self.postMessage({ type: "closed" });
    } else if (msg.type === "connect") {
      if (msg.engine === "ffi") ffi = new FfiShard(msg.options, new Int32Array(msg.stop));
      else shard = await connectShard(msg.options);
      self.postMessage({ type: "ready" });
    } else if (msg.type === "run" && ffi) {
      const outcome = ffi.run(msg.startAtEpochMs);
      self.postMessage({ type: "done", outcome: encodeOutcome(outcome) });
    } else if (msg.type === "run" && shard) {
      const outcome = await shard.run(msg.startAtEpochMs);
      self.postMessage({ type: "done", outcome: encodeOutcome(outcome) });
    }
  } catch (err) {
    shard?.close();
    ffi?.close();
    self.postMessage({
      type: "error",
      message: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
  }
};
