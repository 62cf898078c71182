// .ci/summary: the plain "N passed, N failed" line CI ends with, from the `deno test` runs of
// .ci/test (test/ in two runs, then the JSDoc examples), on logs shaped as Deno prints them.
import assert from "node:assert/strict";

const summary = async (log: string) => {
  const p = new Deno.Command("bash", {
    args: [new URL("../.ci/summary", import.meta.url).pathname],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = p.stdin.getWriter();
  await w.write(new TextEncoder().encode(log));
  await w.close();
  const out = await p.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
};

const green = (s: string) => `\x1b[0m\x1b[32m${s}\x1b[0m`;

const mark = (name: string, code: number) => `kvlab-test-run ${name} exit=${code}`;

Deno.test(".ci/summary adds up both runs' summaries, colours and steps included", async () => {
  const log = [
    `${green("ok")} | 309 passed (541 steps) | 0 failed | 2 ignored (9m12s)`,
    "",
    mark("test/", 0),
    "running 1 test from ./src/version.ts#6-11.ts",
    `${green("ok")} | 332 passed | 0 failed \x1b[0m\x1b[38;5;245m(1m0s)\x1b[0m`,
    mark("src/", 0),
  ].join("\n");
  assert.deepEqual(await summary(log), { code: 0, stdout: "641 passed, 0 failed\n", stderr: "" });
});

Deno.test(".ci/summary fails on a failed test in either run", async () => {
  const log = [
    "\x1b[0m\x1b[31mFAILED\x1b[0m | 308 passed (540 steps) | 1 failed (1 step) (9m12s)",
    "error: Test failed",
    mark("test/", 1),
    "ok | 332 passed | 0 failed (1m0s)",
    mark("src/", 0),
  ].join("\n");
  const r = await summary(log);
  assert.equal(r.stdout, "640 passed, 1 failed\n");
  assert.equal(r.code, 1);
});

Deno.test(".ci/summary counts a run that failed without a failed test, or never ran", async (t) => {
  await t.step("a crash after a test printed a summary-shaped line", async () => {
    const r = await summary(
      ["ok | 5 passed | 0 failed (1s)", "error: Uncaught panic", mark("test/", 101)].join("\n") +
        "\nok | 332 passed | 0 failed (1m0s)\n" + mark("src/", 0),
    );
    assert.equal(r.stdout, "337 passed, 1 failed\n");
    assert.match(r.stderr, /the run of test\/ exited 101 with no failed test/);
    assert.equal(r.code, 1);
  });
  await t.step("a Deno.test.only (Deno exits 1, its summary says 0 failed)", async () => {
    const log = ["ok | 1 passed | 0 failed | 308 filtered out (2s)", mark("test/", 1)].join("\n") +
      "\nok | 332 passed | 0 failed (1m0s)\n" + mark("src/", 0);
    const r = await summary(log);
    assert.equal(r.stdout, "333 passed, 1 failed\n");
    assert.equal(r.code, 1);
  });
  await t.step("a type error: no summary at all", async () => {
    const r = await summary(["error: Type checking failed.", mark("test/", 1)].join("\n"));
    assert.equal(r.stdout, "0 passed, 2 failed\n");
    assert.match(r.stderr, /expected the 2 runs of \.ci\/test, found 1/);
    assert.equal(r.code, 1);
  });
  await t.step("the runs .ci/test announces: three, and one of them missing", async () => {
    const runs = [
      "kvlab-test-runs 3",
      "ok | 120 passed | 0 failed (1m0s)",
      mark("test/ (two at a time)", 0),
      "ok | 300 passed (12 steps) | 0 failed (9m0s)",
      mark("test/ (one at a time)", 0),
      "ok | 330 passed | 0 failed (1m0s)",
      mark("src/", 0),
    ];
    assert.deepEqual(await summary(runs.join("\n")), {
      code: 0,
      stdout: "750 passed, 0 failed\n",
      stderr: "",
    });
    const cut = await summary(runs.slice(0, 5).join("\n"));
    assert.equal(cut.stdout, "420 passed, 1 failed\n");
    assert.match(cut.stderr, /expected the 3 runs of \.ci\/test, found 2/);
    assert.equal(cut.code, 1);
  });
  await t.step("nothing ran", async () => {
    assert.deepEqual(await summary(""), {
      code: 1,
      stdout: "0 passed, 2 failed\n",
      stderr: "expected the 2 runs of .ci/test, found 0\n",
    });
  });
});

Deno.test(".ci/summary repeats each failed test and its error's first lines before its line", async () => {
  const log = [
    "kvlab-test-runs 1",
    "running 2 tests from ./test/a_test.ts",
    "",
    " ERRORS ",
    "",
    "outer ... inner => ./test/a_test.ts:1:43",
    "error: AssertionError: Expected values to be strictly equal:",
    "",
    "1 !== 2",
    "    at file:///w/test/a_test.ts:1:71",
    "    at innerWrapped (ext:cli/40_test.js:300:11)",
    "",
    " FAILURES ",
    "",
    "outer ... inner => ./test/a_test.ts:1:43",
    "",
    "\x1b[0m\x1b[31mFAILED\x1b[0m | 1 passed | 1 failed (1 step) (74ms)",
    "",
    "error: Test failed",
    mark("test/", 1),
  ].join("\n");
  const r = await summary(log);
  assert.equal(
    r.stdout,
    [
      "failed: outer ... inner => ./test/a_test.ts:1:43",
      "    error: AssertionError: Expected values to be strictly equal:",
      "    1 !== 2",
      "1 passed, 1 failed",
      "",
    ].join("\n"),
  );
  assert.equal(r.code, 1);
});
