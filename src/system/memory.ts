/**
 * Keeping a long read's memory flat. V8 grows its heap lazily: a reader that makes a lot of
 * short-lived garbage (a 200 MB file parsed in chunks) sees its heap, and so its RSS, grow
 * with the input until V8 decides to collect. And the native memory of a nodejs-polars frame
 * (a Parquet part written) is freed only when V8 collects the frame's small JS wrapper *and*
 * the event loop turns (N-API finalizers run there), so a synchronous loop writing parts holds
 * every part it wrote. {@link collectGarbage} asks for a collection; {@link releaseNativeMemory}
 * also lets the finalizers run. Both cost a few milliseconds on a small heap: call them every
 * few megabytes read or after each part written, not per row.
 *
 * @module
 */

import v8 from "node:v8";
import vm from "node:vm";

let gc: (() => void) | null | undefined;

function collector(): (() => void) | null {
  if (gc === undefined) {
    try {
      // the flag is read when a context is made: a new context hands out `gc`
      v8.setFlagsFromString("--expose-gc");
      const f = vm.runInNewContext("gc");
      gc = typeof f === "function" ? f as () => void : null;
    } catch {
      gc = null; // not offered here: memory is then V8's own business
    }
  }
  return gc;
}

/**
 * Asks V8 for a full garbage collection now (nothing happens where it cannot be asked).
 *
 * @returns Whether V8 could be asked (false where it refuses `--expose-gc`).
 *
 * @example
 * ```ts
 * import { collectGarbage } from "./memory.ts";
 * import assert from "node:assert/strict";
 * // Deno lets library code set the flag at run time
 * assert.equal(collectGarbage(), true);
 * ```
 */
export function collectGarbage(): boolean {
  const f = collector();
  f?.();
  return f !== null;
}

/**
 * Collects garbage, then waits one turn of the event loop, so that the native memory of
 * nodejs-polars frames no longer referenced is freed.
 *
 * @returns Whether V8 could be asked for the collection.
 *
 * @example
 * ```ts
 * import { releaseNativeMemory } from "./memory.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await releaseNativeMemory(), true);
 * ```
 */
export async function releaseNativeMemory(): Promise<boolean> {
  const asked = collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 0));
  return asked;
}

/**
 * Counts bytes read and collects garbage each time `every` more have gone by.
 *
 * @param every Bytes between collections.
 * @returns A function to call with each read's size: true when it collected.
 *
 * @example
 * ```ts
 * import { collectEvery } from "./memory.ts";
 * import assert from "node:assert/strict";
 * const read = collectEvery(8 << 20);
 * assert.equal(read(1 << 20), false);
 * assert.equal(read(7 << 20), true); // 8 MiB since the start
 * assert.equal(read(1 << 20), false); // counting again from there
 * ```
 */
export function collectEvery(every: number): (size: number) => boolean {
  let since = 0;
  return (size) => {
    since += size;
    if (since < every) return false;
    since = 0;
    return collectGarbage();
  };
}
