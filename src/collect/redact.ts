/**
 * Redaction of secrets in command lines, URLs and config values, so that no password is ever
 * written to a dataset.
 *
 * @module
 */

import { readScriptBanner } from "./_lines.ts";

/** What a redacted secret is replaced with. */
export const REDACTED = "***";

// Flags whose value is a secret, for redis-benchmark, valkey-benchmark, redis-cli, valkey-cli and
// memtier_benchmark.
const SECRET_FLAGS = new Set([
  "-a",
  "--pass",
  "--user",
  "--authenticate",
  "--askpass",
  "--masterauth",
  "--requirepass",
  "--password",
]);
const SECRET_CONFIG_KEYS =
  /^(requirepass|masterauth|masteruser|tls-key-file-pass|tls-client-key-file-pass|sentinel-pass|user)$/i;

/**
 * Replaces `user:password@` in URLs (redis://, rediss://, valkey://, http:// …) with `***:***@`.
 *
 * @example
 * ```ts
 * import { redactUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(redactUrl("redis://bob:s3cret@10.0.0.1:6379/0"), "redis://***:***@10.0.0.1:6379/0");
 * assert.equal(redactUrl("redis://:s3cret@h"), "redis://:***@h");
 * assert.equal(redactUrl("redis://h:6379"), "redis://h:6379");
 * ```
 */
export function redactUrl(text: string): string {
  return text.replace(
    /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/]*)(?::([^\s@/]*))?@/gi,
    (_m, scheme: string, user: string, pass: string | undefined) => {
      if (pass === undefined) return `${scheme}${user === "" ? "" : REDACTED}@`;
      return `${scheme}${user === "" ? "" : REDACTED}:${REDACTED}@`;
    },
  );
}

/**
 * Redacts secrets in an argument vector: values of `-a`, `--pass`, `--user`, … (also in the
 * `--flag=value` form), credentials in URLs, `AUTH` arguments, `CONFIG SET requirepass …` and
 * `VAR=value` environment prefixes whose name mentions AUTH, PASS, SECRET or TOKEN.
 *
 * @example
 * ```ts
 * import { redactArgv } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   redactArgv(["redis-benchmark", "-a", "pw", "--user=bob", "-u", "redis://a:b@h"]),
 *   ["redis-benchmark", "-a", "***", "--user=***", "-u", "redis://***:***@h"],
 * );
 * assert.deepEqual(redactArgv(["redis-cli", "AUTH", "u", "pw"]), ["redis-cli", "AUTH", "***", "***"]);
 * ```
 */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    if (a.startsWith("-") && eq > 0 && SECRET_FLAGS.has(a.slice(0, eq))) {
      out.push(`${a.slice(0, eq + 1)}${REDACTED}`);
    } else if (SECRET_FLAGS.has(a) && i + 1 < argv.length) {
      out.push(a, REDACTED);
      i++;
    } else if (/^AUTH$/i.test(a) && i > 0) {
      out.push(a);
      while (i + 1 < argv.length && !argv[i + 1].startsWith("-")) {
        out.push(REDACTED);
        i++;
      }
    } else if (SECRET_CONFIG_KEYS.test(a) && i > 0 && /^SET$/i.test(argv[i - 1])) {
      out.push(a);
      if (i + 1 < argv.length) {
        out.push(REDACTED);
        i++;
      }
    } else if (
      /^[A-Za-z_][A-Za-z0-9_]*=/.test(a) && /AUTH|PASS|SECRET|TOKEN/i.test(a.slice(0, eq))
    ) {
      out.push(`${a.slice(0, eq + 1)}${REDACTED}`);
    } else {
      out.push(redactUrl(a));
    }
  }
  return out;
}

/**
 * Redacts a command line given as one string (as typed in a transcript). Quoting is kept as
 * far as possible: the line is only rewritten where a secret is found.
 *
 * @example
 * ```ts
 * import { redactCommandLine } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   redactCommandLine("redis-benchmark -h db -a 'my pw' -q"),
 *   "redis-benchmark -h db -a *** -q",
 * );
 * assert.equal(redactCommandLine("REDISCLI_AUTH=x redis-cli ping"), "REDISCLI_AUTH=*** redis-cli ping");
 * ```
 */
export function redactCommandLine(line: string): string {
  // Walk the words keeping their original spelling, replacing the secret ones.
  const parts: string[] = [];
  const re = /(?:[^\s'"\\]+|'[^']*'?|"(?:\\.|[^"\\])*"?|\\.)+|\s+/g;
  for (const m of line.matchAll(re)) parts.push(m[0]);
  const words = parts.filter((p) => !/^\s+$/.test(p));
  const plain = words.map(unquote);
  const red = redactArgv(plain);
  let w = 0;
  return parts.map((p) => {
    if (/^\s+$/.test(p)) return p;
    const i = w++;
    return red[i] === plain[i] ? p : red[i];
  }).join("");
}

function unquote(word: string): string {
  let out = "";
  for (let i = 0; i < word.length; i++) {
    const c = word[i];
    if (c === "'") {
      const end = word.indexOf("'", i + 1);
      out += word.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? word.length : end;
    } else if (c === '"') {
      i++;
      while (i < word.length && word[i] !== '"') {
        if (word[i] === "\\" && i + 1 < word.length) i++;
        out += word[i++];
      }
    } else if (c === "\\" && i + 1 < word.length) {
      out += word[++i];
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * Redacts a server config value when its key names a secret (`requirepass`, `masterauth`, …).
 *
 * @example
 * ```ts
 * import { redactConfigValue } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(redactConfigValue("requirepass", "pw"), "***");
 * assert.equal(redactConfigValue("requirepass", ""), "");
 * assert.equal(redactConfigValue("maxmemory", "0"), "0");
 * ```
 */
export function redactConfigValue(key: string, value: string): string {
  if (SECRET_CONFIG_KEYS.test(key) && value !== "") return REDACTED;
  return redactUrl(value);
}

const RAW_PROMPT = /^(\s*(?:\[[^\]]+\][$#]|[\w.-]+@[\w.-]+(?::[^$#\s]*)?[$#]|\$)\s+)(\S.*)$/;
const RAW_BARE =
  /^(\s*)((?:\S*\/)?(?:redis|valkey)-(?:benchmark|cli)\s.*|(?:\S*\/)?memtier_benchmark\s.*)$/;

/**
 * Redacts secrets in a raw capture while keeping its lines where they were: command lines at
 * prompts, `script(1)` banners (`[COMMAND="… -a pw …"]`), credentials in URLs, and
 * `requirepass` / `masterauth` values in INFO-style or config lines.
 *
 * @returns The text with secrets replaced; the same string when there was nothing to redact.
 *
 * @example
 * ```ts
 * import { redactRawText } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   redactRawText('Script started on 2026 [COMMAND="redis-benchmark -a pw -q"]\r\nSET: 1.00\r\n'),
 *   'Script started on 2026 [COMMAND="redis-benchmark -a *** -q"]\r\nSET: 1.00\r\n',
 * );
 * assert.equal(redactRawText("$ redis-cli -a pw ping\nPONG\n"), "$ redis-cli -a *** ping\nPONG\n");
 * assert.equal(redactRawText('1) "requirepass"\n2) "pw"\n'), '1) "requirepass"\n2) "***"\n');
 * ```
 */
export function redactRawText(text: string, state: RedactState = { secretNext: false }): string {
  // Fast path: most outputs hold nothing that could be a secret.
  if (!state.secretNext && !MAYBE_SECRET.test(text)) return text;
  let secretNext = state.secretNext; // CONFIG GET prints the key on one line, the value on the next
  const out = text.replace(/[^\n]*/g, (line) => {
    if (line === "") return line;
    const cr = line.endsWith("\r") ? "\r" : "";
    let l = cr ? line.slice(0, -1) : line;
    if (secretNext) {
      secretNext = false;
      const v = /^(\s*(?:\d+\)\s*)?"?)(.*?)("?\s*)$/.exec(l)!;
      if (v[2] !== "") return v[1] + REDACTED + v[3] + cr;
    }
    if (
      /^\s*(?:\d+\)\s*)?"?(requirepass|masterauth|masteruser|tls-key-file-pass|tls-client-key-file-pass)"?\s*$/i
        .test(l)
    ) {
      secretNext = true;
      return line;
    }
    l = redactScriptBanner(l);
    const p = RAW_PROMPT.exec(l) ?? RAW_BARE.exec(l);
    if (p) l = p[1] + redactCommandLine(p[2]);
    const cfg = /^(\s*(?:requirepass|masterauth|masteruser)[\s:=]+)(\S.*)$/i.exec(l);
    if (cfg) l = cfg[1] + REDACTED;
    l = redactUrl(l);
    return l + cr;
  });
  state.secretNext = secretNext;
  return out;
}

/** Redacts the command of a `script(1)` banner, wherever the banner starts in the line. */
function redactScriptBanner(line: string): string {
  const at = line.indexOf("Script started on ");
  const banner = at < 0 ? null : readScriptBanner(line.slice(at));
  if (!banner?.commandAt) return line;
  const start = at + banner.commandAt.start;
  const end = at + banner.commandAt.end;
  return line.slice(0, start) + redactCommandLine(line.slice(start, end)) + line.slice(end);
}

/** What {@link redactRawText} carries from one chunk of a text to the next. */
export interface RedactState {
  /** The last line was a `CONFIG GET` key whose value (next line) is a secret. */
  secretNext: boolean;
}

// Anything that may need redacting; texts without a match are returned untouched.
const MAYBE_SECRET =
  /-a\s|--(pass|user|askpass|authenticate|masterauth|requirepass|password)\b|:\/\/[^\s/]*@|requirepass|masterauth|masteruser|tls-key-file-pass|tls-client-key-file-pass|\bAUTH\b|COMMAND=|PASS|SECRET|TOKEN/i;
