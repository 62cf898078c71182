/// <reference lib="deno.worker" />
/**
 * Timer thread of the pacer: sleeps in `Atomics.wait` (sub-millisecond, no CPU) until the
 * armed wall-clock time, then posts a tick so the generator's event loop wakes up. Deno's
 * `setTimeout` only has millisecond granularity and fires a millisecond or two late.
 *
 * Shared memory: f64[0] = armed time (epoch ms, 0 = none); i32[0] = generation, bumped by
 * every arm/disarm/stop; i32[1] = 1 to stop. After a tick the thread waits for the next
 * generation, so one arm gives at most one tick.
 *
 * @module
 */

self.onmessage = (e: MessageEvent<SharedArrayBuffer>) => {
  const f64 = new Float64Array(e.data, 0, 1);
  const i32 = new Int32Array(e.data, 8, 2);
  const now = () => performance.timeOrigin + performance.now();
  self.postMessage(-1); // started
  for (;;) {
    const gen = Atomics.load(i32, 0);
    if (Atomics.load(i32, 1) === 1) break;
    const target = f64[0];
    const wait = target === 0 ? 1000 : target - now();
    if (wait > 0) {
      Atomics.wait(i32, 0, gen, wait);
      continue;
    }
    self.postMessage(gen);
    while (Atomics.load(i32, 0) === gen) Atomics.wait(i32, 0, gen, 1000);
  }
  self.close();
};
