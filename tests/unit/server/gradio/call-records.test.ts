/** The memory bus's call-API records (server/gradio/bus/call-records.ts), from a table of steps on a fake clock. */
import { describe, expect, it } from 'vitest';
import { CallRecords } from '../../../../server/gradio/bus/call-records.ts';

type Step = ['put', string, string | null, number] | ['take', string, string, string | null, string | null] | ['tick', number];

const cases: Array<{ name: string; limit?: number; steps: Step[] }> = [
  { name: 'its owner takes it once', steps: [['put', 'e1', 'alice', 1000], ['take', 'e1', 'chat', 'alice', 's-e1'], ['take', 'e1', 'chat', 'alice', null]] },
  { name: 'another owner or endpoint leaves it for the right reader', steps: [['put', 'e1', 'alice', 1000], ['take', 'e1', 'chat', 'bob', null], ['take', 'e1', 'echo', 'alice', null], ['take', 'e1', 'chat', 'alice', 's-e1']] },
  { name: 'null owner (no identity key) is an owner of its own', steps: [['put', 'e1', null, 1000], ['take', 'e1', 'chat', 'alice', null], ['take', 'e1', 'chat', null, 's-e1']] },
  { name: 'expired, it is gone', steps: [['put', 'e1', 'alice', 1000], ['tick', 1000], ['take', 'e1', 'chat', 'alice', null]] },
  { name: 'past the limit the oldest goes', limit: 2, steps: [['put', 'e1', 'a', 1000], ['put', 'e2', 'a', 1000], ['put', 'e3', 'a', 1000], ['take', 'e1', 'chat', 'a', null], ['take', 'e3', 'chat', 'a', 's-e3']] },
];

describe('CallRecords', () => {
  for (const { name, limit, steps } of cases) {
    it(name, () => {
      let now = 0;
      const records = new CallRecords(limit, () => now);
      for (const step of steps) {
        if (step[0] === 'put') records.put(step[1], { apiName: 'chat', sessionHash: `s-${step[1]}`, owner: step[2] }, step[3]);
        else if (step[0] === 'take') expect(records.take(step[1], step[2], step[3]), JSON.stringify(step)).toBe(step[4]);
        else now += step[1];
      }
    });
  }
});
