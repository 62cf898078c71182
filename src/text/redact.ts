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

import { hideUserInfo, REDACTED, redactUrl } from "./_url.ts";
import {
  commandLine,
  redactArgv,
  redactCommandLine,
  redactRedisWords,
  type RedactState,
  rewriteWords,
  SECRET_COMMANDS,
  SECRET_CONFIG_KEYS,
} from "./_command_words.ts";

export { redactArgv, redactCommandLine, REDACTED, redactRedisWords, redactUrl };
export type { RedactState };

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
  if (!state.secretNext && !state.continued && !MAYBE_SECRET.test(text)) return redactSent(text);
  return redactSent(text.replace(/[^\n]+/g, (line) => {
    const cr = line.endsWith("\r") ? "\r" : "";
    return redactLine(cr ? line.slice(0, -1) : line, state) + cr;
  }));
}

/** The passwords kvlab sent to servers in this process (see {@link rememberSentSecret}). */
const SENT_SECRETS = new Set<string>();

/**
 * Shortest password that {@link redactText} replaces wherever it appears, the length
 * {@link redactSecret} trusts too (a shorter one would take ordinary words and numbers with it;
 * it is replaced where a server echoes it in the shapes kvlab knows, and by {@link redactSent}
 * given it).
 */
export const MIN_SENT_SECRET_CHARS = 6;

/**
 * Notes a password kvlab sends to a server (a target's, an AUTH of its own): from then on,
 * {@link redactText} replaces it wherever it appears, in this process, so that a server that
 * echoes it back (`ERR unknown command 'auth', with args beginning with: 'pw'`, an INFO field,
 * a pushed message) never gets it printed or stored (issue 30). Empty and absent passwords are
 * ignored.
 *
 * @param secret The password.
 *
 * @example
 * ```ts
 * import { redactText, rememberSentSecret } from "./redact.ts";
 * import assert from "node:assert/strict";
 * rememberSentSecret("s3cret-of-a-doc-test");
 * assert.equal(redactText("-ERR you said s3cret-of-a-doc-test"), "-ERR you said ***");
 * ```
 */
export function rememberSentSecret(secret: string | null | undefined): void {
  if (secret) SENT_SECRETS.add(secret);
}

// A server's echo of a command it does not know (Redis 6.2+: 'auth', with args beginning with:
// 'pw' ; 6.0: `auth`, with args beginning with: `pw`, ) when the command carries a secret.
const ECHOED_ARGS =
  /(unknown (?:sub)?command [`'"]?(?:auth2?|hello|config|acl|migrate|sentinel)\b[^\n]*?with args beginning with:)[^\n]*/gi;

/**
 * Text a server sent back, redacted against the credentials kvlab sent: the arguments a server
 * echoes in its "unknown command" error for a command that carries a secret (`AUTH`, `HELLO`,
 * …), `secret` wherever it appears (any length: the caller knows it was sent), and every
 * password noted by {@link rememberSentSecret} of {@link MIN_SENT_SECRET_CHARS} characters or
 * more. {@link redactText} applies it to everything it redacts.
 *
 * @param text What a server sent, or any text holding it.
 * @param secret The password sent on this connection, when the caller knows it.
 * @returns The text without them.
 *
 * @example
 * ```ts
 * import { redactSent } from "./redact.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   redactSent("ERR unknown command 'auth', with args beginning with: 'pw' "),
 *   "ERR unknown command 'auth', with args beginning with: ***",
 * );
 * assert.equal(redactSent("WRONGPASS pw", "pw"), "WRONGPASS ***");
 * assert.equal(redactSent("ok"), "ok");
 * ```
 */
export function redactSent(text: string, secret?: string): string {
  let out = text.includes("beginning with")
    ? text.replace(ECHOED_ARGS, (_m, head: string) => `${head} ${REDACTED}`)
    : text;
  if (secret) out = out.split(secret).join(REDACTED);
  for (const s of SENT_SECRETS) {
    if (s.length >= MIN_SENT_SECRET_CHARS && out.includes(s)) out = out.split(s).join(REDACTED);
  }
  return out;
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
    // positional: String.replace hands the match and its groups to the callback
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

/**
 * A known password replaced wherever it appears in a tool's output, when it is long enough (6
 * characters or more) to be told apart from ordinary output.
 *
 * @param text The text.
 * @param secret The password ("" for none).
 * @returns The text without it.
 *
 * @example
 * ```ts
 * import { redactSecret } from "./redact.ts";
 * import assert from "node:assert/strict";
 * assert.equal(redactSecret('"auth": "s3cret!"', "s3cret!"), '"auth": "***"');
 * assert.equal(redactSecret("ok 1", "1"), "ok 1");
 * ```
 */
export function redactSecret(text: string, secret: string): string {
  return secret.length >= 6 ? text.split(secret).join(REDACTED) : text;
}
