/**
 * Test support: process runners for tests of code that starts tools. They run the real
 * processes (nothing is mocked) and let the test see what was started.
 *
 * @module
 */

import {
  DenoProcessRunner,
  type ProcessRunner,
  type RunProcessOptions,
} from "../../src/collect/process.ts";

/** A runner that records each command line it starts. */
export interface RecordingRunner {
  runner: ProcessRunner;
  /** The argv of every process started, in order. */
  argvs: string[][];
}

/**
 * The real runner ({@link DenoProcessRunner}), recording each argv it starts.
 *
 * @param watch Changes a run's options before it starts (to watch its output, say).
 * @returns The runner and its record.
 */
export function recordingRunner(
  watch: (o: RunProcessOptions) => RunProcessOptions = (o) => o,
): RecordingRunner {
  const real = new DenoProcessRunner();
  const argvs: string[][] = [];
  const runner: ProcessRunner = {
    run: (o) => {
      argvs.push([...o.argv]);
      return real.run(watch(o));
    },
  };
  return { runner, argvs };
}
