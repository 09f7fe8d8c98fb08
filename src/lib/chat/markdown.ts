/**
 * Model output -> safe HTML. Two layers: marked never passes raw HTML through (it is shown as
 * text) and drops links that are not http(s)/mailto/relative; DOMPurify then sanitises the result
 * in the browser, so model output can never inject script.
 * @module
 */
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const SAFE_URL = /^(https?:|mailto:|\/(?!\/)|#|\.{0,2}\/)/i;

const marked = new Marked({
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
