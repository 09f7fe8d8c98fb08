/**
 * A search snippet as the wire carries it (issue 29 item 3): text parts, the found words marked,
 * so that the sidebar renders marks as elements and never parses markup. Pure.
 * @module
 */

/** Around each found word in ts_headline's output (private-use characters: no text carries them). */
export const HIT_START = '\uE000';
export const HIT_END = '\uE001';

export interface SnippetPart {
  text: string;
  /** A word the search found. */
  hit: boolean;
}

/** ts_headline's marked text -> parts, whitespace collapsed, empty parts dropped. @example snippetParts('a \uE000b\uE001 c') // [{text:'a ',hit:false},{text:'b',hit:true},{text:' c',hit:false}] */
export function snippetParts(marked: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  let hit = false;
  let text = '';
  const flush = () => {
    if (text) parts.push({ text, hit });
    text = '';
  };
  for (const ch of marked.replace(/\s+/g, ' ').trim()) {
    if (ch === HIT_START || ch === HIT_END) {
      flush();
      hit = ch === HIT_START;
    } else text += ch;
  }
  flush();
  return parts;
}
