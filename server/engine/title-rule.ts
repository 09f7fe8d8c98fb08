/**
 * The rule's conversation title (issue 29, item 3): a short noun phrase from the first message and
 * its answer, so that the sidebar stops filling with rows that are all the first message cut at the
 * same place. Pure: first-title.ts writes it once the first answer ends, for every model. The
 * offline model's title stays this one; a real model's title then replaces it when the model
 * answers one small prompt (model-title.ts), cut to the same limits (capTitle).
 *
 *   "can you check the health of all services?" -> "Health of all services"
 *   "deploy checkout-api 2.4.1 to staging"      -> "Deploy checkout-api 2.4.1 to staging"
 * @module
 */

/** Words in a title at most; a longer phrase is cut at a word and ends with "…". */
export const TITLE_MAX_WORDS = 7;
/** Characters in a title at most (a single very long word is cut too). */
export const TITLE_MAX_CHARS = 48;

/** Politeness and asking that say nothing about the subject, taken off the front (repeatedly). */
const LEAD_INS = [
  /^(hi|hello|hey)( there)?\b[,!.]?\s*/i,
  /^(ok(ay)?|so|now|also|then)\b[,]?\s+/i,
  /^please\s+/i,
  /^(can|could|would|will) you( please)?\s+/i,
  /^(i('d| would) like( you)? to|i want( you)? to|i need( you)? to|let'?s|help me( to)?)\s+/i,
  /^(i need|i want)\s+/i,
];

/** Verbs of looking: the title is what is looked at ("check the health of X" -> "Health of X"). */
const LOOK_VERBS = /^(check|show( me)?|get|give me|list|find|look( up| at)?|tell me( about)?|what( is|'s| are)|how( is|'s| are)|display|fetch|see|search( for)?|summari[sz]e|explain|describe|view|inspect|investigate|review)\s+/i;

const QUESTION = /^(why|how|what|when|where|who|which|is|are|can|could|does|do|did|should|will)\b/i;

const ARTICLES = /^(the|a|an|my|our|all of the)\s+/i;

/** Whitespace collapsed, bidi and other control characters removed, end punctuation dropped. */
export function cleanPhrase(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B-\u001F\u007F\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s?!.,;:…]+$/u, '');
}

/** Lines and sentences, in order. */
function segments(text: string): string[] {
  return text.split(/\n|(?<=[.?!])\s/);
}

const GREETING_ONLY = /^(hi|hello|hey)( there)?$/i;

function stripLeadIns(text: string): string {
  let out = text;
  for (let changed = true; changed; ) {
    changed = false;
    for (const re of LEAD_INS) {
      const next = out.replace(re, '');
      if (next !== out && next) {
        out = next;
        changed = true;
      }
    }
  }
  return out;
}

/**
 * A phrase cut to a title's size: at most TITLE_MAX_WORDS words and TITLE_MAX_CHARS characters, cut
 * at a word and ending with "…". The one cut every title goes through, the rule's or a model's.
 * @example capTitle('payments-api latency in the eu region after the deploy') // 'payments-api latency in the eu region after…'
 */
export function capTitle(phrase: string): string {
  const words = phrase.split(' ');
  let out = words.slice(0, TITLE_MAX_WORDS).join(' ');
  let cut = words.length > TITLE_MAX_WORDS;
  if (out.length > TITLE_MAX_CHARS) {
    // Room for the "…": cut at the last whole word, or inside a single long one.
    const room = out.slice(0, TITLE_MAX_CHARS - 1);
    out = (out.charAt(TITLE_MAX_CHARS - 1) === ' ' ? room : room.replace(/\s+\S*$/, '')) || room;
    cut = true;
  }
  out = out.replace(/\s+(of|to|for|in|on|at|and|or|with|the|a|an|from|by)$/i, '');
  return cut ? `${out.replace(/[\s,;:.]+$/, '')}…` : out;
}

function capitalise(text: string): string {
  return text.charAt(0).toLocaleUpperCase() + text.slice(1);
}

/** The first line or sentence that says more than a greeting, as a phrase. */
function phraseOf(text: string): string {
  let phrase = '';
  let asked = false;
  for (const segment of segments(text)) {
    phrase = stripLeadIns(cleanPhrase(segment));
    asked = segment.trim().endsWith('?');
    if (phrase && !GREETING_ONLY.test(phrase)) break;
    phrase = '';
  }
  const looked = phrase.replace(LOOK_VERBS, '');
  if (looked !== phrase && looked) phrase = looked.replace(ARTICLES, '') || looked;
  phrase = cleanPhrase(phrase);
  // A question that stays one ("Why is checkout slow?") keeps its mark.
  return asked && QUESTION.test(phrase) ? `${phrase}?` : phrase;
}

/**
 * The title for a conversation from its first message and its first answer: the message as a noun
 * phrase (lead-ins and verbs of looking dropped, capitalised, a question keeping its mark, at most 7 words / 48 characters); the
 * answer's first sentence when the message has no words (only files); "New conversation" when
 * neither has.
 * @example titleFor('can you check the health of all services?', '…') // 'Health of all services'
 */
export function titleFor(firstMessage: string, answer: string): string {
  const phrase = phraseOf(firstMessage) || phraseOf(answer);
  return phrase ? capitalise(capTitle(phrase)) : 'New conversation';
}
