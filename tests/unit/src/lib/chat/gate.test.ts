import { describe, expect, it } from 'vitest';
import { isHeldElsewhere, TabGate, type GateMessage } from '../../../../../src/lib/chat/gate.svelte.ts';
import type { ActiveState, ChatPhase } from '../../../../../src/lib/chat/types.ts';

const server = (state: ActiveState['state']): ActiveState => ({ active: state !== 'idle', state, since: state === 'idle' ? null : '2026-01-01T00:00:00Z' });

describe('isHeldElsewhere', () => {
  const table: [string, Parameters<typeof isHeldElsewhere>[0], boolean, string][] = [
    ['nobody', { local: 'idle', tabs: [], server: server('idle') }, false, 'idle'],
    ['another tab streams', { local: 'idle', tabs: ['streaming'], server: null }, true, 'streaming'],
    ['another tab awaits confirmation: the pause is answerable here too', { local: 'awaiting_confirmation', tabs: ['idle', 'awaiting_confirmation'], server: null }, false, 'idle'],
    ['another browser streams', { local: 'idle', tabs: [], server: server('streaming') }, true, 'streaming'],
    ['this tab streams (the server sees our own run)', { local: 'streaming', tabs: [], server: server('streaming') }, false, 'idle'],
    ['a pause with no other tab is ours to answer (after a reload)', { local: 'awaiting_confirmation', tabs: [], server: server('awaiting_confirmation') }, false, 'idle'],
    ['other tabs that finished', { local: 'idle', tabs: ['idle', 'idle'], server: server('idle') }, false, 'idle'],
    ['a reloaded tab that has not loaded yet: the run the server sees may be its own', { local: 'idle', tabs: [], server: server('streaming'), ready: false }, false, 'idle'],
    ['another tab streams, whatever this tab knows yet', { local: 'idle', tabs: ['streaming'], server: null, ready: false }, true, 'streaming'],
  ];
  for (const [name, input, held, state] of table) {
    it(name, () => expect(isHeldElsewhere(input)).toEqual({ held, state }));
  }
});

class FakeChannel extends EventTarget {
  posted: GateMessage[] = [];
  postMessage(message: GateMessage) {
    this.posted.push(message);
  }
  close() {}
}

describe('TabGate', () => {
  function setup(conversationId: string | null = 'c1') {
    const channel = new FakeChannel();
    let phase: ChatPhase = 'idle';
    let active: ActiveState = server('idle');
    const gate = new TabGate({
      conversationId: () => conversationId,
      localPhase: () => phase,
      fetchActive: async () => active,
      channel: () => channel as unknown as BroadcastChannel,
    });
    return { gate, channel, setPhase: (p: ChatPhase) => (phase = p), setActive: (a: ActiveState) => (active = a) };
  }

  it('announces this tab’s phase on the channel', () => {
    const { gate, channel, setPhase } = setup();
    setPhase('streaming');
    gate.announce();
    expect(channel.posted).toEqual([{ tab: gate.tab, conversationId: 'c1', phase: 'streaming', hello: false }]);
  });

  it('is held while another tab on the same conversation is busy, and released when it is idle', () => {
    const { gate } = setup();
    gate.receive({ tab: 'other', conversationId: 'c1', phase: 'streaming' });
    expect(gate.held).toBe(true);
    expect(gate.state).toBe('streaming');
    gate.receive({ tab: 'other', conversationId: 'c1', phase: 'idle' });
    expect(gate.held).toBe(false);
  });

  it('ignores other conversations and its own messages', () => {
    const { gate } = setup();
    gate.receive({ tab: 'other', conversationId: 'c2', phase: 'streaming' });
    gate.receive({ tab: gate.tab, conversationId: 'c1', phase: 'streaming' });
    expect(gate.held).toBe(false);
  });

  it('answers a new tab’s hello with its own phase', () => {
    const { gate, channel, setPhase } = setup();
    setPhase('awaiting_confirmation');
    gate.receive({ tab: 'new', conversationId: 'c1', phase: 'idle', hello: true });
    expect(channel.posted.at(-1)).toMatchObject({ tab: gate.tab, phase: 'awaiting_confirmation' });
  });

  it('polls the active endpoint for other browsers', async () => {
    const { gate, setActive } = setup();
    setActive(server('streaming'));
    await gate.poll();
    expect(gate.held).toBe(true);
    setActive(server('idle'));
    await gate.poll();
    expect(gate.held).toBe(false);
  });

  it('leave() tells the others this tab is done', () => {
    const { gate, channel } = setup();
    gate.leave();
    expect(channel.posted.at(-1)).toEqual({ tab: gate.tab, conversationId: 'c1', phase: 'idle' });
  });
});

describe('TabGate and this tab’s own run', () => {
  it('a poll answered around the end of our own run is not read as another holder', async () => {
    let phase: ChatPhase = 'streaming';
    let release: (a: ActiveState) => void = () => {};
    const gate = new TabGate({
      conversationId: () => 'c1',
      localPhase: () => phase,
      fetchActive: () => new Promise<ActiveState>((r) => (release = r)),
      channel: () => null,
    });
    const inFlight = gate.poll(); // started while we stream
    phase = 'idle';
    gate.announce(); // our run ended
    release(server('streaming')); // the server had not released our lease yet
    await inFlight;
    expect(gate.held).toBe(false);
    const next = gate.poll(); // right after the end: still within the quiet moment
    release(server('streaming'));
    await next;
    expect(gate.held).toBe(false);
  });
});

describe('TabGate after our own run', () => {
  it('forgets a "streaming" snapshot taken during our run once it ends', async () => {
    let phase: ChatPhase = 'streaming';
    const gate = new TabGate({ conversationId: () => 'c1', localPhase: () => phase, fetchActive: async () => server('streaming'), channel: () => null });
    await gate.poll(); // during our run: the server sees our lease
    expect(gate.held).toBe(false);
    phase = 'idle';
    gate.announce();
    expect(gate.held).toBe(false);
  });
});
