// Usage texts (errors, --help) keep their URL syntax: `[user:password@]` is a placeholder that
// redaction leaves alone, while credentials in real URLs, even bracketed, are still hidden.
import assert from "node:assert/strict";
import { redactText, redactUrl } from "../../src/collect/mod.ts";
import { ROOT } from "../_support/testdata.ts";

/** URL syntax as usage texts write it: placeholders in brackets, no credentials. */
const USAGE_SYNTAX = [
  "expected redis://[user:password@]host[:port][/db], rediss://…",
  "redis://[:password@]host[:port] (plain TCP)",
  "redis[s]://[user[:pass]@]host[:port][/db]",
  "redis://[username:pw@]host",
];

Deno.test("redactUrl() keeps usage syntax and hides credentials", async (t) => {
  await t.step("placeholders are kept", () => {
    for (const text of USAGE_SYNTAX) {
      assert.equal(redactUrl(text), text);
      assert.equal(redactText(text), text);
    }
  });
  await t.step("secrets are still hidden, bracketed or not", () => {
    assert.equal(redactUrl("redis://[:hunter2@]h"), "redis://***:***@]h");
    assert.equal(redactUrl("redis://[:secret@]h"), "redis://***:***@]h");
    assert.equal(redactUrl("redis://bob:password@h"), "redis://***:***@h");
    assert.equal(redactUrl("redis://:password@h:1"), "redis://:***@h:1");
  });
  await t.step(
    "the CLI's error and help show the syntax (the process redacts what it prints)",
    () => {
      const kvlab = (...args: string[]) => {
        const r = new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", `${ROOT}src/cli.ts`, ...args],
          stdout: "piped",
          stderr: "piped",
        }).outputSync();
        return new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
      };
      const err = kvlab("pubsub", "--url", "http://x", "--data", "d", "--rate", "1");
      assert.match(err, /expected redis:\/\/\[user:password@\]host\[:port\]\[\/db\]/);
      assert.match(kvlab("pubsub", "--help"), /redis:\/\/\[:password@\]host\[:port\]/);
    },
  );
});
