/**
 * The session tree as the panel uses it (pure: no VS Code): where a rewind or a fork of a
 * user message goes, the branch picker's entries, a `fileConflict` error's files, and what
 * a rewind or a branch switch did to the files (protocol.md "Session tree").
 */

import { EDITOR_CONTEXT } from './attachments';
import { contentText, timeAgo } from './format';
import type { BranchResult, FileProblem, Message, MessagesResult, TreeResult } from './protocol';

/** A user message of the transcript: the entry its delivery starts at, and its text. */
export interface UserMessageEntry {
  /** The delivery's first entry: the user message's own, or the `editorContext` message just before it. */
  entryId: string;
  text: string;
}

const userText = (message: Message | undefined): string | undefined =>
  message?.role === 'user' ? contentText((message as { content: unknown }).content) : undefined;

/**
 * The user message at `index` of `agent/getMessages` (checked against its `text`; when the
 * panel's count is off, the only user message with that text). `undefined`: not found.
 */
export function findUserMessage(result: MessagesResult, index: number, text: string): UserMessageEntry | undefined {
  const { messages, entryIds } = result;
  let at = userText(messages[index]) === text ? index : -1;
  if (at < 0) {
    const same = messages.flatMap((message, i) => (userText(message) === text ? [i] : []));
    at = same.length === 1 ? (same[0] ?? -1) : -1;
  }
  if (at < 0) return undefined;
  // The attachments sent with it are the `editorContext` message just before, in the same delivery.
  const before = messages[at - 1] as { role?: string; customType?: string } | undefined;
  const first = before?.role === 'custom' && before.customType === EDITOR_CONTEXT ? at - 1 : at;
  const entryId = entryIds[first];
  return entryId === undefined ? undefined : { entryId, text };
}

/**
 * Where a rewind or a fork of a message goes: the entry before it (its `parentId` in
 * `agent/getTree`), `null` for the first message. `undefined`: the tree does not have it.
 */
export function entryBefore(tree: TreeResult, entryId: string): string | null | undefined {
  const entry = tree.entries.find((e) => e.id === entryId);
  return entry === undefined ? undefined : entry.parentId;
}

/** The files of a `fileConflict` error (`data.files`); `undefined` for any other error. */
export function fileConflicts(error: unknown): FileProblem[] | undefined {
  const e = error as { kind?: unknown; data?: { files?: unknown } } | undefined;
  if (e?.kind !== 'fileConflict') return undefined;
  const files = Array.isArray(e.data?.files) ? (e.data.files as unknown[]) : [];
  return files
    .filter((f): f is FileProblem => typeof (f as FileProblem)?.path === 'string')
    .map((f) => ({ path: f.path, reason: typeof f.reason === 'string' ? f.reason : 'conflict' }));
}

/**
 * Run a rewind or a branch switch; when it fails with `fileConflict` (nothing changed), ask
 * whether to revert the other files, and if so run it again with `force`. `undefined`: the
 * user left it at that. Any other failure is thrown.
 */
export async function retryOnConflict(
  attempt: (force: boolean) => Promise<BranchResult>,
  askToForce: (files: FileProblem[]) => Promise<boolean>,
): Promise<BranchResult | undefined> {
  try {
    return await attempt(false);
  } catch (error) {
    const files = fileConflicts(error);
    if (files === undefined) throw error;
    return (await askToForce(files)) ? attempt(true) : undefined;
  }
}

/** One line per file: `path: reason`. */
export function problemLines(files: readonly FileProblem[]): string {
  return files.map((f) => `${f.path}: ${f.reason}`).join('\n');
}

const ACTION_WORD: Record<BranchResult['reverted'][number]['action'], string> = {
  reverted: 'reverted',
  deleted: 'deleted',
  restored: 'restored',
  applied: 'applied again',
};

/**
 * What a rewind or a branch switch did to the files, in one line:
 * `Rewound: reverted a.txt, b.txt; deleted new.txt. Skipped: c.txt (changed since).`
 */
export function branchOutcome(what: 'Rewound' | 'Switched branch', result: BranchResult): string {
  const groups = new Map<string, string[]>();
  for (const change of result.reverted ?? []) {
    const word = ACTION_WORD[change.action] ?? change.action;
    groups.set(word, [...(groups.get(word) ?? []), change.path]);
  }
  const done = [...groups].map(([word, paths]) => `${word} ${paths.join(', ')}`).join('; ');
  const skipped = (result.skipped ?? []).map((f) => `${f.path} (${f.reason})`).join(', ');
  const parts = [done ? `${what}: ${done}.` : `${what}; no file changed.`];
  if (skipped) parts.push(`Skipped: ${skipped}.`);
  return parts.join(' ');
}

/**
 * A branch of the picker: its `preview` (the server's line for it), `5 messages · 2 min ago`
 * (the current one marked), and where it ends (its last entry's preview, when that says more).
 */
export interface BranchEntry {
  leafId: string;
  label: string;
  detail: string;
  last?: string;
  current: boolean;
}

export function branchEntries(tree: Pick<TreeResult, 'branches' | 'entries'>, now: number): BranchEntry[] {
  const previews = new Map(tree.entries.map((entry) => [entry.id, entry.preview.trim()]));
  return tree.branches.map((b) => {
    const label = b.preview.trim() || '(empty)';
    const last = previews.get(b.leafId);
    const count = `${b.messageCount} ${b.messageCount === 1 ? 'message' : 'messages'}`;
    return {
      leafId: b.leafId,
      label,
      detail: `${count} · ${timeAgo(b.timestamp, now)}${b.current ? ' · current' : ''}`,
      ...(last && last !== label ? { last } : {}),
      current: b.current,
    };
  });
}
