import assert from "node:assert/strict";

import { denoRun } from "../_support/kvlab.ts";
import { ROOT } from "../_support/testdata.ts";

Deno.test("hostFacts() reads the CPU model under the permissions kvlab's tasks grant", async () => {
  // the permissions of `deno task kvlab` and ./kvlab: no --allow-all, so no /proc/cpuinfo
  // (`deno eval` would grant every permission: run a file)
  const script = Deno.makeTempFileSync({ suffix: ".ts" });
  Deno.writeTextFileSync(
    script,
    `import { hostFacts } from "${ROOT}src/collect/host.ts";\n` +
      "console.log(JSON.stringify(hostFacts()));\n",
  );
  const out = await denoRun(script, []);
  assert.equal(out.code, 0, out.stderr);
  const facts = JSON.parse(out.stdout);
  assert.equal(typeof facts.cpuModel, "string");
  assert.ok(facts.cpuModel.length > 0, "empty CPU model");
  assert.ok(facts.cpuCount >= 1);
  assert.ok(facts.memoryBytes > 0);
  assert.equal(facts.denoVersion, Deno.version.deno);
});
