/** What the inline permission card shows of the call it asks about (pure). */

import { proposedDiff } from './diff';
import { prettyArgs, visibleControls } from './format';
import type { QuestionDetail } from './view';

/**
 * The card's detail: a `bash` call's whole command (wrapped by the panel, its control
 * characters written out but its newlines kept as lines); the change of a `write` or `edit`
 * (`before`: the file as it is now, for a `write`); else the arguments as pretty JSON, with
 * nothing hidden in them. `undefined` when there is nothing to show.
 */
export function questionDetail(toolName: string, args: unknown, before?: string): QuestionDetail | undefined {
  const a = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  if (toolName === 'bash' && typeof a.command === 'string' && a.command !== '') {
    return { kind: 'command', text: visibleControls(a.command) };
  }
  const diff = proposedDiff(toolName, args, before);
  if (diff) return { kind: 'diff', diff };
  const text = visibleControls(prettyArgs(args));
  return text && text !== '{}' ? { kind: 'args', text } : undefined;
}
