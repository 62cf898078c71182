/**
 * Test support: run `kvlab` in-process (the command tree of `buildCli`, exit codes as the
 * process would give them), and a small dataset of `-q` runs.
 *
 * @module
 */

import { buildCli } from "../../src/cli.ts";
import { exitCodeFor } from "../../src/cli/_exit.ts";
import { ingestFile } from "../../src/collect/mod.ts";

/** What a command printed and the exit code the process would end with. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `kvlab ...args` in-process; `isTerminal` stands for stdout being a terminal; `onPrint`
 * sees each piece of stdout as it is printed.
 */
export async function cli(
  args: string[],
  isTerminal = false,
  onPrint?: (s: string) => void,
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const printErr = (s: string) => void (stderr += s);
  let code = 0;
  try {
    await buildCli(
      (s) => {
        onPrint?.(s);
        stdout += s;
      },
      printErr,
      { isTerminal },
    )
      .parseAsync(args, { from: "user" });
  } catch (e) {
    code = exitCodeFor(e, printErr);
  }
  return { code, stdout, stderr };
}

/**
 * A dataset of `-q` runs: for each arm, `reps` runs of SET and GET on server `redis` with the
 * arm as label; SET of arm i runs at `100000.123 × (1 + 0.1 i)` (± 0.2 % per repetition).
 *
 * @returns The dataset directory.
 */
export async function labelledDataset(
  labels: string[],
  reps = 3,
  server: (label: string) => string = () => "redis",
): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-cli-" });
  for (let rep = 0; rep < reps; rep++) {
    const noise = 1 + (rep - 1) * 0.002;
    for (const [i, label] of labels.entries()) {
      const file = `${dir}/${label}-${rep}.txt`;
      Deno.writeTextFileSync(
        file,
        `$ redis-benchmark -q -n 100000 -t set,get\n` +
          `SET: ${(100000.123 * (1 + 0.1 * i) * noise).toFixed(2)} requests per second, ` +
          `p50=0.231 msec\nGET: ${
            (90000 * noise).toFixed(2)
          } requests per second, p50=0.239 msec\n`,
      );
      const o = await ingestFile(file, { data: `${dir}/data`, server: server(label), label });
      if (o.status !== "ingested") throw new Error(`not ingested: ${file}`);
    }
  }
  return `${dir}/data`;
}

/**
 * `kvlab compare --data DATA --by label --baseline BASELINE --format json`, checked to exit 0:
 * its rows.
 */
export async function compareLabelsJson<Row>(data: string, baseline: string): Promise<Row[]> {
  const r = await cli([
    "compare",
    "--data",
    data,
    "--by",
    "label",
    "--baseline",
    baseline,
    "--format",
    "json",
  ]);
  if (r.code !== 0) throw new Error(`kvlab compare exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Row[];
}
