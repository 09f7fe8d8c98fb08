/**
 * The ledger contract: one suite every Ledger implementation runs (memory in the unit project,
 * PostgreSQL in the integration project), like LangGraph.js checkpoint-validation.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerPayloadError, type EventDraft } from '../../server/engine/events.ts';
import type { Ledger } from '../../server/engine/ledger.ts';

const user = (runId: string, text = 'hi'): EventDraft => ({ kind: 'user.message', payload: { run_id: runId, request_id: randomUUID(), text, files: [] } });
const answer = (runId: string, text: string): EventDraft => ({ kind: 'assistant.message', payload: { run_id: runId, text } });
const finished = (runId: string): EventDraft => ({
  kind: 'run.finished',
  payload: { run_id: runId, status: 'done', turns: 1, duration_ms: 5, stop_reason: 'end_turn', error_code: null },
});

export function runLedgerContract(name: string, factory: () => Promise<{ ledger: Ledger; close(): Promise<void> }>): void {
  describe(`Ledger contract: ${name}`, () => {
    let ledger: Ledger;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ ledger, close } = await factory());
    });
    afterAll(() => close());

    it('numbers events 1, 2, 3… per conversation and returns them with run_id and created_at', async () => {
      const c1 = randomUUID(), c2 = randomUUID(), run = randomUUID();
      const a = await ledger.append(c1, [user(run), answer(run, 'hello')]);
      const b = await ledger.append(c2, [user(run)]);
      const c = await ledger.append(c1, [finished(run)]);
      expect(a.map((e) => e.seq)).toEqual([1, 2]);
      expect(b.map((e) => e.seq)).toEqual([1]);
      expect(c.map((e) => e.seq)).toEqual([3]);
      expect(c[0]).toMatchObject({ kind: 'run.finished', run_id: run, conversation_id: c1 });
      expect(Number.isNaN(Date.parse(c[0].created_at))).toBe(false);
      expect(await ledger.head(c1)).toBe(3);
      expect(await ledger.head(randomUUID())).toBe(0);
    });

    it('reads pages after a cursor, oldest first, and the events of one run', async () => {
      const conversation = randomUUID(), r1 = randomUUID(), r2 = randomUUID();
      await ledger.append(conversation, [user(r1, 'one'), answer(r1, 'a1'), finished(r1)]);
      await ledger.append(conversation, [user(r2, 'two'), answer(r2, 'a2')]);
      const page = await ledger.read(conversation, { after: 1, limit: 2 });
      expect(page.map((e) => [e.seq, e.kind])).toEqual([[2, 'assistant.message'], [3, 'run.finished']]);
      expect((await ledger.read(conversation, { after: 5, limit: 10 })).length).toBe(0);
      const run2 = await ledger.readRun(conversation, r2);
      expect(run2.map((e) => e.seq)).toEqual([4, 5]);
      expect(run2[1].payload).toEqual({ run_id: r2, text: 'a2' });
    });

    it('refuses a bad payload and commits nothing of the batch', async () => {
      const conversation = randomUUID(), run = randomUUID();
      const bad = { kind: 'run.finished', payload: { run_id: run, status: 'exploded', turns: 1, duration_ms: 1, stop_reason: 'x', error_code: null } } as unknown as EventDraft;
      await expect(ledger.append(conversation, [user(run), bad])).rejects.toBeInstanceOf(LedgerPayloadError);
      await expect(ledger.append(conversation, [{ kind: 'partial', payload: { run_id: run } } as unknown as EventDraft])).rejects.toThrow(/unknown event kind/);
      await expect(ledger.append(conversation, [{ kind: 'user.message', payload: { text: 'no run' } } as unknown as EventDraft])).rejects.toThrow(/run_id/);
      expect(await ledger.head(conversation)).toBe(0);
      expect(await ledger.read(conversation, { after: 0, limit: 10 })).toEqual([]);
    });

    it('keeps seq gap-free under concurrent appends to one conversation', async () => {
      const conversation = randomUUID(), run = randomUUID();
      await Promise.all(Array.from({ length: 20 }, (_, i) => ledger.append(conversation, [answer(run, `m${i}`)])));
      const events = await ledger.read(conversation, { after: 0, limit: 100 });
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(new Set(events.map((e) => (e.payload as { text: string }).text)).size).toBe(20);
    });

    it('wakes subscribers of the conversation on commit, and not after unsubscribe', async () => {
      const conversation = randomUUID(), other = randomUUID(), run = randomUUID();
      const seen: number[] = [];
      const unsubscribe = ledger.subscribe(conversation, (seq) => seen.push(seq));
      await new Promise((r) => setTimeout(r, 100)); // a LISTEN connection may take a moment to open
      await ledger.append(other, [user(run)]);
      await ledger.append(conversation, [user(run), answer(run, 'x')]);
      await expect.poll(() => seen, { timeout: 5000 }).toContain(2);
      unsubscribe();
      await ledger.append(conversation, [finished(run)]);
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).not.toContain(3);
      expect(seen.every((s) => s === 2)).toBe(true);
    });
  });
}
