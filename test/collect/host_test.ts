import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("hostFacts() reads the CPU model under the permissions kvlab's tasks grant", async () => {
  // the permissions of `deno task kvlab` and ./kvlab: no --allow-all, so no /proc/cpuinfo
  // (`deno eval` would grant every permission: run a file)
  const script = Deno.makeTempFileSync({ suffix: ".ts" });
  Deno.writeTextFileSync(
    script,
    `import { hostFacts } from "${ROOT}src/collect/host.ts";\n` +
      "console.log(JSON.stringify(hostFacts()));\n",
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "--allow-sys",
      "--allow-run",
      "--allow-net",
      script,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const facts = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(typeof facts.cpuModel, "string");
  assert.ok(facts.cpuModel.length > 0, "empty CPU model");
  assert.ok(facts.cpuCount >= 1);
  assert.ok(facts.memoryBytes > 0);
  assert.equal(facts.denoVersion, Deno.version.deno);
});
