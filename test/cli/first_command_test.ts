// A fresh clone's first command prints its answer and one line about fetching kvlab's npm
// packages, not a line per package (`Download …`, `Initialize …`: ~100 of them before).
import assert from "node:assert/strict";
import { ROOT } from "../_support/testdata.ts";

Deno.test("a fresh clone's first ./kvlab command prints one line of set-up", async () => {
  const clone = Deno.makeTempDirSync({ prefix: "kvlab-fresh-clone-" });
  try {
    // what a clone holds, without node_modules/ (Deno's package cache stays: no network here)
    for (const p of ["kvlab", ".ci", "deno.json", "deno.lock", "src"]) {
      const cp = new Deno.Command("cp", { args: ["-a", ROOT + p, clone] }).outputSync();
      assert.equal(cp.code, 0, new TextDecoder().decode(cp.stderr));
    }
    const run = () =>
      new Deno.Command(`${clone}/kvlab`, { args: ["--version"], stdout: "piped", stderr: "piped" })
        .output();
    const first = await run();
    const err = new TextDecoder().decode(first.stderr);
    assert.equal(first.code, 0, err);
    assert.match(new TextDecoder().decode(first.stdout), /^kvlab \d+\.\d+\.\d+ \(deno /);
    assert.deepEqual(err.trim().split("\n"), [
      "kvlab: fetching its npm packages once (deno install, as deno.lock pins them)",
    ]);
    const second = await run();
    assert.equal(new TextDecoder().decode(second.stderr), "");
  } finally {
    Deno.removeSync(clone, { recursive: true });
  }
});
