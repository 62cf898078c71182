/**
 * Secrets in command lines and Redis commands given as words: secret flags (`-a`, `--pass`, …,
 * also glued as `-aPW`), `AUTH`/`HELLO`/`CONFIG SET`/`ACL SETUSER` arguments, and the shell
 * words of a command line. Private to `text/`: use `redact.ts`.
 *
 * @module
 */

import { REDACTED, redactUrl } from "./_url.ts";

/** What `redactText` carries from one line (or chunk of a text) to the next. */
export interface RedactState {
  /** The last line was a `CONFIG GET` key whose value (next line) is a secret. */
  secretNext: boolean;
  /** The last line was a command line ending with `\`: this one continues it. */
  continued?: boolean;
  /** The continued line ended with a secret flag: this line's first word is its value. */
  valueNext?: boolean;
}

export const SECRET_CONFIG_KEYS =
  /^(requirepass|masterauth|masteruser|tls-key-file-pass|tls-client-key-file-pass|sentinel-pass|sentinel-user|auth-pass|auth-user|user)$/i;

// Flags whose value is a secret, for redis-benchmark, valkey-benchmark, redis-cli, valkey-cli,
// redis-server and memtier_benchmark.
const SECRET_FLAGS = new Set([
  "-a",
  "--pass",
  "--user",
  "--authenticate",
  "--askpass",
  "--masterauth",
  "--masteruser",
  "--requirepass",
  "--password",
  "--tls-key-file-pass",
]);

// Redis commands that can carry a secret; the rest of the words are read by redactRedisWords.
export const SECRET_COMMANDS = /^(AUTH|AUTH2|HELLO|CONFIG|ACL|MIGRATE|SENTINEL)$/i;

/**
 * Redacts the arguments of one Redis command given as words: `AUTH [user] pw`, `AUTH2`,
 * `HELLO 3 AUTH user pw`, `CONFIG SET requirepass pw [key value …]`, `ACL SETUSER name >pw
 * <pw #hash`, `MIGRATE … AUTH pw`, `SENTINEL SET master auth-pass pw`.
 *
 * @param words The command and its arguments, unquoted.
 * @returns The same words, secrets replaced.
 *
 * @example
 * ```ts
 * import { redactRedisWords } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.deepEqual(redactRedisWords(["auth", "pw"]), ["auth", "***"]);
 * assert.deepEqual(redactRedisWords(["HELLO", "3", "AUTH", "default", "pw"]), ["HELLO", "3", "AUTH", "***", "***"]);
 * assert.deepEqual(redactRedisWords(["ACL", "SETUSER", "a", "on", ">pw", "~*"]), ["ACL", "SETUSER", "a", "on", ">***", "~*"]);
 * assert.deepEqual(redactRedisWords(["GET", "k"]), ["GET", "k"]);
 * ```
 */
export function redactRedisWords(words: readonly string[]): string[] {
  const out = [...words];
  const up = words.map((w) => w.toUpperCase());
  const hideFrom = (i: number, n = Infinity) => {
    for (let k = i; k < out.length && k < i + n; k++) out[k] = REDACTED;
  };
  switch (up[0]) {
    case "AUTH":
    case "AUTH2":
      hideFrom(1);
      break;
    case "HELLO":
    case "MIGRATE": {
      const a = up.findIndex((w, i) => i > 0 && (w === "AUTH" || w === "AUTH2"));
      if (a > 0) hideFrom(a + 1, up[0] === "HELLO" || up[a] === "AUTH2" ? 2 : 1);
      break;
    }
    case "CONFIG":
    case "SENTINEL": {
      // CONFIG SET k v [k v …]; SENTINEL SET master k v …; SENTINEL CONFIG SET k v
      const set = up.indexOf("SET");
      if (set < 1) break;
      let i = up[0] === "SENTINEL" && up[1] === "SET" ? set + 2 : set + 1;
      for (; i + 1 < out.length; i += 2) {
        if (SECRET_CONFIG_KEYS.test(out[i])) out[i + 1] = REDACTED;
      }
      break;
    }
    case "ACL":
      if (up[1] === "SETUSER") {
        for (let i = 3; i < out.length; i++) {
          if (/^[<>#!]./.test(out[i])) out[i] = out[i][0] + REDACTED;
        }
      }
      break;
  }
  return out.map((w, i) => (w === words[i] ? redactUrl(w) : w));
}

/**
 * Redacts secrets in an argument vector: values of `-a`, `--pass`, `--user`, … (also in the
 * `--flag=value` form), credentials in URLs, Redis commands that carry secrets (see
 * {@link redactRedisWords}) and `VAR=value` environment prefixes whose name mentions AUTH,
 * PASS, SECRET or TOKEN. The first word is the program.
 *
 * @param argv The program and its arguments.
 * @returns The same words, secrets replaced by `***`.
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
 * assert.deepEqual(redactArgv(["memtier_benchmark", "-apw", "-DRapw"]), ["memtier_benchmark", "-a***", "-DRa***"]);
 * assert.deepEqual(redactArgv(["memtier_benchmark", "-Ra", "pw", "--auth=pw"]), ["memtier_benchmark", "-Ra", "***", "--auth=***"]);
 * ```
 */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    const glued = GLUED_SECRET.exec(a);
    if (glued) {
      out.push(glued[1] + REDACTED);
    } else if (a.startsWith("-") && eq > 0 && isSecretFlag(a.slice(0, eq))) {
      out.push(`${a.slice(0, eq + 1)}${REDACTED}`);
    } else if (isSecretFlag(a) && i + 1 < argv.length) {
      out.push(a, REDACTED);
      i++;
    } else if (i > 0 && SECRET_COMMANDS.test(a) && !argv[i - 1].startsWith("-")) {
      out.push(...redactRedisWords(argv.slice(i)));
      break;
    } else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(a) && SECRET_ENV_NAME.test(a.slice(0, eq))) {
      out.push(`${a.slice(0, eq + 1)}${REDACTED}`);
    } else {
      out.push(redactUrl(a));
    }
  }
  return out;
}

const SECRET_ENV_NAME = /AUTH|PASS|SECRET|TOKEN/i;

/**
 * Whether a word is a flag whose value is a secret: one of {@link SECRET_FLAGS}, getopt's
 * bundle ending in `-a` (`-Ra PW`, memtier_benchmark), or a prefix of `--authenticate` that
 * getopt_long takes for it (`--auth PW`, `--authen=PW`; no other memtier option starts `--a`).
 */
function isSecretFlag(word: string): boolean {
  return SECRET_FLAGS.has(word) || /^-[DR46v]+a$/.test(word) ||
    (word.length >= 3 && "--authenticate".startsWith(word));
}

// The password glued to its short option (`-aPW`): getopt's form, which memtier_benchmark
// reads, also after flags without a value (`-DRaPW`); redis-cli and redis-benchmark refuse
// it, but a typed password is hidden whatever the tool made of it.
const GLUED_SECRET = /^(-[DR46v]*a)(.+)$/s;

/**
 * Redacts a command line given as one string (as typed in a transcript). Quoting is kept as
 * far as possible: the line is only rewritten where a secret is found, and a trailing `\`
 * (continued on the next line) is kept.
 *
 * @param line The command line.
 * @returns The line with its secret words replaced.
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
 * assert.equal(redactCommandLine("redis-benchmark -a pw \\"), "redis-benchmark -a *** \\");
 * ```
 */
export function redactCommandLine(line: string): string {
  return commandLine(line, [], { secretNext: false }).text;
}

/**
 * One command line (or a continuation of one): `prefix` words stand before it (a program, a
 * secret flag whose value is this line's first word). Sets `state.continued` when the line ends
 * with `\`, and `state.valueNext` when it ends with a secret flag whose value is on the next.
 */
export function commandLine(
  line: string,
  prefix: string[],
  state: RedactState,
): { text: string } {
  const cont = /(?:^|[^\\])(?:\\\\)*\\$/.test(line);
  const body = cont ? line.slice(0, -1) : line;
  let lastPlain = "";
  const text = rewriteWords(body, (plain) => {
    lastPlain = plain.at(-1) ?? "";
    return redactArgv([...prefix, ...plain]).slice(prefix.length);
  });
  state.continued = cont;
  state.valueNext = cont && isSecretFlag(lastPlain);
  return { text: text + (cont ? "\\" : "") };
}

/** Rewrites the words of a shell-like line through `fn`, keeping spacing and unchanged words. */
export function rewriteWords(line: string, fn: (plain: string[]) => string[]): string {
  const parts: string[] = [];
  const re = /(?:[^\s'"\\]+|'[^']*'?|"(?:\\.|[^"\\])*"?|\\.?)+|\s+/g;
  for (const m of line.matchAll(re)) parts.push(m[0]);
  const words = parts.filter((p) => !/^\s+$/.test(p));
  const plain = words.map(unquote);
  const red = fn(plain);
  let w = 0;
  const out = parts.map((p) => {
    if (/^\s+$/.test(p)) return p;
    const i = w++;
    return red[i] === plain[i] ? p : red[i];
  }).join("");
  // the tokenizer covers every character; anything it missed is kept as it was
  return out;
}

export function unquote(word: string): string {
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
