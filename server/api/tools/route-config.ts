/** Route options that mark a route as a tool endpoint (hooks read `config.tool`). */
import { toolSpec, type ToolName } from '../../operations/index.ts';

export function toolRoute(name: ToolName): { config: Record<string, unknown> } {
  return { config: { tool: toolSpec(name) } };
}
