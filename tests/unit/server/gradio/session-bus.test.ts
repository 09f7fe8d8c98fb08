import { describe, expect, it } from 'vitest';
import { createMemorySessionBus, type BusMessage, type SessionBus } from '../../../../server/gradio/session-bus.ts';

const msg = (eventId: string, frame: string, terminal = false): BusMessage => ({ eventId, frame, terminal });

/** The contract every SessionBus implementation keeps (a PostgreSQL bus runs this too). */
export function runBusContract(name: string, create: () => SessionBus): void {
  describe(`${name}: SessionBus contract`, () => {
    it('1. buffers until a stream attaches, then delivers in order', () => {
      const bus = create();
      bus.addEvent('s', 'e1');
      bus.publish('s', msg('e1', 'a'));
      bus.publish('s', msg('e1', 'b'));
      const got: string[] = [];
      bus.attach('s', (m) => got.push(m.frame));
      bus.publish('s', msg('e1', 'c'));
      expect(got).toEqual(['a', 'b', 'c']);
    });

    it('2. a terminal message removes its event from the pending count', () => {
      const bus = create();
      bus.addEvent('s', 'e1');
      bus.addEvent('s', 'e2');
      const pending: number[] = [];
      bus.attach('s', (_m, after) => pending.push(after));
      bus.publish('s', msg('e1', 'x', true));
      bus.publish('s', msg('e2', 'y'));
      bus.publish('s', msg('e2', 'z', true));
      expect(pending).toEqual([1, 1, 0]);
      expect(bus.pending('s')).toBe(0);
    });

    it('3. unknown sessions cannot be attached', () => {
      expect(create().attach('nope', () => {})).toBeNull();
    });

    it('4. a newer attachment replaces the older one', () => {
      const bus = create();
      bus.addEvent('s', 'e');
      const first: string[] = [];
      const second: string[] = [];
      const a = bus.attach('s', (m) => first.push(m.frame))!;
      bus.attach('s', (m) => second.push(m.frame));
      a.detach(); // must not detach the newer one
      bus.publish('s', msg('e', 'x'));
      expect(first).toEqual([]);
      expect(second).toEqual(['x']);
      expect(bus.attached('s')).toBe(true);
    });

    it('5. detaching a finished session forgets it; forget drops an orphan', () => {
      const bus = create();
      bus.addEvent('s', 'e');
      const a = bus.attach('s', () => {})!;
      bus.publish('s', msg('e', 'done', true));
      a.detach();
      expect(bus.size()).toBe(0);
      bus.addEvent('o', 'e');
      bus.publish('o', msg('e', 'x'));
      bus.forget('o');
      expect(bus.size()).toBe(0);
      expect(bus.attach('o', () => {})).toBeNull();
    });
  });
}

runBusContract('memory', createMemorySessionBus);
