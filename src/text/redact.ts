/**
 * Redaction of secrets, so that no password is ever written to a dataset or printed.
 * {@link redactText} is the one function every output path calls: it knows every shape a
 * secret takes in text (URL credentials, `-a`/`-aPW`/`--pass`/`--user` flags, memtier's JSON
 * `"authenticate"`, `\`-continued command
 * lines, interactive `redis-cli` sessions, `AUTH`/`HELLO … AUTH`/`CONFIG SET requirepass`/`ACL
 * SETUSER >pw`, INFO and config lines, `script(1)` banners, secret environment variables).
 * {@link redactArgv} is its form for an argument vector that must stay a vector.
 *
 * @module
 */

/** What a redacted secret is replaced with. */
export const REDACTED = "***";

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
const SECRET_CONFIG_KEYS =
  /^(requirepass|masterauth|masteruser|tls-key-file-pass|tls-client-key-file-pass|sentinel-pass|sentinel-user|auth-pass|auth-user|user)$/i;
// Redis commands that can carry a secret; the rest of the words are read by redactRedisWords.
const SECRET_COMMANDS = /^(AUTH|AUTH2|HELLO|CONFIG|ACL|MIGRATE|SENTINEL)$/i;
// Schemes whose user info is read up to the last `@` (passwords there hold `@`, `/`, `#` …).
const DB_SCHEMES = /^(redis|rediss|valkey|valkeys|unix|tcp|memcache)s?:\/\/$/i;

/**
 * Replaces the user info of URLs (`redis://user:password@host` → `redis://***:***@host`). For
 * redis-family schemes the user info runs to the last `@` of the URL, so passwords holding `@`,
 * `:`, `/`, `#` or `%` are hidden whole.
 *
 * @param text Any text.
 * @returns The text with URL credentials replaced.
 *
 * @example
 * ```ts
 * import { redactUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(redactUrl("redis://bob:s3cret@10.0.0.1:6379/0"), "redis://***:***@10.0.0.1:6379/0");
 * assert.equal(redactUrl("redis://:s3cret@h"), "redis://:***@h");
 * assert.equal(redactUrl("redis://:p@ss:w/rd#%@127.0.0.1:7412"), "redis://:***@127.0.0.1:7412");
 * assert.equal(redactUrl("redis://h:6379"), "redis://h:6379");
 * // usage texts keep their syntax: `[user:password@]` is a placeholder, not a credential
 * assert.equal(redactUrl("expected redis://[:password@]host[:port]"), "expected redis://[:password@]host[:port]");
 * ```
 */
export function redactUrl(text: string): string {
  if (!text.includes("://")) return text;
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^\s"'`<>]*)/gi, (m, scheme: string, rest) => {
    const authority = DB_SCHEMES.test(scheme) ? rest : rest.replace(/[/?#].*$/, "");
    const at = authority.lastIndexOf("@");
    if (at < 0 || isSyntax(authority.slice(0, at), rest.slice(at))) return m;
    return scheme + hideUserInfo(authority.slice(0, at)) + rest.slice(at);
  });
}

/**
 * Redacts the user info of one whole URL (whatever it holds, spaces and quotes included).
 *
 * @param url A URL as given by a user.
 * @returns The URL, credentials replaced.
 *
 * @example
 * ```ts
 * import { redactWholeUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(redactWholeUrl('redis://u:p w"x@h:1'), "redis://***:***@h:1");
 * ```
 */
export function redactWholeUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/is.exec(url);
  if (!m) return redactText(url);
  const at = m[2].lastIndexOf("@");
  return at < 0 ? url : m[1] + hideUserInfo(m[2].slice(0, at)) + m[2].slice(at);
}

/** A usage text's optional user info, `[user:password@]`: placeholder words, no secret. */
function isSyntax(info: string, after: string): boolean {
  const word = "(user|username|pass|password|passwd|pw)";
  return after.startsWith("@]") &&
    new RegExp(`^\\[${word}?(\\[?:${word}\\]?)?$`).test(info);
}

function hideUserInfo(info: string): string {
  if (info.startsWith(":")) return `:${REDACTED}`;
  return info.includes(":") ? `${REDACTED}:${REDACTED}` : REDACTED;
}

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
    } else if (a.startsWith("-") && eq > 0 && SECRET_FLAGS.has(a.slice(0, eq))) {
      out.push(`${a.slice(0, eq + 1)}${REDACTED}`);
    } else if (SECRET_FLAGS.has(a) && i + 1 < argv.length) {
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
function commandLine(
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
  state.valueNext = cont && SECRET_FLAGS.has(lastPlain);
  return { text: text + (cont ? "\\" : "") };
}

/** Rewrites the words of a shell-like line through `fn`, keeping spacing and unchanged words. */
function rewriteWords(line: string, fn: (plain: string[]) => string[]): string {
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
 * @param key The config or INFO key.
 * @param value Its value.
 * @returns `***` for a secret, else the value with URL credentials redacted.
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
  return redactText(value);
}

/** What {@link redactText} carries from one line (or chunk of a text) to the next. */
export interface RedactState {
  /** The last line was a `CONFIG GET` key whose value (next line) is a secret. */
  secretNext: boolean;
  /** The last line was a command line ending with `\`: this one continues it. */
  continued?: boolean;
  /** The continued line ended with a secret flag: this line's first word is its value. */
  valueNext?: boolean;
}

// A shell prompt (`$ `, `[u@h ~]$ `, `u@h:~$ `) before a command.
const SHELL_PROMPT = /^(\s*(?:\[[^\]]+\][$#]|[\w.-]+@[\w.-]+(?::[^$#\s]*)?[$#]|\$|#|>)\s+)(\S.*)$/;
// An interactive redis-cli / valkey-cli prompt (`127.0.0.1:6379> `, `h:6379[2]> `, `/s.sock> `).
const CLI_PROMPT =
  /^(\s*(?:[\w.-]+\s)?(?:\S+:\d+|\/\S+|not connected)(?:\[\d+\])?(?:\(TX\))?>\s*)(.*)$/;
// A line naming a tool whose flags may carry secrets, anywhere (after `time`, `docker exec` …).
const TOOL_WORD =
  /(?:^|[\s/;|&(`"'])(?:redis|valkey|keydb)-(?:benchmark|cli|server|sentinel)\b|memtier_benchmark\b/;
const CONFIG_GET_KEY =
  /^\s*(?:\d+\)\s*)?"?(requirepass|masterauth|masteruser|tls-key-file-pass|tls-client-key-file-pass|sentinel-pass|auth-pass)"?\s*$/i;
const CONFIG_LINE =
  /^(\s*(?:\d+\)\s*)?"?(?:requirepass|masterauth|masteruser|tls-key-file-pass|tls-client-key-file-pass|sentinel-pass|auth-pass)"?(?:[\s:=]+|\s*$))(.*)$/i;
const SECRET_ENV =
  /\b([A-Z_][A-Z0-9_]*(?:AUTH|PASS|SECRET|TOKEN)[A-Z0-9_]*=)("[^"]*"?|'[^']*'?|\S+)/g;
const BANNER_COMMAND = /(COMMAND=")((?:[^"\\]|\\.)*)(")/g;

/**
 * Redacts every secret kvlab knows the shape of, keeping lines where they were: command lines
 * (at shell prompts, bare, in `script(1)` banners `[COMMAND="…"]`, continued with `\` — a
 * value on the line after its flag included), interactive `redis-cli` sessions (`AUTH`,
 * `HELLO … AUTH`, `CONFIG SET requirepass`, `ACL SETUSER … >pw`), `requirepass` / `masterauth`
 * in INFO, config and `CONFIG GET` output, credentials in URLs and secret environment
 * variables. This is the function every output path (stored raw copies, commands, table
 * values, printed errors and progress) calls.
 *
 * @param text Any text (a whole output, or one chunk of it ending at a line end).
 * @param state Carried from one chunk to the next (a continued command, a `CONFIG GET` key).
 * @returns The text with secrets replaced; the same string when there was nothing to redact.
 *
 * @example
 * ```ts
 * import { redactText } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   redactText('Script started on 2026 [COMMAND="redis-benchmark -a pw -q"]\r\nSET: 1.00\r\n'),
 *   'Script started on 2026 [COMMAND="redis-benchmark -a *** -q"]\r\nSET: 1.00\r\n',
 * );
 * assert.equal(redactText("$ redis-cli -a pw ping\nPONG\n"), "$ redis-cli -a *** ping\nPONG\n");
 * assert.equal(redactText('1) "requirepass"\n2) "pw"\n'), '1) "requirepass"\n2) "***"\n');
 * assert.equal(redactText("127.0.0.1:6379> AUTH alice pw\nOK\n"), "127.0.0.1:6379> AUTH *** ***\nOK\n");
 * assert.equal(redactText('\t\t,"authenticate": "default:pw"\n'), '\t\t,"authenticate": "***"\n');
 * assert.equal(
 *   redactText("$ redis-benchmark -q \\\n  -a \\\n  pw -n 10\n"),
 *   "$ redis-benchmark -q \\\n  -a \\\n  *** -n 10\n",
 * );
 * ```
 */
export function redactText(text: string, state: RedactState = { secretNext: false }): string {
  // Fast path: most outputs hold nothing that could be a secret.
  if (!state.secretNext && !state.continued && !MAYBE_SECRET.test(text)) return text;
  return text.replace(/[^\n]+/g, (line) => {
    const cr = line.endsWith("\r") ? "\r" : "";
    return redactLine(cr ? line.slice(0, -1) : line, state) + cr;
  });
}

/**
 * The same as {@link redactText} (the name ingest and the collectors have used).
 *
 * @param text A raw capture, or a chunk of one ending at a line end.
 * @param state Carried from one chunk to the next.
 * @returns The text with secrets replaced.
 *
 * @example
 * ```ts
 * import { redactRawText } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(redactRawText("requirepass:pw\n"), "requirepass:***\n");
 * ```
 */
export function redactRawText(text: string, state: RedactState = { secretNext: false }): string {
  return redactText(text, state);
}

/** One line, without its line ending. */
function redactLine(line: string, state: RedactState): string {
  let l = line;
  if (state.secretNext) {
    state.secretNext = false;
    const v = /^(\s*(?:\d+\)\s*)?"?)(.*?)("?\s*)$/.exec(l)!;
    if (v[2] !== "") return v[1] + REDACTED + v[3];
  }
  if (state.continued) {
    const prefix = state.valueNext ? ["prog", "-a"] : ["prog"];
    l = commandLine(l, prefix, state).text;
  } else if (CONFIG_GET_KEY.test(l)) {
    state.secretNext = true;
    return l;
  } else {
    l = l.replace(BANNER_COMMAND, (_m, a: string, cmd: string, z: string) => {
      const inner = commandLine(cmd, [], { secretNext: false }).text;
      return a + inner + z;
    });
    l = redactCommandOf(l, state);
    const cfg = CONFIG_LINE.exec(l);
    if (cfg && cfg[2].trim() !== "") l = cfg[1] + REDACTED;
    if (l.includes('"')) l = redactJsonFields(l);
    const tool = TOOL_CONFIG_LINE.exec(l);
    if (tool && tool[2].trim() !== "") l = tool[1] + REDACTED;
  }
  if (l.includes("=")) l = l.replace(SECRET_ENV, (_m, k: string) => k + REDACTED);
  return redactUrl(l);
}

/** The command a line holds, at a prompt or bare, redacted (the line itself otherwise). */
function redactCommandOf(l: string, state: RedactState): string {
  const cli = CLI_PROMPT.exec(l);
  if (cli) return cli[1] + rewriteWords(cli[2], redactRedisWords);
  const shell = SHELL_PROMPT.exec(l);
  const cmd = shell ? shell[2] : l;
  const head = shell ? shell[1] : "";
  if (shell || TOOL_WORD.test(l)) return head + commandLine(cmd, [], state).text;
  if (SECRET_COMMANDS.test(/^\s*"?([A-Za-z0-9]+)/.exec(l)?.[1] ?? "")) {
    return rewriteWords(l, redactRedisWords);
  }
  return l;
}

// A JSON member a tool writes a secret in: memtier_benchmark's `"authenticate": "user:pw"`
// (and the usual names of a password field).
const JSON_SECRET =
  /("(?:authenticate|password|passwd|pass|auth|requirepass|masterauth|auth-pass|sentinel-pass|tls-key-file-pass)"\s*:\s*")((?:[^"\\]|\\.)*)"/gi;
// memtier_benchmark's `--debug` configuration print (`authenticate = pw`).
const TOOL_CONFIG_LINE = /^(\s*authenticate\s*=\s*)(.*)$/i;

/**
 * One line's JSON secret members with their values hidden. memtier writes the password
 * unescaped (`"authenticate": "a"b"`): on a line of its own (memtier's layout) the value runs
 * to the line's last quote.
 */
function redactJsonFields(line: string): string {
  const own =
    /^(\s*,?\s*"(?:authenticate|password|passwd|pass|auth|requirepass|masterauth)"\s*:\s*")(.*)("\s*,?\s*)$/i
      .exec(line);
  if (own) return own[2] === "" ? line : own[1] + REDACTED + own[3];
  return line.replace(JSON_SECRET, (m, k: string, v: string) => v === "" ? m : `${k}${REDACTED}"`);
}

// Anything that may need redacting; texts without a match are returned untouched.
const MAYBE_SECRET =
  /(?:^|[\s"'`=(])-[DR46v]*a|authenticate|"(?:password|passwd|pass|auth)"|--(pass|user|askpass|authenticate|masterauth|masteruser|requirepass|password|tls-key)|:\/\/[^\s]*@|requirepass|masterauth|masteruser|-pass\b|auth-|\bAUTH|\bACL\b|\bHELLO\b|COMMAND=|PASS|SECRET|TOKEN|\\\r?$/im;

/**
 * INFO fields with secret values (`requirepass`, `masterauth`, credentials in URLs) redacted,
 * for tables: what leaves the process is redacted like the raw copy.
 *
 * @param info Parsed INFO fields.
 * @returns The same fields, secret values replaced by `***` (and their number by null).
 *
 * @example
 * ```ts
 * import { redactInfo } from "./redact.ts";
 * import assert from "node:assert/strict";
 * const info = [{ key: "requirepass", value: "pw" }, { key: "used_memory", value: "1" }];
 * assert.deepEqual(redactInfo(info).map((f) => f.value), ["***", "1"]);
 * ```
 */
export function redactInfo<F extends { key: string; value: string }>(info: readonly F[]): F[] {
  return info.map((f) => {
    const value = redactConfigValue(f.key, f.value);
    return value === f.value ? f : { ...f, value, valueNum: null } as F;
  });
}
