/**
 * The agent runtime used by server/chat (CONTRACTS.md §3): runs and resumes the graph of graph.ts,
 * checkpointed in PostgreSQL, and streams AgentEvents. Runs and resumes of one thread must be
 * serialised by the caller (server/chat holds a lease); the saver has no locking (notes §3).
 * @module
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Command, isGraphInterrupt, type BaseCheckpointSaver, type StateSnapshot } from '@langchain/langgraph';
import type { AuditEntry } from '../db/audit.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import type { Span } from '../telemetry/index.ts';
import { createToolPolicy, DEFAULT_TENANT, stampOf, type PolicyDecision, type ToolAction, type PolicyFile } from '../policy/index.ts';
import { createEmbedder } from './embedder.ts';
import { contentText, createMappingState, toAgentEvents } from './events.ts';
import { createAgentGraph } from './graph.ts';
import type { ModelSettings } from './model.ts';
import type { Embedder } from './select-tools.ts';
import type { ToolPolicy } from './run-tool-allowlist.ts';
import { createServiceTokenProvider, type ServiceCredentials } from './service-token.ts';
import { claimString, tokenClaims } from './token-claims.ts';
import { defaultActions, type ToolSource, type ToolUser } from './tool-source.ts';
import { CONTEXT_KEY, errorContent, type GrantRuleRef, type GrantUse, type ToolContext } from './tools/index.ts';
import { builtinToolSource } from './tools/source.ts';
import type { AgentEvent, ApprovalDecision, ApprovalRequest, EditReview, PendingApproval } from './types.ts';
import { checkArguments } from './edited-call.ts';
import { WriteBehindSaver } from './write-behind-saver.ts';

export interface AgentRuntimeOptions {
  model: ModelSettings;
  /** Backend API base URL, read per run (the in-process api's port is known only after listen). */
  apiUrl: () => string;
  serviceCredentials: ServiceCredentials;
  checkpointer: BaseCheckpointSaver;
  /** Embeddings for the tool-selection fallback. Default: the model endpoint's, else local ones. */
  embed?: Embedder;
  /** Dashboards are prefetched into the context (search_dashboards is then not offered). */
  prefetchAvailable?: boolean;
  /** Timeout of one backend call. Default 15 s. */
  toolTimeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
  /** Where the tools come from (tool-source.ts), in the order the model sees them. Default: the built-in tools. */
  sources?: readonly ToolSource[];
  /** How many of the sources' `ranked` tools a turn is offered at most. */
  offerTopN?: number;
  /** The tool policy (POLICY_FILE); default: the built-in defaults alone. */
  policy?: PolicyFile;
  /** The tenant of a user id (users.tenant); default: every user is in the default tenant. */
  tenantOf?: (userId: string) => Promise<string>;
  /** Writes the audit rows of calls the policy refused in the gateway. */
  audit?: (entry: AuditEntry) => Promise<void>;
  /** The live grant a user's call runs under, its use counted (db/grants.ts useMatchingGrant); absent: no grants. */
  grants?: (call: { userId: string; tenant: string; tool: string; args: Readonly<Record<string, unknown>>; rule: GrantRuleRef }) => Promise<GrantUse | null>;
}

/** A content part after the user's text: attached content (untrusted), in the OpenAI shape. */
export type AttachmentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface RunInput {
  threadId: string;
  /** The user's own words: the human message's first text part, the only text tool selection reads. */
  text: string;
  /** Attached content, sent after `text` in the same human message. Never instructions of the user. */
  attachments?: AttachmentPart[];
  userToken: string;
  conversationId: string;
  signal?: AbortSignal;
  /** The run's tool policy and the caller's system text (headless runs; see ToolContext). */
  toolPolicy?: ToolPolicy | null;
  callerSystem?: string | null;
  /** The checkpoint the run goes on from (a branch, issue 29); absent: the thread's newest. */
  fromCheckpoint?: string | null;
  /** The human message this one takes the place of (its id; a fork before the first message, issue 29). */
  replaces?: string | null;
  /** The thread has no checkpoint yet (its conversation was created by this submit): nothing can dangle. */
  newThread?: boolean;
  /** The turn's span: the parent of this run's model and tool spans (server/telemetry). */
  trace?: Span;
}

export interface ResumeInput {
  threadId: string;
  /** interrupt id -> decision, one for every pending approval (pendingApprovals() gives the ids). */
  decisions: Record<string, ApprovalDecision>;
  userToken: string;
  conversationId: string;
  signal?: AbortSignal;
  toolPolicy?: ToolPolicy | null;
  callerSystem?: string | null;
  /** The thread's pending approvals when the caller has just read them (one checkpoint read less). */
  pending?: PendingApproval[];
  trace?: Span;
}

/** Where a fork put the thread, and the id of a human message the next run replaces (a fork before the first one). */
export interface ThreadFork {
  checkpointId: string;
  replaces: string | null;
}

/** A thread picked up where its last stored step left off (a retried background run, issue 30). */
export type ContinueInput = Omit<ResumeInput, 'decisions' | 'pending'>;

export interface AgentRuntime {
  run(input: RunInput): AsyncIterable<AgentEvent>;
  resume(input: ResumeInput): AsyncIterable<AgentEvent>;
  /**
   * Runs the thread on from its last checkpoint with no new input: the steps stored before a crash
   * are not run again; a step that was cut short runs again (built-in tools repeat with the same
   * Idempotency-Key, MCP tools at least once).
   */
  continueThread(input: ContinueInput): AsyncIterable<AgentEvent>;
  pendingApprovals(threadId: string): Promise<PendingApproval[]>;
  /**
   * Branches (issue 29): one thread, forked in LangGraph's own checkpoint history. A run goes on
   * from the thread's newest checkpoint, or from the one it names (LangGraph's fork), which its
   * steps then follow. `threadHead`: the newest checkpoint's id (null: none yet).
   */
  threadHead(threadId: string): Promise<string | null>;
  /**
   * The checkpoint before the thread's human message number `humanIndex` (0-based, on the line of
   * parents of `head`, default the newest checkpoint): a run from it (RunInput.fromCheckpoint)
   * takes that message's place. Null when the thread has no checkpoint.
   */
  forkThread(threadId: string, humanIndex: number, head?: string | null): Promise<ThreadFork | null>;
  /**
   * An approver's edit of a paused call of `tool` (issue 27 item 1), checked as the requester
   * (`userToken`): the arguments against the tool's input schema, then the policy on the edited call.
   */
  reviewEdit(input: { tool: string; args: Record<string, unknown>; userToken: string }): Promise<EditReview>;
}

/** The tool policy for one run's user: the decision for a call (its arguments decide `when` rules), and whether a call of a tool may pause at all. */
type Decide = ((tool: string, builtin?: ToolAction, args?: Readonly<Record<string, unknown>>) => PolicyDecision) & { mayPause(tool: string): boolean };

/** A tool start's input as named arguments (what `when` rules read); anything else: none. */
function argsOf(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** Tool calls of the last AI message that have no ToolMessage reply (left by an abort or a pause). */
export function danglingToolCalls(messages: BaseMessage[]): Array<{ id: string; name: string }> {
  const lastAi = messages.findLastIndex((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0);
  if (lastAi < 0) return [];
  const replied = new Set(messages.slice(lastAi + 1).filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id));
  return ((messages[lastAi] as AIMessage).tool_calls ?? [])
    .filter((c) => c.id && !replied.has(c.id))
    .map((c) => ({ id: c.id as string, name: c.name }));
}

/**
 * langchain wraps errors thrown in middleware in a MiddlewareError (same message, no code); the
 * AirlockError we threw is its cause.
 */
export function unwrapAirlockError(error: unknown): unknown {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (isAirlockError(e)) return e;
  }
  return error;
}

/**
 * Creates the runtime. Awaitable so that setup may grow without changing callers.
 * @example
 * const agent = await createAgentRuntime({ model, apiUrl: () => url, serviceCredentials, checkpointer });
 * for await (const e of agent.run({ threadId, text, userToken, conversationId, signal })) {
 *   if (e.type === 'approval_required') { ... }   // then agent.resume({ threadId, decisions: { [id]: { approved: true } }, ... })
 * }
 */
export async function createAgentRuntime(options: AgentRuntimeOptions): Promise<AgentRuntime> {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const serviceToken = createServiceTokenProvider({ apiUrl: options.apiUrl, credentials: options.serviceCredentials, fetch: doFetch });
  const embed =
    options.embed ?? createEmbedder({ baseUrl: options.model.baseUrl, apiKey: options.model.apiKey, model: options.model.name, fetch: doFetch });
  // The graph is rebuilt when a source's tool set changes (a server came up with new tools); runs
  // pick the current one, and every thread's state is in the checkpointer, not in the graph.
  const saver = new WriteBehindSaver(options.checkpointer);
  const sources = options.sources ?? [builtinToolSource()];
  const buildGraph = () =>
    createAgentGraph({ model: options.model, checkpointer: saver, embed, prefetchAvailable: options.prefetchAvailable, sources, offerTopN: options.offerTopN });
  const versions = () => sources.map((s) => s.describe().version).join(',');
  let built = { version: versions(), graph: buildGraph() };
  const current = () => {
    const version = versions();
    if (version !== built.version) built = { version, graph: buildGraph() };
    return built.graph;
  };

  const threadConfig = (threadId: string): RunnableConfig => ({ configurable: { thread_id: threadId } });
  const policy = options.policy ?? createToolPolicy(null);

  /**
   * The policy as it applies to this run's user. The token was verified by whoever started the run
   * (the gateway at /chat, the api's on-behalf check), so reading its claims needs no second check.
   */
  async function policyFor(userToken: string): Promise<{ user: ToolUser; decide: Decide }> {
    // An unreadable token: the default tenant and no username (only tool and default rules apply).
    const claims = tokenClaims(userToken);
    const id = claimString(claims.sub);
    const user = { id, tenant: id && options.tenantOf ? await options.tenantOf(id) : DEFAULT_TENANT, username: claimString(claims.username) ?? '' };
    const defaults = defaultActions(sources);
    const subject = { tenant: user.tenant, username: user.username };
    const decide = (tool: string, builtin?: ToolAction, args?: Readonly<Record<string, unknown>>) => policy.decide(subject, tool, builtin ?? defaults.get(tool), args);
    return { user, decide: Object.assign(decide, { mayPause: (tool: string) => policy.possible(subject, tool, defaults.get(tool)).has('require_approval') }) };
  }

  /** Names of every tool the graph can execute, of every source. */
  const toolNames = () => sources.flatMap((s) => s.describe().tools.map((t) => t.name));

  async function runConfig(input: {
    threadId: string;
    userToken: string;
    conversationId: string;
    toolPolicy?: ToolPolicy | null;
    callerSystem?: string | null;
    trace?: Span;
  }, resumedCalls?: ReadonlySet<string>): Promise<{ config: RunnableConfig; decide: Decide; resumedCalls?: ReadonlySet<string>; granted: Map<string, GrantUse> }> {
    const { user, decide } = await policyFor(input.userToken);
    const grants = options.grants;
    const userId = user.id;
    const granted = new Map<string, GrantUse>();
    const context: ToolContext = {
      apiUrl: options.apiUrl().replace(/\/+$/, ''),
      userToken: input.userToken,
      user,
      conversationId: input.conversationId,
      serviceToken,
      timeoutMs: options.toolTimeoutMs ?? 15_000,
      fetch: doFetch,
      policy: decide,
      audit: options.audit,
      toolPolicy: input.toolPolicy ?? null,
      callerSystem: input.callerSystem ?? null,
      resumedCalls,
      checkpointed: () => saver.stored(input.threadId),
      trace: input.trace,
      ...(grants && userId
        ? { grantFor: (tool: string, args: Readonly<Record<string, unknown>>, rule: GrantRuleRef) => grants({ userId, tenant: user.tenant, tool, args, rule }), granted }
        : {}),
    };
    return { config: { configurable: { thread_id: input.threadId, [CONTEXT_KEY]: context } }, decide, resumedCalls, granted };
  }

  async function pendingApprovals(threadId: string): Promise<PendingApproval[]> {
    return approvalsOf(await current().getState(threadConfig(threadId)));
  }

  /** The paused approval interrupts of a state snapshot. */
  function approvalsOf(state: StateSnapshot): PendingApproval[] {
    return (state.tasks ?? []).flatMap((task) =>
      (task.interrupts ?? []).flatMap((i) => {
        const value = i.value as ApprovalRequest | undefined;
        if (value?.kind !== 'approval' || !i.id) return [];
        return [{ interruptId: i.id, toolCallId: value.toolCallId, tool: value.tool, args: value.args, ...(value.prompt ? { prompt: value.prompt } : {}), ...(value.policy ? { policy: value.policy } : {}), ...(value.terms ? { terms: value.terms } : {}),
          ...(value.preview !== undefined ? { preview: value.preview } : {}), ...(value.labels ? { labels: value.labels } : {}), ...(value.replaces ? { replaces: value.replaces } : {}), ...(value.grant !== undefined ? { grant: value.grant } : {}), ...(value.grantRule ? { grantRule: value.grantRule } : {}) }];
      }),
    );
  }

  /**
   * Before a new message: reply to tool calls left open by an abort (cancelled) or a pending approval
   * (superseded), so the model never sees an assistant tool_call without a reply (OpenAI answers 400)
   * and a stale interrupt can no longer be resumed.
   */
  async function closeDanglingCalls(threadId: string, from: string | null = null): Promise<string | null> {
    const config: RunnableConfig = { configurable: { thread_id: threadId, ...(from ? { checkpoint_id: from } : {}) } };
    const state = await current().getState(config);
    const messages = ((state.values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[];
    const open = danglingToolCalls(messages);
    if (open.length === 0) return from;
    const paused = new Set(approvalsOf(state).map((p) => p.toolCallId));
    // Siblings that finished before a pause already have their ToolMessage in the state (tested).
    const replies = open.map((call) => {
      const [code, message] = paused.has(call.id)
        ? ['SUPERSEDED', `Not done: the request to run ${call.name} was replaced by a newer message.`]
        : ['CANCELLED', `Not done: ${call.name} was cancelled before it finished.`];
      return new ToolMessage({ tool_call_id: call.id, name: call.name, status: 'error', content: errorContent(code, message) });
    });
    const next = await current().updateState(config, { messages: replies }, 'tools');
    return from ? checkpointIdOf(next) : null;
  }

  async function* stream(input: unknown, run: { config: RunnableConfig; decide: Decide; resumedCalls?: ReadonlySet<string>; granted?: ReadonlyMap<string, GrantUse>; edited?: ReadonlyMap<string, Record<string, unknown>> }, threadId: string, signal?: AbortSignal): AsyncGenerator<AgentEvent> {
    const { config, decide } = run;
    // Starts of tools that may pause are held back (events.ts): which those are is this user's
    // policy; the calls a resume runs with their decision start at once.
    const mapping = createMappingState(toolNames().filter((name) => decide.mayPause(name)), run.resumedCalls, run.granted, run.edited);
    let streamed = '';
    try {
      // durability "sync", through the write-behind saver: each step is handed to the saver before
      // the next starts, and stored before any tool's side effect and before the run ends. With
      // LangGraph's "async" an abort during a tool returned before the model step's checkpoint
      // landed, so the next run could miss (and later race with) the dangling tool call.
      const parts = await current().stream(input as never, { ...config, signal, durability: 'sync', streamMode: ['messages', 'updates', 'tools'] });
      for await (const part of parts) {
        for (const event of toAgentEvents(part as [string, unknown], mapping, now())) {
          if (event.type === 'token') streamed += event.token;
          // Every call carries the policy decision that routed it (events, the ledger, the UI).
          yield event.type === 'tool_start' ? { ...event, policy: stampOf(decide(event.tool, undefined, argsOf(event.input))) } : event;
        }
      }
    } catch (error) {
      // The steps so far are stored before the run ends (write-behind-saver.ts), whatever ended it.
      await saver.stored(threadId).catch(() => {});
      // An abort surfaces as the caller's reason. Everything else is rethrown as is: graph interrupts
      // (never swallowed), AirlockError (LLM_UNAVAILABLE from the middleware), and unexpected errors
      // for the caller's INTERNAL handling.
      if (signal?.aborted && !isGraphInterrupt(error)) throw signal.reason ?? error;
      throw unwrapAirlockError(error);
    }
    await saver.stored(threadId);
    if (signal?.aborted) throw signal.reason;
    // One read of the end state for both questions: did it pause, and what is the answer's text.
    const state = await current().getState(threadConfig(threadId));
    const approvals = approvalsOf(state);
    if (approvals.length > 0) {
      yield { type: 'approval_required', approvals };
      return;
    }
    const last = ((state.values as { messages?: BaseMessage[] }).messages ?? []).at(-1);
    const text = last && AIMessage.isInstance(last) ? contentText(last.content) : streamed;
    yield { type: 'done', text: text || streamed };
  }

  return {
    async *run(input) {
      const from = input.newThread ? null : await closeDanglingCalls(input.threadId, input.fromCheckpoint ?? null);
      const content = input.attachments?.length ? [{ type: 'text' as const, text: input.text }, ...input.attachments] : input.text;
      const run = await runConfig(input);
      // A branch (issue 29): the run goes on from that checkpoint, LangGraph's own fork.
      if (from) run.config = { ...run.config, configurable: { ...run.config.configurable, checkpoint_id: from } };
      yield* stream({ messages: [new HumanMessage({ content, ...(input.replaces ? { id: input.replaces } : {}) })] }, run, input.threadId, input.signal);
    },
    async *resume(input) {
      const pending = input.pending ?? (await pendingApprovals(input.threadId));
      const ids = new Set(pending.map((p) => p.interruptId));
      const decisions = Object.fromEntries(Object.entries(input.decisions).filter(([id]) => ids.has(id)));
      if (Object.keys(decisions).length === 0) throw new AirlockError('APPROVAL_NOT_FOUND');
      // All at once: after a partial resume LangGraph still lists the decided interrupt as pending,
      // which would invite a second decision for a call that already ran.
      const missing = pending.filter((p) => !(p.interruptId in decisions)).map((p) => p.interruptId);
      if (missing.length > 0) {
        throw new AirlockError('VALIDATION_ERROR', 'Every pending approval of the thread must be decided at once.', { details: { missing } });
      }
      // Always the id map: a plain value would be applied to every pending interrupt (notes §1).
      const resumedCalls = new Set(pending.map((p) => p.toolCallId));
      // Calls an approver edited run (and show) the edited arguments (issue 27 item 1).
      const edited = new Map(pending.flatMap((p) => {
        const d = decisions[p.interruptId];
        return d?.approved && d.args ? [[p.toolCallId, d.args] as const] : [];
      }));
      yield* stream(new Command({ resume: decisions }), { ...(await runConfig(input, resumedCalls)), edited }, input.threadId, input.signal);
    },
    async *continueThread(input) {
      yield* stream(null, await runConfig(input), input.threadId, input.signal);
    },
    pendingApprovals,
    async reviewEdit({ tool, args, userToken }) {
      const described = sources.flatMap((s) => s.describe().tools).find((t) => t.name === tool);
      if (!described) return { ok: false, fields: [{ path: '', message: `there is no tool ${tool} here any more` }] };
      const checked = checkArguments(described.schema, args);
      if (!checked.ok) return checked;
      const { decide } = await policyFor(userToken);
      return { ok: true, args: checked.args, policy: decide(tool, undefined, checked.args) };
    },
    threadHead: async (threadId) => checkpointIdOf((await saver.getTuple(threadConfig(threadId)))?.config),
    async forkThread(threadId, humanIndex, from = null) {
      // The whole thread in one read (every branch's checkpoints), then the head's parents.
      const byId = new Map<string, StateSnapshot>();
      let newest: StateSnapshot | undefined;
      for await (const snapshot of current().getStateHistory(threadConfig(threadId))) {
        newest ??= snapshot;
        const id = checkpointIdOf(snapshot.config);
        if (id) byId.set(id, snapshot);
      }
      const head = (from ? byId.get(from) : undefined) ?? newest;
      let oldest: StateSnapshot | undefined;
      for (let s = head; s; s = byId.get(checkpointIdOf(s.parentConfig) ?? '')) {
        const messages = ((s.values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[];
        if (messages.length > 0) oldest = s;
        if (messages.filter((m) => HumanMessage.isInstance(m)).length > humanIndex) continue;
        if (messages.length === 0) break; // the thread's start: below
        return { checkpointId: checkpointIdOf(s.config)!, replaces: null };
      }
      if (!oldest) return null;
      // Before the first message there is only LangGraph's input checkpoint, which holds that
      // message as its pending input and does not run again once copied. So the fork starts from
      // the first step that has the message alone, and the run replaces it (same id: the
      // messages reducer replaces in place).
      return { checkpointId: checkpointIdOf(oldest.config)!, replaces: ((oldest.values as { messages: BaseMessage[] }).messages[0]?.id as string | undefined) ?? null };
    },
  };
}

const checkpointIdOf = (config: RunnableConfig | undefined): string | null => (config?.configurable?.checkpoint_id as string | undefined) ?? null;
