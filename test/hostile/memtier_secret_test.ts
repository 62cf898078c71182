/**
 * A live memtier run against a server with a short password (issue 21): memtier writes it into
 * its JSON (`"authenticate": "pw"`); the stored raw copy holds `***` instead. (Passwords of
 * six characters and more were already replaced by their text; a short one only by the JSON
 * rule.)
 */

import assert from "node:assert/strict";
import { DenoProcessRunner } from "../../src/collect/process.ts";
import { runMemtier } from "../../src/collect/memtier/run.ts";
import { parseServerUrl } from "../../src/collect/target.ts";
import { toolOrSkip } from "../_support/tools.ts";
import { withServers } from "../_support/servers.ts";
import { allBytes } from "./_cli.ts";

Deno.test("hostile: memtier's JSON keeps no password, however short", async () => {
  const memtier = toolOrSkip("memtier_benchmark", "memtier's JSON and a short password");
  if (!memtier) return;
  const password = "Pw4x";
  await withServers([{ password }], async ([server]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-hostile-mt-pw-" });
    const run = await runMemtier(
      { target: parseServerUrl(server.url), tool: memtier, testTimeS: 3, threads: 1, clients: 1 },
      { data, runner: new DenoProcessRunner() },
    );
    assert.equal(run.status, "complete", run.reason ?? "");
    const written = allBytes(data);
    assert.ok(!written.text.includes(password), "the password is written under --data");
    assert.match(written.text, /"authenticate": "\*\*\*"/);
    Deno.removeSync(data, { recursive: true });
  });
});
