/**
 * What PostgreSQL refuses in text and jsonb: U+0000 (text cannot hold a NUL byte, jsonb refuses
 * the `\u0000` escape). Text from the model, tools and MCP servers may carry it, and refusing it at
 * the write would fail the turn and lose the answer, so the table modules that store that text
 * (messages, the event ledger) pass it through here: each NUL becomes U+FFFD, the replacement
 * character. Client input never gets here with a NUL: the edges refuse it (VALIDATION_ERROR).
 * Pure; the JSON form works on the serialized text, so it adds no walk (and no recursion) of its own.
 * @module
 */

const REPLACEMENT = '\uFFFD';

/** `text` with each U+0000 replaced by U+FFFD (the same string when there is none). */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', REPLACEMENT) : text;
}

/**
 * An escape `\u0000` in JSON text: preceded by an even number of backslashes (an odd number would
 * make it the literal characters `\u0000` of a string, which PostgreSQL stores as they are).
 */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** JSON.stringify(value) for a jsonb column, with every NUL in keys and strings as U+FFFD. */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\u0000') ? json.replace(NUL_ESCAPE, `$1${REPLACEMENT}`) : json;
}
