/**
 * What a real model is asked for a conversation's title, and how its reply becomes one (issue 29,
 * item 3). Pure: first-title.ts asks (through agent/title-model.ts, which caps the cost) and
 * writes the result over the rule's title (title-rule.ts) while that title still stands.
 *
 *   "Title: \"Payments API health check.\"" -> "Payments API health check"
 * @module
 */
import type { TitlePrompt } from '../agent/index.ts';
import { capTitle, cleanPhrase } from './title-rule.ts';

/** Six words, under TITLE_MAX_WORDS: a model that overshoots a little still fits the cut (capTitle). */
export const MODEL_TITLE_SYSTEM = 'Write a title of at most 6 words for this conversation. Answer with the title only.';

/**
 * Characters of the first message, and of the answer, the prompt carries at most. A title needs
 * the gist, which the start gives; the cap keeps the prompt small (its cost flat) however long
 * the message or the answer.
 */
export const MODEL_TITLE_INPUT_CHARS = 600;

/**
 * The prompt for a conversation's first message and answer, each cut to MODEL_TITLE_INPUT_CHARS.
 * @example modelTitlePrompt('why is checkout slow?', 'The p99 latency of checkout-api…').system // MODEL_TITLE_SYSTEM
 */
export function modelTitlePrompt(firstMessage: string, answer: string): TitlePrompt {
  // A message of files only has no words: the answer alone names it.
  const message = excerpt(firstMessage) || '(only attached files)';
  return { system: MODEL_TITLE_SYSTEM, user: `First message:\n${message}\n\nAnswer:\n${excerpt(answer)}` };
}

/** Trimmed and cut to MODEL_TITLE_INPUT_CHARS, "…" included, never inside a surrogate pair (half an emoji). */
function excerpt(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length <= MODEL_TITLE_INPUT_CHARS) return trimmed;
  return `${trimmed.slice(0, MODEL_TITLE_INPUT_CHARS - 1).replace(/[\uD800-\uDBFF]$/, '').trimEnd()}…`;
}

/** A reasoning model's thoughts, closed or cut off by the token cap: never part of the title. */
const THINKING = /<think>[\s\S]*?(<\/think>|$)/gi;
/** A label before the title ("Title:", "Here is a title:"), though the prompt asks for the title only. */
const LABEL = /^(here(?:'s| is) (?:a |the |your )?)?(suggested |conversation )?title( for this conversation)?\s*[:：—–-]\s*/i;
/** Markdown at the ends: heading, quote and list marks, emphasis and code marks. */
const MARKS = /^[#>*_`~\s-]+|[*_`~\s]+$/g;
/** Emphasis and code marks inside ("the `db-primary` window"): a title is plain text. */
const INLINE_MARKS = /\*\*|`/g;
const QUOTES = /^["'“”‘’«»„]+|["'“”‘’«»„]+$/g;
/** End punctuation but the question mark: a question stays one, as in the rule's titles. */
const END_PUNCTUATION = /[\s.,;:!…]+$/u;

/**
 * The model's reply as a title: its first line with words (thoughts, labels, markdown, quotes and
 * end punctuation taken off, in any nesting), control characters removed, whitespace collapsed,
 * cut to TITLE_MAX_WORDS / TITLE_MAX_CHARS. '' when nothing is left: the rule's title then stays.
 * @example cleanModelTitle('**Title:** "Payments API health check."') // 'Payments API health check'
 */
export function cleanModelTitle(reply: string): string {
  for (const line of reply.replace(THINKING, '').split(/\r\n|\r|\n/)) {
    const text = unwrap(line);
    if (!text) continue;
    const phrase = cleanPhrase(text);
    // The model's own casing stays ("iOS crash reports"); only the size is cut.
    if (phrase) return capTitle(text.endsWith('?') ? `${phrase}?` : phrase);
  }
  return '';
}

/** Takes labels, marks, quotes and end punctuation off until none is left ("**Title:** \"X.\"" nests three). */
function unwrap(line: string): string {
  let text = line.replace(INLINE_MARKS, '').trim();
  for (let before = ''; before !== text; ) {
    before = text;
    text = text.replace(MARKS, '').replace(LABEL, '').replace(QUOTES, '').replace(END_PUNCTUATION, '').trim();
  }
  return text;
}
