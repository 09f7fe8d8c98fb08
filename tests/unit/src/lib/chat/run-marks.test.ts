import { describe, expect, it } from 'vitest';
import { resumeDecision, SUBMIT_LANDS_MS } from '../../../../../src/lib/chat/run-marks.ts';
import { memoryMarks } from './fakes.ts';

describe('resumeDecision (what a loaded page does about the run the ledger shows)', () => {
  const open = { seq: 7, kind: 'tool.call' };
  const finished = { seq: 9, kind: 'run.finished' };
  const table: [string, Parameters<typeof resumeDecision>[0], ReturnType<typeof resumeDecision>][] = [
    ['an open run this tab started: its own, live with Stop', { last: open, markAge: 2_000 }, 'own'],
    ['an open run this tab started long ago (reloaded much later): still its own', { last: open, markAge: 600_000 }, 'own'],
    ['an open run this tab did not start: read-only', { last: open, markAge: null }, 'other'],
    ['a finished run: the history is the truth', { last: finished, markAge: null }, 'none'],
    ['a finished run this tab asked for long ago', { last: finished, markAge: SUBMIT_LANDS_MS + 1 }, 'none'],
    ['nothing open yet, but this tab just submitted: look again', { last: finished, markAge: 300 }, 'wait'],
    ['an empty ledger just after a submit: look again', { last: null, markAge: 300 }, 'wait'],
    ['an empty ledger', { last: null, markAge: null }, 'none'],
    // Issue 37 item 1: a branch switch is an event of its own, after the run's end; nothing runs.
    ['a branch switch, last: nothing runs', { last: { seq: 10, kind: 'branch.switched' }, markAge: null }, 'none'],
    ['a branch switch this tab made long ago', { last: { seq: 10, kind: 'branch.switched' }, markAge: SUBMIT_LANDS_MS + 1 }, 'none'],
    ['a fork is the start of a run: open', { last: { seq: 10, kind: 'branch.forked' }, markAge: null }, 'other'],
  ];
  for (const [name, input, decision] of table) it(name, () => expect(resumeDecision(input)).toBe(decision));
});

describe('run marks', () => {
  it('remember a submit per conversation, with its age, until cleared', () => {
    let t = 1_000;
    const marks = memoryMarks([], () => t);
    expect(marks.age('c1')).toBeNull();
    marks.set('c1');
    t += 250;
    expect(marks.age('c1')).toBe(250);
    expect(marks.age('c2')).toBeNull();
    marks.clear('c1');
    expect(marks.age('c1')).toBeNull();
  });
});
