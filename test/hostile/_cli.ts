/**
 * Helpers of the hostile suite: run the real CLI as a subprocess and read back every byte it
 * wrote under a dataset.
 *
 * @module
 */

import { kvlabProcess, type ProcessOutput, TASK_PERMISSIONS } from "../_support/kvlab.ts";
import { TESTDATA } from "../_support/testdata.ts";

/** Where the hostile fixtures are. */
export const HOSTILE = TESTDATA + "hostile/";

/** The permissions of `deno task kvlab`, loopback network only, as one string. */
export const PERMISSIONS = TASK_PERMISSIONS.join(" ");

/** What one CLI run printed. */
export type CliResult = ProcessOutput;

/**
 * Runs `deno run … src/cli.ts <args>` as a user of the tasks would.
 *
 * @param args The kvlab arguments.
 * @param maxHeapMb A V8 heap limit (a plan that expands in memory then dies fast).
 * @returns Exit code and output.
 */
export function kvlab(args: string[], maxHeapMb?: number): Promise<CliResult> {
  return kvlabProcess(args, { maxHeapMb });
}

/**
 * Every file under a folder, as one string (bytes read as Latin-1, so that binary files and
 * UTF-8 text alike can be searched for an ASCII secret), and the list of paths.
 *
 * @param dir The folder (a missing folder is empty).
 */
export function allBytes(dir: string): { text: string; files: string[] } {
  const files: string[] = [];
  const walk = (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) walk(p);
      else if (e.isFile) files.push(p);
    }
  };
  walk(dir);
  const dec = new TextDecoder("latin1");
  return { text: files.map((f) => dec.decode(Deno.readFileSync(f))).join("\n"), files };
}

/**
 * The secrets of a case found in a text.
 *
 * @param text What was written or printed.
 * @param secrets The case's secrets.
 * @returns Those present (none is the expectation).
 */
export function leaked(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => text.includes(s));
}

/**
 * A live step, `kvlab <command> --url <url> --data <data> --<option> <value>…` (load, pubsub,
 * sample).
 *
 * @param command The step's command.
 * @param url The server.
 * @param data The dataset.
 * @param options The step's other options, by name without `--` (`{ rate: 50 }`).
 * @returns Exit code and output.
 */
export function kvlabStep(
  command: string,
  url: string,
  data: string,
  options: Record<string, string | number>,
): Promise<CliResult> {
  const flags = Object.entries(options).flatMap(([k, v]) => [`--${k}`, String(v)]);
  return kvlab([command, "--url", url, "--data", data, ...flags]);
}

/**
 * Writes `<dir>/plan.yaml`, a plan of one latency-sweep cell on kvlab's engine (one thread, one
 * rate, 1 s steps over 100 keys, one repetition, a 30 s deadline) against `url`.
 *
 * @param dir The folder.
 * @param url The server.
 * @param cell The plan's name, the cell's clients and its rate.
 * @returns The plan's path.
 */
export function writeSweepPlan(
  dir: string,
  url: string,
  cell: { name: string; clients: number; rate: number },
): string {
  const plan = `${dir}/plan.yaml`;
  Deno.writeTextFileSync(
    plan,
    `name: ${cell.name}\nkind: latency-sweep\nservers:\n  - { name: a, url: "${url}" }\n` +
      "repetitions: 1\ntimeout_s: 30\n" +
      `sweep: {engine: kvlab, threads: 1, clients: ${cell.clients}, rates: [${cell.rate}], ` +
      "step_s: 1, keys: 100}\n",
  );
  return plan;
}
