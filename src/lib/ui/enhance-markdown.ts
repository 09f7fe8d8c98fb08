/**
 * Finished markdown blocks, enhanced after they render (issue 29 item 1): code blocks get a Copy
 * button and syntax highlighting (loaded on demand), tables a caption with a Copy button (TSV and
 * HTML). Buttons go inside the `<pre>` and the `<table>`, so that when Svelte replaces a block's
 * HTML they go with it.
 * @module
 */
import { copyText, tableRows, toTsv } from './clipboard.ts';

function button(label: string, title: string, run: () => Promise<void>): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'ghost copy-inline';
  b.textContent = title;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', () => {
    void run().then(
      () => (b.textContent = 'Copied'),
      () => (b.textContent = 'Copy failed'),
    ).finally(() => setTimeout(() => (b.textContent = title), 1_500));
  });
  return b;
}

/** Enhances what `root` holds that is not yet enhanced; `skip` is a block still streaming. */
export function enhanceMarkdown(root: HTMLElement, skip: Element | null): void {
  for (const code of root.querySelectorAll<HTMLElement>('pre > code:not([data-enhanced])')) {
    if (skip?.contains(code)) continue;
    code.dataset.enhanced = '1';
    const pre = code.parentElement!;
    pre.tabIndex = 0; // a scroll region reachable from the keyboard
    pre.append(button('Copy code', 'Copy', () => copyText(code.textContent ?? '')));
    void import('./highlight.ts').then((m) => m.highlightCode(code)).catch(() => undefined);
  }
  for (const table of root.querySelectorAll<HTMLTableElement>('table:not([data-enhanced])')) {
    if (skip?.contains(table)) continue;
    table.dataset.enhanced = '1';
    table.tabIndex = 0; // wide tables scroll sideways
    const caption = table.createCaption();
    caption.className = 'table-actions';
    caption.append(button('Copy table', 'Copy table', () => copyText(toTsv(tableRows(table)), table.outerHTML.replace(/<caption[\s\S]*?<\/caption>/, ''))));
  }
}
