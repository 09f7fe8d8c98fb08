/**
 * Per-run data the tools need, carried in the run config (`configurable.airlock`), never in module
 * state: one gateway serves many users at once. LangGraph does not store extra configurable keys in
 * checkpoints (notes §3), so the user's token never lands in the database.
 * @module
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import type { AuditEntry } from '../../db/audit.ts';
import { AirlockError } from '../../errors.ts';
import type { PolicyDecision, ToolAction } from '../../policy/index.ts';
import type { ServiceTokenProvider } from '../service-token.ts';
import type { ToolPolicy } from '../run-tool-allowlist.ts';
import type { Span } from '../../telemetry/index.ts';

/** The user a run acts for, read from the run's verified token (runtime.ts); what ToolSource.list and .call receive. */
export interface ToolUser {
  /** The user id (`sub`); null when the token carries none. */
  id: string | null;
  username: string;
  tenant: string;
}

export interface ToolContext {
  /** Backend API base URL (no trailing slash). */
  apiUrl: string;
  /** The end user's JWT, sent as X-User-JWT. */
  userToken: string;
  /** Who the run acts for, read from that token (what ToolSource.list and .call receive). */
  user: ToolUser;
  conversationId: string;
  serviceToken: ServiceTokenProvider;
  /** Per-request timeout for backend calls. */
  timeoutMs: number;
  fetch: typeof fetch;
  /**
   * The tool policy for this run's user (server/policy): what a call of `tool` may do. `builtin` is
   * the tool's own default when the tool knows it (MCP annotations); else the catalog's.
   */
  policy: (tool: string, builtin?: ToolAction, args?: Readonly<Record<string, unknown>>) => PolicyDecision;
  /** Writes the audit row of a call the gateway refused itself (policy deny): the api never saw it. */
  audit?: (entry: AuditEntry) => Promise<void>;
  /** The run's tool policy (headless runs, run-tool-allowlist.ts); absent: every tool. */
  toolPolicy?: ToolPolicy | null;
  /** The caller's system messages (headless runs), put before the agent's own system prompt. */
  callerSystem?: string | null;
  /** Tool calls this run resumes with a decision: their permission was checked before the pause. */
  resumedCalls?: ReadonlySet<string>;
  /**
   * Resolves once the run's checkpoints so far are stored (write-behind-saver.ts). Awaited before a
   * side effect, so that the step that asked for the call is never lost while its effect is done.
   */
  checkpointed?: () => Promise<void>;
  /**
   * The live grant (issue 27 item 2) a call of `tool` with `args` by this run's user runs under, its
   * use counted; null: it asks. `rule`: the call's deciding rule (issue 36), which the grant must
   * have been made under; its hash is worked out only when a grant's match fits.
   */
  grantFor?: (tool: string, args: Readonly<Record<string, unknown>>, rule: GrantRuleRef) => Promise<GrantUse | null>;
  /** toolCallId -> the grant it ran under, for its tool_start/tool_end (agent/events.ts). */
  granted?: Map<string, GrantUse>;
  /** The turn's span (server/telemetry): the parent of the run's model and tool spans. */
  trace?: Span;
}

/** A call's deciding rule as a grant is checked against it: its hash (asked only when a grant's match fits), and whether it has `when`. */
export interface GrantRuleRef {
  hash: () => string;
  scoped: boolean;
}

/** The grant a call ran under, as its tool card says it: "allowed by grant G, by X, until T". */
export interface GrantUse {
  id: string;
  /** The username of whoever made the grant. */
  by: string;
  /** Its expiry, ISO 8601. */
  until: string;
}

export const CONTEXT_KEY = 'airlock';

/**
 * Before a call with effects: the step that asked for it is stored first, so a crash re-runs the
 * call under the same id (write-behind-saver.ts). A resumed call's step was stored at its pause;
 * what is unstored then is only the resume itself, which the decided approval replays after a crash.
 */
export async function storedBeforeEffect(ctx: ToolContext, toolCallId: string): Promise<void> {
  if (!ctx.resumedCalls?.has(toolCallId)) await ctx.checkpointed?.();
}

/** The tool context of a run, or INTERNAL when the runtime forgot to pass it. */
export function toolContext(config: RunnableConfig | undefined): ToolContext {
  const ctx = config?.configurable?.[CONTEXT_KEY] as ToolContext | undefined;
  if (!ctx) throw new AirlockError('INTERNAL', 'The tool context is missing from the run config.');
  return ctx;
}
