/**
 * The stored truth a tab must converge to (issue 23: "the transcript equals what
 * GET /api/agent/conversations/{id}/events reports"), and a recorder of what the tab showed on
 * the way there, so a spec can prove that nothing false was ever on screen, not only at the end.
 */
import type { Locator, Page } from '@playwright/test';
import { apiCall } from './fixtures.ts';

export interface StoredEvent {
  seq: number;
  kind: string;
  payload: Record<string, unknown>;
}

/** Every committed event of a conversation, oldest first. */
export async function ledgerEvents(url: string, token: string, conversationId: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for (let after = 0; ; ) {
    const page = await apiCall<{ events: StoredEvent[]; next_after: number; has_more: boolean }>(
      url, token, 'GET', `/api/agent/conversations/${conversationId}/events?after=${after}&limit=500`,
    );
    events.push(...page.events);
    if (!page.has_more) return events;
    after = page.next_after;
  }
}

/** Is the conversation's last run finished (its last event a run.finished)? */
export function runFinished(events: readonly StoredEvent[]): boolean {
  return events.at(-1)?.kind === 'run.finished';
}

/** The text of the last answer segment stored before the last run.finished. */
export function lastStoredAnswer(events: readonly StoredEvent[]): string {
  const end = events.findLastIndex((e) => e.kind === 'run.finished');
  const answer = events.slice(0, end).findLast((e) => e.kind === 'assistant.message' && typeof e.payload.text === 'string' && e.payload.text !== '');
  return answer ? String(answer.payload.text) : '';
}

/**
 * Markdown source and its rendering compared as words: table pipes and rules, emphasis and code
 * marks and whitespace differ between the two; the words may not.
 */
/**
 * The words an answer shows, as a reader sees them: its rendered text without the controls the UI
 * adds to it (Copy table, Copy code, issue 29), which are not part of the answer.
 */
export function answerText(answer: Locator): Promise<string> {
  return answer.evaluate((el) => {
    let text = (el as HTMLElement).innerText;
    for (const control of el.querySelectorAll<HTMLElement>('button')) text = text.replace(control.innerText, ' ');
    return text;
  });
}

export function plain(text: string): string {
  return text.replace(/[|*_`#>-]/g, ' ').replace(/\s+/g, ' ').trim();
}

/** A new conversation through the REST api; returns its id. */
export async function newConversation(url: string, token: string, title: string): Promise<string> {
  const created = await apiCall<{ id: string }>(url, token, 'POST', '/api/assistant/conversations', { title });
  return created.id;
}

/** What the tab showed at one moment (recorded in the page on every DOM change). */
export interface Shown {
  /** ms since the page's navigation started. */
  t: number;
  /** The composer offers Stop (a run of this tab is going). */
  stop: boolean;
  /** The last answer bubble: its text and whether it shows as still being written. */
  text: string | null;
  streaming: boolean;
  stopped: boolean;
  /** The "answering in another tab" banner. */
  banner: boolean;
  errors: number;
}

/**
 * Installs the recorder: from every page load on, each DOM change that alters what the user sees
 * of the run appends one `Shown` to `window.__shown`.
 */
export async function recordShown(page: Page): Promise<void> {
  await page.addInitScript(`(() => {
    const shown = (window.__shown = []);
    let last = '';
    // The answer's words without the controls the UI adds to it (answerText's rule).
    const withoutControls = (el) => [...el.querySelectorAll('button')].reduce((t, b) => t.replace(b.innerText, ' '), el.innerText);
    const snap = () => {
      const stop = [...document.querySelectorAll('form[aria-label="Message composer"] button')].some((b) => b.textContent.trim() === 'Stop');
      const answers = document.querySelectorAll('[data-testid=answer]');
      const a = answers[answers.length - 1];
      const state = {
        t: Math.round(performance.now()),
        stop,
        text: a ? withoutControls(a).replace(/\\s*Stopped$/, '') : null,
        streaming: a ? a.dataset.streaming === 'true' : false,
        stopped: a ? !!a.querySelector('.stopped') : false,
        banner: !!document.querySelector('[data-testid=busy-banner]'),
        errors: document.querySelectorAll('[data-testid=error-card]').length,
      };
      const key = JSON.stringify({ ...state, t: 0 });
      if (key === last) return;
      last = key;
      shown.push(state);
    };
    const start = () => new MutationObserver(snap).observe(document.documentElement, { subtree: true, childList: true, characterData: true, attributes: true });
    if (document.documentElement) start();
    else document.addEventListener('DOMContentLoaded', start);
  })()`);
}

/** What the recorder saw since the last page load. */
export async function shown(page: Page): Promise<Shown[]> {
  return page.evaluate('window.__shown ?? []') as Promise<Shown[]>;
}
