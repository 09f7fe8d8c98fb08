/**
 * Names a conversation after its first completed answer (issue 29, item 3), never over a title the
 * user gave (db writeAutoTitle):
 *
 *   the turn's end commit (turn-end.ts)  -> the rule's title (title-rule.ts), shown at once
 *   a real model, after the commit       -> one small prompt (model-title.ts) -> its title, written
 *                                           only while the rule's still stands (db replaceAutoTitle)
 *
 * The model's title is a nicety: the turn never waits for it and never fails by it; any failure
 * (timeout, error, an empty reply) keeps the rule's title, with a warning at most.
 * @module
 */
import type { TitleModel } from '../agent/index.ts';
import { firstUserMessage, replaceAutoTitle, setFirstAnswerTitle } from '../db/conversations.ts';
import type { Queryable } from '../db/pool.ts';
import { cleanModelTitle, modelTitlePrompt } from './model-title.ts';
import { titleFor } from './title-rule.ts';

/** A conversation its first answer just named by rule: what the model's title is asked from. */
export interface FirstTitle {
  conversationId: string;
  firstMessage: string;
  answer: string;
  /** The rule's title, as written. */
  title: string;
}

/** Writes the rule's title when run `runId` is the conversation's first to end done. Null when not (or the user titled it). */
export async function nameAfterFirstAnswer(tx: Queryable, input: { conversationId: string; runId: string; answer: string }): Promise<FirstTitle | null> {
  const firstMessage = await firstUserMessage(tx, input.conversationId);
  const title = titleFor(firstMessage, input.answer);
  const named = await setFirstAnswerTitle(tx, { id: input.conversationId, runId: input.runId, title });
  return named ? { conversationId: input.conversationId, firstMessage, answer: input.answer, title } : null;
}

/** How one ask ended: the model's title written; kept (a rename meanwhile, or the same title); failed (the rule's stays). */
export type ModelTitleOutcome = 'written' | 'kept' | 'failed';

export interface ModelTitlesOptions {
  pool: Queryable;
  model: TitleModel;
  log: { warn(obj: object, msg?: string): void };
  /** Told of each ask with its outcome, which never rejects (tests await it). */
  onAsked?: (outcome: Promise<ModelTitleOutcome>) => void;
}

/** The model's titles in flight in this process: asked without waiting, stopped together at shutdown. */
export class ModelTitles {
  readonly #options: ModelTitlesOptions;
  readonly #asks = new Set<Promise<ModelTitleOutcome>>();
  readonly #stop = new AbortController();

  constructor(options: ModelTitlesOptions) {
    this.#options = options;
  }

  /** Asks the model for a title after `first`'s rule title committed; returns at once (the turn goes on). */
  ask(first: FirstTitle): Promise<ModelTitleOutcome> {
    const outcome = this.#retitle(first);
    this.#asks.add(outcome);
    void outcome.finally(() => this.#asks.delete(outcome));
    this.#options.onAsked?.(outcome);
    return outcome;
  }

  /** Shutdown: the asks in flight are aborted (their rule titles stay) and awaited, so none writes after it. */
  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#asks);
  }

  async #retitle(first: FirstTitle): Promise<ModelTitleOutcome> {
    const { pool, model, log } = this.#options;
    try {
      const title = cleanModelTitle(await model(modelTitlePrompt(first.firstMessage, first.answer), this.#stop.signal));
      if (this.#stop.signal.aborted) return 'failed';
      if (!title) throw new Error('the model answered no title');
      if (title === first.title) return 'kept';
      return (await replaceAutoTitle(pool, { id: first.conversationId, replacing: first.title, title })) ? 'written' : 'kept';
    } catch (err) {
      // The shutdown's abort is no fault of the model's: nothing to say.
      if (!this.#stop.signal.aborted) log.warn({ err, conversationId: first.conversationId }, "the model's title failed; the rule's title stays");
      return 'failed';
    }
  }
}
