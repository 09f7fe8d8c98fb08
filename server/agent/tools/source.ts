/**
 * The built-in operations tools as a ToolSource (tool-source.ts): a fixed catalog, offered by seed
 * 003's keyword rules, each call an HTTP request to our own api with both identities (define.ts).
 * Nothing to connect, so it is always up and its description never changes.
 * @module
 */
import { catalogDefault } from '../../policy/index.ts';
import type { ToolSource, ToolSourceDescription } from '../tool-source.ts';
import { unknownTool, type BackendTool } from './define.ts';
import { ALL_TOOLS } from './index.ts';

export const BUILTIN_KIND = 'builtin';

/** The source of `tools` (default: all eleven; none when BUILTIN_TOOLS is off). */
export function builtinToolSource(tools: readonly BackendTool[] = ALL_TOOLS): ToolSource {
  const byName = new Map(tools.map((t) => [t.name as string, t]));
  const description: ToolSourceDescription = {
    kind: BUILTIN_KIND,
    tools: tools.map((t) => ({ name: t.name, description: t.description, schema: t.schema, defaultAction: catalogDefault(t.name)!, selection: 'rules' })),
    prefixes: [],
    version: 0,
  };
  const offered = description.tools.map(({ name, description, selection }) => ({ name, description, selection }));
  return {
    list: () => offered,
    call: async (_user, tool, args, ctx) => byName.get(tool)?.run(args as never, ctx) ?? unknownTool(tool, ctx),
    describe: () => description,
    status: () => ({ kind: BUILTIN_KIND, tools: tools.map((t) => t.name) }),
  };
}
