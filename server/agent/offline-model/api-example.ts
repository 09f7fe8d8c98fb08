/**
 * The offline model's answer to "how do I call this from a script": a short curl example (sign
 * in, then list conversations) and the answer's shape, as fenced code (the UI highlights it and
 * gives it a Copy button). Pure.
 * @module
 */

const ASKS = /\b(curl|from (?:a |the |my )?(?:script|terminal|shell|command line)|api example|example (?:of (?:the )?)?api|call (?:the |your |airlock'?s? )?api)\b/i;

const ANSWER = [
  'Sign in for a bearer token, then call the REST api with it:',
  '',
  '```bash',
  'TOKEN=$(curl -s -X POST "$AIRLOCK/api/auth/login" \\',
  '  -H "content-type: application/json" \\',
  '  -d \'{"username": "operator", "password": "…"}\' | jq -r .access_token)',
  'curl -s "$AIRLOCK/api/assistant/conversations?limit=5" -H "authorization: Bearer $TOKEN"',
  '```',
  '',
  'The answer is a page of conversations:',
  '',
  '```json',
  '{ "items": [{ "id": "…", "title": "Service health", "archived": false }], "next_cursor": null }',
  '```',
].join('\n');

/** The example when the message asks for one, else null. */
export function apiExampleAnswer(text: string): string | null {
  return ASKS.test(text) ? ANSWER : null;
}
