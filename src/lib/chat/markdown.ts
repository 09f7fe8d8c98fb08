/**
 * Model output -> safe HTML. Two layers: marked never passes raw HTML through (it is shown as
 * text) and drops links that are not http(s)/mailto/relative; DOMPurify then sanitises the result
 * in the browser, so model output can never inject script. A streaming answer is split into
 * blocks so that only the block still growing is parsed again on each frame. ISO times render as
 * a relative `<time>` with the ISO time as its tooltip; a table still streaming renders as a table.
 * @module
 */
import DOMPurify from 'dompurify';
import { Marked, type TokenizerAndRendererExtension, type Tokens } from 'marked';
import { ISO_TIME, relativeTime } from './relative-time.ts';
import { completeStreamingTable } from './streaming-table.ts';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const SAFE_URL = /^(https?:|mailto:|\/(?!\/)|#|\.{0,2}\/)/i;

/** `2026-12-05T04:00:00Z` -> `<time datetime title>2 h ago</time>` (relative to when it renders). */
const isoTime: TokenizerAndRendererExtension = {
  name: 'isoTime',
  level: 'inline',
  start: (src) => src.search(/\d{4}-\d\d-\d\dT/),
  tokenizer(src) {
    const raw = ISO_TIME.exec(src)?.[0];
    return raw ? { type: 'isoTime', raw } : undefined;
  },
  renderer: ({ raw }) => {
    const label = relativeTime(raw, Date.now()) ?? raw;
    return `<time datetime="${escape(raw)}" title="${escape(raw)}">${escape(label)}</time>`;
  },
};

const marked = new Marked({
  extensions: [isoTime],
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escape(text),
    link({ href, title, tokens }: Tokens.Link) {
      const inner = this.parser.parseInline(tokens);
      if (!SAFE_URL.test(href.trim())) return inner;
      const t = title ? ` title="${escape(title)}"` : '';
      return `<a href="${escape(href)}"${t} target="_blank" rel="noopener noreferrer">${inner}</a>`;
    },
    image({ text }: Tokens.Image) {
      // No remote images from model output: they leak who reads the conversation.
      return escape(text);
    },
  },
});

let hooked = false;

/** Renders markdown (code, tables, lists) to sanitised HTML. */
export function renderMarkdown(source: string): string {
  const html = marked.parse(source) as string;
  if (!DOMPurify.isSupported) return html;
  if (!hooked) {
    hooked = true;
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') node.setAttribute('rel', 'noopener noreferrer');
    });
  }
  return DOMPurify.sanitize(html, { ADD_ATTR: ['target'], FORBID_TAGS: ['style', 'form', 'input', 'img'] });
}

/**
 * Splits markdown at blank lines outside code fences, so finished blocks can be rendered once.
 * Blank lines inside a fence stay inside its block.
 */
export function splitBlocks(source: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  for (const line of source.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker) {
      if (fence === null) fence = marker[0];
      else if (marker[0] === fence) fence = null;
    }
    if (fence === null && line.trim() === '' && current.length > 0) {
      blocks.push(current.join('\n'));
      current = [];
    } else if (fence !== null || line.trim() !== '') {
      current.push(line);
    }
  }
  if (current.length > 0) blocks.push(current.join('\n'));
  return blocks;
}

const cache = new Map<string, string>();

/** renderMarkdown with a small cache: finished blocks of a streaming answer are parsed once. */
export function renderBlock(block: string): string {
  const hit = cache.get(block);
  if (hit !== undefined) return hit;
  const html = renderMarkdown(block);
  if (cache.size > 1_000) cache.delete(cache.keys().next().value!);
  cache.set(block, html);
  return html;
}

/** The block still growing: rendered fresh, a table's header completed so that it shows as a table. */
export function renderStreaming(block: string): string {
  return renderMarkdown(completeStreamingTable(block));
}

/** Parses a small sample when the browser is idle, so the first streamed token does not pay for
 * compiling the parser's and sanitiser's code paths (a 50-90 ms task otherwise). */
export function warmMarkdown(): void {
  const idle = (globalThis as { requestIdleCallback?: (fn: () => void) => void }).requestIdleCallback ?? ((fn: () => void) => setTimeout(fn, 200));
  idle(() => renderMarkdown('Warm **up** `code` [link](https://example.com)\n\n- a\n\n1. b\n\n```\nx\n```\n\n| a |\n|---|\n| 1 |'));
}
