/**
 * Branches of a conversation (issue 29 item 2), pure: which rows a branch shows, and where the UI
 * offers `‹ 1/2 ›`. Edit and Regenerate fork a branch off its parent at a position (`from`): the
 * branch shows its parent's rows before that position, recursively, then its own. The same rule
 * reads the ledger (positions are event seqs, `branch.forked.from_seq`) and the history (positions
 * are message seqs); branch 0 is the conversation as it began. The server and the UI both use it.
 * @module
 */

/** One fork: `branch` left `parent` at position `from` (the parent's rows before it are the branch's too). */
export interface BranchFork {
  branch: number;
  parent: number;
  from: number;
}

/** The branches a branch's rows come from, each with the position its rows stop at (null: all). */
export type BranchPath = ReadonlyArray<{ branch: number; upto: number | null }>;

/** The path from `branch` up to branch 0. An unknown branch (or 0) is branch 0 alone. */
export function branchPath(forks: readonly BranchFork[], branch: number): BranchPath {
  const byBranch = new Map(forks.map((f) => [f.branch, f]));
  const path: Array<{ branch: number; upto: number | null }> = [];
  let upto: number | null = null;
  for (let b: number | undefined = branch, guard = 0; b !== undefined && guard <= forks.length; guard++) {
    path.push({ branch: b, upto });
    const fork = byBranch.get(b);
    if (!fork || b === 0) break;
    upto = upto === null ? fork.from : Math.min(upto, fork.from);
    b = fork.parent;
  }
  if (path.at(-1)?.branch !== 0) path.push({ branch: 0, upto }); // a broken chain still ends at the root
  return path;
}

/** Whether a row of `branch` at position `seq` is on the path. */
export function onPath(path: BranchPath, branch: number, seq: number): boolean {
  return path.some((p) => p.branch === branch && (p.upto === null || seq < p.upto));
}

/**
 * Where a new fork at (`parent`, `from`) really hangs: a branch with no rows of its own before
 * `from` diverged no later than its fork point, so the new one is its sibling there, not its child (an
 * edited edit is a third version of the same message: `‹ 3/3 ›`, as ChatGPT shows it). `via`: the
 * branch whose fork point it took (null: none; the caller reads that fork's ledger position).
 * `ownBefore(b, from)`: whether branch b has a row of its own before `from`.
 */
export function forkPoint(
  forks: readonly BranchFork[],
  parent: number,
  from: number,
  ownBefore: (branch: number, from: number) => boolean,
): { parent: number; from: number; via: number | null } {
  const byBranch = new Map(forks.map((f) => [f.branch, f]));
  let via: number | null = null;
  for (let guard = 0; guard <= forks.length; guard++) {
    const fork = byBranch.get(parent);
    if (!fork || parent === 0 || ownBefore(parent, from)) break;
    // Its rows start at or after `from`: before its fork point it is its parent's rows.
    if (fork.from < from) [from, via] = [fork.from, parent];
    parent = fork.parent;
  }
  return { parent, from, via };
}

/** The versions offered at one position of the shown branch: `‹ index+1 / branches.length ›`. */
export interface BranchSwitch {
  /** The position (a message seq in history) where the versions differ. */
  from: number;
  /** The branch of each version, oldest first. */
  branches: number[];
  /** Which of them is shown. */
  index: number;
}

/** Every place on the path of `active` where another version exists. */
export function branchSwitches(forks: readonly BranchFork[], active: number): BranchSwitch[] {
  const path = branchPath(forks, active);
  const switches: BranchSwitch[] = [];
  path.forEach(({ branch: parent, upto }, i) => {
    const shownChild = i > 0 ? path[i - 1].branch : null; // the path left `parent` through this child
    const groups = new Map<number, number[]>();
    for (const f of forks) {
      if (f.parent !== parent || f.branch === parent) continue;
      if (upto !== null && f.from > upto) continue; // after the point the path left this branch
      groups.set(f.from, [...(groups.get(f.from) ?? []), f.branch]);
    }
    for (const [from, children] of groups) {
      const branches = [parent, ...children.sort((a, b) => a - b)];
      const shown = shownChild !== null && children.includes(shownChild) ? shownChild : parent;
      if (shown === parent && upto !== null && from >= upto) continue;
      switches.push({ from, branches, index: branches.indexOf(shown) });
    }
  });
  return switches.sort((a, b) => a.from - b.from);
}
