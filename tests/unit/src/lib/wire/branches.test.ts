/**
 * The branch rules shared by the server (which rows a branch shows, where a fork hangs) and the UI
 * (`‹ 1/2 ›`). Positions are message seqs here; the ledger uses the same rules with event seqs.
 *
 *   seq 10 user "deploy"   (branch 0)
 *   seq 11 answer          (branch 0)
 *   seq 12 user "hello"    (branch 0)   <- edited: branch 1 forks at 12
 *   seq 13 answer          (branch 0)
 *   seq 14 user "health?"  (branch 1)
 *   seq 15 answer          (branch 1)
 */
import { describe, expect, it } from 'vitest';
import { branchPath, branchSwitches, forkPoint, onPath, type BranchFork } from '../../../../../src/lib/wire/branches.ts';

const rows = [
  { seq: 10, branch: 0 },
  { seq: 11, branch: 0 },
  { seq: 12, branch: 0 },
  { seq: 13, branch: 0 },
  { seq: 14, branch: 1 },
  { seq: 15, branch: 1 },
];
const edit: BranchFork[] = [{ branch: 1, parent: 0, from: 12 }];
const shown = (forks: BranchFork[], branch: number, of = rows) => of.filter((r) => onPath(branchPath(forks, branch), r.branch, r.seq)).map((r) => r.seq);
const ownBefore = (of: typeof rows) => (branch: number, from: number) => of.some((r) => r.branch === branch && r.seq < from);

describe('branchPath and onPath', () => {
  it('a conversation that never forked shows every row of branch 0', () => {
    expect(branchPath([], 0)).toEqual([{ branch: 0, upto: null }]);
    expect(shown([], 0)).toEqual([10, 11, 12, 13]);
  });

  it("a branch shows its parent's rows before the fork, then its own; the parent keeps its own", () => {
    expect(shown(edit, 1)).toEqual([10, 11, 14, 15]);
    expect(shown(edit, 0)).toEqual([10, 11, 12, 13]);
  });

  it('a chain stops each ancestor at the earliest fork below it', () => {
    const forks = [...edit, { branch: 2, parent: 1, from: 15 }];
    const more = [...rows, { seq: 16, branch: 2 }];
    expect(branchPath(forks, 2)).toEqual([{ branch: 2, upto: null }, { branch: 1, upto: 15 }, { branch: 0, upto: 12 }]);
    expect(shown(forks, 2, more)).toEqual([10, 11, 14, 16]);
  });

  it('an unknown branch, or a broken chain, still ends at branch 0', () => {
    expect(branchPath(edit, 7).at(-1)).toEqual({ branch: 0, upto: null });
    expect(branchPath([{ branch: 3, parent: 9, from: 5 }], 3).at(-1)).toEqual({ branch: 0, upto: 5 });
  });
});

describe('forkPoint', () => {
  it('editing an edit hangs the new version beside it (‹ 3/3 ›), not under it', () => {
    // On branch 1, its own first row (seq 14) is edited: branch 1 has nothing of its own before it.
    expect(forkPoint(edit, 1, 14, ownBefore(rows))).toEqual({ parent: 0, from: 12, via: 1 });
  });

  it('a fork after a branch has rows of its own hangs under that branch', () => {
    expect(forkPoint(edit, 1, 15, ownBefore(rows))).toEqual({ parent: 1, from: 15, via: null });
  });

  it("a fork before a branch's fork point is a fork of the parent at the same place", () => {
    // Editing seq 10 (branch 0's row) while branch 1 is shown.
    expect(forkPoint(edit, 1, 10, ownBefore(rows))).toEqual({ parent: 0, from: 10, via: null });
  });

  it('on branch 0 nothing moves', () => {
    expect(forkPoint(edit, 0, 12, ownBefore(rows))).toEqual({ parent: 0, from: 12, via: null });
  });
});

describe('branchSwitches', () => {
  const siblings: BranchFork[] = [...edit, { branch: 2, parent: 0, from: 12 }];

  it('offers the versions at the place they differ, with the shown one', () => {
    expect(branchSwitches(siblings, 0)).toEqual([{ from: 12, branches: [0, 1, 2], index: 0 }]);
    expect(branchSwitches(siblings, 2)).toEqual([{ from: 12, branches: [0, 1, 2], index: 2 }]);
  });

  it('offers nothing where the shown branch never went', () => {
    // Branch 1 left branch 0 at 12; a fork of branch 0 at 13 is after that point.
    expect(branchSwitches([...edit, { branch: 2, parent: 0, from: 13 }], 1)).toEqual([{ from: 12, branches: [0, 1], index: 1 }]);
  });

  it('a conversation with no forks offers nothing', () => {
    expect(branchSwitches([], 0)).toEqual([]);
  });
});
