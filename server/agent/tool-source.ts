/**
 * The seam between the agent and where its tools come from, as LangGraph's BaseCheckpointSaver is
 * between a graph and where its checkpoints go: the runtime, the gateway and the readiness route
 * take a list of ToolSources and ask each the same five things, so a new kind of source (another
 * protocol, an in-memory one in tests) needs no change anywhere else. Two kinds ship: the built-in
 * operations tools (HTTP calls to our api, tools/source.ts) and MCP servers (mcp/source.ts).
 *
 * What stays outside a source: which tools the model is offered for a request (select-tools.ts,
 * select-external.ts), the run's tool_policy allowlist (middleware.ts), and making LangChain tools
 * of the descriptions (source-tools.ts). What a source owns: running one call end to end, which
 * includes asking the tool policy (`ctx.run.policy`) and pausing for approval (tools/define.ts
 * `askApproval`) when the policy says so, because only the source knows what its approval card
 * should say and what must be audited.
 * @module
 */
import type { ToolMessage } from '@langchain/core/messages';
import { DEFAULT_TENANT, type ToolAction } from '../policy/index.ts';
import type { Span } from '../telemetry/index.ts';
import type { ToolContext, ToolUser } from './tools/context.ts';

export type { ToolUser };

/** The user of a run whose token has no readable claims: the default tenant, no username. */
export const NO_USER: ToolUser = { id: null, username: '', tenant: DEFAULT_TENANT };

/** One call as the graph hands it over. */
export interface ToolCallContext {
  toolCallId: string;
  /** Aborted when the run is stopped. */
  signal?: AbortSignal;
  /** The run's context: tokens, the user's tool policy, audit, checkpoints (tools/context.ts). */
  run: ToolContext;
  /** The call's `execute_tool` span (server/telemetry): the parent of the calls it makes. */
  span?: Span;
}

/** A call's result: the text the model reads, or a ToolMessage (errors carry `artifact.code`). */
export type ToolResult = string | ToolMessage;

/**
 * How the model comes to be offered a tool. `rules`: seed 003's keyword table and its embedding
 * fallback (select-tools.ts), written for the built-in catalog. `ranked`: always a candidate,
 * ranked against the request, the best `offerTopN` offered (select-external.ts).
 */
export type ToolSelection = 'rules' | 'ranked';

export interface ToolDescription {
  name: string;
  /** What the model reads to choose the tool. */
  description: string;
  /** The arguments: a zod object or a JSON schema (what LangChain's `tool()` accepts). */
  schema: object;
  /** The tool's own default for the tool policy (server/policy), which the policy file ranks above. */
  defaultAction: ToolAction;
  selection: ToolSelection;
}

export interface ToolSourceDescription {
  /** The kind of source (`builtin`, `mcp`, ...): its key in readiness. */
  kind: string;
  /**
   * Every tool the source can execute, in the order the model sees them (it must not depend on
   * timing). A tool once listed stays here: a paused call resumes even if its backend went away.
   */
  tools: ToolDescription[];
  /** Name prefixes of tools the source will have but may not list yet (a server still down). */
  prefixes: string[];
  /** Changes whenever `tools` changes; the runtime rebuilds its graph then. */
  version: number;
}

export interface ToolSourceStatus {
  kind: string;
  /** The names of every tool the source can execute. */
  tools: string[];
  /** What readiness (`GET /api/agent/v1/ready`) shows under `kind`, when the source has more to say. */
  readiness?: Record<string, unknown>;
}

/** What a call would do, read without doing it (issue 27: shown on the approval card). */
export interface ToolPreview {
  summary: string;
  details?: string;
  /** A hash of the state the preview read: the call is refused if it changed meanwhile. */
  stateHash: string;
}

export interface ToolSource {
  /** The tools `user` may be offered now (those of a source that is up); names from describe(). */
  list(user: ToolUser): Array<{ name: string; description: string; selection: ToolSelection }>;
  /**
   * Runs one call, policy and approval pause included; never throws for a failed call (an error
   * ToolMessage instead, code in `artifact.code`), only for a graph interrupt or an abort. An
   * unknown `tool` is a NOT_FOUND error result.
   */
  call(user: ToolUser, tool: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult>;
  describe(): ToolSourceDescription;
  status(): ToolSourceStatus;
  /** Optional: what the call would do, for the approval card; null when the tool has no preview. */
  preview?(user: ToolUser, tool: string, args: Record<string, unknown>): Promise<ToolPreview | null>;
}

/** Every tool's default policy action across the sources, by name (the policy routes, the runtime). */
export function defaultActions(sources: readonly ToolSource[]): Map<string, ToolAction> {
  return new Map(sources.flatMap((s) => s.describe().tools.map((t) => [t.name, t.defaultAction] as const)));
}

/** Every source's name prefixes (a policy rule naming a tool of a source still down is not a typo). */
export function toolPrefixes(sources: readonly ToolSource[]): string[] {
  return sources.flatMap((s) => s.describe().prefixes);
}

