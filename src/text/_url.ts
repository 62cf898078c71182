/**
 * Credentials in URLs (`redis://user:password@host`), the part of redaction that knows URL
 * syntax, and the word a secret is replaced with. Private to `text/`: use `redact.ts`.
 *
 * @module
 */

/** What a redacted secret is replaced with. */
export const REDACTED = "***";

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

/** A usage text's optional user info, `[user:password@]`: placeholder words, no secret. */
export function isSyntax(info: string, after: string): boolean {
  const word = "(user|username|pass|password|passwd|pw)";
  return after.startsWith("@]") &&
    new RegExp(`^\\[${word}?(\\[?:${word}\\]?)?$`).test(info);
}

export function hideUserInfo(info: string): string {
  if (info.startsWith(":")) return `:${REDACTED}`;
  return info.includes(":") ? `${REDACTED}:${REDACTED}` : REDACTED;
}
