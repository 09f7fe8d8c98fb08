/**
 * The markdown renderer (marked and DOMPurify, about a quarter of the chat page's script) loads on
 * first need, not with the page: when an answer is on screen, or as soon as the user starts to
 * type or sends (so it is parsed and warm before the first token). The chat page's first load
 * stays within its budget (issue 29, bench/ui.bench.ts); until it has loaded, a message shows as
 * plain text.
 * @module
 */
type Renderer = typeof import('./markdown.ts');

let current = $state.raw<Renderer | null>(null);
let loading: Promise<Renderer> | null = null;

/** Starts loading the renderer (once), then warms its code paths while the browser is idle. */
export function loadMarkdown(): Promise<Renderer> {
  loading ??= import('./markdown.ts').then((m) => {
    current = m;
    m.warmMarkdown();
    return m;
  });
  return loading;
}

/** The renderer if it has loaded (reactive), else null and loading starts. */
export function markdownRenderer(): Renderer | null {
  if (!current) void loadMarkdown();
  return current;
}
