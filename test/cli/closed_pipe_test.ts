// A reader that stops early (`kvlab table … | head -c 100`) ends what is shown quietly: no
// "Broken pipe" error, the exit code the command has without the pipe.
import assert from "node:assert/strict";
import { kvlabProcess, TASK_PERMISSIONS } from "../_support/kvlab.ts";
import { ROOT, TESTDATA } from "../_support/testdata.ts";

Deno.test("kvlab table into a pipe its reader closes ends quietly", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-closed-pipe-" });
  try {
    const ingest = await kvlabProcess(["ingest", `${TESTDATA}real`, "--data", data]);
    assert.equal(ingest.code, 0, ingest.stderr);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...TASK_PERMISSIONS,
        `${ROOT}src/cli.ts`,
        "table",
        "latency_distribution",
        "--data",
        data,
        "--format",
        "json",
      ],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // read the first piece, then close the pipe: the rest (over 600 kB, far past what a pipe
    // holds) is written to a pipe nobody reads
    const reader = child.stdout.getReader();
    const first = await reader.read();
    assert.ok(!first.done && first.value.length > 0);
    await reader.cancel();
    const [status, stderr] = await Promise.all([
      child.status,
      new Response(child.stderr).text(),
    ]);
    assert.equal(stderr, "");
    assert.equal(status.code, 0);
  } finally {
    Deno.removeSync(data, { recursive: true });
  }
});
