/**
 * The editor's side of the session tree (protocol.md "Session tree"): a user message's
 * Rewind to here and Fork from here, and Agent: Switch Branch (the panel header's
 * Branches button). The choices are quick picks; a `fileConflict` is a modal that lists
 * the files and offers to revert the others.
 */

import * as vscode from 'vscode';
import type { BranchOptions, BranchResult, FileProblem } from './protocol';
import type { SessionController } from './session';
import { branchEntries, branchOutcome, problemLines, retryOnConflict } from './tree';

const REVERT_OTHERS = 'Revert the others';

/** The modal of a `fileConflict`: the files and why; whether to revert the others (`force`). */
async function askToRevertOthers(files: FileProblem[]): Promise<boolean> {
  const count = files.length === 1 ? '1 file' : `${files.length} files`;
  const choice = await vscode.window.showWarningMessage(
    `agentls: ${count} cannot be put back as it was: changed since the agent's edit.`,
    {
      modal: true,
      detail: `${problemLines(files)}\n\nNothing was changed. "${REVERT_OTHERS}" leaves ${files.length === 1 ? 'it' : 'these'} as ${
        files.length === 1 ? 'it is' : 'they are'
      } and reverts the rest.`,
    },
    REVERT_OTHERS,
  );
  return choice === REVERT_OTHERS;
}

/** A summary takes a model call: show it with a Cancel that aborts it (`agent/abort`). */
function summarising(c: SessionController, run: () => Promise<BranchResult>): Promise<BranchResult> {
  return Promise.resolve(
    vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'agentls: summarising the branch left behind…', cancellable: true },
      (_progress, token) => {
        token.onCancellationRequested(() => void c.abort().catch(() => undefined));
        return run();
      },
    ),
  );
}

/** Move the session (rewind or switch), asking about conflicts; the outcome shows in the status bar. */
async function move(
  c: SessionController,
  what: 'Rewound' | 'Switched branch',
  options: BranchOptions,
  request: (options: BranchOptions) => Promise<BranchResult>,
): Promise<BranchResult | undefined> {
  const attempt = (force: boolean): Promise<BranchResult> => {
    const run = (): Promise<BranchResult> => request({ ...options, force });
    return options.summarize ? summarising(c, run) : run();
  };
  const result = await retryOnConflict(attempt, askToRevertOthers);
  if (result) vscode.window.setStatusBarMessage(`agentls: ${branchOutcome(what, result)}`, 8000);
  return result;
}

type OptionItem = vscode.QuickPickItem & { key: keyof Omit<BranchOptions, 'force'> };

/** Rewind's choices: revert the files (on by default), summarise the branch left behind (off). */
async function askRewindOptions(text: string): Promise<BranchOptions | undefined> {
  const items: OptionItem[] = [
    {
      key: 'files',
      label: 'Revert the files the agent changed',
      detail: "Back to how they were before this message (in an open editor, Undo brings the agent's version back)",
      picked: true,
    },
    {
      key: 'summarize',
      label: 'Summarise the branch left behind',
      detail: 'The model sums up what comes after this message, for the conversation to go on with',
      picked: false,
    },
  ];
  const flat = text.trim().replace(/\s+/g, ' ');
  const picked = await vscode.window.showQuickPick(items, {
    title: `Rewind to before "${flat.length > 60 ? `${flat.slice(0, 59)}…` : flat}"`,
    placeHolder: 'Enter rewinds: what came after stays on a branch of its own (Agent: Switch Branch)',
    canPickMany: true,
    ignoreFocusOut: true,
  });
  if (!picked) return undefined;
  const keys = new Set(picked.map((item) => item.key));
  return { files: keys.has('files'), summarize: keys.has('summarize') };
}

/**
 * Rewind to here: the session continues from before the user message of row `rowId`; its
 * text goes back into the prompt box, to edit and send again.
 */
export async function rewindMessage(c: SessionController, rowId: string, putInPrompt: (text: string) => void): Promise<void> {
  const target = await c.messageTarget(rowId);
  const options = await askRewindOptions(target.text);
  if (!options) return;
  const result = await move(c, 'Rewound', options, (o) => c.rewind(target.entryId, o));
  if (result) putInPrompt(target.text);
}

/** Fork from here: a new session with the conversation before the message, its text in the prompt box. */
export async function forkMessage(c: SessionController, rowId: string, putInPrompt: (text: string) => void): Promise<void> {
  const target = await c.messageTarget(rowId);
  await c.fork(target.entryId);
  putInPrompt(target.text);
}

type BranchItem = vscode.QuickPickItem & { leafId: string; current: boolean };
type FilesItem = vscode.QuickPickItem & { files: boolean };

/** Agent: Switch Branch: pick a branch of the session's tree, then whether the files follow (default no). */
export async function switchBranch(c: SessionController): Promise<void> {
  const tree = await c.tree();
  const items: BranchItem[] = branchEntries(tree, Date.now()).map((b) => ({
    label: b.current ? `$(check) ${b.label}` : b.label,
    description: b.detail,
    ...(b.last ? { detail: `ends: ${b.last}` } : {}),
    leafId: b.leafId,
    current: b.current,
  }));
  if (items.length < 2) {
    void vscode.window.showInformationMessage(
      'agentls: this session has one branch. "Rewind to here" on a message of the panel starts another.',
    );
    return;
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Agent: Switch Branch',
    placeHolder: 'The branch to continue on',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick || pick.current) return;
  const choices: FilesItem[] = [
    { label: 'Keep the files as they are', detail: 'Only the conversation changes', files: false },
    {
      label: 'Switch the files too',
      detail: "Revert this branch's edits and apply those of the other branch again",
      files: true,
    },
  ];
  const files = await vscode.window.showQuickPick(choices, { title: 'Switch the files too?', ignoreFocusOut: true });
  if (!files) return;
  await move(c, 'Switched branch', { files: files.files, summarize: false }, (o) => c.switchBranch(pick.leafId, o));
}
