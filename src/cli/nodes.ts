/**
 * `kvlab nodes`: each node of the runs against clusters and replicated topologies (role, CPU,
 * commands, keys, shares of the masters' totals) and the balance across shards per run (max /
 * mean over the masters), from the `node_stats` table; `nodeBalance` computes both.
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import pl from "nodejs-polars";
import { nodeBalanceChart } from "../analyze/charts/topology.ts";
import { chartFormat, saveChart } from "../analyze/export.ts";
import { nodeBalance } from "../analyze/topology/mod.ts";
import type { TableFormat } from "../analyze/format.ts";
import type { Dataset } from "../store/dataset.ts";
import { type Output, readOptions } from "./_exit.ts";
import { datasetOption, optionalFormat } from "./_options.ts";
import { peopleFormat, tableText } from "./_tables.ts";

/** What `kvlab nodes` shows. */
export interface NodesCommandOptions {
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** Runs whose id starts with one of these; all when empty. */
  runs: string[];
  /** @default {text on a terminal, md in a pipe} */
  format?: TableFormat;
  /** The balance chart's file (.svg, .png, .html, .vl.json), when one is asked for. */
  output?: string;
}

/**
 * Reads `kvlab nodes`' options.
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {TypeError} For an unknown format or chart file extension.
 *
 * @example
 * ```ts
 * import { nodesOptions } from "./nodes.ts";
 * import assert from "node:assert/strict";
 * const o = nodesOptions({ data: "ds", run: ["20260101"], format: "csv", output: "b.svg" });
 * assert.deepEqual([o.runs, o.format, o.output], [["20260101"], "csv", "b.svg"]);
 * assert.throws(() => nodesOptions({ data: "ds", output: "b.jpg" }), /invalid chart format/);
 * ```
 */
export function nodesOptions(raw: OptionValues): NodesCommandOptions {
  if (raw.output !== undefined) chartFormat(String(raw.output));
  return {
    data: datasetOption(raw.data),
    runs: ((raw.run as string[] | undefined) ?? []).map(String),
    format: optionalFormat(raw.format),
    ...(raw.output === undefined ? {} : { output: String(raw.output) }),
  };
}

/**
 * Prints the balance per run, then the nodes (CSV and JSON: the nodes' table only, with the
 * balance's columns joined on each row, so one table reads back); with `output`, the balance
 * chart written there.
 *
 * @param o What to show.
 * @param out Where to print.
 * @throws {TypeError} When no run has node rows (or none of `--run`'s).
 */
export async function nodesCommand(o: NodesCommandOptions, out: Output): Promise<void> {
  let stats = o.data.read("node_stats");
  if (o.runs.length > 0) {
    const ids = [...new Set(stats.getColumn("run_id").toArray() as string[])]
      .filter((id) => o.runs.some((p) => id.startsWith(p)));
    stats = stats.filter(pl.col("run_id").isIn(ids));
  }
  if (stats.height === 0) {
    throw new TypeError(
      o.runs.length > 0
        ? `no node rows for the runs ${o.runs.join(", ")} in ${o.data.dir}`
        : `no node rows in ${o.data.dir}: they come from runs against topologies kvlab starts ` +
          "(start:) and servers with cluster: true (kvlab run, schema 1.9 on)",
    );
  }
  const runIds = [...new Set(stats.getColumn("run_id").toArray() as string[])];
  const runs = o.data.read("runs", { runIds, columns: ["run_id", "label"] });
  const { nodes, balance } = nodeBalance(stats, runs);
  const format = peopleFormat(o.format, out.isTerminal);
  if (format === "csv" || format === "json") {
    out.print(tableText(nodes.join(balance.drop("label"), { on: "run_id" }), format));
  } else {
    out.print(tableText(balance, format));
    out.print(tableText(nodes, format));
  }
  if (o.output) {
    await saveChart(nodeBalanceChart(nodes), o.output, { folders: "parent" });
    out.printErr(`wrote ${o.output}\n`);
  }
}

/** Declares `kvlab nodes` for the registry of `src/cli.ts`; {@link nodesCommand} does the work. */
export function declareNodes(program: Command, out: Output): void {
  program.command("nodes")
    .description(
      "Each node of the runs against clusters and replicated topologies (role, CPU, commands, " +
        "keys, share of the masters' totals) and the balance across shards per run (max / mean).",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option("--run <id...>", "runs whose id starts with these (default: all with node rows)")
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .option("-o, --output <file>", "the balance chart: .svg, .png, .html or .vl.json")
    .action((opts) => nodesCommand(readOptions(() => nodesOptions(opts)), out));
}
