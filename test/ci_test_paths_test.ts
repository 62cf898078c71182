// .ci/test (`./kvlab test`, `deno task test`) given paths runs those only, in one run: it ran the
// whole suite (12 minutes) and the paths on top.
import assert from "node:assert/strict";

/** Runs .ci/test with `args` (killed after 3 minutes: the whole suite would take 12). */
async function ciTest(args: string[]) {
  const p = new Deno.Command("bash", {
    args: [new URL("../.ci/test", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const timer = setTimeout(() => p.kill("SIGKILL"), 180_000);
  try {
    const out = await p.output();
    return {
      code: out.code,
      text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A nested run's output, indented: its own summary and marker lines must not be read by
 * .ci/summary as this suite's when a message prints them. */
const quoted = (text: string) => text.replace(/^/gm, "  | ");

Deno.test(".ci/test runs the paths it is given, and only them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kvlab-ci-test-" });
  try {
    const pass = `${dir}/pass_test.ts`;
    const fail = `${dir}/fail_test.ts`;
    await Deno.writeTextFile(pass, 'Deno.test("passes", () => {});\n');
    await Deno.writeTextFile(
      fail,
      'Deno.test("fails", () => { throw new Error("on purpose"); });\n' +
        'Deno.test("skipped by the filter", () => {});\n',
    );
    const ok = await ciTest([pass]);
    assert.equal(ok.code, 0, quoted(ok.text));
    assert.match(ok.text, /ok \| 1 passed \| 0 failed/);
    assert.match(ok.text, new RegExp(`kvlab-test-run ${pass} exit=0`));
    // nothing of the suite's own runs
    assert.doesNotMatch(ok.text, /kvlab-test-run (test|src)\/ /);
    assert.doesNotMatch(ok.text, /running \d+ tests? from \.\/(test|src)\//);

    // a failure fails the run, and options still reach deno test
    const bad = await ciTest(["--filter", "fails", fail, pass]);
    assert.notEqual(bad.code, 0, quoted(bad.text));
    assert.match(bad.text, /0 passed \| 1 failed \| 2 filtered out/);

    // an option's value that is a file is no path, and the arguments keep their order: the
    // report goes to report.xml (once it existed, it was taken for a path, and the report was
    // written over the test file)
    const report = `${dir}/report.xml`;
    await Deno.writeTextFile(report, "");
    const source = await Deno.readTextFile(pass);
    const junit = await ciTest([pass, "--junit-path", report]);
    assert.equal(junit.code, 0, quoted(junit.text));
    assert.equal(await Deno.readTextFile(pass), source);
    assert.match(await Deno.readTextFile(report), /<testsuites name="deno test" tests="1"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
