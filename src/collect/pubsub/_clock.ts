/**
 * The clock of the epoll engine (`_ffi_run.ts`): CLOCK_MONOTONIC by FFI (about 0.1 µs a read
 * against `performance.now()`'s 0.25), as milliseconds since the run's start, and the
 * kernel's CLOCK_REALTIME receive stamps converted to the same milliseconds. The same reading
 * as the open loop's `FfiShard` clock.
 *
 * @module
 */

import { K, type Libc, type StampedReceiver } from "../loadgen/libc.ts";

/** Milliseconds since a run's start. */
export class RunClock {
  readonly #lib: Libc;
  readonly #ts = new Uint32Array(4);
  readonly #bytes = new Uint8Array(this.#ts.buffer);
  #baseS = 0;
  #t0 = 0;
  #realBaseS = 0;
  #realT0 = 0;

  /** @param lib An open libc; until {@link setOrigin}, the origin is now. */
  constructor(lib: Libc) {
    this.#lib = lib;
    lib.symbols.clock_gettime(K.CLOCK_MONOTONIC, this.#bytes);
    this.#baseS = this.#ts[0]; // (seconds only: the low word is enough for a run)
    this.#t0 = this.now();
  }

  /** Milliseconds since the origin. */
  now(): number {
    this.#lib.symbols.clock_gettime(K.CLOCK_MONOTONIC, this.#bytes);
    const ts = this.#ts;
    return (ts[0] - this.#baseS) * 1e3 + ts[2] / 1e6 - this.#t0;
  }

  /** Sets the origin to `startAtEpochMs` (wall clock, `performance.timeOrigin` based). */
  setOrigin(startAtEpochMs: number): void {
    const mono = this.now() + this.#t0;
    const epoch = performance.timeOrigin + performance.now();
    this.#t0 = mono + (startAtEpochMs - epoch);
    // the kernel stamps receives on CLOCK_REALTIME: the same instant, in run milliseconds
    const run = this.now();
    this.#lib.symbols.clock_gettime(K.CLOCK_REALTIME, this.#bytes);
    this.#realBaseS = this.#ts[0];
    this.#realT0 = this.#ts[2] / 1e6 - run;
  }

  /** The last receive's kernel stamp in run milliseconds, or NaN when it has none. */
  realMs(rx: StampedReceiver): number {
    return rx.stampMs(this.#realBaseS) - this.#realT0;
  }
}
