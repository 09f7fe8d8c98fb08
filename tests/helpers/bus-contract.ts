/**
 * The SessionBus contract: one suite every bus runs (memory in the unit project, PostgreSQL in
 * the integration project), as tests/helpers/ledger-contract.ts does for the ledger. A factory
 * gives two handles: `here` and `there`. For the PostgreSQL bus they are two buses on one schema
 * (two replicas); for the memory bus they are the same bus. Every case joins on one and streams
 * from the other, so what holds here holds across replicas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage, SessionBus } from '../../server/gradio/session-bus.ts';

const msg = (eventId: string, frame: string, terminal = false): BusMessage => ({ eventId, frame, terminal });
const owner = { owner: 'alice', sessionHash: 'client-session' };
let counter = 0;
const unique = (name: string) => `${name}-${process.pid}-${++counter}`;

/** Polls until `check` passes (the other replica applies notifications asynchronously). */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

export interface BusPair {
  here: SessionBus;
  there: SessionBus;
  /** True when here and there are separate replicas (cross-replica cancel applies). */
  replicas: boolean;
  close(): Promise<void>;
}

export function runBusContract(name: string, factory: () => Promise<BusPair>): void {
  describe(`SessionBus contract: ${name}`, () => {
    let pair: BusPair;
    beforeAll(async () => {
      pair = await factory();
    });
    afterAll(() => pair.close());

    it('1. buffers until a stream attaches (on any replica), then delivers in order', async () => {
      const { here, there } = pair;
      const s = unique('s');
      await here.addEvent(s, `${s}:e1`, owner);
      here.publish(s, msg(`${s}:e1`, 'a'));
      here.publish(s, msg(`${s}:e1`, 'b'));
      await here.flush();
      await eventually(() => expect(there.pending(s)).toBe(1));
      const got: string[] = [];
      const attachment = await there.attach(s, (m) => got.push(m.frame));
      expect(attachment).not.toBeNull();
      here.publish(s, msg(`${s}:e1`, 'c'));
      await eventually(() => expect(got).toEqual(['a', 'b', 'c']));
      await eventually(() => expect(here.attached(s)).toBe(true));
    });

    it('2. a terminal message removes its event from the pending count', async () => {
      const { here, there } = pair;
      const s = unique('s');
      await here.addEvent(s, `${s}:e1`, owner);
      await there.addEvent(s, `${s}:e2`, owner);
      const pending: number[] = [];
      await there.attach(s, (_m, after) => pending.push(after));
      here.publish(s, msg(`${s}:e1`, 'x', true));
      await here.flush();
      there.publish(s, msg(`${s}:e2`, 'y'));
      there.publish(s, msg(`${s}:e2`, 'z', true));
      await eventually(() => expect(pending).toEqual([1, 1, 0]));
      await eventually(() => expect(here.pending(s)).toBe(0));
    });

    it('3. unknown sessions cannot be attached', async () => {
      expect(await pair.there.attach(unique('nope'), () => {})).toBeNull();
    });

    it('4. a newer attachment replaces the older one, across replicas too', async () => {
      const { here, there } = pair;
      const s = unique('s');
      await here.addEvent(s, `${s}:e`, owner);
      const first: string[] = [];
      const second: string[] = [];
      let replaced = 0;
      const a = (await here.attach(s, (m) => first.push(m.frame), () => replaced++))!;
      await eventually(() => expect(there.attached(s)).toBe(true));
      await there.attach(s, (m) => second.push(m.frame));
      await eventually(() => expect(replaced).toBe(1));
      a.detach(); // must not detach the newer one
      here.publish(s, msg(`${s}:e`, 'x'));
      await eventually(() => expect(second).toEqual(['x']));
      expect(first).toEqual([]);
      expect(there.attached(s)).toBe(true);
    });

    it('5. detaching a finished session forgets it; forget drops an orphan', async () => {
      const { here, there } = pair;
      const s = unique('s');
      await here.addEvent(s, `${s}:e`, owner);
      const a = (await there.attach(s, () => {}))!;
      here.publish(s, msg(`${s}:e`, 'done', true));
      await eventually(() => expect(there.pending(s)).toBe(0));
      a.detach();
      await there.flush();
      await eventually(() => expect([here.attached(s), there.attached(s)]).toEqual([false, false]));
      const o = unique('o');
      await here.addEvent(o, `${o}:e`, owner);
      await eventually(() => expect(there.pending(o)).toBe(1)); // there knows the session (0 would also mean unknown)
      here.publish(o, msg(`${o}:e`, 'x', true)); // finished, never streamed: kept for a stream to come
      await here.flush();
      await eventually(() => expect(there.pending(o)).toBe(0));
      const forgotten: string[] = [];
      here.onForgotten((session) => forgotten.push(session));
      there.forget(o);
      await there.flush();
      // Another replica's forget reaches this one's queue (its events of that session stop); one process's does not echo.
      if (pair.replicas) await eventually(() => expect(forgotten).toEqual([o]));
      else expect(forgotten).toEqual([]);
      await eventually(async () => expect(here.size()).toBe(there.size()));
      expect(await here.attach(o, () => {})).toBeNull();
    });

    it('6. a cancel reaches the replica that runs the event, once the claim holds', async () => {
      const { here, there, replicas } = pair;
      const cancelled: string[] = [];
      here.onCancel((eventId) => cancelled.push(eventId));
      const s = unique('s');
      const e = unique('e');
      await here.addEvent(s, e, owner);
      expect(await there.cancelRemote(unique('unknown'), { owner: 'alice' })).toBe('unknown');
      if (!replicas) {
        // One process: the queue cancels its own events; nothing runs elsewhere.
        expect(await there.cancelRemote(e, { owner: 'alice' })).toBe('unknown');
        return;
      }
      expect(await there.cancelRemote(e, { owner: 'mallory' })).toBe('refused');
      expect(await there.cancelRemote(e, { owner: null, sessionHash: 'client-session' })).toBe('cancelled');
      await eventually(() => expect(cancelled).toEqual([e]));
      here.publish(s, msg(e, 'end', true));
      await here.flush();
      expect(await there.cancelRemote(e, { owner: 'alice' })).toBe('unknown'); // completed events are gone
    });

    it('7. a call record is taken once, on any replica, only by its endpoint and owner; it expires', async () => {
      const { here, there } = pair;
      const e = unique('call');
      await here.putCall(e, { apiName: 'chat', sessionHash: 'call_s', owner: 'alice' }, 60_000);
      expect(await there.takeCall(e, 'chat', 'mallory')).toBeNull(); // another owner: unknown to them...
      expect(await there.takeCall(e, 'other', 'alice')).toBeNull();
      expect(await there.takeCall(e, 'chat', 'alice')).toBe('call_s'); // ...and still there for its owner
      expect(await here.takeCall(e, 'chat', 'alice')).toBeNull(); // one reader
      const anon = unique('call');
      await there.putCall(anon, { apiName: 'chat', sessionHash: 'call_t', owner: null }, 60_000);
      expect(await here.takeCall(anon, 'chat', 'alice')).toBeNull();
      expect(await here.takeCall(anon, 'chat', null)).toBe('call_t');
      const old = unique('call');
      await here.putCall(old, { apiName: 'chat', sessionHash: 'call_u', owner: 'alice' }, 1);
      await new Promise((r) => setTimeout(r, 20));
      expect(await there.takeCall(old, 'chat', 'alice')).toBeNull();
    });

    it('8. a session whose events all completed before the notifications arrived can still be attached on another replica', async () => {
      const { here, there } = pair;
      const s = unique('s');
      await here.addEvent(s, `${s}:e`, owner);
      here.publish(s, msg(`${s}:e`, 'a'));
      here.publish(s, msg(`${s}:e`, 'done', true));
      await here.flush();
      // No waiting for `there` to apply them: attach must catch up by itself.
      const got: string[] = [];
      const attachment = await there.attach(s, (m) => got.push(m.frame));
      expect(attachment).not.toBeNull();
      await eventually(() => expect(got).toEqual(['a', 'done']));
      attachment!.detach();
    });

    it('9. a mailbox gets what any replica posts, in order, only from its owner; closed, it is unknown', async () => {
      const { here, there } = pair;
      const key = unique('box');
      const got: string[] = [];
      const box = await here.openMailbox(key, 'alice', (p) => got.push(p));
      const big = 'x'.repeat(9_000); // over the NOTIFY limit: spilled
      for (const p of ['1', '2', big, '3']) expect(await there.postMailbox(key, 'alice', p)).toBe('sent');
      expect(await here.postMailbox(key, 'alice', '4')).toBe('sent');
      expect(await there.postMailbox(key, 'mallory', 'stolen')).toBe('refused');
      expect(await there.postMailbox(key, null, 'stolen')).toBe('refused');
      expect(await there.postMailbox(unique('box'), 'alice', 'x')).toBe('unknown');
      await eventually(() => expect(got).toEqual(['1', '2', big, '3', '4']));
      await box.close();
      expect(await there.postMailbox(key, 'alice', '5')).toBe('unknown');
      await new Promise((r) => setTimeout(r, 50));
      expect(got).toHaveLength(5);
    });
  });
}
