/**
 * `kvlab agent --control redis://HOST:PORT [--name NAME]`: one client host of steps run from
 * several (issue 35). It registers on the control server and runs the work items posted for it
 * (checked by the plan parser's rules, `../collect/plan/agent_work.ts`) until SIGINT / SIGTERM.
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import { runAgent } from "../collect/agent/agent.ts";
import { checkWorkPlan } from "../collect/plan/agent_work.ts";
import { ENV_NAME } from "../collect/agent/protocol.ts";
import { hostFacts } from "../collect/host.ts";
import { DenoProcessRunner } from "../collect/process.ts";
import { findTool } from "../collect/tools/find.ts";
import { prepareExternal } from "../collect/tools/tool.ts";
import { parseServerUrl, type ServerTarget } from "../collect/target.ts";
import { KVLAB_VERSION } from "../version.ts";
import { terminalText } from "../text/safe.ts";
import { type Output, readOptions, withStopSignals } from "./_exit.ts";
import { optionalString } from "./_options.ts";

/** What `kvlab agent` runs with. */
export interface AgentCommandOptions {
  control: ServerTarget;
  /** @default {the host name} */
  name: string;
  /** Ends after this many items (for tests). */
  maxItems?: number;
  /** The variables a work item's `password_env` may name (`--password-env A,B`). */
  passwordEnvs: string[];
}

/**
 * Reads `kvlab agent`'s options.
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {TypeError} For a bad URL or name.
 *
 * @example
 * ```ts
 * import { agentOptions } from "./agent.ts";
 * import assert from "node:assert/strict";
 * const o = agentOptions({ control: "redis://10.0.0.1:6379", name: "a1" });
 * assert.deepEqual([o.control.port, o.name], [6379, "a1"]);
 * assert.throws(() => agentOptions({ control: "redis://h", name: "a b" }), /invalid --name: a b/);
 * ```
 */
export function agentOptions(raw: OptionValues): AgentCommandOptions {
  const control = parseServerUrl(String(raw.control));
  if (control.socket !== undefined) {
    throw new TypeError("--control: expected redis:// or rediss://");
  }
  const name = optionalString(raw.name) ?? Deno.hostname();
  if (!/^[\w.-]{1,64}$/.test(name)) {
    throw new TypeError(`invalid --name: ${name} (expected letters, digits, '.', '_' or '-')`);
  }
  const max = optionalString(raw.maxItems);
  const passwordEnvs = (optionalString(raw.passwordEnv) ?? "").split(",").filter((x) => x !== "");
  for (const v of passwordEnvs) {
    if (!ENV_NAME.test(v)) throw new TypeError(`invalid --password-env: ${v} (a variable's name)`);
  }
  return { control, name, passwordEnvs, ...(max !== undefined ? { maxItems: Number(max) } : {}) };
}

/**
 * Runs the agent until SIGINT / SIGTERM, printing one line per event.
 *
 * @param o The control server and the agent's name.
 * @param out Where to print.
 */
export async function agentCommand(o: AgentCommandOptions, out: Output): Promise<void> {
  const tools: Record<string, string | null> = { "kvlab-loadgen": KVLAB_VERSION };
  // memtier_benchmark when this host has it (on PATH or in the tools cache): engine memtier
  const runner = new DenoProcessRunner();
  const memtier = await prepareExternal("memtier_benchmark", {
    runner,
    locate: (n) => findTool(n) ?? n,
  }).catch(() => null);
  if (memtier) tools.memtier_benchmark = memtier.version;
  const engines = memtier ? ["kvlab", "memtier"] : ["kvlab"];
  const n = await withStopSignals((signal) =>
    runAgent({
      control: o.control,
      name: o.name,
      host: hostFacts(),
      tools,
      ...(memtier ? { memtier: { program: memtier.command, runner } } : {}),
      signal,
      maxItems: o.maxItems,
      check: (item) => {
        const { plan, step } = checkWorkPlan(item.plan, {
          engines,
          passwordEnvs: o.passwordEnvs,
          where: `work item ${item.item}`,
        });
        return { step, engine: plan.engine };
      },
      onEvent: (e) => {
        switch (e.kind) {
          case "registered":
            return out.print(
              `agent ${o.name}: registered on ${o.control.display} (clock offset ` +
                `${e.clock.offsetMs.toFixed(3)} ± ${e.clock.uncertaintyMs.toFixed(3)} ms)\n`,
            );
          case "item":
            // (item, cell and error come from the stream: untrusted text)
            return out.print(
              terminalText(
                `agent ${o.name}: ${e.item} (${e.cell}): ${e.status}` +
                  `${e.error ? `: ${e.error}` : ""}`,
              ) + "\n",
            );
          case "disconnected":
            return out.printErr(`agent ${o.name}: control server away (${e.problem})\n`);
          case "reconnected":
            return out.print(`agent ${o.name}: reconnected\n`);
        }
      },
    })
  );
  out.print(`agent ${o.name}: stopped after ${n} items\n`);
}

/** Declares `kvlab agent` for the registry of `src/cli.ts`. */
export function declareAgent(program: Command, out: Output): void {
  program.command("agent")
    .description(
      "Run steps of plans with agents: (several client hosts) from a control Redis server: " +
        "register, run this host's share of each step posted for it, post back the results.",
    )
    .requiredOption("--control <url>", "the control server: redis://[user:password@]host:port")
    .option("--name <name>", "this agent's name (default: the host name)")
    .option(
      "--password-env <names>",
      "environment variables (comma-separated) a plan's password_env: may name: the password " +
        "of a server is read from this host's environment, never sent on the control stream",
    )
    .option("--max-items <n>", "stop after answering this many work items")
    .action((opts) => agentCommand(readOptions(() => agentOptions(opts)), out));
}
