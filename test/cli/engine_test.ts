// `--engine` of `kvlab load` and `kvlab pubsub`: each engine runs on a fresh dataset, the step
// line names it, and the step's one raw file (its summary JSON, stored by content hash) keeps
// which one ran; an unknown engine is refused before anything runs. A real redis-server on a
// free loopback port, stopped by PID; short, low-rate steps.
import assert from "node:assert/strict";
import { walk, withServers } from "../_support/servers.ts";
import { withTempDir } from "../_support/temp.ts";
import { missingOutsideCi } from "../_support/tools.ts";
import { cli } from "./_cli.ts";

/** The engines, with the name the step line gives each. */
const ENGINES = [["ffi", "ffi (epoll by FFI)"], ["deno", "deno (Deno TCP)"]] as const;

/** An engine's printed name as a regular expression's source. */
const quoted = (said: string) => said.replace(/[()]/g, "\\$&");

/** What the commands' `--engine` cases differ in. */
const CASES: {
  command: string;
  /** The step's options, without `--engine` and `--data`. */
  options: string[];
  /** The step line expected of an engine, from the engine's printed name. */
  engineLine: (said: string) => RegExp;
  /** Checks of the stored summary beyond its `engine`. */
  summary: (summary: Record<string, unknown>, engine: string) => void;
}[] = [
  {
    command: "load",
    options: ["--rate", "200", "--connections", "4", "--duration", "0.5", "--threads", "2"],
    engineLine: (said) => new RegExp(`^engine ${quoted(said)}, 2 threads$`, "m"),
    // a load step's one raw file is its loadgen.json
    summary: (summary) => assert.equal(summary.workers, 2),
  },
  {
    command: "pubsub",
    options: [
      ...["--rate", "200", "--publishers", "2", "--subscribers", "2"],
      ...["--duration", "0.5", "--grace", "1"],
    ],
    engineLine: (said) => new RegExp(`^engine ${quoted(said)}$`, "m"),
    summary: (summary, engine) => {
      assert.equal(summary.engineNote, engine === "deno" ? "asked for" : null);
      assert.ok((summary.delivered as number) > 0);
    },
  },
];

for (const c of CASES) {
  Deno.test({
    name: `kvlab ${c.command} --engine ffi|deno runs that engine, prints it and stores it`,
    ignore: missingOutsideCi("redis-server"),
    fn: () =>
      withServers([{}], async ([server]) => {
        const args = [c.command, "--url", server.url, ...c.options];
        for (const [engine, said] of ENGINES) {
          await withTempDir(`kvlab-${c.command}-engine-`, async (data) => {
            const r = await cli([...args, "--engine", engine, "--data", data]);
            assert.equal(r.code, 0, r.stderr);
            assert.match(r.stdout, c.engineLine(said));
            const raw = walk(data).filter((p) => p.includes("/raw/"));
            assert.equal(raw.length, 1, `one raw file in ${walk(data).join(", ")}`);
            const summary = JSON.parse(Deno.readTextFileSync(raw[0]));
            assert.equal(summary.engine, engine);
            c.summary(summary, engine);
          });
        }
        const bad = await cli([...args, "--engine", "uring", "--data", "unused"]);
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /invalid --engine: uring/);
      }),
  });
}
