/**
 * The committed budgets (bench/budgets.json): the figures a bench must not pass, so a regression on
 * the turn or decision path is said by the bench itself instead of found weeks later. `chat` and
 * `capacity` hold the budgets in force (lowered as work lands); `targets` holds where issue 38 wants
 * them. Query counts are load-independent, so one over budget fails the bench (exit 1); ratios only
 * print (a 2-core machine shared with other work moves them), and so does capacity, whose steps
 * take minutes.
 */
import { readFileSync } from 'node:fs';

type Figures = Record<string, number>;
interface Budgets { chat: Figures; capacity: Figures; targets: { chat: Figures; capacity: Figures } }

const budgets: Budgets = JSON.parse(readFileSync(new URL('./budgets.json', import.meta.url), 'utf8'));

/** Figures where more is better: the budget is a floor, not a ceiling. */
const FLOORS = new Set(['streams_reached']);
/** Figures that fail the bench when over budget; the rest only print. */
const FAILING = new Set(['queries_submit', 'queries_confirm']);

export interface BudgetVerdict { lines: string[]; failed: boolean }

/** Pure: compares measured figures with one bench's budgets; unknown figures are an error. */
export function judge(bench: 'chat' | 'capacity', measured: Figures, all: Budgets = budgets): BudgetVerdict {
  const lines: string[] = [];
  let failed = false;
  for (const [name, value] of Object.entries(measured)) {
    const budget = all[bench][name];
    const target = all.targets[bench][name];
    if (budget === undefined || target === undefined) throw new Error(`bench/budgets.json has no ${bench}.${name} (budget and target)`);
    const floor = FLOORS.has(name);
    const over = floor ? value < budget : value > budget;
    if (over) {
      lines.push(`over budget: ${name} ${fmt(value)} ${floor ? '<' : '>'} ${fmt(budget)}`);
      if (FAILING.has(name)) failed = true;
    } else lines.push(`within budget: ${name} ${fmt(value)} (budget ${fmt(budget)}, target ${fmt(target)})`);
  }
  return { lines, failed };
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));

/** Prints the verdict and sets the exit code when a failing figure is over budget. */
export function reportBudgets(bench: 'chat' | 'capacity', measured: Figures): void {
  const verdict = judge(bench, measured);
  for (const line of verdict.lines) console.log(line);
  if (verdict.failed) process.exitCode = 1;
}
