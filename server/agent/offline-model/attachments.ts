/**
 * Attached files for the offline model: it finds the framed attachments in the user's message
 * (server/attachments frames them) and answers the two demo questions from them: a summary (line
 * and word counts, first lines) and "what went wrong" (the lines that mention an error or failure).
 * It never takes a request from inside a file: intents come from the user's own words only. Pure.
 * @module
 */

/** One attachment as framed in the prompt. */
export interface FramedAttachment {
  name: string;
  type: string;
  size: number;
  /** The content (maybe head + cut note + tail), or our one-line note when it was not read. */
  body: string;
}

const FRAME = /<<<attachment (\S+) name=("(?:[^"\\]|\\.)*") type=(\S+) size=(\d+)>>>\n[^\n]*\n([\s\S]*?)\n?<<<end attachment \1>>>/g;

/** The attachments framed in a text, in order. */
export function parseAttachments(text: string): FramedAttachment[] {
  return [...text.matchAll(FRAME)].map((m) => ({ name: JSON.parse(m[2]) as string, type: m[3], size: Number(m[4]), body: m[5] }));
}

/** A text without its attachment frames: the user's own words. */
export function withoutAttachments(text: string): string {
  return text.replace(FRAME, '').trim();
}

const NOTE = /^\[[^\n]*\]$/;
const CUT = /\n\[Attachment cut: [^\n]*\]\n/;
const ERROR_LINE = /\b(error|errors|fail|failed|failure|failing|fatal|exception|panic|critical)\b/i;
const MAX_QUOTED = 20;

/** "what went wrong", "any errors in the log", "why did it fail". */
export const ASKS_WHAT_WENT_WRONG = /\b(what went wrong|went wrong|errors?|fail(ed|ure|s|ing)?|problems?|issues?|broken|crash(ed)?)\b/i;
/** "summarize the attached file", "what's in it", "describe the document". */
export const ASKS_SUMMARY = /\b(summar(y|ise|ize)|tl;?dr|overview|describe|what('?s| is) in)\b/i;
/** Words that point back at a file attached earlier. */
export const MENTIONS_FILE = /\b(attach(ed|ment)?s?|files?|logs?|documents?|pdf|csv|upload(ed)?)\b/i;

function isNote(a: FramedAttachment): boolean {
  return NOTE.test(a.body.trim());
}

function lines(body: string): string[] {
  const all = body.replace(CUT, '\n').split(/\r?\n/);
  if (all.at(-1) === '') all.pop();
  return all;
}

function fence(text: string): string {
  const ticks = '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${ticks}\n${text}\n${ticks}`;
}

/** The gateway's note, without its instruction to the model ("Tell the user …"). */
function noteAbout(a: FramedAttachment): string {
  return `About **${a.name}**: ${a.body.trim().slice(1, -1).replace(/\s*Tell the user[^.]*\.$/, '')}`;
}

function cutRemark(a: FramedAttachment): string {
  return CUT.test(a.body) ? ' It was too long, so I only saw its first and last parts.' : '';
}

/** Line and word counts and the first lines of each file. */
export function summarizeAttachments(files: FramedAttachment[]): string {
  return files
    .map((a) => {
      if (isNote(a)) return noteAbout(a);
      const all = lines(a.body);
      const words = a.body.replace(CUT, '\n').match(/\S+/g)?.length ?? 0;
      const head = all.slice(0, 5).join('\n');
      const counts = `**${a.name}** has ${all.length} line${all.length === 1 ? '' : 's'} and ${words} word${words === 1 ? '' : 's'}.`;
      return `${counts}${cutRemark(a)}${head.trim() ? ` It starts with:\n\n${fence(head)}` : ''}`;
    })
    .join('\n\n');
}

/** The lines of each file that mention an error or failure, quoted. */
export function quoteErrorLines(files: FramedAttachment[]): string {
  return files
    .map((a) => {
      if (isNote(a)) return noteAbout(a);
      const hits = lines(a.body).filter((l) => ERROR_LINE.test(l));
      if (hits.length === 0) return `I found no line mentioning an error or failure in **${a.name}**.${cutRemark(a)}`;
      const shown = hits.slice(0, MAX_QUOTED);
      const more = hits.length > shown.length ? `\n\n…and ${hits.length - shown.length} more.` : '';
      const lead = `In **${a.name}**, ${hits.length === 1 ? 'this line mentions' : `these ${hits.length} lines mention`} an error or failure:`;
      return `${lead}${cutRemark(a)}\n\n${fence(shown.join('\n'))}${more}`;
    })
    .join('\n\n');
}
