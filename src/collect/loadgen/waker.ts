/**
 * A precise wake-up for the pacer: a timer Worker ({@link ./_waker_worker.ts}) sleeping in
 * `Atomics.wait` posts a tick at the armed time, which wakes this thread's event loop.
 *
 * @module
 */

/** Wakes the owning thread at an armed wall-clock time (epoch ms). */
export class Waker {
  readonly #worker: Worker;
  readonly #f64: Float64Array;
  readonly #i32: Int32Array;
  #armed = 0;
  /** Resolves once the timer thread runs. */
  readonly ready: Promise<void>;

  /** @param onWake Called on each tick (possibly late or stale: treat it as a hint). */
  constructor(onWake: () => void) {
    const sab = new SharedArrayBuffer(16);
    this.#f64 = new Float64Array(sab, 0, 1);
    this.#i32 = new Int32Array(sab, 8, 2);
    this.#worker = new Worker(new URL("./_waker_worker.ts", import.meta.url), { type: "module" });
    const { promise, resolve } = Promise.withResolvers<void>();
    this.ready = promise;
    this.#worker.onmessage = (e: MessageEvent<number>) => {
      if (e.data === -1) return resolve();
      this.#armed = 0;
      onWake();
    };
    this.#worker.postMessage(sab);
  }

  /**
   * Arms the wake-up for `epochMs`, unless one is already armed for that time or earlier
   * (its tick comes first, and the pump then arms the next one): one futex wake saved per
   * reply.
   */
  arm(epochMs: number): void {
    if (this.#armed !== 0 && this.#armed <= epochMs) return;
    this.#set(epochMs);
  }

  /** Cancels the armed wake-up. */
  disarm(): void {
    if (this.#armed !== 0) this.#set(0);
  }

  #set(epochMs: number): void {
    this.#armed = epochMs;
    this.#f64[0] = epochMs;
    Atomics.add(this.#i32, 0, 1);
    Atomics.notify(this.#i32, 0);
  }

  /** Stops the timer thread. */
  close(): void {
    Atomics.store(this.#i32, 1, 1);
    Atomics.add(this.#i32, 0, 1);
    Atomics.notify(this.#i32, 0);
    this.#worker.onmessage = null;
    this.#worker.terminate();
  }
}
