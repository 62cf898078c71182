import assert from "node:assert/strict";
import { cli } from "./_cli.ts";

Deno.test("kvlab doctor: what it checked, what it recommends, a verdict", async (t) => {
  await t.step("reads this machine over a short sample", async () => {
    const r = await cli(["doctor", "--sample-s", "0.2"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert.match(lines[0], /^kvlab doctor: .* \(checked over 0\.2 s\)$/);
    for (const what of ["CPUs", "load average", "other processes", "steal", "iowait"]) {
      assert.ok(lines.some((l) => l.startsWith(`  ${what} `)), what);
    }
    assert.match(r.stdout, /^ {2}CPU governor {6}\S+/m);
    assert.match(r.stdout, /^ {2}turbo boost {7}(on|off|unknown)$/m);
    assert.match(r.stdout, /^ {2}redis-server {6}\S+/m);
    assert.match(r.stdout, /^recommendations:\n {2}- /m);
    // the pinning advice names the plan field that does it
    assert.match(r.stdout, /cpus: \{ client: "1", server: "0" \}/);
    assert.match(
      lines.filter(Boolean).at(-1)!,
      /^verdict: (ready|not ready \(\d+ problems?: .+\))/,
    );
  });
  await t.step("a sample outside 0.1–60 s is a usage error", async () => {
    const r = await cli(["doctor", "--sample-s", "0"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /invalid --sample-s: 0 \(expected 0\.1 to 60 seconds\)/);
  });
});
