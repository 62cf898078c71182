/// <reference lib="deno.worker" />
/**
 * Worker entry of the pub/sub epoll engine (`_ffi_run.ts`): `{ type: "connect", options,
 * stop }` connects and subscribes (blocking) and answers `ready`; `{ type: "run",
 * startAtEpochMs }` runs the step (blocking this Worker throughout: the main thread steers it
 * by the shared `stop` flag) and answers `done` with the encoded result. Failures answer
 * `error` with the error's name and message; sockets opened by FFI die with the process only,
 * so they are closed here first.
 *
 * @module
 */

import { type EncodedTally, FfiPubSub } from "./_ffi_run.ts";
import type { PubSubChecked } from "./types.ts";

/** What the main thread asks the Worker. */
export type FfiToWorker =
  | { type: "connect"; options: Omit<PubSubChecked, "signal">; stop: SharedArrayBuffer }
  | { type: "run"; startAtEpochMs: number }
  | { type: "close" };

/** What the Worker answers. */
export type FromWorker =
  | { type: "ready" | "closed" }
  | { type: "done"; result: EncodedTally }
  | { type: "error"; name: string; message: string };

let run: FfiPubSub | undefined;

self.onmessage = (e: MessageEvent<FfiToWorker>) => {
  try {
    const msg = e.data;
    if (msg.type === "connect") {
      run = new FfiPubSub(msg.options as PubSubChecked, new Int32Array(msg.stop));
      run.connect();
      self.postMessage({ type: "ready" });
    } else if (msg.type === "run" && run) {
      self.postMessage({ type: "done", result: run.run(msg.startAtEpochMs) });
    } else if (msg.type === "close") {
      run?.close();
      self.postMessage({ type: "closed" });
    }
  } catch (err) {
    run?.close();
    const error = err instanceof Error ? err : new Error(String(err));
    self.postMessage({ type: "error", name: error.name, message: error.message });
  }
};
