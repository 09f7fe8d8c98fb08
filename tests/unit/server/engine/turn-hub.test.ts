import { describe, expect, it } from 'vitest';
import type { LiveEvent } from '../../../../server/engine/index.ts';
import { TurnHub } from '../../../../server/engine/turn-hub.ts';

const RUN = 'run-1';
const at = (seq: number, kind = 'tool.call'): LiveEvent => ({ kind, seq, payload: { run_id: RUN }, conversation_id: 'c', run_id: RUN, created_at: '' }) as unknown as LiveEvent;
const tok = (token: string): LiveEvent => ({ kind: 'partial', payload: { run_id: RUN, token } });

describe('TurnHub', () => {
  it('a late subscriber gets the missed commits after its cursor and the answer so far as ONE partial', () => {
    const hub = new TurnHub(RUN, 'c');
    hub.publish(at(1, 'user.message'));
    hub.publish(tok('Hel'));
    hub.publish(tok('lo '));
    const live: LiveEvent[] = [];
    const { missed, ended } = hub.subscribe({ event: (e) => live.push(e), end: () => {} }, 0);
    expect(ended).toBe(false);
    expect(missed).toEqual([at(1, 'user.message'), tok('Hello ')]);
    hub.publish(tok('you'));
    expect(live).toEqual([tok('you')]);
    expect(hub.subscribe({ event: () => {}, end: () => {} }, 1).missed).toEqual([tok('Hello you')]);
  });

  it('a commit closes the partial segment; run.finished ends every subscriber', () => {
    const hub = new TurnHub(RUN, 'c');
    let ended = 0;
    hub.subscribe({ event: () => {}, end: () => ended++ });
    hub.publish(tok('x'));
    hub.publish(at(2, 'assistant.message'));
    expect(hub.partialSnapshot()).toEqual([]);
    hub.publish(at(3, 'run.finished'));
    expect(ended).toBe(1);
    expect(hub.finished).toBe(true);
    expect(hub.subscribe({ event: () => {}, end: () => {} }).ended).toBe(true);
  });
});
