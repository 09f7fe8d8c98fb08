/**
 * Syntax highlighting for code blocks in answers (issue 29 item 1), loaded only when an answer
 * has a fenced block with a language: highlight.js's core and that one language, each its own
 * chunk, so the chat page's first load pays nothing for it. Languages outside the list stay plain.
 * @module
 */
import type { HLJSApi, LanguageFn } from 'highlight.js';

type Loader = () => Promise<{ default: LanguageFn }>;

const LANGUAGES: Record<string, Loader> = {
  bash: () => import('highlight.js/lib/languages/bash'),
  css: () => import('highlight.js/lib/languages/css'),
  diff: () => import('highlight.js/lib/languages/diff'),
  dockerfile: () => import('highlight.js/lib/languages/dockerfile'),
  go: () => import('highlight.js/lib/languages/go'),
  ini: () => import('highlight.js/lib/languages/ini'),
  java: () => import('highlight.js/lib/languages/java'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  json: () => import('highlight.js/lib/languages/json'),
  python: () => import('highlight.js/lib/languages/python'),
  rust: () => import('highlight.js/lib/languages/rust'),
  sql: () => import('highlight.js/lib/languages/sql'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  xml: () => import('highlight.js/lib/languages/xml'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};
const ALIASES: Record<string, string> = {
  sh: 'bash', shell: 'bash', zsh: 'bash', js: 'javascript', ts: 'typescript', py: 'python', yml: 'yaml',
  html: 'xml', svg: 'xml', toml: 'ini', docker: 'dockerfile', golang: 'go', rs: 'rust', patch: 'diff',
};

/** The list's name for a fence's language, or null when it is not highlighted. */
export function languageName(fence: string): string | null {
  const name = fence.toLowerCase();
  const canonical = ALIASES[name] ?? name;
  return canonical in LANGUAGES ? canonical : null;
}

let core: Promise<HLJSApi> | null = null;
const loaded = new Map<string, Promise<void>>();

async function withLanguage(name: string): Promise<HLJSApi> {
  core ??= import('highlight.js/lib/core').then((m) => m.default);
  const hljs = await core;
  let ready = loaded.get(name);
  if (!ready) {
    ready = LANGUAGES[name]().then((m) => hljs.registerLanguage(name, m.default));
    loaded.set(name, ready);
  }
  await ready;
  return hljs;
}

/** Highlights one `<code class="language-x">` in place (highlight.js escapes the text it wraps). */
export async function highlightCode(code: HTMLElement): Promise<void> {
  const fence = /\blanguage-([\w+-]+)/.exec(code.className)?.[1];
  const name = fence ? languageName(fence) : null;
  if (!name) return;
  const hljs = await withLanguage(name);
  if (!code.isConnected) return;
  code.innerHTML = hljs.highlight(code.textContent ?? '', { language: name, ignoreIllegals: true }).value;
  code.classList.add('hljs');
}
