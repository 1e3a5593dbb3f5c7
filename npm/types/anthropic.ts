// ToolDefinition.parameters is accepted as an Anthropic tool's input_schema
// without a cast (make test-types; @anthropic-ai/sdk is a dev dependency).
import type Anthropic from '@anthropic-ai/sdk';
import type { Session } from '../index.d.ts';

export function anthropicTools(s: Session): Anthropic.Tool[] {
  return s.toolDefinitions().map((d) => ({ name: d.name, description: d.description, input_schema: d.parameters }));
}
